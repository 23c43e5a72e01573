"""Calibration metrics over entries, one module per idea.

``ce`` (CE_p over bin statistics), ``intervals`` (:class:`ConfidenceInterval`,
every metric's ``ci=``), ``binary`` (:func:`calibration_error`,
:func:`reliability_table`), ``marginal`` (SMCE, GMCE, MCE), ``toplabel``,
``brier``, ``bin_intervals`` (a bin's binomial interval), ``debiased`` (the
debiased CE_2), ``consistency`` (Bröcker & Smith's test), ``resampling``
(internal: replicates from a distinct-score table), ``smooth`` (smooth ECE),
``classwise``, ``corp`` (CORP decompositions), ``application`` (DCF, Cllr,
Bayes error plot) and ``evaluation`` (:func:`evaluate`, :func:`compare`).
"""
from .._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {
    "ConfidenceInterval": "intervals", "binomial_interval": "bin_intervals",
    "CalibrationError": "binary", "calibration_error": "binary",
    "reliability_table": "binary",
    "MarginalCalibrationError": "marginal", "smce": "marginal", "gmce": "marginal",
    "mce": "marginal", "smce_and_gmce": "marginal",
    "top_label": "toplabel", "top_label_ece": "toplabel",
    "BrierDecomposition": "brier", "brier_decomposition": "brier",
    "CalibrationTest": "consistency", "calibration_test": "consistency",
    "SmoothECE": "smooth", "SmoothReliability": "smooth", "smooth_ece": "smooth",
    "smooth_reliability": "smooth",
    "ClasswiseECE": "classwise", "classwise_ece": "classwise",
    "ScoreDecomposition": "corp", "brier_corp": "corp", "log_loss_corp": "corp",
    "BayesErrorPlot": "decisions", "DetectionCost": "decisions",
    "bayes_error_plot": "application", "cllr": "application", "dcf": "application",
    "min_cllr": "application", "min_dcf": "application",
    "EvaluationResult": "evaluation", "Comparison": "evaluation", "evaluate": "evaluation",
    "compare": "evaluation",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
