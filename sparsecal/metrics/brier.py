"""The Brier score with its binned calibration / refinement decomposition
(Nguyen's thesis, Section 3.1.3: Brier = E[(q - p_q)^2] + E[p_q (1 - p_q)])."""
from dataclasses import dataclass

import numpy as np

from ..core.binning import bin_statistics
from .._docs import fill_doc
from .ce import bin_rates
from ..core.dispatch import takes_data

__all__ = ["BrierDecomposition", "brier_decomposition", "decomposition_from_bins"]


@dataclass(frozen=True)
class BrierDecomposition:
    """Brier score and its binned terms: ``brier = calibration + refinement +
    within_bin`` exactly, ``calibration = sum |B|/N (q_B - p_B)^2`` (CE_2
    squared), ``refinement = sum |B|/N p_B (1 - p_B)`` and ``within_bin`` what
    binning leaves out (0 with one score value per bin).

    Examples
    --------
    See :func:`brier_decomposition`.
    """

    brier: float
    calibration: float
    refinement: float
    within_bin: float
    n: int


@takes_data
@fill_doc
def brier_decomposition(scores, labels, *, binning="equal-mass", n_bins=None,
                        bin_size=None):
    """Brier score with its calibration-refinement decomposition.

    Parameters
    ----------
    {scores_labels}
    {binning}

    Returns
    -------
    BrierDecomposition

    Examples
    --------
    >>> d = brier_decomposition([0.2, 0.2, 0.8, 0.8], [0, 1, 1, 1], n_bins=2)
    >>> round(d.brier, 4), round(d.calibration, 4), round(d.refinement, 4)
    (0.19, 0.065, 0.125)
    """
    bins, x, y, _ = bin_statistics(scores, labels, binning=binning, n_bins=n_bins,
                                   bin_size=bin_size)
    return decomposition_from_bins(bins, float(np.sum((x.astype(np.float64) - y) ** 2)))


def decomposition_from_bins(bins, sum_squares):
    """The :class:`BrierDecomposition` of ``bins`` and ``sum_squares = sum (s - y)^2``."""
    count, q, p = bin_rates(bins)
    n = int(count.sum())
    brier = sum_squares / n
    w = count / n
    calibration = float(np.sum(w * (q - p) ** 2))
    refinement = float(np.sum(w * p * (1 - p)))
    return BrierDecomposition(brier, calibration, refinement,
                              brier - calibration - refinement, n)
