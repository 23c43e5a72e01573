"""Distributed entries as a directory of ``.npz`` shards, written by the workers
atomically and read back one task per shard."""
import os

from .._docs import fill_doc
from ..io.atomic import atomic_directory
from ..io.entry_shards import (is_entry_shards, new_manifest, read_manifest, read_shard,
                               write_manifest, write_shard)
from ._dask import require_dask
from .checks import check_dask_entries
from .entries import DaskEntries

__all__ = ["save_entry_shards", "load_entry_shards_dask"]


@fill_doc
def save_entry_shards(entries, path, *, retries=0):
    """Write distributed entries as one shard per row chunk, atomically.

    Parameters
    ----------
    {dask_entries}
    {dask_path}
        An existing directory of entry shards is replaced, anything else refused.
    retries : int, default=0
        Passed to ``dask.compute``.

    Returns
    -------
    str
        ``path``.

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x, gold = np.full((50, 4), 0.25), np.arange(50) % 4
    >>> save_entry_shards(sc.threshold(da.from_array(x, chunks=(16, 4)), gold), "shards")
    'shards'
    >>> bool((sc.io.load_entry_shards("shards").score == sc.threshold(x, gold).score).all())
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


@fill_doc
def load_entry_shards_dask(path):
    """Distributed entries of a directory of shards, each read and checked on a worker.

    Parameters
    ----------
    {dask_path}

    Returns
    -------
    DaskEntries
        Lazy; a missing or damaged shard raises, naming its file, when read.

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x = da.from_array(np.full((20, 3), 0.5), chunks=(8, 3))
    >>> load_entry_shards_dask(save_entry_shards(sc.threshold(x, np.zeros(20, int)), "s"))
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
