"""Thresholded entries as Apache Arrow tables and Parquet files, for pandas,
polars and DuckDB users (``pip install "sparsecal[arrow]"``).

Schema (one row per entry, row-major (token, tag) order):

========  ==========================================================
column    type
========  ==========================================================
score     float32 or float64 (arrow ``float`` / ``double``; the entries' dtype)
tag       int32, or dictionary<int32, string> of the tag names when
          ``tag_names`` is given (codes are the tag columns)
label     uint8 (1: the tag is the token's gold tag)
token     int64 (present when the entries have token indices)
========  ==========================================================

The schema metadata key ``sparsecal`` holds JSON: format, version, n_tags,
n_tokens, threshold. polars reads the file with ``pl.read_parquet(path)``,
DuckDB with ``SELECT * FROM 'entries.parquet'``, pandas with
``pd.read_parquet(path)``.
"""
import json
import os

import numpy as np

from .textfile import check_file
from .._extras import require
from ..core.entries import Entries
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
        The name of every tag column (``len == n_tags``): the tag column is then
        dictionary-encoded with them.

    Returns
    -------
    pyarrow.Table
        Columns score, tag, label (and token); the metadata in the schema.

    Raises
    ------
    ValueError
        If ``entries`` is not Entries, or ``tag_names`` is not one string per tag.
    ImportError
        If pyarrow is missing (names ``pip install "sparsecal[arrow]"``).

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.1 (the thresholded entries).

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
            "n_tokens": entries.n_tokens, "threshold": entries.threshold}
    return pa.table(columns, metadata={_KEY: json.dumps(meta).encode()})


@takes_data(refuse="it writes all entries from one process; save_entry_shards writes "
                    "DaskEntries from the workers")
def write_parquet(entries, path, *, tag_names=None):
    """Write entries to a Parquet file atomically (schema: :mod:`sparsecal.io.parquet`).

    Parameters
    ----------
    entries : Entries
    path : str or os.PathLike
        Output file; written beside it and renamed over it.
    tag_names : sequence of str, optional
        Tag names (one per column) to dictionary-encode the tag column.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        As :func:`to_arrow`.
    ImportError
        If pyarrow is missing (names ``pip install "sparsecal[arrow]"``).

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
    """Entries from a Parquet file of the schema of :mod:`sparsecal.io.parquet`.

    Files written by other tools are read too when they have the columns and
    types (``label`` may be bool; ``tag`` must then be plain integers).

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    Entries
        Bit-identical to what :func:`write_parquet` wrote.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        Naming the file (and the column): not Parquet, a missing column, a
        column of the wrong type, values that break the entries' invariants.
    ImportError
        If pyarrow is missing (names ``pip install "sparsecal[arrow]"``).

    Examples
    --------
    See :func:`write_parquet`.
    """
    check_file(path, "entries")
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
        return Entries(arrays["score"], arrays["tag"], arrays["label"].astype(np.uint8),
                       arrays.get("token"), n_tags=meta.get("n_tags"),
                       n_tokens=meta.get("n_tokens"), threshold=meta.get("threshold", 0.0))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name!r}: {exc}") from None
