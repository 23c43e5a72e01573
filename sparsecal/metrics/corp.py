"""CORP decompositions of a proper score (Dimitriadis, Gneiting & Jordan 2021):
``S(x) = MCB - DSC + UNC`` with ``MCB = S(x) - S(x_rc)``, ``DSC = S(c) -
S(x_rc)`` and ``UNC = S(c)``, ``x_rc`` the isotonic (PAV) fit of the labels on
the scores and ``c`` the mean label; no binning to choose.
"""
from dataclasses import dataclass

import numpy as np

from ..core.isotonic import isotonic_fit, isotonic_predict
from .._docs import fill_doc
from ..core.validation import check_scores_and_labels
from ..core.dispatch import takes_data

__all__ = ["ScoreDecomposition", "brier_corp", "log_loss_corp"]


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
