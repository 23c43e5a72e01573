"""Application-based measures of binary scores: actual and minimum DCF, Cllr and
minCllr, and the Bayes error plot (Brümmer & du Preez 2006; lecture notes
``004``). An application is a prior ``pi`` and the costs ``c_miss`` and
``c_fa``; the Bayes decision says "positive" where ``llr > -log(pi c_miss /
((1 - pi) c_fa))``.
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

__all__ = ["BayesErrorPlot", "bayes_error_plot", "cllr", "dcf", "min_cllr", "min_dcf"]


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
    """Actual detection cost ``DCF = pi c_miss P_miss + (1 - pi) c_fa P_fa`` of the
    Bayes decisions of the scores as LLRs, normalized by the cost of the best
    decision without scores (1: useless, 0: perfect); low only for scores both
    discriminative and calibrated (see :func:`min_dcf`).

    Parameters
    ----------
    {llr_scores}
    {application}

    Returns
    -------
    DetectionCost

    Examples
    --------
    >>> d = dcf([-2.0, -1.0, 0.5, 1.0, 3.0], [0, 1, 0, 1, 1], prior=0.5, scores_are="llr")
    >>> round(d.value, 4), d.threshold == 0
    (0.8333, True)
    """
    app = check_application(prior, c_miss, c_fa)
    llr, y = _llr(scores, labels, scores_are, training_prior)
    return actual_dcf(llr, None, y, *app, bool(normalize))


@takes_data
@fill_doc
def min_dcf(scores, labels, *, prior, c_miss=1.0, c_fa=1.0, normalize=True,
            scores_are="probability", training_prior=None):
    """Minimum detection cost: the DCF at the best threshold (an LLR) on the scores;
    ``dcf - min_dcf`` is the cost of miscalibration.

    Parameters
    ----------
    {llr_scores}
    {application}

    Returns
    -------
    DetectionCost

    Examples
    --------
    >>> m = min_dcf([-2.0, -1.0, 0.5, 1.0, 3.0], [0, 1, 0, 1, 1], prior=0.5, scores_are="llr")
    >>> round(m.value, 4), m.threshold
    (0.3333, 0.5)
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
    """Log-likelihood-ratio cost Cllr in bits, ``1/(2 log 2) (mean_T log(1 + e^-llr)
    + mean_F log(1 + e^llr))`` (Brümmer & du Preez 2006, Section 6): 1 for the
    useless LLR 0, 0 for a perfect and calibrated system.

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
    """
    return _cllr_of(*_llr(scores, labels, scores_are, training_prior))


@takes_data
@fill_doc
def min_cllr(scores, labels, *, scores_are="probability", training_prior=None):
    """Cllr after the best monotone recalibration (PAV); ``cllr - min_cllr`` is the
    calibration loss.

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
    """Normalized actual and minimum DCF over a range of applications: where the
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
    >>> b = bayes_error_plot([0.1, 0.8], [0, 1], prior_log_odds=[0.0])
    >>> b.actual_dcf.tolist(), b.min_dcf.tolist()
    ([0.0], [0.0])
    """
    grid = check_prior_log_odds(prior_log_odds)
    llr, y = _llr(scores, labels, scores_are, training_prior)
    return bayes_error(*llr_table(llr, y), grid)
