"""sparsecal: calibration of taggers with large, sparse tagsets, at corpus scale.

Threshold dense tagger scores into entries (:func:`threshold`), group tags by
training frequency (:class:`TagGroups`), and measure marginal calibration
(:func:`smce`, :func:`gmce`, :func:`mce`, :func:`calibration_error`).
"""
from .binning import (BinStats, argsort_scores, equal_mass_bin_starts, equal_mass_bins,
                      fixed_width_bins, lookup_bins)
from .entries import Entries, threshold
from .groups import TagGroups, load_train_counts, partition_by_group
from .isotonic import isotonic_fit, isotonic_predict
from .metrics import (BrierDecomposition, CalibrationError, MarginalCalibrationError,
                      brier_decomposition, calibration_error, gmce, mce,
                      reliability_table, smce, top_label, top_label_ece)

__version__ = "0.1.0.dev0"

__all__ = ["BinStats", "BrierDecomposition", "CalibrationError", "Entries",
           "MarginalCalibrationError", "TagGroups", "argsort_scores",
           "brier_decomposition", "calibration_error", "equal_mass_bin_starts",
           "equal_mass_bins", "fixed_width_bins", "gmce", "isotonic_fit",
           "isotonic_predict", "load_train_counts", "lookup_bins", "mce",
           "partition_by_group", "reliability_table", "smce", "threshold", "top_label",
           "top_label_ece"]
