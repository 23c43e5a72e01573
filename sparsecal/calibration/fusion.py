"""Linear logistic fusion of several systems' scores (lecture notes ``004``,
"Score-level fusion"), prior-weighted like :class:`PriorWeightedLogistic`."""
import json
import os

import numpy as np

from .._docs import fill_doc
from ..core.jsonfile import read_json
from ..core.validation import check_float_matrix, check_labels, check_sample_weight
from ..io.atomic import atomic_path
from ..io.calibrators import check_fields, check_number
from .base import Estimator
from ..core.validation import check_prior
from .logistic import fit_logistic, logit, prior_weights

__all__ = ["LogisticFusion"]

_FORMAT = "sparsecal.LogisticFusion"


@fill_doc
class LogisticFusion(Estimator):
    """Fused, calibrated log-likelihood ratio ``llr(x) = alpha @ x + gamma`` of ``k``
    systems' scores (or any finite features) ``x``, and its posterior.

    The fit minimises :class:`PriorWeightedLogistic`'s objective with ``alpha .
    x_i`` for ``a s_i`` (lecture notes ``004``, "Score-level fusion"); with one
    column it is that calibrator. Not in the method registry (it fuses several
    scores): fuse per entry by building ``X`` from aligned entries.

    Parameters
    ----------
    {priors}

    Attributes
    ----------
    coef_ : ndarray of float64, shape (k,)
    offset_ : float
    training_prior_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import LogisticFusion
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(4000) < 0.4
    >>> truth = np.where(y, 1.0, -1.0)
    >>> X = np.column_stack([truth + rng.normal(0, 1, 4000), truth + rng.normal(0, 2, 4000)])
    >>> LogisticFusion(training_prior=0.5).fit(X, y).coef_.round(1)   # 2 / sigma^2
    array([2. , 0.5])
    """

    _fitted_attributes = ("coef_", "offset_", "training_prior_", "n_features_in_")

    def __init__(self, training_prior=None, application_prior=None):
        self.training_prior = training_prior
        self.application_prior = application_prior

    def _check_params(self, prefix=""):
        for name in ("training_prior", "application_prior"):
            if getattr(self, name) is not None:
                check_prior(getattr(self, name), f"{prefix}{name}")

    def _input_tags(self):
        return {"two_d_array": True}

    def _features(self, X):
        x, _ = check_float_matrix(X, "X")
        x = np.asarray(x, dtype=np.float64)
        if not np.isfinite(x).all():
            i, j = np.argwhere(~np.isfinite(x))[0]
            raise ValueError(f"X[{i}, {j}] = {x[i, j].item()!r} is not finite")
        if hasattr(self, "n_features_in_") and x.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {x.shape[1]} columns but the fusion was fit on "
                             f"{self.n_features_in_}")
        return x

    def fit(self, X, labels, sample_weight=None):
        """Fit ``alpha`` and ``gamma`` on finite dev features ``X`` (n, k) and 0/1 ``labels``."""
        self._check_params()
        for name in self._fitted_attributes:
            self.__dict__.pop(name, None)
        x = self._features(X)
        y = check_labels(labels, "labels", x.shape[0]).astype(bool)
        w = check_sample_weight(sample_weight, x.shape[0])
        weights, prior = prior_weights(y, w, self.training_prior)
        coef, gamma = fit_logistic(x, y, weights, shift=float(logit(prior)))
        self.coef_, self.offset_, self.training_prior_ = coef, gamma, float(prior)
        self.n_features_in_ = x.shape[1]
        return self

    def llr(self, X):
        self._check_fitted()
        return self._features(X) @ self.coef_ + self.offset_

    def predict_for_prior(self, X, application_prior):
        """Posterior ``sigmoid(llr(x) + logit(application_prior))``, without refitting."""
        from scipy.special import expit

        prior = check_prior(application_prior, "application_prior")
        return expit(self.llr(X) + logit(prior))

    def predict(self, X):
        """Posterior at ``application_prior`` (default: the training prior)."""
        self._check_fitted()
        prior = self.training_prior_ if self.application_prior is None \
            else self.application_prior
        return self.predict_for_prior(X, prior)

    def save(self, path):
        """Write the fitted fusion to the JSON file ``path`` (atomically)."""
        self._check_fitted()
        state = {"format": _FORMAT, "version": 1, "params": self.get_params(),
                 "fitted": {"coef_": [float(c) for c in self.coef_],
                            "offset_": self.offset_, "training_prior_": self.training_prior_}}
        with atomic_path(path) as tmp:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(state, f, indent=2, allow_nan=False)

    @classmethod
    def load(cls, path):
        """Read a fusion written by :meth:`save`, checking every field."""
        state = read_json(path, "saved fusion")
        try:
            check_fields(state, "", ("format", "version", "params", "fitted"))
            if state["format"] != _FORMAT or state["version"] != 1:
                raise ValueError(f"not a {_FORMAT} file of version 1")
            check_fields(state["params"], "params", cls._get_param_names())
            obj = cls(**state["params"])
            obj._check_params("params.")
            fitted = state["fitted"]
            check_fields(fitted, "fitted", ("coef_", "offset_", "training_prior_"))
            coef = fitted["coef_"]
            if not isinstance(coef, list) or not coef:
                raise ValueError("fitted.coef_ must be a non-empty list of numbers")
            obj.coef_ = np.array([check_number(c, f"fitted.coef_[{i}]")
                                  for i, c in enumerate(coef)])
            obj.offset_ = check_number(fitted["offset_"], "fitted.offset_")
            obj.training_prior_ = check_prior(fitted["training_prior_"],
                                              "fitted.training_prior_")
            obj.n_features_in_ = obj.coef_.shape[0]
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{os.fspath(path)}: {exc}") from None
        return obj
