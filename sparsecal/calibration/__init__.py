"""Post-hoc recalibration, fitted on dev entries and applied to new outputs.

- :mod:`~sparsecal.calibration.base`: estimator plumbing (parameters, ``clone``,
  fitted checks, scikit-learn tags, saved state).
- One module per binary calibrator: :mod:`~sparsecal.calibration.histogram`,
  :mod:`~sparsecal.calibration.isotonic`, :mod:`~sparsecal.calibration.scaling_binning`,
  :mod:`~sparsecal.calibration.platt`; and :mod:`~sparsecal.calibration.temperature`
  (temperature scaling of logits).
- :mod:`~sparsecal.calibration.registry`: the one registry of methods.
- :mod:`~sparsecal.calibration.grouped`: :class:`GroupedCalibrator` (SCW / TFG / per
  tag) and K-fold :func:`cross_fit_predict`.
- :mod:`~sparsecal.calibration.comparison`: every method x {SCW, TFG}, Kranzlein et
  al. 2021 Table 1 (:func:`compare_methods`).
"""
from .base import BaseCalibrator, NotFittedError, clone
from .comparison import MethodComparison, compare_methods
from .grouped import GroupedCalibrator, cross_fit_predict
from .histogram import HistogramBinning
from .isotonic import IsotonicCalibrator
from .platt import PlattCalibrator
from .registry import METHODS, get_method, make_calibrator
from .scaling_binning import ScalingBinning
from .temperature import TemperatureScaling

__all__ = ["BaseCalibrator", "GroupedCalibrator", "HistogramBinning", "IsotonicCalibrator",
           "METHODS", "MethodComparison", "NotFittedError", "PlattCalibrator",
           "ScalingBinning", "TemperatureScaling", "clone", "compare_methods",
           "cross_fit_predict", "get_method", "make_calibrator"]
