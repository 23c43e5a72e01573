"""sparsecal: calibration of taggers with large, sparse tagsets, at corpus scale.

The data flows through the subpackages in one direction:

- :mod:`sparsecal.core`: dense tag scores are thresholded into :class:`Entries`
  (:func:`threshold`), sorted and binned, and tags are grouped by training
  frequency (:class:`TagGroups`); compiled kernels with thin validated wrappers.
- :mod:`sparsecal.metrics`: marginal calibration measured from the bins
  (:func:`smce`, :func:`gmce`, :func:`mce`, :func:`calibration_error`,
  :func:`evaluate`).
- :mod:`sparsecal.calibration`: recalibration fitted on dev and applied to new
  outputs (:class:`GroupedCalibrator` around :class:`IsotonicCalibrator`,
  :class:`HistogramBinning`, :class:`ScalingBinning`, :class:`PlattCalibrator`;
  :class:`TemperatureScaling`), and the method comparison of Kranzlein et al.
  2021, Table 1 (:func:`compare_methods`).
- :mod:`sparsecal.plotting`: figures and the HTML report; :mod:`sparsecal.io`:
  files; :mod:`sparsecal.crf`: CRF marginals (torch extra);
  :mod:`sparsecal.datasets`: a synthetic tagger; :mod:`sparsecal.cli`: the
  ``sparsecal`` command; :mod:`sparsecal.adapters`: the outputs of Hugging Face
  transformers, pytorch-crf and sklearn-crfsuite taggers (optional extras);
  :mod:`sparsecal.structured`: events of interest (spans, sequences, tag
  pairs); :mod:`sparsecal.distributed`: the same numbers on a Dask cluster
  (dask extra).

The top level holds the names used daily (``sparsecal.__all__``); the rest lives in
its subpackage (``from sparsecal.io import read_conllu``). Importing
:mod:`sparsecal` is cheap and changes nothing global: every name, and every
subpackage's, is loaded from its module on first use (PEP 562), and no
environment variable is set.

Examples
--------
>>> import numpy as np
>>> import sparsecal as sc
>>> rng = np.random.default_rng(0)
>>> scores = rng.dirichlet(np.ones(5), size=200).astype(np.float32)
>>> gold = rng.integers(0, 5, size=200)
>>> entries = sc.threshold(scores, gold, threshold=0.01)
>>> round(float(sc.smce(entries)), 4) >= 0
True
"""
from ._lazy import lazy_exports

__version__ = "0.1.0.dev0"

#: the names a user types daily -> the subpackage that defines them; the rest
#: of the API lives in its subpackage (``sparsecal.core``, ``sparsecal.io``, ...)
_EXPORTS = {
    # entries and tag groups
    "Entries": "core", "threshold": "core", "TagGroups": "core",
    "load_train_counts": "core", "DegenerateDataError": "core",
    # measures
    "ConfidenceInterval": "metrics", "calibration_error": "metrics",
    "reliability_table": "metrics", "smce": "metrics", "gmce": "metrics", "mce": "metrics",
    "smce_and_gmce": "metrics", "top_label": "metrics", "top_label_ece": "metrics",
    "evaluate": "metrics", "compare": "metrics", "brier_decomposition": "metrics",
    "calibration_test": "metrics", "classwise_ece": "metrics", "smooth_ece": "metrics",
    "smooth_reliability": "metrics", "brier_corp": "metrics", "log_loss_corp": "metrics",
    "dcf": "metrics", "min_dcf": "metrics", "cllr": "metrics", "min_cllr": "metrics",
    "bayes_error_plot": "metrics",
    # calibrators, their selection and comparison
    "GroupedCalibrator": "calibration", "IsotonicCalibrator": "calibration",
    "HistogramBinning": "calibration", "ScalingBinning": "calibration",
    "PlattCalibrator": "calibration", "TemperatureScaling": "calibration",
    "BetaCalibration": "calibration", "GaussianCalibration": "calibration",
    "PriorWeightedLogistic": "calibration", "LogisticFusion": "calibration",
    "CrossFittedCalibrator": "calibration", "Forecaster": "calibration",
    "load_calibrator": "calibration", "select": "calibration",
    "compare_methods": "calibration",
    # figures and the report
    "reliability_diagram": "plotting", "ReliabilityDisplay": "plotting",
    "SmoothReliabilityDisplay": "plotting", "BayesErrorDisplay": "plotting",
    "write_report": "plotting",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
