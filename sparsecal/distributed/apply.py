"""A fitted calibrator applied on the workers, chunk by chunk (the single-machine
rows bit for bit), into a Zarr store or ``.npy`` shards replaced atomically."""
import json
import os

import numpy as np

from .._docs import fill_doc
from ..calibration.grouped import EntryTransformer
from ..core.validation import check_choice
from ..io.atomic import atomic_directory
from .._extras import require
from ._dask import require_dask

__all__ = ["apply_to_store", "open_store"]

#: the file that marks a directory of ``.npy`` shards written here
SHARDS_MANIFEST = "sparsecal-shards.json"
#: the Zarr attribute that marks a store written here
ZARR_MARK = "sparsecal"


def _is_store(path):
    """True for a store this module wrote (the only kind it replaces)."""
    if os.path.isfile(os.path.join(path, SHARDS_MANIFEST)):
        return True
    try:
        with open(os.path.join(path, "zarr.json")) as f:
            return ZARR_MARK in json.load(f).get("attributes", {})
    except (OSError, ValueError, AttributeError):
        return False


def _calibrate_block(block, model):
    return model.transform_dense(block, chunk_rows=max(1, block.shape[0]))


def _write_shard(block, index, directory, model):
    """Calibrate one chunk into ``shard-<index>.npy``, flushed to disk; its rows."""
    result = _calibrate_block(block, model)
    path = os.path.join(directory, f"shard-{index:06d}.npy")
    with open(path, "wb") as f:
        np.save(f, result)
        f.flush()
        os.fsync(f.fileno())
    return result.shape[0]


def _fsync_tree(directory):
    for root, _, names in os.walk(directory):
        for name in names:
            fd = os.open(os.path.join(root, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


@fill_doc
def apply_to_store(model, scores, path, *, format="zarr", retries=2):
    """``model.transform_dense`` of a dask score matrix on the workers, written to
    ``path`` atomically.

    Parameters
    ----------
    model : GroupedCalibrator or CrossFittedCalibrator
        Fitted.
    {dask_scores}
    {dask_path}
        An existing one is replaced only if this function wrote it.
    format : {"zarr", "npy"}, default="zarr"
        One Zarr (v3) array, or one ``shard-<i>.npy`` per row chunk and a manifest.
    retries : int, default=2
        Times a chunk's task is retried if its worker dies.

    Returns
    -------
    str
        ``path``, which :func:`open_store` reads back.

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x = np.random.default_rng(0).dirichlet(np.ones(5), size=100)
    >>> model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(5))
    >>> model = model.fit(sc.threshold(x, np.arange(100) % 5))
    >>> path = apply_to_store(model, da.from_array(x, chunks=(32, 5)), "out", format="npy")
    >>> bool((open_store(path).compute() == model.transform_dense(x)).all())
    True
    """
    dask = require_dask()
    check_choice(format, "format", {"zarr", "npy"})
    if not isinstance(model, EntryTransformer):
        raise TypeError("model must be a GroupedCalibrator or CrossFittedCalibrator, "
                        f"got {type(model).__name__}")
    if not isinstance(scores, dask.array.Array):
        raise TypeError(f"scores must be a dask.array.Array, got {type(scores).__name__}")
    if scores.dtype not in (np.float32, np.float64):
        raise TypeError(f"scores must be float32 or float64, got dtype {scores.dtype}")
    model._check_fitted()
    n_tags = model._tagset_size()
    if scores.ndim != 2 or scores.shape[1] != n_tags:
        raise ValueError(f"scores must have shape [n_tokens, {n_tags}], got {scores.shape}")
    scores = scores.rechunk({1: -1})
    out = os.fspath(path)
    with atomic_directory(out, _is_store, "a store written by apply_to_store") as tmp:
        if format == "npy":
            _write_shards(dask, model, scores, tmp, retries)
        else:
            _write_zarr(dask, model, scores, tmp, retries)
    return path


def _write_shards(dask, model, scores, tmp, retries):
    task = dask.delayed(_write_shard, pure=True)
    tasks = [task(b, i, tmp, model) for i, b in enumerate(scores.to_delayed().ravel())]
    rows = dask.compute(*tasks, retries=retries)
    manifest = {"format": "sparsecal-shards", "version": 1,
                "shape": list(scores.shape), "dtype": scores.dtype.str,
                "rows": [int(r) for r in rows]}
    with open(os.path.join(tmp, SHARDS_MANIFEST), "w") as f:
        json.dump(manifest, f)


def _write_zarr(dask, model, scores, tmp, retries):
    zarr = require("zarr", "dask", "format='zarr'")
    rows = max(scores.chunks[0])
    scores = scores.rechunk({0: rows})   # Zarr chunks are regular
    calibrated = scores.map_blocks(_calibrate_block, model, dtype=scores.dtype)
    array = zarr.create_array(tmp, shape=scores.shape, dtype=scores.dtype,
                              chunks=(rows, scores.shape[1]), overwrite=True)
    dask.compute(dask.array.store(calibrated, array, lock=False, compute=False),
                 retries=retries)
    array.attrs[ZARR_MARK] = {"writer": "sparsecal.distributed.apply_to_store"}
    _fsync_tree(tmp)


def open_store(path):
    """A store written by :func:`apply_to_store`, as a lazy row-chunked dask array.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    dask.array.Array

    Examples
    --------
    >>> open_store("no-such-store")
    Traceback (most recent call last):
    ...
    ValueError: path 'no-such-store' is not a store written by apply_to_store
    """
    dask = require_dask()
    path = os.fspath(path)
    if not _is_store(path):
        raise ValueError(f"path {path!r} is not a store written by apply_to_store")
    manifest = os.path.join(path, SHARDS_MANIFEST)
    if not os.path.isfile(manifest):
        return dask.array.from_zarr(path)
    with open(manifest) as f:
        info = json.load(f)
    n_tags, dtype = info["shape"][1], np.dtype(info["dtype"])
    load = dask.delayed(np.load, pure=True)
    parts = [dask.array.from_delayed(load(os.path.join(path, f"shard-{i:06d}.npy")),
                                     (r, n_tags), dtype)
             for i, r in enumerate(info["rows"])]
    return dask.array.concatenate(parts) if parts else dask.array.empty((0, n_tags), dtype)
