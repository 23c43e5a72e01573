"""sparsecal: calibration of taggers with large, sparse tagsets, at corpus scale."""
from .binning import (BinStats, argsort_scores, equal_mass_bin_starts, equal_mass_bins,
                      fixed_width_bins, lookup_bins)
from .entries import Entries, threshold
from .groups import partition_by_group
from .isotonic import isotonic_fit, isotonic_predict

__version__ = "0.1.0.dev0"

__all__ = ["BinStats", "Entries", "argsort_scores", "equal_mass_bin_starts",
           "equal_mass_bins", "fixed_width_bins", "isotonic_fit", "isotonic_predict",
           "lookup_bins", "partition_by_group", "threshold"]
