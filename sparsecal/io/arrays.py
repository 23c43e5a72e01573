"""Reading tagger outputs and writing thresholded entries; every error names the
file and the problem.

Score matrices: ``.npy`` (memory-mapped), ``.npz``, ``.pt`` (torch extra). Gold
tags: ``.npy`` of integers, ``.txt`` of one tag index (or tag string) per line,
CoNLL-U or CoNLL columns. Entries: ``.npz`` of the entry arrays and a JSON
``metadata`` record, so a large corpus is thresholded once.
"""
import json
import os

import numpy as np

from ..core.dispatch import takes_data
from .._extras import require
from .._docs import fill_doc
from .bytefields import Lines, digit_fields, digit_values
from .npyfile import npz_names, open_npy, read_npz
from .tagids import field_tag_ids
from ..core.validation import check_input_file
from .textfile import base_extension, read_bytes
from ..core.entries import Entries, check_row_major, stored_threshold
from ..core.groups import _resolve_tag_index, check_tag_index
from ..core.jsonfile import read_json

__all__ = ["load_scores", "load_gold", "load_gold_sentences", "load_lengths",
           "load_tag_index", "save_entries", "load_entries",
           "ENTRIES_FORMAT", "ENTRIES_VERSION"]

ENTRIES_FORMAT = "sparsecal.Entries"
_GOLD_TYPES = (".npy", ".txt", ".conllu", ".conll")
ENTRIES_VERSION = 1


#: The arrays of an entries file that are the entries' own.
_ENTRY_ARRAYS = ("score", "tag", "label", "token", "metadata")


def _name(path):
    return os.fspath(path)


def load_scores(path, *, key=None):
    """A score (or logit) matrix from ``.npy`` (memory-mapped), ``.npz`` or ``.pt``.

    Parameters
    ----------
    path : str or os.PathLike
        ``.npy``, ``.npz`` or ``.pt`` (a tensor or a dict of tensors; needs the
        torch extra).
    key : str, optional
        The array (``.npz``) or tensor (``.pt`` dict) to read; optional for a
        file of one array.

    Returns
    -------
    ndarray of float32 or float64, shape (n_tokens, n_tags)
        As stored (dtype, byte order; no copy for ``.npy``).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.io import load_scores
    >>> np.save("scores.npy", np.array([[0.7, 0.3], [0.1, 0.9]], dtype=np.float32))
    >>> scores = load_scores("scores.npy")
    >>> scores.dtype, scores.shape, type(scores).__name__
    (dtype('float32'), (2, 2), 'memmap')
    """
    check_input_file(path, "scores")
    ext = os.path.splitext(_name(path))[1].lower()
    if ext not in (".npy", ".npz", ".pt"):
        raise ValueError(f"{_name(path)!r}: unknown score file type {ext!r} "
                         "(use .npy, .npz or .pt)")
    if ext == ".pt":
        arr = _load_tensor(path, key)
    elif ext == ".npy":
        arr = open_npy(path, "scores")
    else:
        names = npz_names(path, "scores")
        if not names:
            raise ValueError(f"{_name(path)!r} holds no arrays")
        if key is None:
            if len(names) > 1:
                raise ValueError(f"{_name(path)!r} holds arrays {names}: name one with key")
            key = names[0]
        elif key not in names:
            raise ValueError(f"{_name(path)!r} has no array {key!r} (it has {names})")
        arr = read_npz(path, "scores", names=[key])[key]
    if arr.ndim != 2:
        raise ValueError(f"{_name(path)!r}: scores must be a 2-D [n_tokens, n_tags] "
                         f"matrix, got shape {arr.shape}")
    if arr.dtype.kind != "f" or arr.dtype.itemsize not in (4, 8):
        raise ValueError(f"{_name(path)!r}: scores must be float32 or float64, got "
                         f"{arr.dtype}")
    return arr


def _load_tensor(path, key):
    torch = require("torch", "torch", f"reading {_name(path)!r}")
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:   # torch raises many types (UnpicklingError, RuntimeError)
        first_line = (str(exc).splitlines() or [""])[0]
        raise ValueError(f"cannot read scores file {_name(path)!r}: "
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
    """``{tag string: column index}`` from a JSON file.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    dict of str to int

    Examples
    --------
    >>> import json
    >>> from sparsecal.io import load_tag_index
    >>> with open("tags.json", "w") as f:
    ...     json.dump({"N": 0, "NP": 1, "S[dcl]/NP": 2}, f)
    >>> load_tag_index("tags.json")["S[dcl]/NP"]
    2
    """
    return check_tag_index(read_json(path, "tag index"), f"tag index {_name(path)!r}")


@fill_doc
def load_gold(path, *, tag_index=None, unknown="error", format=None, column=None):
    """Gold tag index per token from ``.npy``, ``.txt``, CoNLL-U or CoNLL columns.

    Parameters
    ----------
    path : str or os.PathLike
        ``.npy`` of integers; ``.txt`` of one column index (or, with
        ``tag_index``, tag string) per line; ``.conllu`` (:func:`read_conllu`);
        ``.conll`` (:func:`read_conll_columns`). Text may be compressed
        (``.gz``, ``.bz2``, ``.xz``).
    tag_index : str, os.PathLike or dict, optional
        Tag strings to columns, or a JSON file of them; needed for tag strings.
    {unknown}
    format : {"npy", "txt", "conllu", "conll"}, optional
        Default: from the extension (below a compression suffix).
    column : str or int, optional
        A CoNLL-U field name (default ``"upos"``) or CoNLL column (default -1).

    Returns
    -------
    ndarray of int, shape (n_tokens,)

    Examples
    --------
    >>> from sparsecal.io import load_gold
    >>> with open("gold.txt", "w") as f:
    ...     _ = f.write("NP\\nN\\nNP\\n")
    >>> load_gold("gold.txt", tag_index={"N": 0, "NP": 1})
    array([1, 0, 1])
    """
    return load_gold_sentences(path, tag_index=tag_index, unknown=unknown, format=format,
                               column=column)[0]


def load_gold_sentences(path, *, tag_index=None, unknown="error", format=None, column=None):
    """:func:`load_gold`, with the sentence offsets of a CoNLL-U or CoNLL file.

    The offsets line a flat ``[n_tokens, n_tags]`` score matrix up with the
    sentences of a structured tagger.

    Parameters
    ----------
    path, tag_index, unknown, format, column
        As in :func:`load_gold`.

    Returns
    -------
    gold : ndarray of int, shape (n_tokens,)
    offsets : ndarray of int64, shape (n_sentences + 1,), or None
        Sentence ``i`` is ``gold[offsets[i]:offsets[i + 1]]``; None for ``.npy``
        and ``.txt``.

    Examples
    --------
    >>> from sparsecal.io import load_gold_sentences
    >>> with open("ner.conll", "w") as f:
    ...     _ = f.write("EU B-ORG\\nrejects O\\n\\nPeter B-PER\\n")
    >>> gold, offsets = load_gold_sentences("ner.conll", tag_index={"O": 0, "B-ORG": 1,
    ...                                                              "B-PER": 2})
    >>> gold.tolist(), offsets.tolist()
    ([1, 0, 2], [0, 2, 3])
    """
    check_input_file(path, "gold")
    ext = "." + format if format is not None else base_extension(path)
    if ext not in _GOLD_TYPES:
        raise ValueError(f"{_name(path)!r}: unknown gold file type {ext!r} (use "
                         f"{', '.join(_GOLD_TYPES)}; or name the format)")
    if column is not None and ext not in (".conllu", ".conll"):
        raise ValueError(f"{_name(path)!r}: a gold column is only read from CoNLL-U or "
                         f"CoNLL column files, not {ext}")
    if ext in (".conllu", ".conll"):
        corpus = _corpus_gold(path, ext, tag_index, unknown, column)
        return corpus.gold, corpus.offsets
    if ext == ".npy":
        return _integer_vector(path, "gold"), None
    buf, starts, ends = _stripped_lines(path, "gold")
    if tag_index is not None:
        return field_tag_ids(buf, starts, ends, _resolve_tag_index(tag_index),
                             unknown=unknown, lines=np.arange(1, starts.size + 1),
                             source=_name(path))[0], None
    return _integers(buf, starts, ends, path), None


def _integer_vector(path, what):
    """A 1-D integer ``.npy`` array, read into memory."""
    arr = open_npy(path, what)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise ValueError(f"{_name(path)!r}: {what} must be a 1-D integer array, got "
                         f"{arr.dtype} of shape {arr.shape}")
    return np.array(arr)


def _stripped_lines(path, what):
    """``(buf, starts, ends)``: a text file's bytes and its stripped lines."""
    lines = Lines(read_bytes(path, what))
    starts, ends = lines.stripped()
    if starts.size and starts[-1] == ends[-1]:
        starts, ends = starts[:-1], ends[:-1]
    return lines.buf, starts, ends


def _corpus_gold(path, ext, tag_index, unknown, column):
    """The :class:`~sparsecal.io.CorpusTags` of a CoNLL-U or CoNLL column file."""
    from .corpora import read_conll_columns, read_conllu
    if tag_index is None:
        raise ValueError(f"{_name(path)!r} holds tag strings: pass a tag index JSON "
                         "({tag: column}) to map them to score columns")
    if ext == ".conllu":
        return read_conllu(path, "upos" if column is None else column, tag_index,
                           unknown=unknown)
    if isinstance(column, str):   # a command-line value
        try:
            column = int(column)
        except ValueError:
            raise ValueError(f"{_name(path)!r}: the column of a CoNLL file is a number, "
                             f"got {column!r}") from None
    return read_conll_columns(path, -1 if column is None else column, tag_index,
                              unknown=unknown)


def _integers(buf, starts, ends, path,
              problem="is not a tag index (pass a tag index JSON to read tag strings)"):
    """The integer of each line's field (``-`` and 1 to 18 ASCII digits), parsed on
    the bytes.
    """
    negative = (ends > starts) & (buf[np.minimum(starts, buf.size - 1)] == ord("-")) \
        if buf.size else np.zeros(starts.size, bool)
    digits = starts + negative
    ok = digit_fields(buf, digits, ends) & (ends - digits <= 18)
    if not ok.all():
        line = int(np.flatnonzero(~ok)[0])
        text = buf[starts[line]:ends[line]].tobytes().decode("utf-8")
        raise ValueError(f"{_name(path)!r} line {line + 1}: {text!r} {problem}")
    return np.where(negative, -1, 1) * digit_values(buf, digits, ends)


def load_lengths(path):
    """Sentence lengths (tokens per sentence, each >= 1) from ``.npy`` or ``.txt``.

    Sentence ``i`` of a flat score matrix is then rows ``sum(lengths[:i])`` to
    ``sum(lengths[:i + 1]) - 1``.

    Parameters
    ----------
    path : str or os.PathLike
        ``.npy`` of integers, or ``.txt`` (optionally compressed) of one per line.

    Returns
    -------
    ndarray of int64, shape (n_sentences,)

    Examples
    --------
    >>> from sparsecal.io import load_lengths
    >>> with open("lengths.txt", "w") as f:
    ...     _ = f.write("3\\n1\\n")
    >>> load_lengths("lengths.txt")
    array([3, 1])
    """
    check_input_file(path, "lengths")
    ext = base_extension(path)
    if ext == ".npy":
        lengths = _integer_vector(path, "lengths").astype(np.int64)
    elif ext == ".txt":
        lengths = _integers(*_stripped_lines(path, "lengths"), path,
                            "is not a sentence length")
    else:
        raise ValueError(f"{_name(path)!r}: unknown lengths file type {ext!r} (use .npy or "
                         ".txt)")
    if lengths.size == 0:
        raise ValueError(f"{_name(path)!r} holds no sentence lengths")
    if lengths.min() < 1:
        i = int(np.argmax(lengths < 1))
        raise ValueError(f"{_name(path)!r}: sentence {i} has length {lengths[i]}; lengths "
                         "must be at least 1")
    return lengths


@takes_data(refuse="it writes all entries from one process; save_entry_shards writes "
                    "DaskEntries from the workers")
def save_entries(path, entries, *, extra_arrays=None, extra_metadata=None):
    """Write thresholded entries to ``.npz``, atomically.

    The entry arrays keep their dtypes, beside a JSON metadata record (format,
    version, ``n_tags``, ``n_tokens``, threshold) that :func:`load_entries` checks.

    Parameters
    ----------
    path : str or os.PathLike
        ``.npz`` is appended when missing.
    entries : Entries
    extra_arrays : dict of str to ndarray, optional
        Further arrays (e.g. the features of events), which
        :func:`load_entries` returns only when asked.
    extra_metadata : dict, optional
        Further keys of the metadata record.

    Returns
    -------
    None

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import threshold
    >>> from sparsecal.io import save_entries, load_entries
    >>> entries = threshold(np.array([[0.7, 0.2, 0.1], [0.005, 0.9, 0.095]]), [0, 2])
    >>> save_entries("dev-entries.npz", entries)
    >>> loaded = load_entries("dev-entries.npz")
    >>> np.array_equal(loaded.score, entries.score), loaded.n_tokens, loaded.threshold
    (True, 2, 0.01)
    """
    from .atomic import atomic_path   # here only: reading never needs it
    meta = {"format": ENTRIES_FORMAT, "version": ENTRIES_VERSION, "n_tags": entries.n_tags,
            "n_tokens": entries.n_tokens, "threshold": stored_threshold(entries),
            "dtype": str(entries.score.dtype)}
    arrays = {"score": entries.score, "tag": entries.tag, "label": entries.label}
    if entries.token is not None:
        arrays["token"] = entries.token
    for extra, mine in ((extra_arrays, _ENTRY_ARRAYS), (extra_metadata, meta)):
        clash = sorted(set(extra or ()) & set(mine))
        if clash:
            raise ValueError(f"extra names {clash} are the entries' own")
    meta.update(extra_metadata or {})
    arrays.update(extra_arrays or {}, metadata=np.array(json.dumps(meta)))
    with atomic_path(path, suffix=".npz") as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)


def load_entries(path, *, extras=False):
    """Read entries written by :func:`save_entries`, validated.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.npz`` file (a directory of shards: :func:`load_entry_shards`).
    extras : bool, default=False
        Also return the metadata record and the extra arrays.

    Returns
    -------
    Entries
        Or ``(entries, metadata, arrays)`` with ``extras=True``.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import threshold
    >>> from sparsecal.io import save_entries, load_entries
    >>> save_entries("entries.npz", threshold(np.array([[0.6, 0.4], [0.2, 0.8]]), [0, 1]))
    >>> entries = load_entries("entries.npz")
    >>> entries.tag, entries.label
    (array([0, 1, 0, 1], dtype=int32), array([1, 0, 0, 1], dtype=uint8))
    """
    check_input_file(path, "entries")
    data = read_npz(path, "entries")
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
        entries = Entries(data["score"], data["tag"], data["label"], data.get("token"),
                          n_tags=meta["n_tags"], n_tokens=meta["n_tokens"],
                          threshold=meta["threshold"])
    except KeyError as exc:
        raise ValueError(f"{_name(path)!r}: metadata lacks {exc}") from None
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{_name(path)!r}: {exc}") from None
    if "events" not in meta:   # (events may share a sentence and a type)
        check_row_major(entries, repr(_name(path)))
    if not extras:
        return entries
    return entries, meta, {k: v for k, v in data.items() if k not in _ENTRY_ARRAYS}
