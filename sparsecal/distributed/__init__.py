"""The distributed path on Dask: the single-machine numbers from a cluster.

Optional extra: ``pip install "sparsecal[dask]"``; the rest of the package never
imports dask. Inputs are row-chunked ``dask.array`` score matrices and gold
vectors; every result is exact (docs/scale.md).

- :mod:`~sparsecal.distributed.entries`: :func:`threshold` on the workers,
  :class:`DaskEntries` (one lazy ``Entries`` per row chunk).
- :mod:`~sparsecal.distributed.equal_mass`: equal-mass bins by radix selection
  over mergeable per-chunk counts (no entry leaves its worker).
- :mod:`~sparsecal.distributed.fixedpoint`: exact, order-free score sums.
- :mod:`~sparsecal.distributed.metrics`: :func:`calibration_error`,
  :func:`smce`, :func:`gmce`; :mod:`~sparsecal.distributed.marginal`:
  :func:`smce_and_gmce` (one selection for all sets).
- :mod:`~sparsecal.distributed.checks`: :func:`check_dask_entries`, the one
  check of a distributed ``entries`` argument.
- :mod:`~sparsecal.distributed.evaluation`: :func:`mce`, :func:`evaluate`
  (the single-machine result types, for :func:`sparsecal.compare`).
- :mod:`~sparsecal.distributed.measures`: :func:`fixed_width_bin_stats`,
  :func:`binned_errors` (any binning, norm, debias; every interval), :func:`top_label_ece`, :func:`measures_by_group` (the
  registry's measures with a mergeable form).
- :mod:`~sparsecal.distributed.smooth`: :func:`smooth_ece` (pooled and per
  group), :func:`smooth_reliability`: the kernel smoothing from merged grid sums.
- :mod:`~sparsecal.distributed.application`: :func:`application_from_table`
  (DCF, minDCF, Cllr, minCllr) and :func:`bayes_error_plot`, from the merged
  distinct-score tables.
- :mod:`~sparsecal.distributed.histogram`: :func:`score_histogram`, the exact
  score histogram under the report's calibration curve (counts over fixed
  edges, added).
- :mod:`~sparsecal.distributed.groups`: :func:`tfg_from_gold`, TFG groups
  from a distributed training gold vector.
- :mod:`~sparsecal.distributed.isotonic`: :func:`fit_grouped`, isotonic fits
  per group from merged per-distinct-score tables (what
  ``GroupedCalibrator.fit`` calls for :class:`DaskEntries`).
- :mod:`~sparsecal.distributed.calibrators`: :func:`fit_grouped` for every
  registered method (isotonic, histogram exactly; the logistic and Gaussian
  methods on weighted distinct-score rows; scaling-binning through
  :mod:`~sparsecal.distributed.scaling_binning`: :func:`fit_scaling_binning`).
- :mod:`~sparsecal.distributed.weights`: :func:`fit_weighted`,
  :func:`weighted_score_tables`: per-token ``sample_weight`` on
  :class:`DaskEntries` (weighted distinct-score tables, every method but
  scaling-binning).
- :mod:`~sparsecal.distributed.comparison`: :func:`compare_methods`, every
  method x {SCW, TFG} fitted and evaluated on the cluster
  (:func:`sparsecal.compare_methods` for :class:`DaskEntries`).
- :mod:`~sparsecal.distributed.report`: :data:`CLUSTER_REPORT`, the engine
  of :func:`sparsecal.plotting.report.write_report` for distributed entries
  (every section of the single-machine report).
- :mod:`~sparsecal.distributed.apply`: :func:`apply_to_store`, a fitted
  calibrator applied on the workers into Zarr or ``.npy`` shards, atomically;
  :func:`open_store` reads it back.
- :mod:`~sparsecal.distributed.entry_store`: :func:`save_entry_shards`,
  :func:`load_entry_shards_dask`: entries as a directory of ``.npz`` shards.
- :mod:`~sparsecal.distributed.folds`: :func:`token_folds` (the stratified
  token folds, from per-chunk stratum counts), :func:`cross_fit_members` and
  :func:`cross_fit_scores` (``CrossFittedCalibrator.fit`` and
  :func:`sparsecal.select` for :class:`DaskEntries`).
- :mod:`~sparsecal.distributed.toplabel`: :func:`top_label`, each chunk's
  top-label confidences and correctness (:func:`sparsecal.top_label`).
- :mod:`~sparsecal.distributed.resampling`: the bootstrap interval and the
  calibration test from merged distinct-score tables, replicates in blocks on
  the workers (:func:`table_bootstrap_intervals`, :func:`table_calibration_tests`).
- :mod:`~sparsecal.distributed.arrays`: the array-form public functions
  (:func:`binary_smooth_ece`, :func:`binary_brier_corp`, :func:`binary_dcf`,
  ...) of two dask arrays, registered onto the single-machine functions.
- :mod:`~sparsecal.distributed.local`: :func:`local_cluster`, the package's
  local cluster (worker malloc settings, :func:`worker_environ`).
- :mod:`~sparsecal.distributed.chunks`: per-chunk group split and score keys.
- :mod:`~sparsecal.distributed.reduce`: per-chunk work and tree merges.
"""
from .._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {
    "DaskEntries": "entries", "threshold": "entries", "from_arrays": "entries",
    "calibration_error": "metrics", "smce": "metrics", "gmce": "metrics",
    "smce_and_gmce": "marginal", "mce": "evaluation", "evaluate": "evaluation",
    "fixed_width_bin_stats": "measures", "binned_errors": "measures",
    "top_label_ece": "measures", "measures_by_group": "measures",
    "top_label": "toplabel",
    "application_from_table": "application", "bayes_error_plot": "application",
    "smooth_ece": "smooth", "smooth_reliability": "smooth",
    "score_histogram": "histogram", "tfg_from_gold": "groups",
    "fit_grouped": "calibrators", "compare_methods": "comparison",
    "token_folds": "folds", "cross_fit_members": "folds", "cross_fit_scores": "folds",
    "stratified_token_folds": "folds", "cross_fit_predict": "folds",
    "CLUSTER_REPORT": "report",
    "apply_to_store": "apply", "open_store": "apply",
    "save_entry_shards": "entry_store", "load_entry_shards_dask": "entry_store",
    "local_cluster": "local", "worker_environ": "local", "WORKER_MALLOC": "local",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
