"""Platt scaling: logistic regression on the log-odds of the score (Platt 1999),
prior-weighted for an application prior (lecture notes ``004``)."""
from .._docs import fill_doc
from ..core.validation import check_prior
from .base import BaseCalibrator
from .logistic import fit_log_odds, logit

__all__ = ["PlattCalibrator"]


@fill_doc
class PlattCalibrator(BaseCalibrator):
    """Logistic calibration ``sigmoid(a s + g)`` of ``s = logit(score)`` (Platt 1999),
    fit by maximum likelihood (unregularised).

    With ``application_prior = pi`` the fit is that of
    :class:`~sparsecal.calibration.PriorWeightedLogistic` with ``training_prior =
    pi``: ``a s + g`` is a log-likelihood ratio (:meth:`llr`) and :meth:`predict`
    returns ``sigmoid(a s + g + logit(pi))``.

    Parameters
    ----------
    application_prior : float in (0, 1), optional
    {logit_eps}

    Attributes
    ----------
    slope_, offset_ : float
        ``a`` and ``g``.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import PlattCalibrator
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.random(1000)
    >>> labels = (rng.random(1000) < scores ** 2).astype(np.uint8)   # overconfident
    >>> cal = PlattCalibrator().fit(scores, labels)
    >>> rare = PlattCalibrator(application_prior=0.05).fit(scores, labels)
    >>> cal.slope_ > 1.0, bool(rare.predict([0.9])[0] < cal.predict([0.9])[0])
    (True, True)
    """

    _value_state = ("slope_", "offset_")

    def __init__(self, application_prior=None, eps=1e-7):
        self.application_prior = application_prior
        self.eps = eps

    def _check_params(self, prefix=""):
        if self.application_prior is not None:
            check_prior(self.application_prior, f"{prefix}application_prior")
        check_prior(self.eps, f"{prefix}eps", 0.5)

    @classmethod
    def from_params(cls, params, name="params"):
        """:meth:`BaseCalibrator.from_params`, also of files naming the prior ``prior``."""
        if isinstance(params, dict) and "prior" in params and "application_prior" not in params:
            params = dict(params)
            params["application_prior"] = params.pop("prior")
            if params["application_prior"] is not None:
                check_prior(params["application_prior"], f"{name}.prior")
        return super().from_params(params, name)

    def _fit(self, x, y, w):
        a, g, prior = fit_log_odds(logit(x, self.eps), y.astype(bool), w,
                                   self.application_prior)
        self.slope_ = a
        self.offset_ = g if self.application_prior is not None else g + float(logit(prior))
        return self

    def llr(self, scores):
        """``a logit(score) + g``: the calibrated log-likelihood ratio (without
        ``application_prior``, the log-odds at the dev prior).
        """
        self._check_fitted()
        return self._llr(self._scores(scores))

    def _llr(self, x):
        return self.slope_ * logit(x, self.eps) + self.offset_

    def _predict(self, x):
        from scipy.special import expit

        shift = 0.0 if self.application_prior is None else logit(self.application_prior)
        return expit(self._llr(x) + shift).astype(x.dtype)
