"""Post-hoc recalibration: binary calibrators, temperature scaling, per-group
calibration (SCW / TFG / per tag), K-fold cross-fitting and the method comparison
of Kranzlein et al. 2021, Table 1."""
from .binary import HistogramBinning, IsotonicCalibrator, PlattCalibrator, ScalingBinning, clone
from .comparison import MethodComparison, compare_methods
from .grouped import GroupedCalibrator, cross_fit_predict
from .temperature import TemperatureScaling

__all__ = ["GroupedCalibrator", "HistogramBinning", "IsotonicCalibrator", "MethodComparison",
           "PlattCalibrator", "ScalingBinning", "TemperatureScaling", "clone",
           "compare_methods", "cross_fit_predict"]
