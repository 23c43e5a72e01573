"""Prior-weighted logistic calibration with a training prior and a re-targetable
application prior (Brümmer's prior-weighted logistic regression, lecture notes
``004``)."""

from .llr import LLRCalibrator
from ..core.validation import check_prior
from .logistic import fit_logistic, logit, prior_weights

__all__ = ["PriorWeightedLogistic"]


class PriorWeightedLogistic(LLRCalibrator):
    """Affine calibration of ``s = logit(score)`` to a log-likelihood ratio,
    fit for a training prior, applied at an application prior.

    Fit minimises the prior-weighted objective of the lecture notes (``004``,
    "Calibration: prior-weighted logistic regression")::

        R(a, g) = sum_i w_i log(1 + exp(-z_i (a s_i + g + logit(pi_t))))
        w_i = pi_t / n_T (positives),  (1 - pi_t) / n_F (negatives)

    so that ``llr(s) = a s + g`` is a calibrated log-likelihood ratio, free of
    the training prior ``pi_t``. The posterior for an application prior
    ``pi_a`` is ``sigmoid(a s + g + logit(pi_a))`` (:meth:`predict`, or
    :meth:`predict_for_prior` for any other prior): re-targeting needs no
    refit. Sample weights scale ``w_i`` within each class.

    Parameters
    ----------
    training_prior : float in (0, 1), optional
        ``pi_t``, the prior the fit is optimised for. None: the dev positive
        rate (then every point weighs ``1/n``: plain maximum likelihood, and
        ``g`` is corrected by the dev log-odds).
    application_prior : float in (0, 1), optional
        ``pi_a`` of :meth:`predict`. None: the training prior (``training_prior_``).
    eps : float in (0, 0.5), default=1e-7
        Scores are clipped to ``[eps, 1 - eps]`` before the logit.

    Attributes
    ----------
    slope_, offset_ : float
        ``a`` and ``g`` of the calibrated LLR ``a logit(score) + g``.
    training_prior_ : float
        The training prior used (``training_prior`` or the dev positive rate).

    Raises
    ------
    ValueError
        In ``fit``, for dev labels of one class only.

    References
    ----------
    Cumani, "Score calibration and fusion" (lecture notes ``004``), slides
    "Calibration: prior-weighted logistic regression"; Brümmer & du Preez 2006,
    "Application-independent evaluation of speaker detection", Computer Speech
    and Language 20(2-3), Section 5 (prior-weighted logistic regression).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import PriorWeightedLogistic
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.random(4000)
    >>> labels = (rng.random(4000) < scores ** 2).astype(np.uint8)
    >>> cal = PriorWeightedLogistic(training_prior=0.5).fit(scores, labels)
    >>> p = cal.predict([0.9])                      # at the training prior, 0.5
    >>> q = cal.predict_for_prior([0.9], 0.1)       # re-targeted, no refit
    >>> bool(q[0] < p[0]), cal.set_params(application_prior=0.1).predict([0.9]) == q
    (True, array([ True]))
    """

    _value_state = ("slope_", "offset_", "training_prior_")

    def __init__(self, training_prior=None, application_prior=None, eps=1e-7):
        self.training_prior = training_prior
        self.application_prior = application_prior
        self.eps = eps

    def _check_params(self, prefix=""):
        self._check_prior_params(prefix, ("training_prior", "application_prior"))

    def _check_state(self, fields):
        with fields.in_json():          # the fitted values are in calibrator.json
            check_prior(self.training_prior_, fields.field("fitted.training_prior_"))

    def _fit(self, x, y, w):
        pos = y.astype(bool)
        weights, prior = prior_weights(pos, w, self.training_prior)
        (a,), g = fit_logistic(self._logit_scores(x)[:, None], pos, weights,
                               shift=float(logit(prior)))
        self.slope_, self.offset_, self.training_prior_ = float(a), g, float(prior)
        return self

    def _llr(self, s):
        return self.slope_ * s + self.offset_

    def _fitted_prior(self):
        return self.training_prior_
