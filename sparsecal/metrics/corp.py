"""CORP decompositions of a proper score into miscalibration, discrimination and
uncertainty (Dimitriadis, Gneiting & Jordan 2021): the recalibrated forecast is
the isotonic (PAV) fit of the labels on the scores, with no binning to choose.

``S(x) = MCB - DSC + UNC`` with ``MCB = S(x) - S(x_rc)``, ``DSC = S(c) - S(x_rc)``
and ``UNC = S(c)``, where ``x_rc`` is the PAV fit and ``c`` the climatology (the
mean label for every point); mean Brier score or mean log loss.
"""
from dataclasses import dataclass

import numpy as np

from ..core.isotonic import isotonic_fit, isotonic_predict
from ..core.validation import check_scores_and_labels
from ..core.dispatch import takes_data

__all__ = ["ScoreDecomposition", "brier_corp", "log_loss_corp"]


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


def _decompose(scores, labels, rule, name):
    x, y = check_scores_and_labels(scores, labels)
    p = x.astype(np.float64)
    recalibrated = isotonic_predict(p, *isotonic_fit(p, y))
    climatology = np.full_like(p, np.mean(y, dtype=np.float64))
    s, s_rc, s_c = rule(p, y), rule(recalibrated, y), rule(climatology, y)
    return ScoreDecomposition(s, s - s_rc, s_c - s_rc, s_c, x.shape[0], name)


@takes_data
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
    PAV as in :func:`sparsecal.isotonic_fit` (ties pooled).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.random(1000)
    >>> d = brier_corp(x, rng.random(1000) < x ** 2)
    >>> round(d.score, 4), round(d.miscalibration - d.discrimination + d.uncertainty, 4)
    (0.1703, 0.1703)
    """
    return _decompose(scores, labels, _brier, "brier")


@takes_data
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
    return _decompose(scores, labels, _log_loss, "log_loss")
