"""CORP decompositions of a proper score (Dimitriadis, Gneiting & Jordan 2021):
``S(x) = MCB - DSC + UNC`` with ``MCB = S(x) - S(x_rc)``, ``DSC = S(c) -
S(x_rc)`` and ``UNC = S(c)``, ``x_rc`` the isotonic (PAV) fit of the labels on
the scores and ``c`` the mean label; no binning to choose.
"""
from dataclasses import dataclass

import numpy as np

from ..core.isotonic import isotonic_fit, isotonic_fit_pooled, isotonic_predict
from .._docs import fill_doc
from ..core.validation import check_scores_and_labels
from ..core.dispatch import takes_data

__all__ = ["LOG_LOSS_CLIP", "ScoreDecomposition", "brier_corp", "infinite_log_losses",
           "log_loss_corp", "table_corp"]

#: The probability floor of the finite (clipped) log loss: scores are clipped to
#: ``[LOG_LOSS_CLIP, 1 - LOG_LOSS_CLIP]``, scikit-learn's ``log_loss`` default
#: (``eps=1e-15``) before its version 1.2, so a forecast of 0 for an event that
#: happened costs ``-log(1e-15) = 34.5`` nats instead of infinitely many.
LOG_LOSS_CLIP = 1e-15


@dataclass(frozen=True)
class ScoreDecomposition:
    """A mean ``score`` (lower is better) with its CORP terms ``miscalibration``,
    ``discrimination`` and ``uncertainty``, ``n`` and ``rule`` ("brier" or
    "log_loss").

    Examples
    --------
    See :func:`brier_corp`.
    """

    score: float
    miscalibration: float
    discrimination: float
    uncertainty: float
    n: int
    rule: str

    def to_dict(self):
        return {"score": self.score, "miscalibration": self.miscalibration,
                "discrimination": self.discrimination, "uncertainty": self.uncertainty,
                "n": self.n, "rule": self.rule}


def _brier(p, y):
    return float(np.mean((p - y) ** 2))


def _log_loss(p, y):
    """Mean ``-log`` of the probability of the outcome (a wrong certain forecast costs inf)."""
    with np.errstate(divide="ignore"):
        return float(-np.mean(np.log(np.where(y == 1, p, 1.0 - p))))


def _brier_of(p, n, k):
    """Mean Brier score of ``n`` forecasts ``p`` per distinct score, ``k`` of
    them positive."""
    return float(np.sum(k * (p - 1.0) ** 2 + (n - k) * p ** 2) / np.sum(n))


def _log_loss_of(p, n, k):
    """Mean log loss per distinct score, as :func:`_log_loss` (0 log 0 = 0: a
    count of 0 adds nothing)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = (np.where(k > 0, k * np.log(p), 0.0)
                 + np.where(n > k, (n - k) * np.log(1.0 - p), 0.0))
    return float(-np.sum(terms) / np.sum(n))


def table_corp(scores, counts, positives, rule="brier", clip=None):
    """The CORP decomposition of one set from its distinct-score table.

    The PAV recalibration of the pooled table equals the one of the entries
    (ties pooled); the mean scores are sums over distinct scores, equal to the
    means over entries to float rounding. :func:`sparsecal.distributed` uses
    it on merged tables.

    Parameters
    ----------
    scores : ndarray of float64, shape (m,)
        Sorted distinct scores.
    counts, positives : ndarray of int64, shape (m,)
    rule : {"brier", "log_loss"}, default="brier"
    clip : float, optional
        Clip the forecasts (and their recalibration) to ``[clip, 1 - clip]``
        first: the finite log loss of :data:`LOG_LOSS_CLIP`.

    Returns
    -------
    ScoreDecomposition

    References
    ----------
    Dimitriadis, Gneiting & Jordan 2021, PNAS (CORP: ``S = MCB - DSC + UNC``);
    the clipping: scikit-learn's ``sklearn.metrics.log_loss`` (``eps``).

    Examples
    --------
    >>> import numpy as np
    >>> d = table_corp(np.array([0.2, 0.8]), np.array([2, 2]), np.array([1, 2]))
    >>> ref = brier_corp([0.2, 0.2, 0.8, 0.8], [0, 1, 1, 1])
    >>> round(d.score, 12) == round(ref.score, 12), round(d.miscalibration, 4)
    (True, 0.065)
    >>> t = (np.array([0.0, 0.5]), np.array([1, 1]), np.array([1, 0]))
    >>> table_corp(*t, rule="log_loss").score, round(table_corp(*t, "log_loss", 1e-15).score, 2)
    (inf, 17.62)
    """
    mean_of = {"brier": _brier_of, "log_loss": _log_loss_of}[rule]
    n, k = counts.astype(np.float64), positives.astype(np.float64)
    recalibrated = isotonic_predict(scores, *isotonic_fit_pooled(scores, k / n, n))
    climatology = np.full_like(scores, k.sum() / n.sum())
    forecasts = (scores, recalibrated, climatology)
    if clip is not None:
        forecasts = tuple(np.clip(f, clip, 1.0 - clip) for f in forecasts)
    s, s_rc, s_c = (mean_of(p, n, k) for p in forecasts)
    return ScoreDecomposition(s, s - s_rc, s_c - s_rc, s_c, int(counts.sum()), rule)


def infinite_log_losses(scores, counts, positives):
    """Entries whose log loss is infinite: a score of exactly 0 with label 1,
    or of 1 with label 0, from a distinct-score table.

    Parameters
    ----------
    scores : ndarray of float64, shape (m,)
        Sorted distinct scores.
    counts, positives : ndarray of int64, shape (m,)

    Returns
    -------
    int

    Examples
    --------
    >>> import numpy as np
    >>> infinite_log_losses(np.array([0.0, 0.5, 1.0]), np.array([4, 2, 3]),
    ...                     np.array([1, 1, 1]))
    3
    """
    return int(positives[scores == 0.0].sum() + (counts - positives)[scores == 1.0].sum())


def _decompose(scores, labels, rule, name):
    x, y = check_scores_and_labels(scores, labels)
    p = x.astype(np.float64)
    recalibrated = isotonic_predict(p, *isotonic_fit(p, y))
    climatology = np.full_like(p, np.mean(y, dtype=np.float64))
    s, s_rc, s_c = rule(p, y), rule(recalibrated, y), rule(climatology, y)
    return ScoreDecomposition(s, s - s_rc, s_c - s_rc, s_c, x.shape[0], name)


@takes_data
@fill_doc
def brier_corp(scores, labels):
    """CORP decomposition of the mean Brier score (``UNC = ybar (1 - ybar)``):
    unlike :func:`brier_decomposition`, no bins and no within-bin remainder.

    Parameters
    ----------
    {scores_labels}

    Returns
    -------
    ScoreDecomposition

    Examples
    --------
    >>> d = brier_corp([0.2, 0.2, 0.8, 0.8], [0, 1, 1, 1])
    >>> round(d.score, 4), round(d.miscalibration, 4), round(d.discrimination, 4)
    (0.19, 0.065, 0.0625)
    """
    return _decompose(scores, labels, _brier, "brier")


@takes_data
@fill_doc
def log_loss_corp(scores, labels):
    """CORP decomposition of the mean log loss (``uncertainty`` in nats); a forecast
    of exactly 0 for an event that happened makes the score and MCB infinite.

    Parameters
    ----------
    {scores_labels}

    Returns
    -------
    ScoreDecomposition

    Examples
    --------
    >>> d = log_loss_corp([0.1, 0.4, 0.6, 0.9], [0, 1, 0, 1])
    >>> round(d.score, 4), round(d.uncertainty, 4)     # log 2 = 0.6931
    (0.5108, 0.6931)
    """
    return _decompose(scores, labels, _log_loss, "log_loss")
