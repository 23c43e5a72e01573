"""Calibrators whose model is a log-likelihood ratio of ``s = logit(score)``,
turned into a posterior for an application prior that can be changed without
refitting (lecture notes ``004``: ``log posterior odds = LLR + logit(prior)``)."""

from .base import BaseCalibrator
from ..core.validation import check_prior
from .logistic import logit

__all__ = ["LLRCalibrator"]


class LLRCalibrator(BaseCalibrator):
    """Base of :class:`~sparsecal.calibration.PriorWeightedLogistic` and
    :class:`~sparsecal.calibration.GaussianCalibration`: subclasses have the
    parameters ``application_prior`` and ``eps`` and implement ``_llr(s)``
    (float64 log-odds scores) and ``_fitted_prior()`` (the prior used when
    ``application_prior`` is None).

    Examples
    --------
    >>> from sparsecal import GaussianCalibration
    >>> cal = GaussianCalibration().fit([0.1, 0.2, 0.6, 0.9], [0, 0, 1, 1])
    >>> bool(cal.predict_for_prior([0.5], 0.9)[0] > cal.predict_for_prior([0.5], 0.1)[0])
    True
    """

    def _check_prior_params(self, prefix, names):
        for name in names:
            if getattr(self, name) is not None:
                check_prior(getattr(self, name), f"{prefix}{name}")
        check_prior(self.eps, f"{prefix}eps", 0.5)

    def _logit_scores(self, x):
        return logit(x, self.eps)

    def llr(self, scores):
        """The calibrated log-likelihood ratio of each score.

        Parameters
        ----------
        scores : array_like of float, shape (n,) or (n, 1)
            Probabilities in [0, 1].

        Returns
        -------
        ndarray of float64, shape (n,)
        """
        self._check_fitted()
        return self._llr(self._logit_scores(self._scores(scores)))

    def predict_for_prior(self, scores, application_prior):
        """Posterior ``sigmoid(llr + logit(application_prior))``, without refitting.

        Parameters
        ----------
        scores : array_like of float, shape (n,) or (n, 1)
            Probabilities in [0, 1].
        application_prior : float in (0, 1)

        Returns
        -------
        ndarray, shape (n,)
            Float32 for float32 input, float64 otherwise.

        Raises
        ------
        ValueError
            For a prior outside (0, 1) or invalid scores.
        """
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
