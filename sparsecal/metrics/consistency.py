"""Is a model miscalibrated at all? The consistency-resampling test of Bröcker &
Smith (2007).

Under the null hypothesis of calibration the labels are ``Bernoulli(score)``.
Each of ``R`` resamples draws ``n`` scores with replacement from the data
(``Multinomial(n, c / n)`` copies of the distinct scores) and a label for each
from its own score (``Binomial`` positives per distinct score), and recomputes
the statistic, the binned CE_2 with the same binning as
:func:`~sparsecal.metrics.calibration_error` (a cut of equal-mass bins inside
the copies of one score splits their positives hypergeometrically); the p-value
is ``(1 + #{T* >= T}) / (1 + R)``. Resample ``r`` draws from the ``r``-th
generator spawned from ``random_state`` and the data enter only through their
distinct-score table (:mod:`~sparsecal.metrics.resampling`), so a cluster
computes the same test.
"""
from dataclasses import dataclass

from ..core.binning import bin_statistics
from ..core.validation import check_positive_int
from .ce import ce_from_bins
from .resampling import (bin_layout, check_random_state, data_table, p_value,
                         replicate_errors, replicate_generators)
from ..core.dispatch import takes_data

__all__ = ["CalibrationTest", "calibration_test"]


@dataclass(frozen=True)
class CalibrationTest:
    """Result of :func:`calibration_test`.

    Attributes
    ----------
    statistic : float
        CE_2 of the data (equal-mass bins).
    p_value : float
        ``(1 + #{T* >= statistic}) / (1 + n_resamples)``.
    n_resamples : int
    n_bins : int
        Equal-mass bins of the statistic.
    n : int
        Number of points.

    Examples
    --------
    >>> CalibrationTest(0.05, 0.01, 99, 10, 1000)
    CalibrationTest(statistic=0.05, p_value=0.01, n_resamples=99, n_bins=10, n=1000)
    """

    statistic: float
    p_value: float
    n_resamples: int
    n_bins: int
    n: int

    def to_dict(self):
        """The fields as a dict."""
        return {"statistic": self.statistic, "p_value": self.p_value,
                "n_resamples": self.n_resamples, "n_bins": self.n_bins, "n": self.n}


@takes_data
def calibration_test(scores, labels, *, n_bins=None, n_resamples=999, random_state=0,
                     bin_size=None, binning="equal-mass"):
    """Consistency-resampling test of calibration (Bröcker & Smith 2007).

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Predicted probabilities in [0, 1].
    labels : array_like of {0, 1} or bool, shape (n,)
    n_bins : int, optional
        Bins of the statistic CE_2 (default 10; Nguyen & O'Connor, Algorithm 1).
    n_resamples : int, default=999
        Consistency resamples R; the smallest p-value is ``1 / (1 + R)``.
    random_state : None, int, SeedSequence or numpy Generator, default=0
        Resample ``r`` draws from the ``r``-th generator it spawns
        (:func:`~sparsecal.metrics.resampling.replicate_generators`).
    bin_size : int, optional
        Entries per equal-mass bin, instead of ``n_bins``.
    binning : {"equal-mass", "fixed"}, default="equal-mass"
        The bins of the statistic, as :func:`calibration_error`'s: the data
        and every resample are binned the same way.

    Returns
    -------
    CalibrationTest

    Raises
    ------
    ValueError
        Invalid scores, labels, ``n_bins``, ``bin_size``, ``binning``,
        ``n_resamples`` or ``random_state``.
    TypeError
        Non-numeric scores or labels.

    References
    ----------
    Bröcker & Smith 2007, "Increasing the reliability of reliability diagrams",
    Weather and Forecasting 22, Section 3 (consistency resampling); Nguyen &
    O'Connor 2015, Algorithm 1 (the binned CE_2).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> q = rng.random(2000)
    >>> calibration_test(q, rng.random(2000) < q ** 2, n_resamples=99).p_value
    0.01
    >>> calibration_test(q, rng.random(2000) < q, n_resamples=99).p_value > 0.05
    True
    """
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    rng = check_random_state(random_state)
    if n_bins is None and bin_size is None:
        n_bins = 10
    bins, x, y, order = bin_statistics(scores, labels, binning=binning, n_bins=n_bins,
                                       bin_size=bin_size)
    statistic = ce_from_bins(bins, 2.0)
    null = replicate_errors(data_table(x, y, order), replicate_generators(rng, n_resamples),
                            **bin_layout(bins), norm=2.0, null=True)
    return CalibrationTest(statistic, p_value(null, statistic), n_resamples, bins.n_bins,
                           x.shape[0])
