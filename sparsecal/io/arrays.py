"""Reading tagger outputs and writing thresholded entries.

Score matrices: ``.npy`` (memory-mapped, never read whole), ``.npz`` (one array,
or the one named by ``key``), ``.pt`` (a torch tensor; needs the torch extra).
Gold tags: ``.npy`` of integers, or ``.txt`` with one entry per line: a tag index,
or a tag string looked up in a tag-index JSON (``{tag: column}``).
Thresholded entries: ``.npz`` with ``score``, ``tag``, ``label``, ``token`` and a
JSON ``metadata`` string (format name, version, n_tags, n_tokens, threshold), so
a large corpus is thresholded once.

Every error names the file and the problem.
"""
import json
import os
import zipfile

import numpy as np

from .atomic import atomic_path
from ..core.entries import Entries

__all__ = ["load_scores", "load_gold", "load_tag_index", "save_entries", "load_entries",
           "ENTRIES_FORMAT", "ENTRIES_VERSION"]

ENTRIES_FORMAT = "sparsecal.Entries"
ENTRIES_VERSION = 1


def _name(path):
    return os.fspath(path)


def _exists(path, what):
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{what} file {_name(path)!r} does not exist")


def load_scores(path, *, key=None):
    """A score (or logit) matrix from ``.npy`` (memory-mapped), ``.npz`` or ``.pt``.

    Returns the array as stored (float32/float64 expected; checked downstream);
    raises ``ValueError`` naming the file for other formats or shapes.
    """
    _exists(path, "scores")
    ext = os.path.splitext(_name(path))[1].lower()
    if ext not in (".npy", ".npz", ".pt"):
        raise ValueError(f"{_name(path)!r}: unknown score file type {ext!r} "
                         "(use .npy, .npz or .pt)")
    if ext == ".pt":
        arr = _load_tensor(path, key)
    else:
        try:
            if ext == ".npy":
                arr = np.load(path, mmap_mode="r", allow_pickle=False)
            else:
                with np.load(path, allow_pickle=False) as npz:
                    names = npz.files
                    if key is None and len(names) == 1:
                        key = names[0]
                    arr = npz[key] if key in names else None
        except (OSError, EOFError, ValueError, zipfile.BadZipFile) as exc:
            # A corrupt or truncated file: numpy's message does not name it.
            raise ValueError(f"cannot read scores from {_name(path)!r}: {exc}") from None
        if arr is None:
            if key is None:
                raise ValueError(f"{_name(path)!r} holds arrays {names}: name one with key")
            raise ValueError(f"{_name(path)!r} has no array {key!r} (it has {names})")
    if arr.ndim != 2:
        raise ValueError(f"{_name(path)!r}: scores must be a 2-D [n_tokens, n_tags] "
                         f"matrix, got shape {arr.shape}")
    if arr.dtype not in (np.float32, np.float64):
        raise ValueError(f"{_name(path)!r}: scores must be float32 or float64, got "
                         f"{arr.dtype}")
    return arr


def _load_tensor(path, key):
    try:
        import torch
    except ImportError:
        raise ImportError(f"reading {_name(path)!r} needs torch: pip install "
                          "\"sparsecal[torch]\"") from None
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:   # torch raises many types (UnpicklingError, RuntimeError)
        first_line = (str(exc).splitlines() or [""])[0]
        raise ValueError(f"cannot read scores from {_name(path)!r}: "
                         f"{type(exc).__name__}: {first_line}") from None
    if isinstance(obj, dict) and key is not None:
        if key not in obj:
            raise ValueError(f"{_name(path)!r} has no tensor {key!r} (it has {list(obj)})")
        obj = obj[key]
    if not isinstance(obj, torch.Tensor):
        raise ValueError(f"{_name(path)!r} does not hold a tensor"
                         + ("" if key else " (name one with key)"))
    try:
        return obj.detach().cpu().numpy()
    except (TypeError, RuntimeError) as exc:   # e.g. bfloat16 has no numpy dtype
        raise ValueError(f"{_name(path)!r}: cannot convert the tensor ({obj.dtype}) to "
                         f"numpy: {exc}; save it as float32") from None


def load_tag_index(path):
    """``{tag string: column index}`` from a JSON file."""
    _exists(path, "tag index")
    try:
        with open(path, encoding="utf-8") as f:
            index = json.load(f)
    except json.JSONDecodeError as exc:
        raise ValueError(f"tag index {_name(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(index, dict) or not all(isinstance(v, int) for v in index.values()):
        raise ValueError(f"tag index {_name(path)!r} must map tag strings to integer "
                         "column indices")
    return index


def load_gold(path, *, tag_index=None):
    """Gold tag index per token from ``.npy`` or ``.txt``.

    A ``.txt`` file has one token per line: an integer index, or (with
    ``tag_index``) a tag string; unknown tags raise naming the line.
    """
    _exists(path, "gold")
    ext = os.path.splitext(_name(path))[1].lower()
    if ext == ".npy":
        try:
            gold = np.load(path, allow_pickle=False)
        except (OSError, EOFError, ValueError) as exc:
            raise ValueError(f"cannot read gold tags from {_name(path)!r}: {exc}") from None
        if gold.ndim != 1 or gold.dtype.kind not in "iu":
            raise ValueError(f"{_name(path)!r}: gold must be a 1-D integer array, got "
                             f"{gold.dtype} of shape {gold.shape}")
        return gold
    if ext != ".txt":
        raise ValueError(f"{_name(path)!r}: unknown gold file type {ext!r} (use .npy or .txt)")
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line.strip() for line in f]
    except UnicodeDecodeError as exc:
        raise ValueError(f"{_name(path)!r} is not a UTF-8 text file: {exc}") from None
    if lines and lines[-1] == "":
        lines.pop()
    if tag_index is not None:
        index = load_tag_index(tag_index) if isinstance(tag_index, (str, os.PathLike)) \
            else tag_index
        out = np.empty(len(lines), dtype=np.int64)
        for i, tag in enumerate(lines):
            if tag not in index:
                raise ValueError(f"{_name(path)!r} line {i + 1}: unknown tag {tag!r} (not "
                                 "in the tag index)")
            out[i] = index[tag]
        return out
    out = np.empty(len(lines), dtype=np.int64)
    for i, t in enumerate(lines):
        try:
            out[i] = int(t)
        except (ValueError, OverflowError):   # OverflowError: beyond int64
            raise ValueError(f"{_name(path)!r} line {i + 1}: {t!r} is not a tag index "
                             "(pass a tag index JSON to read tag strings)") from None
    return out


def save_entries(path, entries):
    """Write thresholded entries to ``.npz`` atomically."""
    meta = {"format": ENTRIES_FORMAT, "version": ENTRIES_VERSION, "n_tags": entries.n_tags,
            "n_tokens": entries.n_tokens, "threshold": entries.threshold,
            "dtype": str(entries.score.dtype)}
    arrays = {"score": entries.score, "tag": entries.tag, "label": entries.label,
              "metadata": np.array(json.dumps(meta))}
    if entries.token is not None:
        arrays["token"] = entries.token
    with atomic_path(path, suffix=".npz") as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)


def load_entries(path):
    """Read entries written by :func:`save_entries` (validated)."""
    _exists(path, "entries")
    try:
        loaded = np.load(path, mmap_mode="r", allow_pickle=False)   # mmap: a stray .npy
        if not isinstance(loaded, np.lib.npyio.NpzFile):   # a plain .npy array
            raise ValueError("not an .npz archive")
        with loaded as npz:
            data = {k: npz[k] for k in npz.files}
    except (OSError, EOFError, ValueError, zipfile.BadZipFile) as exc:
        raise ValueError(f"cannot read entries from {_name(path)!r}: {exc}") from None
    if "metadata" not in data:
        raise ValueError(f"{_name(path)!r} is not a sparsecal entries file (no metadata)")
    try:
        meta = json.loads(str(data["metadata"]))
    except json.JSONDecodeError:
        meta = None
    if not isinstance(meta, dict):
        raise ValueError(f"{_name(path)!r} is not a sparsecal entries file (bad metadata)")
    if meta.get("format") != ENTRIES_FORMAT or meta.get("version") != ENTRIES_VERSION:
        raise ValueError(f"{_name(path)!r}: expected {ENTRIES_FORMAT} version "
                         f"{ENTRIES_VERSION}, got {meta.get('format')} {meta.get('version')}")
    missing = [k for k in ("score", "tag", "label") if k not in data]
    if missing:
        raise ValueError(f"{_name(path)!r} lacks arrays {missing}")
    try:
        return Entries(data["score"], data["tag"], data["label"], data.get("token"),
                       n_tags=meta["n_tags"], n_tokens=meta["n_tokens"],
                       threshold=meta["threshold"])
    except KeyError as exc:
        raise ValueError(f"{_name(path)!r}: metadata lacks {exc}") from None
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{_name(path)!r}: {exc}") from None
