"""Distributed entries written as, and read from, a directory of ``.npz``
shards (:mod:`sparsecal.io.entry_shards`): each worker writes the entries of
its row chunk into a temporary directory beside the destination, which takes
the destination's place in one step once every shard and the manifest are
written (:func:`sparsecal.io.atomic.atomic_directory`); reading makes one task
per shard. Nothing but each shard's record travels to the client.
"""
import os

from ..io.atomic import atomic_directory
from ..io.entry_shards import (is_entry_shards, new_manifest, read_manifest, read_shard,
                               write_manifest, write_shard)
from ._dask import require_dask
from .checks import check_dask_entries
from .entries import DaskEntries

__all__ = ["save_entry_shards", "load_entry_shards_dask"]


def save_entry_shards(entries, path, *, retries=0):
    """Write distributed entries as a directory of shards, one per row chunk,
    written by the workers; atomically.

    Parameters
    ----------
    entries : DaskEntries
        From :func:`sparsecal.distributed.threshold` (with its chunks' rows).
    path : str or os.PathLike
        The directory, on a file system the workers share; an existing
        directory of entry shards is replaced, anything else refused.
    retries : int, default=0
        Passed to ``dask.compute``.

    Returns
    -------
    str
        ``path``.

    Raises
    ------
    TypeError
        If ``entries`` is not ``DaskEntries``.
    ValueError
        If ``entries`` do not know their chunks' rows (:func:`from_arrays`).
    FileExistsError
        If ``path`` exists and is not a directory of entry shards.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.1 (the thresholded entries);
    docs/scale.md ("Entries on disk").

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> x, gold = np.full((50, 4), 0.25), np.arange(50) % 4
    >>> _ = save_entry_shards(threshold(da.from_array(x, chunks=(16, 4)), gold), "dev-shards")
    >>> sorted(os.listdir("dev-shards"))[:2]
    ['shard-00000.npz', 'shard-00001.npz']
    >>> bool((sc.io.load_entry_shards("dev-shards").score == sc.threshold(x, gold).score).all())
    True
    """
    check_dask_entries(entries)
    if entries.row_starts is None:
        raise ValueError("entries must know their chunks' rows (from "
                         "sparsecal.distributed.threshold) to be saved as shards")
    dask = require_dask()
    manifest = new_manifest(entries.n_tags, entries.n_tokens, entries.threshold,
                            entries.dtype)
    starts = entries.row_starts
    with atomic_directory(os.fspath(path), is_entry_shards,
                          "a directory of entry shards") as tmp:
        task = dask.delayed(write_shard, pure=False)
        records = dask.compute(*[task(tmp, i, b, manifest, (starts[i], starts[i + 1]))
                                 for i, b in enumerate(entries.blocks)], retries=retries)
        write_manifest(tmp, manifest, records)
    return path


def load_entry_shards_dask(path):
    """Distributed entries of a directory of shards: one task per shard, each
    read and checked (:func:`sparsecal.io.entry_shards.read_shard`) on a worker.

    Parameters
    ----------
    path : str or os.PathLike
        On a file system the workers share.

    Returns
    -------
    DaskEntries
        Lazy; a missing, truncated or foreign shard raises (naming the file)
        when its task runs.

    Raises
    ------
    FileNotFoundError, ValueError
        For the manifest (:func:`sparsecal.io.entry_shards.read_manifest`).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> x = np.random.default_rng(1).dirichlet(np.ones(3), size=20)
    >>> _ = save_entry_shards(threshold(da.from_array(x, chunks=(8, 3)), np.zeros(20, int)),
    ...                       "shards")
    >>> load_entry_shards_dask("shards")
    DaskEntries(n_blocks=3, dtype=float64, n_tags=3, n_tokens=20, threshold=0.01)
    """
    dask = require_dask()
    manifest = read_manifest(path)
    task = dask.delayed(read_shard, pure=True)
    path = os.path.abspath(os.fspath(path))
    starts = [0] + [s["rows"][1] for s in manifest["shards"]]
    return DaskEntries([task(path, i, manifest) for i in range(len(manifest["shards"]))],
                       n_tags=manifest["n_tags"], n_tokens=manifest["n_tokens"],
                       threshold=manifest["threshold"], dtype=manifest["dtype"],
                       row_starts=starts)
