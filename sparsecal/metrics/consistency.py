"""Is a model miscalibrated at all? The consistency-resampling test of Bröcker &
Smith (2007, Section 3), drawn from the data's distinct-score table
(:mod:`~sparsecal.metrics.resampling`).
"""
from dataclasses import dataclass

from ..core.binning import bin_statistics
from .ce import ce_from_bins
from .._docs import fill_doc
from .resampling import (bin_layout, check_random_state, check_resamples, data_table,
                         p_value, replicate_errors, replicate_generators)
from ..core.dispatch import takes_data

__all__ = ["CalibrationTest", "calibration_test"]


@dataclass(frozen=True)
class CalibrationTest:
    """Result of :func:`calibration_test`: the data's CE_2 ``statistic``, its
    ``p_value``, ``n_resamples``, ``n_bins`` and ``n``.

    Examples
    --------
    See :func:`calibration_test`.
    """

    statistic: float
    p_value: float
    n_resamples: int
    n_bins: int
    n: int

    def to_dict(self):
        return {"statistic": self.statistic, "p_value": self.p_value,
                "n_resamples": self.n_resamples, "n_bins": self.n_bins, "n": self.n}


@takes_data
@fill_doc
def calibration_test(scores, labels, *, n_bins=None, n_resamples=999, random_state=0,
                     bin_size=None, binning="equal-mass"):
    """Consistency-resampling test of calibration (Bröcker & Smith 2007): the
    p-value ``(1 + #{T* >= T}) / (1 + R)`` of the data's binned CE_2 ``T`` among
    ``R`` resamples drawn as under calibration (labels ``Bernoulli(score)``).

    Parameters
    ----------
    {scores_labels}
    {binning}
    n_resamples : int, default=999
    random_state : None, int, SeedSequence or numpy Generator, default=0
        Resample ``r`` draws from the ``r``-th generator it spawns.

    Returns
    -------
    CalibrationTest

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> q = rng.random(2000)
    >>> calibration_test(q, rng.random(2000) < q ** 2, n_resamples=99).p_value
    0.01
    """
    n_resamples = check_resamples(n_resamples)
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
