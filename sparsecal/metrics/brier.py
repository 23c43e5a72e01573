"""The Brier score with its binned calibration / refinement decomposition
(Nguyen's thesis, Section 3.1.3: Brier = E[(q - p_q)^2] + E[p_q (1 - p_q)])."""
from dataclasses import dataclass

import numpy as np

from ..core.binning import bin_statistics
from .ce import bin_rates
from ..core.dispatch import takes_data

__all__ = ["BrierDecomposition", "brier_decomposition", "decomposition_from_bins"]


@dataclass(frozen=True)
class BrierDecomposition:
    """Brier score and its binned calibration / refinement terms.

    ``brier = calibration + refinement + within_bin`` exactly, where
    ``calibration = sum |B|/N (q_B - p_B)^2`` (= CE_2 squared),
    ``refinement = sum |B|/N p_B (1 - p_B)`` and ``within_bin`` is what binning
    leaves out (the spread of scores inside bins, minus their covariance with
    the labels); it vanishes as bins shrink to single score values.

    Attributes
    ----------
    brier, calibration, refinement, within_bin : float
    n : int
        Number of points.

    Examples
    --------
    >>> d = brier_decomposition([0.2, 0.2, 0.8, 0.8], [0, 1, 1, 1], n_bins=2)
    >>> round(d.brier, 4), round(d.calibration, 4), round(d.refinement, 4)
    (0.19, 0.065, 0.125)
    >>> abs(d.within_bin) < 1e-12          # one score value per bin
    True
    """

    brier: float
    calibration: float
    refinement: float
    within_bin: float
    n: int


@takes_data
def brier_decomposition(scores, labels, *, binning="equal-mass", n_bins=None,
                        bin_size=None):
    """Brier score with its calibration-refinement decomposition.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Probabilities in [0, 1].
    labels : array_like of {0, 1} or bool, shape (n,)
    binning : {"equal-mass", "fixed"}, default="equal-mass"
    n_bins, bin_size : int, optional
        As in :func:`sparsecal.calibration_error` (default 10 bins).

    Returns
    -------
    BrierDecomposition

    Raises
    ------
    ValueError, TypeError
        Invalid scores, labels or binning (the message names the argument).

    References
    ----------
    Nguyen's thesis, Section 3.1.3; DeGroot & Fienberg 1982.

    Examples
    --------
    >>> d = brier_decomposition([0.1, 0.3, 0.6, 0.9], [0, 0, 1, 1], n_bins=4)
    >>> round(d.brier, 4) == round(d.calibration + d.refinement, 4), d.refinement
    (True, 0.0)
    """
    bins, x, y, _ = bin_statistics(scores, labels, binning=binning, n_bins=n_bins,
                                   bin_size=bin_size)
    return decomposition_from_bins(bins, float(np.sum((x.astype(np.float64) - y) ** 2)))


def decomposition_from_bins(bins, sum_squares):
    """The Brier decomposition from the bins and the sum of squared errors:
    the one formula of both paths (the distributed form merges both,
    :func:`sparsecal.distributed.arrays.binary_brier_decomposition`).

    ``brier = S / N``, ``calibration = sum |B|/N (q_B - p_B)^2``,
    ``refinement = sum |B|/N p_B (1 - p_B)``, with ``S = sum (s - y)^2`` and
    ``N`` the points of the bins.

    Parameters
    ----------
    bins : BinStats
    sum_squares : float
        ``S``, the sum of ``(s - y)^2`` over the binned points.

    Returns
    -------
    BrierDecomposition

    References
    ----------
    Nguyen's thesis, Section 3.1.3; Nguyen & O'Connor 2015, Algorithm 1, step 4
    (``q_B``, ``p_B``).

    Examples
    --------
    >>> from sparsecal.core.binning import fixed_width_bins
    >>> d = decomposition_from_bins(fixed_width_bins([0.2, 0.8], [0, 1], n_bins=2), 0.08)
    >>> round(d.brier, 4), round(d.calibration, 4), d.n
    (0.04, 0.04, 2)
    """
    count, q, p = bin_rates(bins)
    n = int(count.sum())
    brier = sum_squares / n
    w = count / n
    calibration = float(np.sum(w * (q - p) ** 2))
    refinement = float(np.sum(w * p * (1 - p)))
    return BrierDecomposition(brier, calibration, refinement,
                              brier - calibration - refinement, n)
