"""Logistic calibration of log-odds (Platt 1999) and the prior-weighted logistic
regression of the score-calibration lecture notes (``004``). SciPy is imported only
when a model is fitted or applied, so that ``import sparsecal`` stays quick."""
import numpy as np

from ..core.validation import check_probabilities
from .base import BaseCalibrator
from ..core.validation import check_prior

__all__ = ["PlattCalibrator"]


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
    eps : float in (0, 0.5), default=1e-7
        Scores are clipped to ``[eps, 1 - eps]`` before the logit.

    Attributes
    ----------
    slope_, offset_ : float
        ``a`` and ``g`` of the calibrated log-likelihood ratio ``a logit(s) + g``.

    References
    ----------
    Platt 1999; the score-calibration lecture notes (``004``), "prior-weighted
    logistic regression"; Kranzlein, Liu & Schneider 2021, Section 2.2.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import PlattCalibrator
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.random(1000)
    >>> labels = (rng.random(1000) < scores ** 2).astype(np.uint8)   # overconfident
    >>> cal = PlattCalibrator().fit(scores, labels)
    >>> cal.slope_ > 1.0
    True
    """

    _value_state = ("slope_", "offset_")

    def __init__(self, prior=None, eps=1e-7):
        self.prior = prior
        self.eps = eps

    def _check_params(self, prefix=""):
        if self.prior is not None:
            check_prior(self.prior, f"{prefix}prior")
        check_prior(self.eps, f"{prefix}eps", 0.5)

    def _logit(self, x):
        x = np.clip(x.astype(np.float64), self.eps, 1.0 - self.eps)
        return np.log(x) - np.log1p(-x)

    def _fit(self, x, y, w):
        from scipy.optimize import minimize
        from scipy.special import expit, log_expit

        s = self._logit(x)
        pos = y.astype(bool)
        w = np.ones(x.shape[0]) if w is None else w
        if self.prior is None:
            shift, weights = 0.0, w / w.sum()
        else:
            prior = float(self.prior)
            if not pos.any() or pos.all():
                raise ValueError("prior-weighted calibration needs both positive and "
                                 "negative dev labels")
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
        from scipy.special import expit

        shift = 0.0 if self.prior is None else np.log(self.prior) - np.log1p(-self.prior)
        return expit(self.slope_ * self._logit(x) + self.offset_ + shift).astype(x.dtype)

