"""Parameter descriptions written once: :func:`fill_doc` puts the entry of
:data:`PARAMS` where a docstring has ``{name}`` alone on a line."""
import re
import textwrap

__all__ = ["PARAMS", "fill_doc"]

#: placeholder -> NumPy-docstring entry (``name : type`` and its description)
PARAMS = {
    # scores, bins and threads (core, metrics)
    "scores_labels": """\
scores : array_like of float, shape (n,)
    Probabilities in [0, 1].
labels : array_like of {0, 1} or bool, shape (n,)
    1 where the scored entry is correct.""",
    "binning": """\
binning : {"equal-mass", "fixed"}, default="equal-mass"
    Equal-mass bins (Nguyen & O'Connor 2015, Algorithm 1) or equal intervals
    of [0, 1] (:mod:`sparsecal.core.binning`).
n_bins, bin_size : int, optional
    The number of bins (default 10) or, for equal-mass bins instead, the
    scores per bin.""",
    "n_threads": """\
n_threads : int, optional
    Threads of the compiled kernel (default:
    :func:`~sparsecal.core.threads.get_n_threads`).""",
    "entries": """\
entries : Entries
    Thresholded entries (:func:`sparsecal.threshold`).""",
    "groups": """\
groups : TagGroups
    Over the tagset of ``entries``.""",
    # calibration errors and application measures (metrics)
    "norm": """\
norm : {2, 1, inf}, default=2
    2: the RMS calibration error (CalibErr, SMCE, GMCE); 1: ECE; inf: the
    largest gap (also "inf" or "max").""",
    "ci": """\
ci : None, str or ConfidenceInterval, default=None
    The interval (:class:`~sparsecal.metrics.ConfidenceInterval`):
    "simulation" (Nguyen & O'Connor's Algorithm 2), "bootstrap" (each
    replicate re-binned) or, with ``debias``, "score"; a name takes the
    defaults (95%, ``random_state=0``).""",
    "debias": """\
debias : bool, default=False
    Kumar, Liang & Ma (2019)'s debiased CE_2 (``norm=2`` only;
    :mod:`~sparsecal.metrics.debiased`), whose interval is ``ci="score"``.""",
    "llr_scores": """\
scores : array_like of float, shape (n,)
    Posterior probabilities in [0, 1] (``scores_are="probability"``) or
    finite log-likelihood ratios (``"llr"``).
labels : array_like of {0, 1} or bool, shape (n,)
    Both classes must be present.
scores_are : {"probability", "llr"}, default="probability"
training_prior : float, optional
    The prior the probabilities were computed under (``llr = logit(p) -
    logit(training_prior)``); default the positive rate of ``labels``.""",
    "application": """\
prior : float
    The application's prior of the positive class, in (0, 1).
c_miss, c_fa : float, default=1.0
    Costs of a miss and of a false alarm.
normalize : bool, default=True
    Divide by the cost of the best decision without scores.""",
    # recalibration (calibration)
    "folds": """\
n_folds : int, default=5
    K, at least 2.
seed : int, default=0
    Seed of the stratified token folds.""",
    "priors": """\
training_prior : float in (0, 1), optional
    ``pi_t`` of the prior-weighted fit; None: the dev positive rate (maximum
    likelihood).
application_prior : float in (0, 1), optional
    ``pi_a``, the prior of :meth:`predict` (:meth:`predict_for_prior` takes
    any other without a refit); None: ``training_prior_``.""",
    "logit_eps": """\
eps : float in (0, 0.5), default=1e-7
    Scores are clipped to ``[eps, 1 - eps]`` before the logit.""",
    # events of sentences (structured)
    "tag_names": """\
tag_names : sequence of str
    ``"O"`` or ``"<prefix>-<type>"`` per tag index.
scheme : {"bio", "bioes", "io"}, default="bio"
    How the tags mark spans (:mod:`~sparsecal.structured.schemes`).""",
    "softmax_scores": """\
scores : array_like of float, shape (B, N, C)
    Per-token tag probabilities.""",
    "k_best": """\
k : int, default 1
    Sequences per sentence (fewer where fewer are possible).""",
    "normalize_length": """\
normalize : bool, default False
    Score an event by ``p ** (1 / length)`` (Jagannatha & Yu 2020, eq. 6).""",
    "events_confidence": """\
events : Events
    Events of the top k.
confidence : array_like of float, shape (n_events,)
    Calibrated probability of each event.""",
    # gold tags (io, adapters)
    "tag_index": """\
tag_index : dict, str or os.PathLike, optional
    Tag string -> score-matrix column, or a JSON file of it; None: built from
    the file's tags in code-point order.""",
    "unknown": """\
unknown : {"error", "extend"} or int, default="error"
    A tag missing from ``tag_index``: an error listing the unknown tags with
    their lines; ``"extend"``: new columns after the largest one; an id
    ``k >= -1`` for all of them (-1: no gold tag).""",
    "missing_gold": """\
missing_gold : {"negatives", "drop"}, default "negatives"
    Tokens whose gold tag is -1 give negative entries only, or are dropped.""",
    "gold_unknown": """\
unknown : {"error", "missing"}, default "error"
    A gold name outside the inventory: an error, or gold -1.""",
    "crfsuite_marginals": """\
marginals : list of lists of dict
    ``CRF.predict_marginals(X)``: per sentence, per token, ``{label: p}``
    over the same labels.""",
    "torchcrf_layer": """\
crf : torchcrf.CRF
    Never modified.
emissions : Tensor, float32 or float64
    The scores fed to the layer, in its layout.
mask : bool or uint8 Tensor, optional
    The layer's mask (default: every position is real).""",
    # CRFs and structured outputs (crf, structured, adapters)
    "potentials": """\
emissions : Tensor or ndarray, float32 or float64, shape (B, N, C)
    Log-space emission scores per token and tag (finite or ``-inf``; see
    :mod:`sparsecal.crf.potentials` for the bound on their magnitude).
transitions : Tensor or ndarray, float32 or float64, shape (C, C)
    ``transitions[a, b]`` scores tag ``a`` at ``t`` followed by ``b`` at ``t+1``.
lengths : int array, shape (B,), optional
    Sentence lengths in ``1..N`` (default: all ``N``); the rest is padding.
start, end : float32 or float64, shape (C,), optional
    Log-space scores of the first / last tag of each sentence.
allowed : bool array, shape (C, C), optional
    ``False`` forbids the transition ``a -> b``.
mask : bool array, shape (B, N), optional
    Leading Trues per row; an alternative to ``lengths``.""",
    "crf_potentials": """\
emissions, transitions, lengths, start, end, allowed, mask
    The CRF potentials of a padded batch, as in :func:`sparsecal.crf.marginals`.""",
    "crf_backend": """\
backend : {"lean", "log", "torch-struct"}, default "lean"
    Scaled forward-backward on matrix products (``O(B N C)`` memory; a
    sentence that underflows is redone in float64 log space), the exact
    log-space recursion (in float64), or ``torch_struct.LinearChainCRF``
    (:mod:`sparsecal.crf.backends`).""",
    "torch_threads": """\
n_threads : int, optional
    Torch threads within the call, restored afterwards (None:
    ``SPARSECAL_NUM_THREADS`` or 1; 0: torch's own setting).""",
    "gold_matrix": """\
gold : array_like of int, shape (B, N)
    Gold tag per token (-1: padding, or no gold tag).""",
    "lengths": """\
lengths : array_like of int, shape (B,), optional
    Sentence lengths in ``1..N`` (default all ``N``).""",
    # distributed
    "dask_entries": """\
entries : DaskEntries
    Distributed entries (:func:`sparsecal.distributed.threshold`).""",
    "dask_scores": """\
scores : dask.array.Array of float32 or float64, shape (n_tokens, n_tags)
    Chunked by rows (column chunks are joined).""",
    "dask_binary": """\
scores : dask.array.Array of float32 or float64, shape (n,)
    Probabilities in [0, 1] (checked chunk by chunk on the workers).
labels : dask.array.Array or array_like of {0, 1}, shape (n,)""",
    "dask_path": """\
path : str or os.PathLike
    A directory on a file system that the workers and the client share.""",
}

_PLACEHOLDER = re.compile(r"^([ \t]*)\{(\w+)\}[ \t]*$", re.MULTILINE)


def fill_doc(obj):
    """Fill the ``{name}`` lines of ``obj.__doc__`` (none under ``python -OO``).

    Parameters
    ----------
    obj : function or class

    Returns
    -------
    obj
        The same object; an unknown name raises a KeyError at import.

    Examples
    --------
    >>> from sparsecal._docs import fill_doc
    >>> @fill_doc
    ... def f(n_threads=None):
    ...     '''Do it.
    ...
    ...     {n_threads}
    ...     '''
    >>> print(f.__doc__.splitlines()[2].strip())
    n_threads : int, optional
    """
    if obj.__doc__:
        obj.__doc__ = _PLACEHOLDER.sub(
            lambda m: textwrap.indent(PARAMS[m.group(2)], m.group(1)), obj.__doc__)
    return obj
