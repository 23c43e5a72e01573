"""A corpus' token marginals, streamed batch by batch into thresholded entries.

The dense ``[n_tokens, C]`` matrix of a corpus is never held: each batch's
marginals are thresholded (Kranzlein et al. 2021, Section 3.1) and only the
surviving entries are kept, in arrays grown in place.
"""
import warnings

import numpy as np

from ..core.entries import threshold as _threshold
from ..core.entry_buffer import EntryBuffer
from ..core.progress import ProgressCounter
from ..core.validation import check_unit_interval
from ._torch import resolve_threads, to_tensor, torch, torch_threads
from .backends import check_backend, token_marginals
from .potentials import prepare

__all__ = ["stream_entries"]

_BATCH_KEYS = ("emissions", "transitions", "lengths", "gold", "start", "end", "allowed")


def _unpack(batch, i):
    """Batch ``i`` as a dict with the keys of ``_BATCH_KEYS`` (and ``mask``)."""
    if isinstance(batch, dict):
        unknown = set(batch) - set(_BATCH_KEYS) - {"mask"}
        if unknown:
            raise ValueError(f"batch {i} has unknown keys {sorted(unknown)}; expected "
                             f"{_BATCH_KEYS} (+ mask)")
        missing = [key for key in ("emissions", "transitions", "gold") if key not in batch]
        if missing:
            raise ValueError(f"batch {i} lacks {missing}")
        return dict(batch)
    if isinstance(batch, (tuple, list)):
        if not 4 <= len(batch) <= 7:
            raise ValueError(f"batch {i} is a sequence of {len(batch)} items; expected "
                             "(emissions, transitions, lengths, gold[, start, end, "
                             "allowed])")
        return dict(zip(_BATCH_KEYS, batch))
    raise TypeError(f"batch {i} must be a dict or a tuple, got {type(batch).__name__}")


def stream_entries(batches, threshold=0.01, n_tags=None, dense_out=None, progress=None,
                   *, backend="lean", missing_gold="negatives", n_threads=None):
    """Token marginals of a corpus, thresholded into entries batch by batch.

    For each batch, computes the token marginals (:func:`sparsecal.crf.marginals`),
    keeps the real tokens (in batch order, sentence by sentence), and appends the
    entries with ``score >= threshold`` (:func:`sparsecal.threshold`) with token
    indices offset by a running counter of real tokens. Memory stays at one
    batch's marginals plus the surviving entries: a corpus of 10^6 tokens x 600
    tags never needs its dense matrix.

    Parameters
    ----------
    batches : iterable, or callable returning an iterator
        Each batch is a dict with keys ``emissions`` [B, N, C], ``transitions``
        [C, C], ``gold`` [B, N] (gold tag index; -1 for padding and for tokens
        without a gold tag in the inventory) and optionally ``lengths`` (or
        ``mask``), ``start``, ``end``, ``allowed``; or a tuple ``(emissions,
        transitions, lengths, gold[, start, end, allowed])`` (``lengths`` may be
        None).
    threshold : float, default 0.01
        Keep entries with ``score >= threshold``.
    n_tags : int, optional
        Expected number of tags ``C`` (checked); default: that of the first batch.
    dense_out : array, shape (n_tokens_total, C), optional
        Preallocated array or ``np.memmap`` that receives the dense marginals of
        the real tokens, in order. Raises if the corpus has more tokens than
        rows; warns if it has fewer.
    progress : callable, optional
        ``progress(done, total)`` after each batch (:mod:`sparsecal.core.progress`):
        ``done`` batches of ``total`` (None when ``batches`` has no length).
    backend : {"lean", "log", "torch-struct"}, default "lean"
        As in :func:`sparsecal.crf.marginals`.
    missing_gold : {"negatives", "drop"}
        As in :func:`sparsecal.threshold`.
    n_threads : int, optional
        Threads for torch and for the threshold kernel, per batch (None:
        ``SPARSECAL_NUM_THREADS`` or 1; 0: the libraries' own defaults).

    Returns
    -------
    Entries
        ``token`` counts real tokens over the whole corpus; ``n_tokens`` is their
        total and ``n_tags`` is ``C``.

    Raises
    ------
    TypeError
        On a batch that is neither a dict nor a tuple, non-integer gold tags, or
        invalid potentials (as in :func:`sparsecal.crf.marginals`).
    ValueError
        On a threshold outside [0, 1], a malformed batch, a batch whose number of
        tags differs from ``n_tags``, gold of the wrong shape, more tokens than
        rows of ``dense_out``, or invalid potentials.

    Warns
    -----
    UserWarning
        When ``dense_out`` has more rows than the corpus has tokens.

    References
    ----------
    Kranzlein, Liu & Schneider (2021), Making heads and tails of models with
    marginal calibration for sparse tagsets, Section 3.1 (thresholded entries).

    Examples
    --------
    >>> import torch
    >>> from sparsecal import crf
    >>> batch = dict(emissions=torch.tensor([[[1.0, 0.0], [0.0, 9.0]]]),
    ...              transitions=torch.zeros(2, 2), lengths=[2], gold=[[0, 1]])
    >>> entries = crf.stream_entries([batch, batch], threshold=0.1)
    >>> entries.n_tokens, len(entries)           # 4 tokens, 6 entries >= 0.1
    (4, 6)
    >>> entries.token.tolist(), entries.label.tolist()
    ([0, 0, 1, 2, 2, 3], [1, 0, 1, 1, 0, 1])
    """
    t = check_unit_interval(threshold, "threshold")
    backend = check_backend(backend)
    # one batch's marginals are small: the threshold kernel gets the same thread
    # count as torch (default 1; 0 = sparsecal's default for its kernels)
    n_kernel_threads = resolve_threads(n_threads) or None
    if callable(batches):
        batches = batches()
    try:
        total = len(batches)
    except TypeError:
        total = None
    counter = ProgressCounter(progress, total)
    acc = EntryBuffer()
    i = -1
    for i, batch in enumerate(batches):
        kw = _unpack(batch, i)
        gold = kw.pop("gold")
        em = kw.pop("emissions")
        tr = kw.pop("transitions")
        with torch_threads(n_threads), torch.no_grad():
            ch = prepare(em, tr, kw.get("lengths"), kw.get("start"), kw.get("end"),
                         kw.get("allowed"), kw.get("mask"))
            m = token_marginals(ch, backend)
        B, N, C = m.shape
        if n_tags is None:
            n_tags = C
        elif C != n_tags:
            raise ValueError(f"batch {i} has {C} tags, expected n_tags={n_tags}")
        g = to_tensor(gold, "gold")
        if tuple(g.shape) != (B, N):
            raise ValueError(f"gold of batch {i} has shape {tuple(g.shape)}, expected "
                             f"({B}, {N})")
        if g.dtype == torch.bool or g.is_floating_point() or g.is_complex():
            raise TypeError(f"gold must hold integers, got dtype {g.dtype}")
        real = torch.arange(N)[None] < ch.L.cpu()[:, None]
        dense = m.cpu()[real].numpy()                                 # [n_real, C]
        g_real = g.cpu()[real].numpy().astype(np.int64, copy=False)
        n_real = dense.shape[0]
        if dense_out is not None:
            if acc.n_tokens + n_real > dense_out.shape[0]:
                raise ValueError(f"dense_out has {dense_out.shape[0]} rows but batch {i} "
                                 f"reaches token {acc.n_tokens + n_real}")
            dense_out[acc.n_tokens:acc.n_tokens + n_real] = dense
        ent = _threshold(dense, g_real, t, missing_gold=missing_gold,
                         n_threads=n_kernel_threads)
        acc.append(ent, n_real)
        counter.advance()
    if dense_out is not None and acc.n_tokens < dense_out.shape[0]:
        warnings.warn(f"dense_out has {dense_out.shape[0]} rows but the corpus has "
                      f"{acc.n_tokens} tokens; the remaining rows were not written",
                      UserWarning, stacklevel=2)
    return acc.entries(n_tags, t)
