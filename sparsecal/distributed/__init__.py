"""The distributed path on Dask: the single-machine numbers from a cluster.

Optional extra (``pip install "sparsecal[dask]"``); nothing else in the package
imports dask. Inputs are row-chunked ``dask.array`` score matrices and gold
vectors; each chunk is thresholded and reduced on its worker and only counts,
exact sums and per-distinct-score tables travel, so results are the single
machine's (docs/scale.md). The public functions and estimators take these
inputs too: the first one loads :mod:`~sparsecal.distributed.forms`.
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
