"""Application-based measures of binary scores: detection cost (actual and minimum
DCF), Cllr and minCllr (via PAV), and the Bayes error plot (Brümmer & du Preez
2006; Cumani's notes ``004``).

An application is a prior ``pi`` of the positive class and the costs ``c_miss``
and ``c_fa``. Scores are LLRs or posteriors computed under a training prior
(LLR ``logit(p) - logit(pi_t)``); the Bayes decision says "positive" when
``llr > -log(pi c_miss / ((1 - pi) c_fa))``.
"""
import numpy as np

from ..core.isotonic import isotonic_fit, isotonic_predict
from ..core.validation import (DegenerateDataError, check_choice, check_finite,
                               check_labels, check_prior, check_scores_and_labels)
from .._docs import fill_doc
from .decisions import (BayesErrorPlot, DetectionCost, actual_dcf, bayes_error,
                        check_application, check_prior_log_odds, error_curve,
                        llr_of_probabilities, llr_table, minimum_dcf)
from ..core.dispatch import takes_data

__all__ = ["BayesErrorPlot", "DetectionCost", "bayes_error_plot", "cllr", "dcf",
           "min_cllr", "min_dcf"]


def _llr(scores, labels, scores_are, training_prior):
    """Validated LLRs (float64) and labels; both classes must be present."""
    check_choice(scores_are, "scores_are", {"probability", "llr"})
    if scores_are == "llr":
        if training_prior is not None:
            raise ValueError("training_prior applies to scores_are='probability' only")
        x = check_finite(scores, "scores")
        if x.shape[0] == 0:
            raise ValueError("scores is empty: at least one score is needed")
        y = check_labels(labels, "labels", x.shape[0])
    else:
        x, y = check_scores_and_labels(scores, labels)
    n_pos = int(np.count_nonzero(y))
    if n_pos in (0, y.shape[0]):
        raise DegenerateDataError("labels must hold both classes (a miss rate and a false-alarm "
                         f"rate are needed), got {n_pos} positives of {y.shape[0]}")
    x = x.astype(np.float64)
    if scores_are == "llr":
        return x, y
    pi_t = n_pos / y.shape[0] if training_prior is None \
        else check_prior(training_prior, "training_prior")
    return llr_of_probabilities(x, pi_t), y


@takes_data
@fill_doc
def dcf(scores, labels, *, prior, c_miss=1.0, c_fa=1.0, normalize=True,
        scores_are="probability", training_prior=None):
    """Actual detection cost (DCF) of the Bayes decisions of the scores as LLRs.

    ``DCF = pi c_miss P_miss + (1 - pi) c_fa P_fa``, normalized by the cost of the
    best decision without scores: 1 is a useless system, 0 a perfect one. It is low
    only when the scores are both discriminative and calibrated (see
    :func:`min_dcf`).

    Parameters
    ----------
    {llr_scores}
    {application}

    Returns
    -------
    DetectionCost

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(1000) < 0.3
    >>> llr = np.where(y, 1.0, -1.0) + rng.normal(0, 1.5, 1000)
    >>> d = dcf(llr, y, prior=0.3, scores_are="llr")
    >>> round(d.value, 3), round(d.threshold, 3)
    (0.689, 0.847)
    """
    app = check_application(prior, c_miss, c_fa)
    llr, y = _llr(scores, labels, scores_are, training_prior)
    return actual_dcf(llr, None, y, *app, bool(normalize))


@takes_data
@fill_doc
def min_dcf(scores, labels, *, prior, c_miss=1.0, c_fa=1.0, normalize=True,
            scores_are="probability", training_prior=None):
    """Minimum detection cost: the DCF at the best threshold on the scores.

    It depends only on the order of the scores (one sort); ``dcf - min_dcf`` is the
    cost of miscalibration.

    Parameters
    ----------
    {llr_scores}
    {application}

    Returns
    -------
    DetectionCost
        ``threshold`` is the best one, as an LLR.

    Examples
    --------
    >>> llr, y = [-2.0, -1.0, 0.5, 1.0, 3.0], [0, 1, 0, 1, 1]
    >>> m = min_dcf(llr, y, prior=0.5, scores_are="llr")   # best: positive above 0.5
    >>> round(m.value, 4), m.threshold, m.p_miss, m.p_fa
    (0.3333, 0.5, 0.3333333333333333, 0.0)
    >>> round(dcf(llr, y, prior=0.5, scores_are="llr").value, 4)   # threshold 0
    0.8333
    """
    app = check_application(prior, c_miss, c_fa)
    llr, y = _llr(scores, labels, scores_are, training_prior)
    return minimum_dcf(error_curve(*llr_table(llr, y)), *app, bool(normalize))


def _cllr_of(llr, y):
    pos = y == 1
    return float((np.mean(np.logaddexp(0.0, -llr[pos])) + np.mean(np.logaddexp(0.0, llr[~pos])))
                 / (2 * np.log(2)))


@takes_data
@fill_doc
def cllr(scores, labels, *, scores_are="probability", training_prior=None):
    """Log-likelihood-ratio cost Cllr, in bits.

    ``Cllr = 1/(2 log 2) (1/N_T sum_T log(1 + e^-llr) + 1/N_F sum_F log(1 + e^llr))``:
    1 for the useless LLR 0, 0 for a perfect and calibrated system (Brümmer & du
    Preez 2006, Section 6).

    Parameters
    ----------
    {llr_scores}

    Returns
    -------
    float

    Examples
    --------
    >>> cllr([0.0, 0.0], [0, 1], scores_are="llr")
    1.0
    >>> round(cllr([-5.0, 5.0], [0, 1], scores_are="llr"), 4)
    0.0097
    """
    return _cllr_of(*_llr(scores, labels, scores_are, training_prior))


@takes_data
@fill_doc
def min_cllr(scores, labels, *, scores_are="probability", training_prior=None):
    """Cllr after the best monotone recalibration: of the PAV-fitted posteriors as
    LLRs at the empirical prior; ``cllr - min_cllr`` is the calibration loss.

    Parameters
    ----------
    {llr_scores}

    Returns
    -------
    float

    Examples
    --------
    >>> min_cllr([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1])      # separable: 0
    0.0
    >>> min_cllr([0.5, 0.5, 0.5, 0.5], [0, 1, 0, 1])      # no information: 1
    1.0
    """
    llr, y = _llr(scores, labels, scores_are, training_prior)
    # PAV depends only on the order and ties of the scores: fit it on their
    # ranks, which are finite where LLRs of probabilities 0 and 1 are not
    rank = np.unique(llr, return_inverse=True)[1].astype(np.float64)
    p = isotonic_predict(rank, *isotonic_fit(rank, y))
    return _cllr_of(llr_of_probabilities(p, np.mean(y, dtype=np.float64)), y)


@takes_data
@fill_doc
def bayes_error_plot(scores, labels, *, prior_log_odds=None, scores_are="probability",
                     training_prior=None):
    """Normalized actual and minimum DCF over a range of applications: where the two
    curves part, the scores are miscalibrated for those applications.

    Parameters
    ----------
    {llr_scores}
    prior_log_odds : array_like of float, optional
        Effective prior log-odds (unit costs); default 61 points on [-3, 3].

    Returns
    -------
    BayesErrorPlot

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(2000) < 0.5
    >>> llr = 2 * np.where(y, 1.0, -1.0) + rng.normal(0, 2, 2000)   # calibrated
    >>> b = bayes_error_plot(llr, y, scores_are="llr", prior_log_odds=[-2, 0, 2])
    >>> b.actual_dcf.round(2).tolist(), b.min_dcf.round(2).tolist()
    ([0.65, 0.31, 0.63], [0.64, 0.3, 0.57])
    """
    grid = check_prior_log_odds(prior_log_odds)
    llr, y = _llr(scores, labels, scores_are, training_prior)
    return bayes_error(*llr_table(llr, y), grid)
