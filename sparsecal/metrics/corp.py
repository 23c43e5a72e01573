"""CORP decompositions of a proper score into miscalibration, discrimination and
uncertainty (Dimitriadis, Gneiting & Jordan 2021): the recalibrated forecast is
the isotonic (PAV) fit of the labels on the scores, with no binning to choose.

``S(x) = MCB - DSC + UNC`` with ``MCB = S(x) - S(x_rc)``, ``DSC = S(c) - S(x_rc)``
and ``UNC = S(c)``, where ``x_rc`` is the PAV fit and ``c`` the climatology (the
mean label for every point); mean Brier score or mean log loss.
"""
from dataclasses import dataclass

import numpy as np

from ..core.isotonic import isotonic_fit, isotonic_fit_pooled, isotonic_predict
from ..core.validation import check_scores_and_labels
from ..core.dispatch import distributed_form

__all__ = ["LOG_LOSS_CLIP", "ScoreDecomposition", "brier_corp", "infinite_log_losses",
           "log_loss_corp", "table_corp"]

#: The probability floor of the finite (clipped) log loss: scores are clipped to
#: ``[LOG_LOSS_CLIP, 1 - LOG_LOSS_CLIP]``, scikit-learn's ``log_loss`` default
#: (``eps=1e-15``) before its version 1.2, so a forecast of 0 for an event that
#: happened costs ``-log(1e-15) = 34.5`` nats instead of infinitely many.
LOG_LOSS_CLIP = 1e-15


@dataclass(frozen=True)
class ScoreDecomposition:
    """A mean score with its CORP decomposition ``score = MCB - DSC + UNC``.

    Attributes
    ----------
    score : float
        Mean score of the forecasts (lower is better).
    miscalibration : float
        MCB = score - score of the PAV-recalibrated forecasts (>= 0).
    discrimination : float
        DSC = score of the climatology - score of the recalibrated forecasts (>= 0).
    uncertainty : float
        UNC = score of the climatology (the mean label for every point).
    n : int
        Number of points.
    rule : str
        "brier" or "log_loss".

    Examples
    --------
    >>> d = brier_corp([0.2, 0.2, 0.8, 0.8], [0, 1, 1, 1])
    >>> round(d.score, 4), round(d.miscalibration, 4), round(d.discrimination, 4)
    (0.19, 0.065, 0.0625)
    >>> d.to_dict()["rule"], round(d.uncertainty, 4)
    ('brier', 0.1875)
    """

    score: float
    miscalibration: float
    discrimination: float
    uncertainty: float
    n: int
    rule: str

    def to_dict(self):
        """The four terms, the size and the scoring rule."""
        return {"score": self.score, "miscalibration": self.miscalibration,
                "discrimination": self.discrimination, "uncertainty": self.uncertainty,
                "n": self.n, "rule": self.rule}


def _brier(p, y):
    return float(np.mean((p - y) ** 2))


def _log_loss(p, y):
    """Mean of ``-log`` of the probability given to the outcome that happened: a
    forecast of 0 or 1 costs 0 when right (0 log 0 = 0) and inf when wrong."""
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


def brier_corp(scores, labels):
    """CORP decomposition of the mean Brier score.

    ``BS = MCB - DSC + UNC`` with the PAV fit of the labels on the scores as the
    recalibrated forecast; ``UNC = ybar (1 - ybar)``. Unlike the binned
    :func:`brier_decomposition` there is no bin count to choose and no
    within-bin remainder.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Probabilities in [0, 1] (computed in float64 whatever the dtype).
    labels : array_like of {0, 1} or bool, shape (n,)

    Returns
    -------
    ScoreDecomposition

    Raises
    ------
    TypeError
        Non-numeric scores or labels.
    ValueError
        Invalid or empty scores, invalid labels.

    References
    ----------
    Dimitriadis, Gneiting & Jordan 2021, "Stable reliability diagrams for
    probabilistic classifiers", PNAS 118(8), eq. 3 and the section "Score
    decomposition" (CORP: consistent, optimally binned, reproducible, PAV-based);
    PAV as in :func:`sparsecal.core.isotonic_fit` (ties pooled).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.random(1000)
    >>> d = brier_corp(x, rng.random(1000) < x ** 2)
    >>> round(d.score, 4), round(d.miscalibration - d.discrimination + d.uncertainty, 4)
    (0.1703, 0.1703)
    """
    if (cluster := distributed_form(brier_corp, locals())) is not None:
        return cluster()
    return _decompose(scores, labels, _brier, "brier")


def log_loss_corp(scores, labels):
    """CORP decomposition of the mean log loss (logarithmic score).

    As :func:`brier_corp` with ``S(p, y) = -log(p if y = 1 else 1 - p)``. The
    PAV fit is 0 (or 1) only on runs of scores whose labels are all 0 (all 1),
    so, with the convention ``0 log 0 = 0`` the paper uses, the recalibrated and
    climatological scores are finite; a forecast of exactly 0 for an event
    that happened (or 1 for one that did not) makes the score and MCB infinite,
    and that is what is returned.

    Parameters
    ----------
    scores, labels
        As in :func:`brier_corp`.

    Returns
    -------
    ScoreDecomposition
        ``uncertainty`` is the entropy of the mean label, in nats.

    Raises
    ------
    TypeError, ValueError
        As :func:`brier_corp`.

    References
    ----------
    Dimitriadis, Gneiting & Jordan 2021, PNAS, "Score decomposition" (the CORP
    decomposition holds for every proper scoring rule; the PAV fit is optimal
    for all of them at once).

    Examples
    --------
    >>> d = log_loss_corp([0.1, 0.4, 0.6, 0.9], [0, 1, 0, 1])
    >>> round(d.score, 4), round(d.uncertainty, 4)     # log 2 = 0.6931
    (0.5108, 0.6931)
    >>> log_loss_corp([0.0, 0.5], [1, 0]).score
    inf
    """
    if (cluster := distributed_form(log_loss_corp, locals())) is not None:
        return cluster()
    return _decompose(scores, labels, _log_loss, "log_loss")
