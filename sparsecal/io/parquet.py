"""Thresholded entries as Apache Arrow tables and Parquet files, for pandas,
polars and DuckDB (``pip install "sparsecal[arrow]"``).

One row per entry in (token, tag) order: ``score`` (the entries' float dtype),
``tag`` (int32, or dictionary-encoded tag names given ``tag_names``),
``label`` (uint8) and ``token`` (int64, when the entries have tokens). The
schema metadata key ``sparsecal`` holds JSON: format, version, n_tags,
n_tokens, threshold.
"""
import json
import os

import numpy as np

from ..core.validation import check_input_file
from .._extras import require
from ..core.entries import Entries, check_row_major, stored_threshold
from ..core.dispatch import takes_data

__all__ = ["to_arrow", "write_parquet", "read_parquet"]

FORMAT, VERSION = "sparsecal.Entries", 1
_KEY = b"sparsecal"


def _pa(purpose):
    return require("pyarrow", "arrow", purpose)


@takes_data(refuse="an Arrow table holds all entries in memory; save_entry_shards writes "
                    "DaskEntries from the workers")
def to_arrow(entries, *, tag_names=None):
    """Entries as a ``pyarrow.Table`` (no copy of the numeric arrays).

    Parameters
    ----------
    entries : Entries
    tag_names : sequence of str, optional
        One name per tag: the tag column is then dictionary-encoded.

    Returns
    -------
    pyarrow.Table

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import threshold
    >>> from sparsecal.io import to_arrow
    >>> entries = threshold(np.array([[0.7, 0.3], [0.1, 0.9]]), [0, 1])
    >>> table = to_arrow(entries, tag_names=["DET", "NOUN"])
    >>> table.column_names, table.column("tag").to_pylist()
    (['score', 'tag', 'label', 'token'], ['DET', 'NOUN', 'DET', 'NOUN'])
    """
    if not isinstance(entries, Entries):
        raise ValueError(f"entries must be Entries, got {type(entries).__name__}")
    pa = _pa("to_arrow()")
    tag = pa.array(entries.tag, type=pa.int32())
    if tag_names is not None:
        names = list(tag_names) if not isinstance(tag_names, str) else None
        n_tags = entries.n_tags if entries.n_tags is not None else \
            (int(entries.tag.max()) + 1 if len(entries) else 0)
        if names is None or len(names) < n_tags or not all(isinstance(n, str) for n in names):
            raise ValueError(f"tag_names must be one string per tag ({n_tags}), got "
                             f"{tag_names!r:.80}")
        tag = pa.DictionaryArray.from_arrays(tag, pa.array(names, type=pa.string()))
    columns = {"score": pa.array(entries.score), "tag": tag,
               "label": pa.array(entries.label, type=pa.uint8())}
    if entries.token is not None:
        columns["token"] = pa.array(entries.token, type=pa.int64())
    meta = {"format": FORMAT, "version": VERSION, "n_tags": entries.n_tags,
            "n_tokens": entries.n_tokens, "threshold": stored_threshold(entries)}
    return pa.table(columns, metadata={_KEY: json.dumps(meta).encode()})


@takes_data(refuse="it writes all entries from one process; save_entry_shards writes "
                    "DaskEntries from the workers")
def write_parquet(entries, path, *, tag_names=None):
    """Write entries to a Parquet file, atomically.

    Parameters
    ----------
    entries : Entries
    path : str or os.PathLike
    tag_names : sequence of str, optional
        As in :func:`to_arrow`.

    Returns
    -------
    None

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import threshold
    >>> from sparsecal.io import write_parquet, read_parquet
    >>> entries = threshold(np.array([[0.7, 0.3], [0.1, 0.9]], np.float32), [0, 1])
    >>> write_parquet(entries, "entries.parquet")
    >>> back = read_parquet("entries.parquet")
    >>> back.score.dtype, np.array_equal(back.score, entries.score), back.n_tokens
    (dtype('float32'), True, 2)
    """
    table = to_arrow(entries, tag_names=tag_names)
    pq = require("pyarrow.parquet", "arrow", "write_parquet()")
    from .atomic import atomic_path
    with atomic_path(path, suffix=".parquet") as tmp:
        pq.write_table(table, tmp)


def read_parquet(path):
    """Entries from a Parquet file of this module's schema, bit-identical to what
    :func:`write_parquet` wrote (other tools' files too: ``label`` may be bool).

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    Entries

    Examples
    --------
    See :func:`write_parquet`.
    """
    check_input_file(path, "entries")
    pa = _pa("read_parquet()")
    pq = require("pyarrow.parquet", "arrow", "read_parquet()")
    name = os.fspath(path)
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"cannot read entries file {name!r}: {exc}") from None
    meta = {}
    raw = (table.schema.metadata or {}).get(_KEY)
    if raw is not None:
        try:
            meta = json.loads(raw)
        except ValueError:
            raise ValueError(f"{name!r}: bad sparsecal metadata") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT \
                or meta.get("version") != VERSION:
            raise ValueError(f"{name!r}: expected {FORMAT} version {VERSION} metadata")
    types = {"score": ("float", "double"), "tag": ("int32", "int64", "dictionary"),
             "label": ("uint8", "bool"), "token": ("int64",)}
    arrays = {}
    for column, allowed in types.items():
        if column not in table.column_names:
            if column == "token":
                continue
            raise ValueError(f"{name!r}: no column {column!r} (it has {table.column_names})")
        kind = str(table.schema.field(column).type)
        kind = "dictionary" if kind.startswith("dictionary") else kind
        if kind not in allowed or (kind == "dictionary" and not meta):
            raise ValueError(f"{name!r}: column {column!r} must be {' or '.join(allowed)}"
                             f"{' (with sparsecal metadata)' if kind == 'dictionary' else ''}"
                             f", got {table.schema.field(column).type}")
        data = table.column(column).combine_chunks()
        if kind == "dictionary":
            data = data.indices
        arrays[column] = data.to_numpy(zero_copy_only=False)
    try:
        entries = Entries(arrays["score"], arrays["tag"], arrays["label"].astype(np.uint8),
                          arrays.get("token"), n_tags=meta.get("n_tags"),
                          n_tokens=meta.get("n_tokens"), threshold=meta.get("threshold", 0.0))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name!r}: {exc}") from None
    check_row_major(entries, repr(name))
    return entries
