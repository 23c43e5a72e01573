"""Calibration metrics over entries, one module per idea.

- :mod:`~sparsecal.metrics.ce`: the CE_p formula over bin statistics.
- :mod:`~sparsecal.metrics.intervals`: :class:`ConfidenceInterval`, the one
  interval specification every metric takes as ``ci=`` (Algorithm 2, bootstrap).
- :mod:`~sparsecal.metrics.binary`: :func:`calibration_error` of scores and labels,
  :func:`reliability_table`.
- :mod:`~sparsecal.metrics.marginal`: :func:`smce`, :func:`gmce`, :func:`mce`,
  :func:`smce_and_gmce` (both from one sort).
- :mod:`~sparsecal.metrics.toplabel`: :func:`top_label`, :func:`top_label_ece`.
- :mod:`~sparsecal.metrics.brier`: :func:`brier_decomposition`.
- :mod:`~sparsecal.metrics.bin_intervals`: :func:`binomial_interval`, Wilson and
  Clopper–Pearson intervals of a bin's positive rate.
- :mod:`~sparsecal.metrics.debiased`: the debiased CE_2 (``calibration_error(...,
  debias=True)``) and its score interval.
- :mod:`~sparsecal.metrics.consistency`: :func:`calibration_test`, Bröcker & Smith's
  consistency-resampling test.
- :mod:`~sparsecal.metrics.resampling` (internal): the bootstrap replicates
  and the consistency resamples from a set's distinct-score table, the same
  on a cluster.
- :mod:`~sparsecal.metrics.smooth`: :func:`smooth_ece`, :func:`smooth_reliability`
  (Błasiok & Nakkiran 2023, as ``relplot``).
- :mod:`~sparsecal.metrics.classwise`: :func:`classwise_ece` (Kull et al. 2019).
- :mod:`~sparsecal.metrics.corp`: :func:`brier_corp`, :func:`log_loss_corp` (CORP,
  Dimitriadis et al. 2021).
- :mod:`~sparsecal.metrics.application`: :func:`dcf`, :func:`min_dcf`, :func:`cllr`,
  :func:`min_cllr`, :func:`bayes_error_plot` (application-based measures).
- :mod:`~sparsecal.metrics.evaluation`: :func:`evaluate`, which bundles them, and
  :func:`compare`.
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
