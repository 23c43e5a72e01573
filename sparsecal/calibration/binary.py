"""Binary recalibration models: ``fit(scores, labels)`` on dev, ``predict(scores)``.

Kranzlein, Liu & Schneider 2021, Section 2.2: histogram binning (Zadrozny & Elkan
2001) with equal-mass bins (Nguyen & O'Connor 2015), isotonic regression (Zadrozny
& Elkan 2002) and scaling-binning (Kumar, Liang & Ma 2019) with isotonic
regression as the scaling function; Platt scaling and the prior-weighted logistic
regression of the score-calibration lecture notes (``004``, "prior-weighted
logistic regression").

Every calibrator maps any score in [0, 1] to a calibrated score in [0, 1] and is
clonable (``get_params`` / ``set_params`` / :func:`clone`), and its fitted state
is a dict of JSON values plus NumPy arrays (see :mod:`sparsecal.persistence`).
"""
import inspect

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from ..core.validation import (check_labels, check_positive_int, check_probabilities,
                          check_sample_weight, check_unit_interval)
from ..core.binning import (argsort_scores, lookup_bin_means, lookup_bins,
                             weighted_equal_mass_bins)
from ..core.isotonic import isotonic_fit, isotonic_predict

__all__ = ["BaseCalibrator", "HistogramBinning", "IsotonicCalibrator", "ScalingBinning",
           "PlattCalibrator", "clone", "CALIBRATORS"]


class NotFittedError(ValueError, AttributeError):
    """Raised when a calibrator is used before ``fit``."""


class BaseCalibrator:
    """Shared plumbing: parameters, validation, state for saving."""

    #: names of fitted attributes holding arrays / plain values
    _array_state = ()
    _value_state = ()

    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return [p for p in sig.parameters if p != "self"]

    def get_params(self, deep=True):
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        for name, value in params.items():
            if name not in self._param_names():
                raise ValueError(f"{type(self).__name__} has no parameter {name!r}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    @property
    def is_fitted(self):
        return all(hasattr(self, name) for name in self._array_state + self._value_state)

    def _check_fitted(self):
        if not self.is_fitted:
            raise NotFittedError(f"this {type(self).__name__} is not fitted: call fit first")

    @staticmethod
    def _fit_inputs(scores, labels, sample_weight):
        x = check_probabilities(scores, "scores")
        if x.shape[0] == 0:
            raise ValueError("cannot fit a calibrator on no data")
        y = check_labels(labels, "labels", x.shape[0])
        w = check_sample_weight(sample_weight, x.shape[0])
        if w is not None and not (w > 0).any():
            raise ValueError("sample_weight is zero everywhere")
        return x, y, w

    def predict(self, scores):
        """Calibrated scores (float64 for float64 input, float32 for float32)."""
        self._check_fitted()
        x = check_probabilities(scores, "scores")
        return self._predict(x)

    def get_state(self):
        """(JSON-able dict, dict of arrays) describing the fitted calibrator."""
        self._check_fitted()
        values = {name: _to_json(getattr(self, name)) for name in self._value_state}
        arrays = {name: np.asarray(getattr(self, name)) for name in self._array_state}
        return {"params": _to_json(self.get_params()), "fitted": values}, arrays

    @classmethod
    def from_state(cls, meta, arrays):
        obj = cls(**meta["params"])
        for name in cls._value_state:
            setattr(obj, name, meta["fitted"][name])
        for name in cls._array_state:
            if name not in arrays:
                raise ValueError(f"saved {cls.__name__} lacks array {name!r}")
            setattr(obj, name, np.asarray(arrays[name]))
        obj._check_state()
        return obj

    def _check_state(self):
        """Validate loaded state (shapes, ranges); subclasses extend."""


def _to_json(value):
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return value


def clone(calibrator):
    """An unfitted copy with the same parameters."""
    return type(calibrator)(**calibrator.get_params())


class HistogramBinning(BaseCalibrator):
    """Histogram binning on equal-mass dev bins (Zadrozny & Elkan 2001; adaptive
    bins of Nguyen & O'Connor 2015 as in Kranzlein et al. 2021, Section 2.2).

    A score is mapped to the dev positive rate of its bin. Bins cover [0, 1] with
    no gap: between two dev bins the cut is halfway between the largest score of
    one and the smallest of the next; scores below / above the dev range (and
    1.0) fall in the first / last bin. The rate of a bin is taken over the dev
    points looked up in it, so a run of tied dev scores is never split: where a
    rank cut falls inside one, the bins it would split are merged.

    Parameters
    ----------
    n_bins : int, default=10
    bin_size : int, optional
        Points per bin instead of ``n_bins`` (a short last bin is merged).
    """

    _array_state = ("boundaries_", "bin_rates_")

    def __init__(self, n_bins=10, bin_size=None):
        self.n_bins = n_bins
        self.bin_size = bin_size

    def fit(self, scores, labels, sample_weight=None):
        x, y, w = self._fit_inputs(scores, labels, sample_weight)
        n_bins = None if self.bin_size is not None else check_positive_int(self.n_bins, "n_bins")
        bin_size = None if self.bin_size is None else check_positive_int(self.bin_size, "bin_size")
        perm, sorted_x = argsort_scores(x)
        bins = weighted_equal_mass_bins(sorted_x, y, w, perm, n_bins, bin_size)
        # Rates are taken over the dev points that lookup puts in each bin, so a
        # dev score is mapped to the rate of the bin it is looked up in.
        self.boundaries_, self.bin_rates_ = lookup_bin_means(
            x, y.astype(np.float64), w, bins.boundaries())
        return self

    def _predict(self, x):
        return self.bin_rates_[lookup_bins(x, self.boundaries_)].astype(x.dtype)

    def _check_state(self):
        if self.bin_rates_.shape[0] != self.boundaries_.shape[0] + 1:
            raise ValueError("saved HistogramBinning: bin_rates_ must have one more "
                             "value than boundaries_")


class IsotonicCalibrator(BaseCalibrator):
    """Isotonic regression (Zadrozny & Elkan 2002) by pool adjacent violators on
    the compiled core: non-decreasing, piecewise linear, constant outside the dev
    range; the same function as scikit-learn's ``IsotonicRegression(y_min=0,
    y_max=1, out_of_bounds="clip")``."""

    _array_state = ("x_knots_", "y_knots_")

    def __init__(self):
        pass

    def fit(self, scores, labels, sample_weight=None):
        x, y, w = self._fit_inputs(scores, labels, sample_weight)
        self.x_knots_, self.y_knots_ = isotonic_fit(x, y, w)
        return self

    def _predict(self, x):
        return isotonic_predict(x, self.x_knots_, self.y_knots_)

    def _check_state(self):
        if self.x_knots_.shape != self.y_knots_.shape or self.x_knots_.ndim != 1:
            raise ValueError("saved IsotonicCalibrator: knots must be 1-D of one length")


class ScalingBinning(BaseCalibrator):
    """Scaling-binning (Kumar, Liang & Ma 2019) with isotonic scaling.

    Dev is split at random (seeded) into two halves. Isotonic regression is fit
    on the first; the second half's scaled scores are cut into equal-mass bins,
    and each bin outputs the mean scaled score of the second-half points looked
    up in it. Isotonic output is a step function, so rank cuts usually fall
    inside runs of tied scaled scores; the bins such a cut would split are
    merged (as in Kumar et al.'s code, which re-bins the points by value).
    Those bin means are computed on dev only, never on the data being calibrated
    (unlike the paper's reference code, which computes them on test data).

    Parameters
    ----------
    n_bins : int, default=10
    seed : int, default=0
        Seed of the dev split.
    """

    _array_state = ("x_knots_", "y_knots_", "boundaries_", "bin_values_")

    def __init__(self, n_bins=10, seed=0):
        self.n_bins = n_bins
        self.seed = seed

    def fit(self, scores, labels, sample_weight=None):
        x, y, w = self._fit_inputs(scores, labels, sample_weight)
        n_bins = check_positive_int(self.n_bins, "n_bins")
        if x.shape[0] < 2:
            raise ValueError("scaling-binning needs at least 2 dev points to split")
        order = np.random.default_rng(self.seed).permutation(x.shape[0])
        first, second = order[: x.shape[0] // 2], order[x.shape[0] // 2:]
        w1 = None if w is None else w[first]
        if w1 is not None and not (w1 > 0).any():
            raise ValueError("the first dev half has zero total weight")
        self.x_knots_, self.y_knots_ = isotonic_fit(x[first], y[first], w1)
        scaled = isotonic_predict(x[second], self.x_knots_, self.y_knots_)
        w2 = None if w is None else w[second]
        if w2 is not None and not (w2 > 0).any():
            raise ValueError("the second dev half has zero total weight")
        perm, sorted_z = argsort_scores(scaled)
        # Equal-mass bins of the scaled scores; a bin's value is the mean scaled
        # score of the second-half points looked up in it (as Kumar et al.'s
        # reference code re-bins them). Isotonic output is a step function, so
        # rank cuts fall inside runs of tied values; the bin statistics must
        # follow the lookup, or a tied value gets the mean of a bin that holds
        # only part of its run plus higher values.
        bins = weighted_equal_mass_bins(sorted_z, y[second], w2, perm, n_bins, None)
        self.boundaries_, self.bin_values_ = lookup_bin_means(
            scaled, scaled.astype(np.float64), w2, bins.boundaries())
        return self

    def _predict(self, x):
        z = isotonic_predict(x, self.x_knots_, self.y_knots_)
        return self.bin_values_[lookup_bins(z, self.boundaries_)].astype(x.dtype)

    def _check_state(self):
        if self.bin_values_.shape[0] != self.boundaries_.shape[0] + 1:
            raise ValueError("saved ScalingBinning: bin_values_ must have one more value "
                             "than boundaries_")


class PlattCalibrator(BaseCalibrator):
    """Logistic calibration on the log-odds of the score (Platt 1999), optionally
    with the prior-weighted objective of the lecture notes (``004``):

    ``R(a, g) = sum_i w_i log(1 + exp(-z_i (a s_i + g + logit(prior))))`` with
    ``w_i = prior / n_T`` for positives and ``(1 - prior) / n_F`` for negatives,
    ``s_i = logit(score_i)``, ``z_i = ±1``. Then ``a s + g`` is a calibrated
    log-likelihood ratio (:meth:`llr`) and :meth:`predict` returns the posterior
    ``sigmoid(a s + g + logit(prior))`` for the application prior. Without
    ``prior`` it is plain maximum-likelihood logistic regression (the posterior at
    the dev prior). Fit by L-BFGS (SciPy), no regularisation.

    Parameters
    ----------
    prior : float in (0, 1), optional
    eps : float, default=1e-7
        Scores are clipped to ``[eps, 1 - eps]`` before the logit.
    """

    _value_state = ("slope_", "offset_")

    def __init__(self, prior=None, eps=1e-7):
        self.prior = prior
        self.eps = eps

    def _logit(self, x):
        x = np.clip(x.astype(np.float64), self.eps, 1.0 - self.eps)
        return np.log(x) - np.log1p(-x)

    def fit(self, scores, labels, sample_weight=None):
        x, y, w = self._fit_inputs(scores, labels, sample_weight)
        s = self._logit(x)
        pos = y.astype(bool)
        w = np.ones(x.shape[0]) if w is None else w
        if self.prior is None:
            shift, weights = 0.0, w / w.sum()
        else:
            prior = check_unit_interval(self.prior, "prior")
            if not 0.0 < prior < 1.0 or not pos.any() or pos.all():
                raise ValueError("prior-weighted calibration needs 0 < prior < 1 and "
                                 "both positive and negative dev labels")
            shift = np.log(prior) - np.log1p(-prior)
            weights = np.where(pos, prior / w[pos].sum(), (1.0 - prior) / w[~pos].sum()) * w
        z = np.where(pos, 1.0, -1.0)

        def objective(params):
            a, g = params
            margin = z * (a * s + g + shift)
            loss = -np.sum(weights * log_expit(margin))
            r = -weights * z * expit(-margin)          # d loss / d (a s + g)
            return loss, np.array([np.sum(r * s), np.sum(r)])

        # Tight tolerances: two parameters, so this costs little, and the defaults
        # (gtol=1e-5) stop ~1e-5 away from the optimum.
        result = minimize(objective, np.array([1.0, 0.0]), jac=True, method="L-BFGS-B",
                          options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000})
        self.slope_, self.offset_ = (float(v) for v in result.x)
        return self

    def llr(self, scores):
        """Calibrated log-likelihood ratio ``a logit(score) + g``."""
        self._check_fitted()
        return self.slope_ * self._logit(check_probabilities(scores, "scores")) + self.offset_

    def _predict(self, x):
        shift = 0.0 if self.prior is None else np.log(self.prior) - np.log1p(-self.prior)
        return expit(self.slope_ * self._logit(x) + self.offset_ + shift).astype(x.dtype)


#: name -> class, for saving and loading
CALIBRATORS = {cls.__name__: cls for cls in
               (HistogramBinning, IsotonicCalibrator, ScalingBinning, PlattCalibrator)}
