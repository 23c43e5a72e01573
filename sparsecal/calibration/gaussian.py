"""Gaussian generative calibration (lecture notes ``004``): class-conditional
Gaussians of the log-odds score give the calibrated log-likelihood ratio."""
import numpy as np

from .._docs import fill_doc
from ..core.validation import DegenerateDataError, check_choice, check_prior
from .llr import LLRCalibrator

__all__ = ["GaussianCalibration"]


@fill_doc
class GaussianCalibration(LLRCalibrator):
    """Generative calibration with a Gaussian model of ``s = logit(score)`` per class
    (Brümmer 2010, Chapter 7).

    Fits ``s | positive ~ N(mu_T, v_T)`` and ``s | negative ~ N(mu_F, v_F)`` by
    (weighted) maximum likelihood; ``llr(s) = log N(s | mu_T, v_T) - log N(s |
    mu_F, v_F)`` and :meth:`predict` returns ``sigmoid(llr(s) + logit(pi_a))``.
    ``variance="tied"`` (monotone, as the notes advise) pools one within-class
    variance, so ``llr`` is affine in ``s``; ``"untied"`` makes it quadratic.

    Parameters
    ----------
    variance : {"tied", "untied"}, default="tied"
    application_prior : float in (0, 1), optional
        ``pi_a`` of :meth:`predict`; None: the dev positive rate (``dev_prior_``).
    {logit_eps}

    Attributes
    ----------
    mean_pos_, mean_neg_, var_pos_, var_neg_ : float
        The class means and variances of ``s``.
    dev_prior_ : float
        The (weighted) dev positive rate.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import GaussianCalibration
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(5000) < 0.3
    >>> s = np.where(y, rng.normal(2.0, 1.0, 5000), rng.normal(-1.0, 1.0, 5000))
    >>> cal = GaussianCalibration().fit(1 / (1 + np.exp(-s)), y)
    >>> round(cal.mean_pos_ - cal.mean_neg_, 1), round(cal.var_pos_, 1)
    (3.0, 1.0)
    """

    _value_state = ("mean_pos_", "mean_neg_", "var_pos_", "var_neg_", "dev_prior_")

    def __init__(self, variance="tied", application_prior=None, eps=1e-7):
        self.variance = variance
        self.application_prior = application_prior
        self.eps = eps

    def _check_params(self, prefix=""):
        check_choice(self.variance, f"{prefix}variance", {"tied", "untied"})
        self._check_prior_params(prefix, ("application_prior",))

    def _check_state(self, fields):
        with fields.in_json():          # the fitted values are in calibrator.json
            for name in ("var_pos_", "var_neg_"):
                if not getattr(self, name) > 0:
                    raise ValueError(f"{fields.field('fitted.' + name)} must be positive, "
                                     f"got {getattr(self, name)!r}")
            if self.variance == "tied" and self.var_pos_ != self.var_neg_:
                raise ValueError(f"{fields.field('fitted.var_neg_')} must equal var_pos_ "
                                 "when the variance is tied")
            check_prior(self.dev_prior_, fields.field("fitted.dev_prior_"))

    def _fit(self, x, y, w):
        s = self._logit_scores(x)
        pos = y.astype(bool)
        w = np.ones(s.shape[0]) if w is None else w
        w_pos, w_neg = float(w[pos].sum()), float(w[~pos].sum())
        if not (w_pos > 0 and w_neg > 0):
            raise DegenerateDataError("GaussianCalibration needs both positive and negative dev "
                             "labels (with positive weight)")
        mu_t = float(np.sum(w[pos] * s[pos]) / w_pos)
        mu_f = float(np.sum(w[~pos] * s[~pos]) / w_neg)
        ss_t = float(np.sum(w[pos] * (s[pos] - mu_t) ** 2))
        ss_f = float(np.sum(w[~pos] * (s[~pos] - mu_f) ** 2))
        if self.variance == "tied":
            v_t = v_f = (ss_t + ss_f) / (w_pos + w_neg)
        else:
            v_t, v_f = ss_t / w_pos, ss_f / w_neg
        if not (v_t > 0 and v_f > 0):
            raise DegenerateDataError("GaussianCalibration: a class's dev scores have zero "
                             "variance; use variance='tied' or more dev data")
        self.mean_pos_, self.mean_neg_ = mu_t, mu_f
        self.var_pos_, self.var_neg_ = v_t, v_f
        self.dev_prior_ = w_pos / (w_pos + w_neg)
        return self

    def _llr(self, s):
        return (0.5 * np.log(self.var_neg_ / self.var_pos_)
                - 0.5 * (s - self.mean_pos_) ** 2 / self.var_pos_
                + 0.5 * (s - self.mean_neg_) ** 2 / self.var_neg_)

    def _fitted_prior(self):
        return self.dev_prior_
