"""Calibration metrics over entries: CE_p, SMCE, GMCE, MCE, top-label ECE, Brier,
their intervals, and :func:`evaluate` which bundles them."""
from .binned import (BrierDecomposition, CalibrationError,
                                MarginalCalibrationError, brier_decomposition,
                                calibration_error, gmce, mce, reliability_table, smce,
                                top_label, top_label_ece)
from .evaluation import Comparison, EvaluationResult, compare, evaluate

__all__ = ["BrierDecomposition", "CalibrationError", "Comparison", "EvaluationResult",
           "MarginalCalibrationError", "brier_decomposition", "calibration_error", "compare",
           "evaluate", "gmce", "mce", "reliability_table", "smce", "top_label",
           "top_label_ece"]
