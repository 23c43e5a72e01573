"""Application-based measures of binary scores: detection cost (actual and minimum
DCF), Cllr and minCllr (via PAV), and the Bayes error plot.

An application is a prior ``pi`` of the positive class and the costs ``c_miss``
(a positive decided negative) and ``c_fa`` (a negative decided positive). Scores
are log-likelihood ratios (``scores_are="llr"``) or posterior probabilities
computed under a training prior ``pi_t`` (``"probability"``; their LLR is
``logit(p) - logit(pi_t)``). The Bayes decision says "positive" when
``llr > -log(pi c_miss / ((1 - pi) c_fa))``.
"""
import numpy as np

from ..core.isotonic import isotonic_fit, isotonic_predict
from ..core.validation import (DegenerateDataError, check_choice, check_finite,
                               check_labels, check_prior, check_scores_and_labels)
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
def dcf(scores, labels, *, prior, c_miss=1.0, c_fa=1.0, normalize=True,
        scores_are="probability", training_prior=None):
    """Actual detection cost (DCF) of Bayes decisions with the scores as LLRs.

    Decide "positive" where ``llr > -log(pi c_miss / ((1 - pi) c_fa))``, then
    ``DCF = pi c_miss P_miss + (1 - pi) c_fa P_fa``; normalized by the cost of
    the best decision without scores, ``min(pi c_miss, (1 - pi) c_fa)``, so 1 is
    a useless system and 0 a perfect one. It is low only when the scores are
    both discriminative and calibrated (compare :func:`min_dcf`).

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Posterior probabilities in [0, 1] (``scores_are="probability"``) or
        finite log-likelihood ratios (``"llr"``).
    labels : array_like of {0, 1} or bool, shape (n,)
        Both classes must be present.
    prior : float
        The application's prior of the positive class, in (0, 1).
    c_miss, c_fa : float, default=1.0
        Costs of a miss and of a false alarm (> 0).
    normalize : bool, default=True
    scores_are : {"probability", "llr"}, default="probability"
    training_prior : float, optional
        For probabilities: the prior they were computed under, in (0, 1);
        ``llr = logit(p) - logit(training_prior)``. Default: the positive rate
        of ``labels`` (the prior of a tagger's marginals when training and test
        populations match). Not allowed with LLRs.

    Returns
    -------
    DetectionCost

    Raises
    ------
    TypeError
        Non-numeric scores, labels, prior or costs.
    ValueError
        Invalid scores or labels, labels of one class only, a prior outside
        (0, 1), a cost that is not a finite number above 0, an unknown
        ``scores_are``, or ``training_prior`` with LLRs.

    References
    ----------
    Cumani, "Score calibration and fusion" (``004``): decisions compare an
    (ideally calibrated) LLR with the application's threshold; the DCF, its
    normalized form and minDCF over pooled scores (K-fold, note 2). Brümmer &
    du Preez 2006, "Application-independent evaluation of speaker detection",
    Section 2 (the Bayes decision threshold, normalized DCF).

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
def min_dcf(scores, labels, *, prior, c_miss=1.0, c_fa=1.0, normalize=True,
            scores_are="probability", training_prior=None):
    """Minimum detection cost: the DCF at the best threshold on the scores.

    ``minDCF = min_t pi c_miss P_miss(t) + (1 - pi) c_fa P_fa(t)`` over every
    threshold (deciding "positive" where ``score > t``: ``t = -inf`` and each
    distinct score), from one sort: O(n log n). It depends only on the order of
    the scores, so on neither ``scores_are`` nor ``training_prior``; the gap
    ``dcf - min_dcf`` is the cost of miscalibration.

    Parameters
    ----------
    scores, labels, prior, c_miss, c_fa, normalize, scores_are, training_prior
        As in :func:`dcf`.

    Returns
    -------
    DetectionCost
        ``threshold`` is the best one, as an LLR.

    Raises
    ------
    TypeError, ValueError
        As :func:`dcf`.

    References
    ----------
    Cumani, "Score calibration and fusion" (``004``), K-fold note 2 (minDCF is
    computed over the pooled scores with one threshold for all); Brümmer &
    du Preez 2006, Section 4 (minimum DCF, the discrimination part of the cost).

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
    """Cllr in bits; an infinite LLR on the right side costs 0."""
    pos = y == 1
    return float((np.mean(np.logaddexp(0.0, -llr[pos])) + np.mean(np.logaddexp(0.0, llr[~pos])))
                 / (2 * np.log(2)))


@takes_data
def cllr(scores, labels, *, scores_are="probability", training_prior=None):
    """Log-likelihood-ratio cost Cllr, in bits.

    ``Cllr = 1/(2 log 2) (1/N_T sum_T log(1 + e^-llr) + 1/N_F sum_F log(1 + e^llr))``:
    the cross-entropy of the posteriors at prior 1/2, averaged over the two
    classes; 1 for the useless LLR 0, 0 for a perfect and calibrated system.
    A probability 0 for a positive (1 for a negative) gives infinity.

    Parameters
    ----------
    scores, labels, scores_are, training_prior
        As in :func:`dcf`.

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        As :func:`dcf` (without the application's arguments).

    References
    ----------
    Brümmer & du Preez 2006, Section 6 (Cllr, the DCF integrated over all
    applications); Cumani, "Score calibration and fusion" (``004``): calibration
    aims at LLRs good for every application.

    Examples
    --------
    >>> cllr([0.0, 0.0], [0, 1], scores_are="llr")
    1.0
    >>> round(cllr([-5.0, 5.0], [0, 1], scores_are="llr"), 4)
    0.0097
    """
    return _cllr_of(*_llr(scores, labels, scores_are, training_prior))


@takes_data
def min_cllr(scores, labels, *, scores_are="probability", training_prior=None):
    """Cllr after the best monotone recalibration: the PAV-calibrated LLRs.

    The labels are fitted on the scores by pool adjacent violators (ties
    pooled); the fitted posterior ``p`` is at the empirical prior ``N_T/N``,
    so the recalibrated LLR is ``logit(p) - logit(N_T/N)``; minCllr is its
    Cllr. It depends only on the order of the scores; ``cllr - min_cllr`` is
    the calibration loss.

    Parameters
    ----------
    scores, labels, scores_are, training_prior
        As in :func:`dcf` (``training_prior`` is checked, and has no effect).

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        As :func:`cllr`.

    References
    ----------
    Cumani, "Score calibration and fusion" (``004``): isotonic regression is the
    monotone calibration that is optimal on the data it is fitted to;
    Brümmer & du Preez 2006, Section 7.1 (minCllr by PAV); Zadrozny & Elkan 2002.

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
def bayes_error_plot(scores, labels, *, prior_log_odds=None, scores_are="probability",
                     training_prior=None):
    """Normalized actual and minimum DCF over a range of applications.

    For each effective prior log-odds ``p~`` (unit costs, prior
    ``pi = 1 / (1 + e^-p~)``), the normalized :func:`dcf` and :func:`min_dcf`.
    Where the two curves part, the scores are miscalibrated for those
    applications; the area under the actual curve relates to Cllr.

    Parameters
    ----------
    scores, labels, scores_are, training_prior
        As in :func:`dcf`.
    prior_log_odds : array_like of float, optional
        The grid; default 61 points on [-3, 3].

    Returns
    -------
    BayesErrorPlot

    Raises
    ------
    TypeError, ValueError
        As :func:`dcf`, or a grid that is empty, not 1-D, or has a value
        beyond ±30 (where the prior rounds to 0 or 1).

    References
    ----------
    Brümmer & du Preez 2006, Section 5 (applied probability of error plots);
    Cumani, "Score calibration and fusion" (``004``): calibration for a range
    of applications rather than one.

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
