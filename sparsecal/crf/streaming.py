"""A corpus' token marginals, streamed batch by batch into thresholded entries: the
dense ``[n_tokens, C]`` matrix is never held.
"""
import warnings

import numpy as np

from ..core.entries import threshold as _threshold
from ..core.entry_buffer import EntryBuffer
from ..core.progress import ProgressCounter
from ..core.validation import check_n_tags, check_unit_interval
from ._torch import resolve_threads, to_tensor, torch, torch_threads
from .backends import check_backend, token_marginals
from .potentials import prepare
from .._docs import fill_doc

__all__ = ["stream_entries"]

_BATCH_KEYS = ("emissions", "transitions", "lengths", "gold", "start", "end", "allowed")


def _unpack(batch, i):
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


@fill_doc
def stream_entries(batches, threshold=0.01, n_tags=None, dense_out=None, progress=None,
                   *, backend="lean", missing_gold="negatives", n_threads=None):
    """Token marginals of a corpus, thresholded into entries batch by batch: memory
    stays at one batch's marginals plus the surviving entries.

    Parameters
    ----------
    batches : iterable, or callable returning an iterator
        Dicts with ``emissions``, ``transitions``, ``gold`` [B, N] (-1: padding or
        no gold tag) and optionally ``lengths`` (or ``mask``), ``start``, ``end``,
        ``allowed``; or tuples ``(emissions, transitions, lengths, gold[, start,
        end, allowed])``.
    threshold : float, default 0.01
    n_tags : int, optional
        Expected number of tags (default: the first batch's).
    dense_out : array, shape (n_tokens_total, C), optional
        Receives the dense marginals of the real tokens (e.g. an ``np.memmap``).
    progress : callable, optional
        ``progress(done, total)`` after each batch.
    {crf_backend}
    {missing_gold}
    n_threads : int, optional
        Threads for torch and the threshold kernel.

    Returns
    -------
    Entries

    Raises
    ------
    TypeError, ValueError
        On a malformed batch, or tag counts that differ between batches.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.1.

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
    n_tags = None if n_tags is None else check_n_tags(n_tags)
    backend = check_backend(backend)
    # one batch's marginals are small: the threshold kernel gets the same thread
    # count as torch (default 1)
    n_kernel_threads = resolve_threads(n_threads)
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
            try:
                ch = prepare(em, tr, kw.get("lengths"), kw.get("start"), kw.get("end"),
                             kw.get("allowed"), kw.get("mask"))
            except (TypeError, ValueError) as exc:   # name the batch
                raise type(exc)(f"batch {i}: {exc}") from None
            m = token_marginals(ch, backend)
        B, N, C = m.shape
        if n_tags is None:
            n_tags = C
        elif C != n_tags:
            raise ValueError(f"batch {i} has {C} tags, expected n_tags={n_tags}")
        g = to_tensor(gold, f"gold of batch {i}")
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
