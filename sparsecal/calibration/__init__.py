"""Post-hoc recalibration, fitted on dev entries and applied to new outputs.

One module per binary calibrator (``histogram``, ``isotonic``,
``scaling_binning``, ``platt``, ``beta``, ``prior_logistic``, ``gaussian``; their
Newton solver in ``logistic``), the fusion of several scores (``fusion``) and
temperature scaling of logits (``temperature``); ``registry``, the one registry
of methods; ``grouped``, :class:`GroupedCalibrator`, and ``ensemble``, its
cross-fitted average; ``folds`` and ``selection``, model selection by K-fold;
``forecaster`` and ``choice_of_k``, Jagannatha & Yu (2020)'s event forecaster;
``comparison``, Kranzlein et al. 2021, Table 1. Names load from their module on
first use (PEP 562), so importing one module imports no other.
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
