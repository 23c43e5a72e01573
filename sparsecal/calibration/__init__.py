"""Post-hoc recalibration, fitted on dev entries and applied to new outputs.

- :mod:`~sparsecal.calibration.base`: estimator plumbing (parameters, ``clone``,
  fitted checks, scikit-learn tags, saved state).
- One module per binary calibrator: :mod:`~sparsecal.calibration.histogram`,
  :mod:`~sparsecal.calibration.isotonic`, :mod:`~sparsecal.calibration.scaling_binning`,
  :mod:`~sparsecal.calibration.platt`, :mod:`~sparsecal.calibration.beta`,
  :mod:`~sparsecal.calibration.prior_logistic`, :mod:`~sparsecal.calibration.gaussian`
  (their Newton solver: :mod:`~sparsecal.calibration.logistic`); the fusion of
  several scores, :mod:`~sparsecal.calibration.fusion`; and :mod:`~sparsecal.calibration.temperature`
  (temperature scaling of logits).
- :mod:`~sparsecal.calibration.registry`: the one registry of methods.
- :mod:`~sparsecal.calibration.grouped`: :class:`GroupedCalibrator` (SCW / TFG / per
  tag) and K-fold :func:`cross_fit_predict`.
- :mod:`~sparsecal.calibration.folds`: stratified K-fold by token;
  :mod:`~sparsecal.calibration.selection`: :func:`select` (method, G, bins by
  K-fold on dev); :mod:`~sparsecal.calibration.ensemble`:
  :class:`CrossFittedCalibrator` (the average of K fold calibrators);
  :mod:`~sparsecal.calibration.loading`: :func:`load_calibrator` (either saved kind).
- :mod:`~sparsecal.calibration.forecaster`: :class:`Forecaster`, gradient-boosted
  trees over event features (Jagannatha & Yu 2020), its trees kept as arrays
  (:mod:`~sparsecal.calibration.trees`); :mod:`~sparsecal.calibration.choice_of_k`:
  :func:`heuristic_k`, J&Y's choice of k for it.
- :mod:`~sparsecal.calibration.comparison`: every method x {SCW, TFG}, Kranzlein et
  al. 2021 Table 1 (:func:`compare_methods`).

Names load from their module on first use (PEP 562), so that importing one
module of this package (the registry, say) imports no other.
"""
from .._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {
    "BaseCalibrator": "base", "NotFittedError": "base", "clone": "base",
    "MethodComparison": "comparison", "compare_methods": "comparison",
    "GroupedCalibrator": "grouped", "cross_fit_predict": "grouped",
    "HistogramBinning": "histogram", "IsotonicCalibrator": "isotonic",
    "PlattCalibrator": "platt", "ScalingBinning": "scaling_binning",
    "TemperatureScaling": "temperature",
    "METHODS": "registry", "get_method": "registry", "make_calibrator": "registry",
    "BetaCalibration": "beta", "GaussianCalibration": "gaussian",
    "LogisticFusion": "fusion", "PriorWeightedLogistic": "prior_logistic",
    "stratified_token_folds": "folds", "positional_folds": "folds",
    "SelectionResult": "selection", "select": "selection",
    "CrossFittedCalibrator": "ensemble",
    "load_calibrator": "loading",
    "Forecaster": "forecaster", "KChoice": "choice_of_k", "heuristic_k": "choice_of_k",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
