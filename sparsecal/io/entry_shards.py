"""Thresholded entries as a directory of ``.npz`` shards, for corpora whose
entries no single file (or process) should hold.

A cluster writes one shard per row chunk from the worker that thresholded it
(:func:`sparsecal.distributed.save_entry_shards`); every verb's ``--entries``
reads the directory. Layout: ``sparsecal-entries.json`` (format, version, a
random ``id``, ``n_tags``, ``n_tokens``, ``threshold``, ``dtype`` and, per
shard in order, its file, entry count and rows ``[r0, r1)``) and
``shard-00000.npz``, ... in the format of :func:`sparsecal.io.save_entries`,
whose metadata names the manifest's ``id`` and the shard's index. A shard that
is missing, truncated, from another manifest or outside its rows, or named by a
path (absolute, ``../``, a link) rather than a file name of the directory, is
one error naming the file.
"""
import os
import uuid

import numpy as np

from ..core.entries import Entries, concatenate_entries
from ..core.jsonfile import read_json
from .arrays import load_entries, save_entries

__all__ = ["MANIFEST", "is_entry_shards", "new_manifest", "write_shard", "read_shard",
           "write_manifest", "read_manifest", "load_entry_shards"]

#: the manifest's file name, which marks a directory of entry shards
MANIFEST = "sparsecal-entries.json"
_FORMAT, _VERSION = "sparsecal.EntryShards", 1


def is_entry_shards(path):
    """True for a directory holding an entry-shards manifest."""
    return os.path.isfile(os.path.join(path, MANIFEST))


def new_manifest(n_tags, n_tokens, threshold, dtype):
    """A manifest with a fresh ``id`` and no shards yet."""
    return {"format": _FORMAT, "version": _VERSION, "id": uuid.uuid4().hex,
            "n_tags": int(n_tags), "n_tokens": int(n_tokens), "threshold": float(threshold),
            "dtype": str(np.dtype(dtype)), "shards": []}


def _shard_name(index):
    return f"shard-{index:05d}.npz"


def write_shard(directory, index, entries, manifest, rows):
    """Write a chunk's entries (tokens numbered in the whole matrix) of ``rows``
    ``(r0, r1)`` as shard ``index``; returns its manifest record.
    """
    name = _shard_name(index)
    whole = Entries._trusted(entries.score, entries.tag, entries.label, entries.token,
                             manifest["n_tags"], manifest["n_tokens"], manifest["threshold"])
    save_entries(os.path.join(directory, name), whole,
                 extra_metadata={"manifest": manifest["id"], "shard": int(index)})
    return {"file": name, "n_entries": len(entries), "rows": [int(rows[0]), int(rows[1])]}


def write_manifest(directory, manifest, shards):
    """Write ``manifest`` with its shard records (in row order) into ``directory``."""
    import json
    with open(os.path.join(directory, MANIFEST), "w") as f:
        json.dump({**manifest, "shards": list(shards)}, f)


def read_manifest(path):
    """The checked manifest of a directory of entry shards."""
    name = os.path.join(os.fspath(path), MANIFEST)
    if not os.path.isfile(name):
        raise FileNotFoundError(f"{os.fspath(path)!r} is not a directory of entry shards "
                                f"(no {MANIFEST})")
    meta = read_json(name, "entry-shards manifest")
    if meta.get("format") != _FORMAT or meta.get("version") != _VERSION:
        raise ValueError(f"{name!r}: expected {_FORMAT} version {_VERSION}, got "
                         f"{meta.get('format')} {meta.get('version')}")
    try:
        ints = [meta["n_tags"], meta["n_tokens"]] + [
            v for s in meta["shards"] for v in [s["n_entries"], *s["rows"]]]
        ok = (all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in ints)
              and isinstance(meta["id"], str) and isinstance(meta["threshold"], float)
              and all(isinstance(s["file"], str) and len(s["rows"]) == 2
                      for s in meta["shards"]))
        ends = [0] + [r for s in meta["shards"] for r in s["rows"]] + [meta["n_tokens"]]
    except (KeyError, TypeError):
        ok = False
    if not ok:
        raise ValueError(f"{name!r}: missing or ill-typed fields")
    if ends != sorted(ends) or any(a != b for a, b in zip(ends[0::2], ends[1::2])):
        raise ValueError(f"{name!r}: the shards' rows do not cover 0..n_tokens in order")
    for record in meta["shards"]:   # a file of this directory: no path, no "..", no link out
        file = record["file"]
        if file in ("", ".", "..") or os.path.basename(file) != file or "\\" in file \
                or os.path.islink(os.path.join(os.fspath(path), file)):
            raise ValueError(f"{name!r}: shard file {file!r} is not a file name of its "
                             "directory (a manifest reaches only the files beside it)")
    return meta


def read_shard(path, index, manifest):
    """Shard ``index`` of ``path``, checked against the ``manifest``."""
    record = manifest["shards"][index]
    name = os.path.join(os.fspath(path), record["file"])
    try:
        entries, meta, _ = load_entries(name, extras=True)
    except (FileNotFoundError, ValueError):
        raise                  # these name the shard already
    except Exception as exc:   # a truncated or corrupt zip: zipfile, zlib, EOF errors
        raise ValueError(f"{name!r}: unreadable ({type(exc).__name__}: {exc})") from None
    expected = {"manifest": manifest["id"], "shard": index, "n_tags": manifest["n_tags"],
                "n_tokens": manifest["n_tokens"], "threshold": manifest["threshold"],
                "dtype": manifest["dtype"]}
    wrong = [k for k, v in expected.items() if meta.get(k) != v]
    if wrong or len(entries) != record["n_entries"]:
        raise ValueError(f"{name!r} does not belong to the manifest of {os.fspath(path)!r} "
                         f"(differs in {wrong or ['n_entries']})")
    r0, r1 = record["rows"]
    token = entries.token
    if token is not None and token.shape[0] and (token[0] < r0 or token[-1] >= r1):
        raise ValueError(f"{name!r}: tokens outside the shard's rows [{r0}, {r1})")
    return entries


def load_entry_shards(path):
    """All entries of a directory of shards, shard after shard: those
    :func:`~sparsecal.io.save_entries` writes for the whole matrix, bit for bit.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    Entries

    Examples
    --------
    >>> import numpy as np, os, sparsecal as sc
    >>> x = np.array([[0.7, 0.3], [0.2, 0.8], [0.9, 0.1]])
    >>> os.makedirs("shards", exist_ok=True)
    >>> m = new_manifest(2, 3, 0.01, "float64")
    >>> recs = [write_shard("shards", 0, sc.threshold(x[:2], [0, 1]), m, (0, 2)),
    ...         write_shard("shards", 1, sc.threshold(x[2:], [0], token_offset=2), m,
    ...                     (2, 3))]
    >>> write_manifest("shards", m, recs)
    >>> load_entry_shards("shards").token
    array([0, 0, 1, 1, 2, 2])
    """
    manifest = read_manifest(path)
    if not manifest["shards"]:
        raise ValueError(f"{os.path.join(os.fspath(path), MANIFEST)!r}: no shards")
    return concatenate_entries([read_shard(path, i, manifest)
                                for i in range(len(manifest["shards"]))],
                               manifest["n_tags"], manifest["n_tokens"], manifest["threshold"])
