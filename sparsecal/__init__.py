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
  transformers, pytorch-crf and sklearn-crfsuite taggers (optional extras).

Importing :mod:`sparsecal` is cheap and changes nothing global: names are
loaded from their subpackage on first use (PEP 562), and no environment
variable is set.

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

#: public name -> the subpackage module that defines it
_EXPORTS = {
    # core: entries, bins, groups
    "Entries": "core", "threshold": "core", "TagGroups": "core",
    "load_train_counts": "core", "partition_by_group": "core",
    "BinStats": "core", "argsort_scores": "core", "equal_mass_bin_starts": "core",
    "equal_mass_bins": "core", "fixed_width_bins": "core", "lookup_bins": "core",
    "isotonic_fit": "core", "isotonic_predict": "core",
    "DegenerateDataError": "core",
    # metrics
    "BrierDecomposition": "metrics", "CalibrationError": "metrics",
    "ConfidenceInterval": "metrics",
    "MarginalCalibrationError": "metrics", "brier_decomposition": "metrics",
    "calibration_error": "metrics", "gmce": "metrics", "mce": "metrics",
    "reliability_table": "metrics", "smce": "metrics", "smce_and_gmce": "metrics",
    "top_label": "metrics", "top_label_ece": "metrics", "evaluate": "metrics",
    "compare": "metrics",
    "binomial_interval": "metrics", "CalibrationTest": "metrics",
    "calibration_test": "metrics",
    "SmoothECE": "metrics", "SmoothReliability": "metrics", "smooth_ece": "metrics",
    "smooth_reliability": "metrics",
    "ClasswiseECE": "metrics", "classwise_ece": "metrics",
    "ScoreDecomposition": "metrics", "brier_corp": "metrics", "log_loss_corp": "metrics",
    "BayesErrorPlot": "metrics", "DetectionCost": "metrics", "bayes_error_plot": "metrics",
    "cllr": "metrics", "dcf": "metrics", "min_cllr": "metrics", "min_dcf": "metrics",
    "replicate_errors": "metrics", "replicate_generators": "metrics",
    "score_table": "metrics", "table_bootstrap_interval": "metrics",
    "SmoothReliabilityDisplay": "plotting", "BayesErrorDisplay": "plotting",
    # calibration
    "GroupedCalibrator": "calibration", "HistogramBinning": "calibration",
    "IsotonicCalibrator": "calibration", "PlattCalibrator": "calibration",
    "ScalingBinning": "calibration", "TemperatureScaling": "calibration",
    "clone": "calibration", "cross_fit_predict": "calibration",
    "compare_methods": "calibration",
    "BetaCalibration": "calibration", "GaussianCalibration": "calibration",
    "LogisticFusion": "calibration", "PriorWeightedLogistic": "calibration",
    "select": "calibration", "CrossFittedCalibrator": "calibration",
    "stratified_token_folds": "calibration", "positional_folds": "calibration",
    "load_calibrator": "calibration",
    "Forecaster": "calibration",
    # structured: events of interest, sampling, tag pairs (issue 14)
    "Events": "structured", "Spans": "structured", "decode_spans": "structured",
    "crf_sequence_events": "structured", "softmax_sequence_events": "structured",
    "crf_span_events": "structured", "softmax_span_events": "structured",
    "crf_event_probabilities": "structured", "softmax_event_probabilities": "structured",
    "sample_sequences": "structured", "SampleEstimate": "structured",
    "sample_frequency": "structured", "sample_percentiles": "structured",
    "pair_entries": "structured", "most_frequent_pairs": "structured",
    "pair_groups": "structured", "EventConfidence": "structured",
    "sample_confidence": "structured", "mc_dropout_samples": "structured",
    "KChoice": "calibration", "heuristic_k": "calibration", "SpanScores": "structured",
    "Reranking": "structured", "span_f1": "structured", "rerank_sequences": "structured",
    "rerank_spans": "structured", "SupervisedHMM": "structured", "word_classes": "structured",
    "sample_entities": "structured", "coreference_probabilities": "structured",
    "coreference_entries": "structured",
    "save_events": "structured", "load_events": "structured",
    # adapters: taggers where they live (optional extras hf, crf, crfsuite)
    "word_probabilities": "adapters", "label_names": "adapters",
    "stream_word_entries": "adapters", "gold_ids": "adapters",
    "marginals_from_torchcrf": "adapters", "log_partition_from_torchcrf": "adapters",
    "crfsuite_scores": "adapters", "entries_from_crfsuite": "adapters",
    # io: gold from corpora, entries as Arrow / Parquet
    "CorpusTags": "io", "read_conllu": "io", "read_conll_columns": "io",
    "to_arrow": "io", "write_parquet": "io", "read_parquet": "io",
    # io: a structured tagger's outputs by sentence (sparsecal events)
    "load_gold_sentences": "io", "load_lengths": "io", "load_potentials": "io",
    "pad_sentences": "io",
    "load_entry_shards": "io",
    # core: isotonic fit from pooled (distinct-score) tables
    "isotonic_fit_pooled": "core",
    # distributed (dask extra): entries on a cluster
    "DaskEntries": "distributed",
    "apply_to_store": "distributed", "open_store": "distributed",
    "tfg_from_gold": "distributed",
    "local_cluster": "distributed",
    "save_entry_shards": "distributed",
    # the score histogram of the reliability diagram, counted anywhere
    "histogram_counts": "core",
}
_SUBPACKAGES = ("adapters", "calibration", "cli", "core", "crf", "datasets",
                "distributed", "io", "metrics", "plotting", "structured")

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _SUBPACKAGES)
