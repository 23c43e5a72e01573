"""Former home of the binned metrics, kept only so that existing imports work.

The metrics moved, one module per idea: :mod:`~sparsecal.metrics.ce` (the CE_p
formula), :mod:`~sparsecal.metrics.intervals` (:class:`ConfidenceInterval`,
Algorithm 2, bootstrap), :mod:`~sparsecal.metrics.binary` (``calibration_error``,
``reliability_table``), :mod:`~sparsecal.metrics.marginal` (SMCE, GMCE, MCE),
:mod:`~sparsecal.metrics.toplabel` and :mod:`~sparsecal.metrics.brier`. Import
from :mod:`sparsecal.metrics`; this module goes once ``sparsecal/__init__.py`` and
``sparsecal/plotting/figures.py`` do.
"""
from .binary import CalibrationError, calibration_error, reliability_table
from .brier import BrierDecomposition, brier_decomposition
from .marginal import MarginalCalibrationError, gmce, mce, smce
from .toplabel import top_label, top_label_ece

__all__ = ["BrierDecomposition", "CalibrationError", "MarginalCalibrationError",
           "brier_decomposition", "calibration_error", "gmce", "mce", "reliability_table",
           "smce", "top_label", "top_label_ece"]
