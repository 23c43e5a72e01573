"""Calibrators whose model is a log-likelihood ratio of ``s = logit(score)``,
turned into a posterior for an application prior that can be changed without
refitting (lecture notes ``004``: ``log posterior odds = LLR + logit(prior)``)."""

from .base import BaseCalibrator
from ..core.validation import check_prior
from .logistic import logit

__all__ = ["LLRCalibrator"]


class LLRCalibrator(BaseCalibrator):
    """Base of the calibrators whose model is an LLR: subclasses take
    ``application_prior`` and ``eps`` and implement ``_llr(s)`` and
    ``_fitted_prior()`` (the prior when ``application_prior`` is None).
    """

    def _check_prior_params(self, prefix, names):
        for name in names:
            if getattr(self, name) is not None:
                check_prior(getattr(self, name), f"{prefix}{name}")
        check_prior(self.eps, f"{prefix}eps", 0.5)

    def _logit_scores(self, x):
        return logit(x, self.eps)

    def llr(self, scores):
        """The calibrated log-likelihood ratio of each score (float64)."""
        self._check_fitted()
        return self._llr(self._logit_scores(self._scores(scores)))

    def predict_for_prior(self, scores, application_prior):
        """Posterior ``sigmoid(llr + logit(application_prior))``, without refitting."""
        self._check_fitted()
        prior = check_prior(application_prior, "application_prior")
        return self._posterior(self._scores(scores), prior)

    def _posterior(self, x, prior):
        from scipy.special import expit

        return expit(self._llr(self._logit_scores(x)) + logit(prior)).astype(x.dtype)

    def _predict(self, x):
        prior = self._fitted_prior() if self.application_prior is None \
            else check_prior(self.application_prior, "application_prior")
        return self._posterior(x, prior)
