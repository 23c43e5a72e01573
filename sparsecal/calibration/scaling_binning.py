"""Scaling-binning (Kumar, Liang & Ma 2019) with isotonic scaling; Kranzlein, Liu &
Schneider 2021, Section 2.2."""
import numbers

import numpy as np

from ..core.binning import argsort_scores, lookup_bin_means, lookup_bins, weighted_equal_mass_bins
from ..core.hashing import splitmix64
from ..core.isotonic import isotonic_fit, isotonic_predict
from ..core.validation import check_positive_int
from .base import BaseCalibrator, check_bins
from .isotonic import check_knots

__all__ = ["ScalingBinning", "split_key", "second_half"]

_RANDOM_STATES = (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence)


class ScalingBinning(BaseCalibrator):
    """Scaling-binning (Kumar, Liang & Ma 2019) with isotonic scaling.

    Dev is split at random into two halves (:func:`second_half`): isotonic
    regression is fit on the first; the second half's scaled scores are cut into
    equal-mass bins (a cut inside a run of tied scaled scores merges its bins), and
    each bin outputs the mean scaled score of its second-half points.

    Parameters
    ----------
    n_bins : int, default=10
    seed : int >= 0, None, or NumPy Generator / BitGenerator / SeedSequence, default=0
        Seed of the dev split (saved calibrators hold an integer or null).

    Attributes
    ----------
    x_knots_, y_knots_ : ndarray of float64
        The isotonic scaling function.
    boundaries_, bin_values_ : ndarray of float64
        Inner boundaries of the scaled-score bins and each bin's output.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import ScalingBinning
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.random(1000)
    >>> labels = (rng.random(1000) < scores ** 2).astype(np.uint8)   # overconfident
    >>> cal = ScalingBinning(n_bins=4, seed=0).fit(scores, labels)
    >>> len(np.unique(cal.predict(rng.random(500)))) <= 4
    True
    """

    _array_state = ("x_knots_", "y_knots_", "boundaries_", "bin_values_")

    def __init__(self, n_bins=10, seed=0):
        self.n_bins = n_bins
        self.seed = seed

    def _check_params(self, prefix=""):
        check_positive_int(self.n_bins, f"{prefix}n_bins")
        seed = self.seed
        if not (seed is None or isinstance(seed, _RANDOM_STATES) or (
                isinstance(seed, numbers.Integral) and not isinstance(seed, bool)
                and seed >= 0)):
            raise ValueError(f"{prefix}seed must be None, a non-negative integer or a NumPy "
                             f"random generator, got {seed!r}")

    def _fit(self, x, y, w):
        n_bins = int(self.n_bins)
        if x.shape[0] < 2:
            raise ValueError("scaling-binning needs at least 2 dev points to split")
        in_second = second_half(np.arange(x.shape[0]), split_key(self.seed))
        first, second = np.flatnonzero(~in_second), np.flatnonzero(in_second)
        w1 = None if w is None else w[first]
        if w1 is not None and not (w1 > 0).any():
            raise ValueError("the first dev half has zero total weight")
        self.x_knots_, self.y_knots_ = isotonic_fit(x[first], y[first], w1)
        scaled = self._scale(x[second])
        w2 = None if w is None else w[second]
        if w2 is not None and not (w2 > 0).any():
            raise ValueError("the second dev half has zero total weight")
        perm, sorted_z = argsort_scores(scaled)
        # Equal-mass bins of the scaled scores; a bin's value is the mean scaled
        # score of the second-half points looked up in it (as Kumar et al.'s
        # reference code re-bins them). Isotonic output is a step function, so
        # rank cuts fall inside runs of tied values; the bin statistics must
        # follow the lookup, or a tied value gets the mean of a bin that holds
        # only part of its run plus higher values.
        bins = weighted_equal_mass_bins(sorted_z, y[second], w2, perm, n_bins, None)
        self.boundaries_, self.bin_values_ = lookup_bin_means(
            scaled, scaled, w2, bins.boundaries())
        return self

    def _scale(self, x):
        """Isotonic scaled scores in float64 (float32 could move a score across a bin boundary)."""
        return isotonic_predict(x.astype(np.float64, copy=False), self.x_knots_,
                                self.y_knots_)

    def _predict(self, x):
        z = self._scale(x)
        return self.bin_values_[lookup_bins(z, self.boundaries_)].astype(x.dtype)

    def _check_state(self, fields):
        check_knots(self.x_knots_, self.y_knots_, fields)
        check_bins(self.boundaries_, self.bin_values_, self.n_bins,
                   (fields.array("boundaries_"), fields.array("bin_values_")))


def split_key(seed):
    """The 64-bit key of the dev split: the first draw of ``numpy.random.default_rng(seed)``."""
    return np.random.default_rng(seed).integers(
        np.iinfo(np.uint64).max, dtype=np.uint64, endpoint=True)


def second_half(positions, key):
    """Which dev points (by ``positions``) go to the second half of the split.

    Points pair by position (2i, 2i + 1) and the top bit of
    ``splitmix64(splitmix64(key) ^ i)`` sends one of each pair to each half, so a
    worker holding some points and their positions computes their sides alone.
    """
    positions = positions.astype(np.uint64)
    top = splitmix64(splitmix64(np.array([key], np.uint64)) ^ (positions >> np.uint64(1)))
    return ((top >> np.uint64(63)) ^ (positions & np.uint64(1))).astype(bool)
