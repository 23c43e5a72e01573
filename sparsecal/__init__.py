"""sparsecal: calibration of taggers with large, sparse tagsets, at corpus scale.

Threshold dense tagger scores into entries (:func:`threshold`), group tags by
training frequency (:class:`TagGroups`), and measure marginal calibration
(:func:`smce`, :func:`gmce`, :func:`mce`, :func:`evaluate`), and recalibrate
per group (:class:`GroupedCalibrator` around :class:`IsotonicCalibrator`,
:class:`HistogramBinning`, :class:`ScalingBinning`, :class:`PlattCalibrator`).
"""
import os as _os

# Idle OpenMP threads sleep instead of spinning: on a busy machine spinning
# threads fight for the cores and a kernel's team start-up cost grows from
# microseconds to tens of milliseconds (docs/performance.md). Only if unset, and
# only before this package's OpenMP runtime loads.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from .core.binning import (BinStats, argsort_scores, equal_mass_bin_starts, equal_mass_bins,
                      fixed_width_bins, lookup_bins)
from .calibration.binary import (HistogramBinning, IsotonicCalibrator, PlattCalibrator,
                          ScalingBinning, clone)
from .core.entries import Entries, threshold
from .metrics.evaluation import compare, evaluate
from .calibration.grouped import GroupedCalibrator, cross_fit_predict
from .core.groups import TagGroups, load_train_counts, partition_by_group
from .core.isotonic import isotonic_fit, isotonic_predict
from .calibration.temperature import TemperatureScaling
from .metrics.binned import (BrierDecomposition, CalibrationError, MarginalCalibrationError,
                      brier_decomposition, calibration_error, gmce, mce,
                      reliability_table, smce, top_label, top_label_ece)

__version__ = "0.1.0.dev0"

__all__ = ["BinStats", "BrierDecomposition", "CalibrationError", "Entries",
           "GroupedCalibrator", "HistogramBinning", "IsotonicCalibrator",
           "MarginalCalibrationError", "PlattCalibrator", "ScalingBinning", "TagGroups",
           "TemperatureScaling", "argsort_scores", "clone", "compare", "cross_fit_predict",
           "evaluate", "brier_decomposition", "calibration_error", "equal_mass_bin_starts",
           "equal_mass_bins", "fixed_width_bins", "gmce", "isotonic_fit",
           "isotonic_predict", "load_train_counts", "lookup_bins", "mce",
           "partition_by_group", "reliability_table", "smce", "threshold", "top_label",
           "top_label_ece"]
