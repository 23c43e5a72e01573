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
- :mod:`~sparsecal.metrics.resampling`: the bootstrap replicates and the
  consistency resamples from a set's distinct-score table (:func:`score_table`,
  :func:`replicate_generators`, :func:`replicate_errors`,
  :func:`table_bootstrap_interval`), the same on a cluster.
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
from .bin_intervals import binomial_interval
from .binary import CalibrationError, calibration_error, reliability_table
from .consistency import CalibrationTest, calibration_test
from .brier import BrierDecomposition, brier_decomposition
from .evaluation import Comparison, EvaluationResult, compare, evaluate
from .intervals import ConfidenceInterval
from .marginal import MarginalCalibrationError, gmce, mce, smce, smce_and_gmce
from .toplabel import top_label, top_label_ece
from .application import (BayesErrorPlot, DetectionCost, bayes_error_plot, cllr, dcf,
                          min_cllr, min_dcf)
from .corp import ScoreDecomposition, brier_corp, log_loss_corp
from .classwise import ClasswiseECE, classwise_ece
from .smooth import SmoothECE, SmoothReliability, smooth_ece, smooth_reliability
from .resampling import (replicate_errors, replicate_generators, score_table,
                         table_bootstrap_interval)

__all__ = ["BrierDecomposition", "CalibrationError", "Comparison", "ConfidenceInterval",
           "EvaluationResult", "MarginalCalibrationError", "brier_decomposition",
           "calibration_error", "compare", "evaluate", "gmce", "mce", "reliability_table",
           "smce", "smce_and_gmce", "top_label", "top_label_ece"]
__all__ += ["binomial_interval", "CalibrationTest", "calibration_test"]
__all__ += ["SmoothECE", "SmoothReliability", "smooth_ece", "smooth_reliability"]
__all__ += ["ClasswiseECE", "classwise_ece"]
__all__ += ["ScoreDecomposition", "brier_corp", "log_loss_corp"]
__all__ += ["BayesErrorPlot", "DetectionCost", "bayes_error_plot", "cllr", "dcf",
            "min_cllr", "min_dcf"]
__all__ += ["replicate_errors", "replicate_generators", "score_table",
            "table_bootstrap_interval"]
