"""Histogram binning on equal-mass dev bins (Zadrozny & Elkan 2001), the first
recalibrator of Kranzlein, Liu & Schneider 2021, Section 2.2."""
import numpy as np

from ..core.binning import argsort_scores, lookup_bin_means, lookup_bins, weighted_equal_mass_bins
from ..core.validation import check_positive_int
from .base import BaseCalibrator, check_bins

__all__ = ["HistogramBinning"]


class HistogramBinning(BaseCalibrator):
    """Histogram binning (Zadrozny & Elkan 2001): a score is mapped to the dev positive
    rate of its equal-mass bin.

    Bins cover [0, 1], cut halfway between neighbouring dev bins; a run of tied dev
    scores is never split (the bins a cut would split are merged).

    Parameters
    ----------
    n_bins : int, default=10
    bin_size : int, optional
        Points per bin instead of ``n_bins``.

    Attributes
    ----------
    boundaries_ : ndarray of float64
        Inner bin boundaries (``s`` is in bin ``#(boundaries_ <= s)``).
    bin_rates_ : ndarray of float64
        The dev positive rate of each bin.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import HistogramBinning
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.random(1000)
    >>> labels = (rng.random(1000) < scores ** 2).astype(np.uint8)   # overconfident
    >>> cal = HistogramBinning(n_bins=5).fit(scores, labels)
    >>> cal.bin_rates_.shape, bool(np.all(np.diff(cal.bin_rates_) > 0))
    ((5,), True)
    """

    _array_state = ("boundaries_", "bin_rates_")

    def __init__(self, n_bins=10, bin_size=None):
        self.n_bins = n_bins
        self.bin_size = bin_size

    def _check_params(self, prefix=""):
        check_positive_int(self.n_bins, f"{prefix}n_bins")
        if self.bin_size is not None:
            check_positive_int(self.bin_size, f"{prefix}bin_size")

    def _fit(self, x, y, w):
        n_bins = None if self.bin_size is not None else int(self.n_bins)
        bin_size = None if self.bin_size is None else int(self.bin_size)
        perm, sorted_x = argsort_scores(x)
        bins = weighted_equal_mass_bins(sorted_x, y, w, perm, n_bins, bin_size)
        # Rates are taken over the dev points that lookup puts in each bin, so a
        # dev score is mapped to the rate of the bin it is looked up in.
        self.boundaries_, self.bin_rates_ = lookup_bin_means(
            x, y.astype(np.float64), w, bins.boundaries())
        return self

    def _predict(self, x):
        return self.bin_rates_[lookup_bins(x, self.boundaries_)].astype(x.dtype)

    def _check_state(self, fields):
        check_bins(self.boundaries_, self.bin_rates_,
                   None if self.bin_size is not None else self.n_bins,
                   (fields.array("boundaries_"), fields.array("bin_rates_")))
