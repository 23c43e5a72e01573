"""Thresholded entries of a row-chunked ``dask.array``, one lazy ``Entries`` per
chunk: chunk after chunk, the single machine's entries in its order."""
import numpy as np

from .._docs import fill_doc
from ..core.dispatch import implements
from ..core.entries import Entries, concatenate_entries, threshold as threshold_block
from ..core.validation import (as_array, check_choice, check_n_tags, check_positive_int,
                               check_unit_interval)
from ._dask import require_dask

__all__ = ["DaskEntries", "from_arrays", "threshold"]


class DaskEntries:
    """Entries spread over a cluster, one lazy ``Entries`` per row chunk.

    Parameters
    ----------
    blocks : list of dask.delayed.Delayed
        Each computes the ``Entries`` of one chunk, in row order.
    n_tags, n_tokens, threshold, dtype
    row_starts : array_like of int, shape (n_blocks + 1,), optional
        Each chunk's first row, then ``n_tokens``; None: no rows (:func:`from_arrays`).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> scores = da.from_array(np.array([[0.7, 0.3], [0.005, 0.995]]), chunks=(1, 2))
    >>> threshold(scores, [0, 1])
    DaskEntries(n_blocks=2, dtype=float64, n_tags=2, n_tokens=2, threshold=0.01)
    """

    def __init__(self, blocks, *, n_tags, n_tokens, threshold, dtype, row_starts=None):
        self.blocks = list(blocks)
        self.row_starts = None if row_starts is None else [int(r) for r in row_starts]
        self.n_tags = check_n_tags(n_tags)
        self.n_tokens = None if n_tokens is None else check_positive_int(
            n_tokens, "n_tokens", allow_zero=True)
        self.threshold = threshold
        self.dtype = np.dtype(dtype)

    def __repr__(self):
        return (f"DaskEntries(n_blocks={len(self.blocks)}, dtype={self.dtype}, "
                f"n_tags={self.n_tags}, n_tokens={self.n_tokens}, "
                f"threshold={self.threshold})")

    def _with_blocks(self, blocks):
        return DaskEntries(blocks, n_tags=self.n_tags, n_tokens=self.n_tokens,
                           threshold=self.threshold, dtype=self.dtype,
                           row_starts=self.row_starts)

    def persist(self):
        """The same entries, computed and kept in the workers' memory."""
        dask = require_dask()
        return self._with_blocks(dask.persist(*self.blocks))

    def compute(self):
        """All entries in one process (small data, tests), as ``Entries``."""
        dask = require_dask()
        return concatenate_entries(dask.compute(*self.blocks), self.n_tags, self.n_tokens,
                                   self.threshold)


@implements(threshold_block)
@fill_doc
def threshold(scores, gold, threshold=0.01, *, missing_gold="negatives"):
    """:func:`sparsecal.threshold` of a dask score matrix, each row chunk on a worker.

    Parameters
    ----------
    {dask_scores}
    gold : dask.array.Array or array_like of int, shape (n_tokens,)
    threshold, missing_gold
        As :func:`sparsecal.threshold`.

    Returns
    -------
    DaskEntries
        Lazy; an invalid score or gold raises when its chunk is computed.

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x, gold = np.random.default_rng(0).dirichlet(np.ones(4), size=50), np.arange(50) % 4
    >>> entries = threshold(da.from_array(x, chunks=(7, 4)), gold)
    >>> bool((entries.compute().score == sc.threshold(x, gold).score).all())
    True
    """
    dask = require_dask()
    da = dask.array
    if not isinstance(scores, da.Array):
        raise TypeError(f"scores must be a dask.array.Array, got {type(scores).__name__}")
    if scores.ndim != 2 or scores.shape[0] == 0:
        raise ValueError(f"scores must be 2-D with at least one row, got shape {scores.shape}")
    if scores.dtype not in (np.float32, np.float64):
        raise TypeError(f"scores must be float32 or float64, got dtype {scores.dtype}")
    t = check_unit_interval(threshold, "threshold")
    check_choice(missing_gold, "missing_gold", {"negatives", "drop"})
    gold = gold if isinstance(gold, da.Array) else da.from_array(as_array(gold, "gold"))
    if gold.dtype.kind not in "iu":
        raise TypeError(f"gold must hold integers, got dtype {gold.dtype}")
    if gold.shape != (scores.shape[0],):
        raise ValueError(f"gold has shape {gold.shape}, expected ({scores.shape[0]},)")
    scores = scores.rechunk({1: -1})
    gold = gold.rechunk((scores.chunks[0],))
    starts = np.concatenate(([0], np.cumsum(scores.chunks[0])))
    task = dask.delayed(_threshold_chunk, pure=True)
    blocks = [task(s, g, t, missing_gold, int(r0))
              for s, g, r0 in zip(scores.to_delayed().ravel(), gold.to_delayed(), starts)]
    return DaskEntries(blocks, n_tags=int(scores.shape[1]), n_tokens=int(scores.shape[0]),
                       threshold=t, dtype=scores.dtype, row_starts=starts)


def _threshold_chunk(scores, gold, t, missing_gold, row0):
    if scores.shape[0] == 0:   # an empty chunk: no entries
        return Entries._trusted(np.empty(0, scores.dtype), np.empty(0, np.int32),
                                np.empty(0, np.uint8), np.empty(0, np.int64),
                                scores.shape[1], 0, t)
    return threshold_block(scores, gold, t, missing_gold=missing_gold, token_offset=row0,
                           n_threads=1)


@fill_doc
def from_arrays(scores, labels):
    """Distributed entries of one binary problem: ``scores`` and ``labels`` as entries
    of a single tag, without rows.

    Parameters
    ----------
    {dask_binary}

    Returns
    -------
    DaskEntries

    Examples
    --------
    >>> import dask.array as da
    >>> from_arrays(da.from_array([0.2, 0.9], chunks=1), [0, 1]).compute().label
    array([0, 1], dtype=uint8)
    """
    dask = require_dask()
    da = dask.array
    if not isinstance(scores, da.Array) or scores.dtype not in (np.float32, np.float64):
        raise TypeError("scores must be a dask.array.Array of float32 or float64")
    if scores.ndim != 1:
        raise ValueError(f"scores must be 1-D, got shape {scores.shape}")
    labels = labels if isinstance(labels, da.Array) else da.from_array(as_array(labels, "labels"))
    if labels.shape != scores.shape:
        raise ValueError(f"labels has shape {labels.shape}, expected {scores.shape}")
    labels = labels.rechunk(scores.chunks)
    task = dask.delayed(_binary_chunk, pure=True)
    blocks = [task(s, y) for s, y in zip(scores.to_delayed(), labels.to_delayed())]
    return DaskEntries(blocks, n_tags=1, n_tokens=None, threshold=0.0, dtype=scores.dtype)


def _binary_chunk(scores, labels):
    return Entries(scores, np.zeros(scores.shape[0], np.int32), labels, n_tags=1)
