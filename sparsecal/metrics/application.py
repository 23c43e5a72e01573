"""Application-based measures of binary scores: detection cost (actual and minimum
DCF), Cllr and minCllr (via PAV), and the Bayes error plot.

An application is a prior ``pi`` of the positive class and the costs ``c_miss``
(a positive decided negative) and ``c_fa`` (a negative decided positive). Scores
are log-likelihood ratios (``scores_are="llr"``) or posterior probabilities
computed under a training prior ``pi_t`` (``"probability"``; their LLR is
``logit(p) - logit(pi_t)``). The Bayes decision says "positive" when
``llr > -log(pi c_miss / ((1 - pi) c_fa))``.
"""
from dataclasses import dataclass

import numpy as np

from ..core.isotonic import isotonic_fit, isotonic_predict
from ..core.validation import (DegenerateDataError, check_choice, check_finite,
                               check_labels, check_positive_real, check_prior,
                               check_scores_and_labels)

#: beyond this prior log-odds, 1 / (1 + e^-x) rounds to 1 in float64
_MAX_LOG_ODDS = 30

__all__ = ["BayesErrorPlot", "DetectionCost", "bayes_error_plot", "cllr", "dcf",
           "min_cllr", "min_dcf"]


@dataclass(frozen=True)
class DetectionCost:
    """A detection cost (DCF) and the decisions it comes from.

    Attributes
    ----------
    value : float
        ``pi c_miss P_miss + (1 - pi) c_fa P_fa``, divided by
        ``min(pi c_miss, (1 - pi) c_fa)`` when ``normalized``.
    threshold : float
        The LLR threshold: "positive" where ``llr > threshold`` (the Bayes
        threshold for the actual DCF, the best one for the minimum DCF; -inf
        means every point is decided positive).
    p_miss, p_fa : float
        Miss rate of the positives and false-alarm rate of the negatives.
    prior, c_miss, c_fa : float
        The application.
    normalized : bool

    Examples
    --------
    >>> d = dcf([0.2, 0.7, 0.9], [0, 0, 1], prior=0.5, training_prior=0.5)
    >>> float(d), d.p_miss, d.p_fa, d.threshold
    (0.5, 0.0, 0.5, -0.0)
    """

    value: float
    threshold: float
    p_miss: float
    p_fa: float
    prior: float
    c_miss: float
    c_fa: float
    normalized: bool

    def __float__(self):
        return float(self.value)

    def to_dict(self):
        """Every field."""
        return {"value": self.value, "threshold": self.threshold, "p_miss": self.p_miss,
                "p_fa": self.p_fa, "prior": self.prior, "c_miss": self.c_miss,
                "c_fa": self.c_fa, "normalized": self.normalized}


@dataclass(frozen=True)
class BayesErrorPlot:
    """The data of a Bayes error plot.

    Attributes
    ----------
    prior_log_odds : ndarray of float64
        The grid of effective prior log-odds ``log(pi / (1 - pi))`` (unit costs).
    actual_dcf, min_dcf : ndarray of float64
        Normalized actual and minimum DCF at each grid point.

    Examples
    --------
    >>> b = bayes_error_plot([0.1, 0.8], [0, 1], prior_log_odds=[0.0])
    >>> b.actual_dcf.tolist(), b.min_dcf.tolist()
    ([0.0], [0.0])
    """

    prior_log_odds: np.ndarray
    actual_dcf: np.ndarray
    min_dcf: np.ndarray


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
    with np.errstate(divide="ignore"):
        return np.log(x) - np.log1p(-x) - np.log(pi_t / (1 - pi_t)), y


def _application(prior, c_miss, c_fa):
    prior = check_prior(prior, "prior")
    return prior, check_positive_real(c_miss, "c_miss"), check_positive_real(c_fa, "c_fa")


def _bayes_threshold(prior, c_miss, c_fa):
    """The LLR above which the Bayes decision is "positive"."""
    return -np.log(prior * c_miss / ((1 - prior) * c_fa))


def _cost(prior, c_miss, c_fa, p_miss, p_fa, normalize):
    """Detection cost of error rates (arrays allowed), normalized if asked."""
    cost = prior * c_miss * p_miss + (1 - prior) * c_fa * p_fa
    return cost / min(prior * c_miss, (1 - prior) * c_fa) if normalize else cost


def _actual(llr, y, prior, c_miss, c_fa, normalize):
    t = _bayes_threshold(prior, c_miss, c_fa)
    yes = llr > t
    pos = y == 1
    p_miss = float(np.count_nonzero(~yes & pos) / np.count_nonzero(pos))
    p_fa = float(np.count_nonzero(yes & ~pos) / np.count_nonzero(~pos))
    return DetectionCost(float(_cost(prior, c_miss, c_fa, p_miss, p_fa, normalize)),
                         float(t), p_miss, p_fa, prior, c_miss, c_fa, normalize)


def _error_curve(llr, y):
    """Every distinct decision of a threshold on the scores, from one sort.

    Returns ``(thresholds, p_miss, p_fa)``: deciding "positive" where
    ``llr > thresholds[k]``, for ``-inf`` and each distinct score.
    """
    order = np.argsort(llr, kind="stable")
    s = llr[order]
    pos = y[order].astype(np.int64)
    cum_pos = np.concatenate([[0], np.cumsum(pos)])
    k = np.concatenate([[0], np.flatnonzero(s[1:] != s[:-1]) + 1, [s.shape[0]]])
    n_pos = cum_pos[-1]
    n_neg = s.shape[0] - n_pos
    thresholds = np.concatenate([[-np.inf], s[k[1:] - 1]])
    return thresholds, cum_pos[k] / n_pos, (n_neg - (k - cum_pos[k])) / n_neg


def _minimum(curve, prior, c_miss, c_fa, normalize):
    thresholds, p_miss, p_fa = curve
    costs = _cost(prior, c_miss, c_fa, p_miss, p_fa, normalize)
    best = int(np.argmin(costs))
    return DetectionCost(float(costs[best]), float(thresholds[best]), float(p_miss[best]),
                         float(p_fa[best]), prior, c_miss, c_fa, normalize)


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
    app = _application(prior, c_miss, c_fa)
    llr, y = _llr(scores, labels, scores_are, training_prior)
    return _actual(llr, y, *app, bool(normalize))


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
    app = _application(prior, c_miss, c_fa)
    llr, y = _llr(scores, labels, scores_are, training_prior)
    return _minimum(_error_curve(llr, y), *app, bool(normalize))


def _cllr_of(llr, y):
    """Cllr in bits; an infinite LLR on the right side costs 0."""
    pos = y == 1
    return float((np.mean(np.logaddexp(0.0, -llr[pos])) + np.mean(np.logaddexp(0.0, llr[~pos])))
                 / (2 * np.log(2)))


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
    prior = np.mean(y, dtype=np.float64)
    with np.errstate(divide="ignore"):
        pav_llr = np.log(p) - np.log1p(-p) - np.log(prior / (1 - prior))
    return _cllr_of(pav_llr, y)


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
    grid = np.linspace(-3.0, 3.0, 61) if prior_log_odds is None \
        else check_finite(prior_log_odds, "prior_log_odds").astype(np.float64)
    if grid.shape[0] == 0 or np.abs(grid).max() > _MAX_LOG_ODDS:
        raise ValueError(f"prior_log_odds must be a non-empty grid within "
                         f"[-{_MAX_LOG_ODDS}, {_MAX_LOG_ODDS}] (a prior of 0 or 1 has no "
                         "normalized cost)")
    llr, y = _llr(scores, labels, scores_are, training_prior)
    curve = _error_curve(llr, y)
    priors = 1.0 / (1.0 + np.exp(-grid))
    actual = [_actual(llr, y, p, 1.0, 1.0, True).value for p in priors]
    minimum = [_minimum(curve, p, 1.0, 1.0, True).value for p in priors]
    return BayesErrorPlot(grid, np.array(actual), np.array(minimum))
