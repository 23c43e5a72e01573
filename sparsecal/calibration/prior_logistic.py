"""Prior-weighted logistic calibration with a training prior and a re-targetable
application prior (lecture notes ``004``)."""
from .._docs import fill_doc
from ..core.validation import check_prior
from .llr import LLRCalibrator
from .logistic import fit_log_odds

__all__ = ["PriorWeightedLogistic"]


@fill_doc
class PriorWeightedLogistic(LLRCalibrator):
    """Affine calibration ``llr(s) = a s + g`` of ``s = logit(score)``, fit for a
    training prior, applied at an application prior.

    The fit minimises the prior-weighted objective of the lecture notes (``004``)::

        R(a, g) = sum_i w_i log(1 + exp(-z_i (a s_i + g + logit(pi_t))))
        w_i = pi_t / n_T (positives),  (1 - pi_t) / n_F (negatives)

    so that ``a s + g`` is a log-likelihood ratio free of ``pi_t`` (Brümmer & du
    Preez 2006, Section 5), and predicts ``sigmoid(a s + g + logit(pi_a))``.
    Sample weights scale ``w_i`` within each class.

    Parameters
    ----------
    {priors}
    {logit_eps}

    Attributes
    ----------
    slope_, offset_ : float
        ``a`` and ``g``.
    training_prior_ : float
        ``training_prior`` or the dev positive rate.

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
        self.slope_, self.offset_, self.training_prior_ = fit_log_odds(
            self._logit_scores(x), y.astype(bool), w, self.training_prior)
        return self

    def _llr(self, s):
        return self.slope_ * s + self.offset_

    def _fitted_prior(self):
        return self.training_prior_
