"""Bayes decisions of LLRs from a table of distinct LLRs with their counts and
positives: the detection cost (actual and minimum) and the Bayes error plot,
shared by the single-machine and distributed measures (Brümmer & du Preez 2006).
"""
from dataclasses import dataclass

import numpy as np

from ..core.validation import check_finite, check_positive_real, check_prior
from ..io.tables import summary, value_range

__all__ = ["BayesErrorPlot", "DetectionCost", "actual_dcf", "bayes_error", "check_application",
           "check_prior_log_odds", "error_curve", "llr_of_probabilities", "llr_table",
           "minimum_dcf"]

#: beyond this prior log-odds, 1 / (1 + e^-x) rounds to 1 in float64
MAX_LOG_ODDS = 30


@dataclass(frozen=True)
class DetectionCost:
    """A detection cost (DCF) ``value`` and the decisions it comes from: positive
    where ``llr > threshold`` (-inf: every point), with rates ``p_miss`` and
    ``p_fa``, for the application ``prior``, ``c_miss``, ``c_fa``; divided by
    ``min(pi c_miss, (1 - pi) c_fa)`` when ``normalized``.

    Examples
    --------
    See :func:`~sparsecal.metrics.dcf`.
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
        return {"value": self.value, "threshold": self.threshold, "p_miss": self.p_miss,
                "p_fa": self.p_fa, "prior": self.prior, "c_miss": self.c_miss,
                "c_fa": self.c_fa, "normalized": self.normalized}


@dataclass(frozen=True)
class BayesErrorPlot:
    """The data of a Bayes error plot: the grid ``prior_log_odds`` (unit costs) and
    the normalized ``actual_dcf`` and ``min_dcf`` at each point.

    Examples
    --------
    See :func:`~sparsecal.metrics.bayes_error_plot`.
    """

    prior_log_odds: np.ndarray
    actual_dcf: np.ndarray
    min_dcf: np.ndarray

    def __repr__(self):
        def span(a):
            return value_range([a.min(), a.max()] if a.size else [])
        return summary(self, f"{self.prior_log_odds.size} prior log-odds in "
                             f"{span(self.prior_log_odds)}",
                       f"actual DCF in {span(self.actual_dcf)}",
                       f"min DCF in {span(self.min_dcf)}")


def llr_of_probabilities(p, prior):
    """LLRs ``logit(p) - logit(prior)`` of posteriors computed under a training prior."""
    with np.errstate(divide="ignore"):
        return np.log(p) - np.log1p(-p) - np.log(prior / (1 - prior))


def check_application(prior, c_miss, c_fa):
    """The application ``(prior, c_miss, c_fa)``, checked."""
    prior = check_prior(prior, "prior")
    return prior, check_positive_real(c_miss, "c_miss"), check_positive_real(c_fa, "c_fa")


def bayes_threshold(prior, c_miss, c_fa):
    """The LLR above which the Bayes decision is "positive"."""
    return -np.log(prior * c_miss / ((1 - prior) * c_fa))


def detection_cost(prior, c_miss, c_fa, p_miss, p_fa, normalize):
    """``pi c_miss P_miss + (1 - pi) c_fa P_fa``, normalized if ``normalize``."""
    cost = prior * c_miss * p_miss + (1 - prior) * c_fa * p_fa
    return cost / min(prior * c_miss, (1 - prior) * c_fa) if normalize else cost


def llr_table(llr, positives, counts=None):
    """``(llr, counts, positives)``: the sorted distinct LLRs with their entries and positives."""
    u, inv = np.unique(llr, return_inverse=True)
    n = np.bincount(inv, minlength=u.size) if counts is None else \
        np.bincount(inv, weights=counts, minlength=u.size)
    return (u, n.astype(np.int64),
            np.bincount(inv, weights=positives, minlength=u.size).astype(np.int64))


def actual_dcf(llr, counts, positives, prior, c_miss, c_fa, normalize):
    """The actual DCF of the Bayes decisions of a table's LLRs (``counts`` None: one each)."""
    t = bayes_threshold(prior, c_miss, c_fa)
    yes = llr > t
    n_pos, pos_yes = int(positives.sum()), int(positives.sum(where=yes))
    if counts is None:
        n_neg, n_yes = llr.shape[0] - n_pos, int(np.count_nonzero(yes))
    else:
        n_neg, n_yes = int(counts.sum()) - n_pos, int(counts.sum(where=yes))
    p_miss = (n_pos - pos_yes) / n_pos
    p_fa = (n_yes - pos_yes) / n_neg
    return DetectionCost(float(detection_cost(prior, c_miss, c_fa, p_miss, p_fa, normalize)),
                         float(t), p_miss, p_fa, prior, c_miss, c_fa, normalize)


def error_curve(llr, counts, positives):
    """``(thresholds, p_miss, p_fa)`` of every distinct decision on an :func:`llr_table`."""
    cum_n, cum_k = np.cumsum(np.r_[0, counts]), np.cumsum(np.r_[0, positives])
    n_pos, n_neg = cum_k[-1], cum_n[-1] - cum_k[-1]
    return np.r_[-np.inf, llr], cum_k / n_pos, (n_neg - (cum_n - cum_k)) / n_neg


def minimum_dcf(curve, prior, c_miss, c_fa, normalize):
    """The :class:`DetectionCost` at the best threshold of an :func:`error_curve` (the first)."""
    thresholds, p_miss, p_fa = curve
    costs = detection_cost(prior, c_miss, c_fa, p_miss, p_fa, normalize)
    best = int(np.argmin(costs))
    return DetectionCost(float(costs[best]), float(thresholds[best]), float(p_miss[best]),
                         float(p_fa[best]), prior, c_miss, c_fa, normalize)


def check_prior_log_odds(prior_log_odds):
    """The grid of a Bayes error plot (default 61 points on [-3, 3]), checked."""
    grid = np.linspace(-3.0, 3.0, 61) if prior_log_odds is None \
        else check_finite(prior_log_odds, "prior_log_odds").astype(np.float64)
    if grid.shape[0] == 0 or np.abs(grid).max() > MAX_LOG_ODDS:
        raise ValueError(f"prior_log_odds must be a non-empty grid within "
                         f"[-{MAX_LOG_ODDS}, {MAX_LOG_ODDS}] (a prior of 0 or 1 has no "
                         "normalized cost)")
    return grid


def bayes_error(llr, counts, positives, grid):
    """The :class:`BayesErrorPlot` of a table's LLRs over ``grid``."""
    curve = error_curve(llr, counts, positives)
    priors = 1.0 / (1.0 + np.exp(-grid))
    actual = [actual_dcf(llr, counts, positives, p, 1.0, 1.0, True).value for p in priors]
    minimum = [minimum_dcf(curve, p, 1.0, 1.0, True).value for p in priors]
    return BayesErrorPlot(grid, np.array(actual), np.array(minimum))
