"""One API for both paths: a public function given distributed data runs its
distributed form, or refuses with one clear error (issue 15, item 1).

Distributed data are :class:`~sparsecal.distributed.DaskEntries` (recognised
by their attributes, as :func:`sparsecal.distributed.checks.check_dask_entries`
does) and dask collections (anything with ``__dask_graph__``). Each public
function that takes data calls :func:`distributed_form` first with its own
arguments: for NumPy data it returns None at the cost of a few attribute
look-ups, and the function goes on as before. For distributed data it looks
the function's distributed form up **by name at run time**
(``importlib.import_module("sparsecal.distributed")``): the one sanctioned
upward reach of the layering (docs/architecture.md), since ``core``,
``metrics`` and ``calibration`` may not import ``distributed``. Dask inputs
cannot exist without dask installed, so NumPy users never reach that import.

:data:`DISTRIBUTED` and :data:`REFUSED` together list every public function
that takes data (``tests/test_dispatch.py`` walks ``sparsecal.__all__``): a
function either runs on the cluster or refuses, never computes a dask array
into one process.
"""
import functools
import importlib
import inspect

__all__ = ["DISTRIBUTED", "REFUSED", "distributed_form", "is_distributed"]

#: public function (its ``__qualname__``) -> the name of its distributed form
#: in :mod:`sparsecal.distributed`, called with the same arguments
DISTRIBUTED = {
    "threshold": "threshold",
    "calibration_error": "calibration_error",
    "smce": "smce", "gmce": "gmce", "smce_and_gmce": "smce_and_gmce", "mce": "mce",
    "evaluate": "evaluate", "compare_methods": "compare_methods",
    "top_label_ece": "top_label_ece",
    "smooth_ece": "binary_smooth_ece", "smooth_reliability": "binary_smooth_reliability",
    "brier_corp": "binary_brier_corp", "log_loss_corp": "binary_log_loss_corp",
    "dcf": "binary_dcf", "min_dcf": "binary_min_dcf",
    "cllr": "binary_cllr", "min_cllr": "binary_min_cllr",
    "bayes_error_plot": "binary_bayes_error_plot",
    "calibration_test": "binary_calibration_test",
    "brier_decomposition": "binary_brier_decomposition",
    "top_label": "top_label", "stratified_token_folds": "stratified_token_folds",
    "cross_fit_predict": "cross_fit_predict",
}

_SORT = "a global sort of all values on one process; the distributed path sorts per chunk"
_TOOL = "a single-machine building block; the distributed path has its own per-chunk form"
_TOKENS = "it needs whole sentences or tokens in one process"

#: public function -> why it has no distributed form (the TypeError says it)
REFUSED = {
    "argsort_scores": _SORT, "equal_mass_bins": _SORT, "fixed_width_bins": _TOOL,
    "lookup_bins": _TOOL, "histogram_counts": _TOOL, "partition_by_group": _TOOL,
    "isotonic_fit": _SORT, "isotonic_fit_pooled": _TOOL, "isotonic_predict": _TOOL,
    "score_table": _TOOL,
    "classwise_ece": "it needs the dense score matrix of every token (Kull et al. 2019)",
    "to_arrow": "an Arrow table holds all entries in memory; save_entry_shards writes "
                "DaskEntries from the workers",
    "write_parquet": "it writes all entries from one process; save_entry_shards writes "
                     "DaskEntries from the workers",
    "heuristic_k": "it fits forecasters on the event features in one process",
}
_CRF = ("its forward-backward / Viterbi recursion runs along each whole sentence: it takes "
        "[B, N, C] padded emissions of whole sentences as one torch tensor, which a "
        "row-chunked dask array does not give (run it per batch of sentences, then "
        "threshold its marginals on the cluster)")
REFUSED.update({name: _CRF for name in ("viterbi", "kbest", "marginals", "pair_marginals",
                                        "log_partition", "span_marginals")})
REFUSED.update({name: _CRF for name in (
    "crf_event_probabilities", "crf_sequence_events", "crf_span_events", "sample_sequences",
    "log_partition_from_torchcrf", "marginals_from_torchcrf")})
_SENTENCES = ("its events (top-k sequences, spans, tag pairs) are defined over whole "
              "sentences, and a sentence may straddle the row chunks of a dask array: "
              "compute them per batch of sentences in memory; their Entries then "
              "evaluate and calibrate like any other")
REFUSED.update({name: _SENTENCES for name in (
    "softmax_event_probabilities", "softmax_sequence_events", "softmax_span_events",
    "decode_spans", "most_frequent_pairs", "pair_entries", "rerank_sequences",
    "rerank_spans", "span_f1")})
_SAMPLES = ("it summarises the samples of a set of events held in memory (samples x "
            "events), which come from sentences processed in memory")
REFUSED.update({name: _SAMPLES for name in (
    "sample_confidence", "sample_frequency", "sample_percentiles")})
_DOCUMENT = "its entities and antecedent probabilities are those of one document, in memory"
REFUSED.update({name: _DOCUMENT for name in ("coreference_entries", "sample_entities")})
_LIBRARY = ("it takes a tagging library's per-sentence outputs (lists, tensors, word ids "
            "of a tokenizer's batch), not rows of a score matrix: run it per batch, then "
            "threshold the scores on the cluster")
REFUSED.update({name: _LIBRARY for name in (
    "crfsuite_scores", "entries_from_crfsuite", "gold_ids", "word_probabilities")})
REFUSED["save_entries"] = ("it writes all entries from one process; save_entry_shards "
                           "writes DaskEntries from the workers")
REFUSED["reliability_diagram"] = ("its scores= are only for the exact histogram; on a "
                                  "cluster pass hist_counts= from "
                                  "sparsecal.distributed.score_histogram")


def is_distributed(value):
    """Whether ``value`` is distributed data: a dask collection or
    :class:`~sparsecal.distributed.DaskEntries`.

    Parameters
    ----------
    value : object

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> is_distributed(np.zeros(3)), is_distributed([0.5])
    (False, False)
    """
    return hasattr(value, "__dask_graph__") or (
        hasattr(value, "n_tags") and getattr(value, "blocks", None) is not None)


def distributed_form(func, arguments):
    """The distributed form of public function ``func`` bound to its
    ``arguments`` when any of them is distributed; else None.

    Call it first thing in ``func`` with ``locals()``::

        if (cluster := distributed_form(smce, locals())) is not None:
            return cluster()

    Parameters
    ----------
    func : function
        The public function (a key of :data:`DISTRIBUTED` or :data:`REFUSED`
        by ``__qualname__``).
    arguments : dict
        Its arguments by name (``locals()`` before anything else is bound).

    Returns
    -------
    callable or None
        None when no argument is distributed; else the distributed form with
        the arguments it takes bound (call it with no arguments).

    Raises
    ------
    TypeError
        For distributed data: if ``func`` has no distributed form (the message
        names it and says why), or an argument set to other than its default
        that the distributed form does not take.

    Examples
    --------
    >>> import numpy as np
    >>> import sparsecal as sc
    >>> distributed_form(sc.classwise_ece, {"scores": np.zeros((2, 2))}) is None
    True
    """
    if not any(is_distributed(v) for v in arguments.values()):
        return None
    name = func.__qualname__
    if name not in DISTRIBUTED:
        reason = REFUSED.get(name, "it has no distributed form")
        raise TypeError(f"sparsecal.{name} does not take distributed (dask) data: {reason}")
    impl = getattr(importlib.import_module("sparsecal.distributed"), DISTRIBUTED[name])
    return functools.partial(impl, **_forwarded(func, impl, arguments))


def _forwarded(func, impl, arguments):
    """The arguments of ``func`` that ``impl`` takes; an error for one it does
    not take that is not at its default."""
    takes = inspect.signature(impl).parameters
    out = {}
    for p in inspect.signature(func).parameters.values():
        if p.name in ("self", "cls") or p.name not in arguments:
            continue
        value = arguments[p.name]
        if p.name in takes:
            out[p.name] = value
        elif not _is_default(value, p.default):
            raise TypeError(f"sparsecal.{func.__qualname__}: {p.name}={value!r} is not "
                            f"supported on distributed (dask) data; it takes "
                            f"{', '.join(takes)}")
    return out


def _is_default(value, default):
    """``value is default``, or equal for plain values."""
    plain = (str, int, float, bool, tuple, type(None))
    return value is default or (type(value) is type(default) and isinstance(value, plain)
                                and value == default)
