"""Tag strings to tag ids (score-matrix columns): the one rule every gold reader
uses (``.txt`` gold, CoNLL-U, CoNLL column files).

A tag index maps each tag string to its column (:func:`load_tag_index`). The
tags of a corpus are looked up through a dict in one C-level pass
(``map(dict.get, tags)``), so no Python code runs per token. A tag that is not
in the index is never dropped silently: by default the reader raises one error
listing the unknown tags with their line numbers; ``unknown="extend"`` gives the
new tags the next free columns (in code-point order), and ``unknown=k`` maps
them to id ``k`` (``-1``: "no gold tag in the inventory", which
:func:`sparsecal.threshold` treats as negatives only).
"""
import itertools

import numpy as np

from .bytefields import distinct_fields
from ..core.groups import check_tag_index

__all__ = ["tag_ids", "field_tag_ids", "check_unknown"]

_MISSING = -2   # the id the lookup gives a tag that is not in the index
_SHOWN_TAGS, _SHOWN_LINES = 10, 5


def check_unknown(unknown):
    """``unknown`` if it is ``"error"``, ``"extend"`` or an id ``>= -1``.

    Parameters
    ----------
    unknown : {"error", "extend"} or int

    Returns
    -------
    str or int

    Raises
    ------
    ValueError
        Otherwise.

    Examples
    --------
    >>> from sparsecal.io.tagids import check_unknown
    >>> check_unknown(-1), check_unknown("extend")
    (-1, 'extend')
    >>> check_unknown("drop")
    Traceback (most recent call last):
    ...
    ValueError: unknown must be 'error', 'extend' or a tag id >= -1, got 'drop'
    """
    if unknown in ("error", "extend") and isinstance(unknown, str):
        return unknown
    if isinstance(unknown, (int, np.integer)) and not isinstance(unknown, (bool, np.bool_)) \
            and -1 <= unknown < 2 ** 31:
        return int(unknown)
    raise ValueError(f"unknown must be 'error', 'extend' or a tag id >= -1, got {unknown!r}")


def tag_ids(tags, tag_index=None, *, unknown="error", lines=None, source="gold"):
    """The column of each tag string.

    Parameters
    ----------
    tags : list of str
        One tag per token.
    tag_index : dict of str to int, optional
        A checked tag index (:func:`~sparsecal.io.load_tag_index`). None: the index is
        built from the tags themselves, in code-point order (``0..k-1``).
    unknown : {"error", "extend"} or int, default="error"
        What a tag missing from ``tag_index`` becomes: an error listing every
        unknown tag with its first line numbers; ``"extend"``: the next free
        columns, in code-point order of the new tags; an int ``k >= -1``: id
        ``k`` (``-1``: no gold tag).
    lines : ndarray of int, optional
        The 1-based line number of each tag, for the error (default: the error
        names 1-based token positions).
    source : str, default="gold"
        The file, for the error.

    Returns
    -------
    ids : ndarray of int64, shape (n_tokens,)
    index : dict of str to int
        The index used (``tag_index``, extended or built when asked).

    Raises
    ------
    ValueError
        With ``unknown="error"``, if some tags are not in ``tag_index``: one
        message naming ``source``, the first unknown tag and its line, then the
        count of tokens affected and the unknown tags (up to 10) with their
        lines (up to 5 each).

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.1: gold tags index the columns of
    the tagger's score matrix.

    Examples
    --------
    >>> from sparsecal.io.tagids import tag_ids
    >>> ids, index = tag_ids(["NOUN", "DET", "NOUN"])
    >>> ids.tolist(), index
    ([1, 0, 1], {'DET': 0, 'NOUN': 1})
    >>> tag_ids(["NOUN", "X"], {"NOUN": 0}, unknown="extend")[1]
    {'NOUN': 0, 'X': 1}
    >>> tag_ids(["NOUN", "X"], {"NOUN": 0}, unknown=-1)[0].tolist()
    [0, -1]
    >>> tag_ids(["NOUN", "X"], {"NOUN": 0}, source="dev.conllu")
    Traceback (most recent call last):
    ...
    ValueError: 'dev.conllu' token 2: unknown tag 'X' (not in the tag index); 1 token in all: 'X' (token 2); pass unknown='extend' to add the tags to the index, or unknown=<id> to map them to one id
    """
    unknown = check_unknown(unknown)
    if tag_index is None:
        tag_index, unknown = {}, "extend"
    index = tag_index
    if unknown == "extend":
        new = sorted(set(tags).difference(tag_index))
        if new:
            start = max(tag_index.values(), default=-1) + 1
            index = {**tag_index, **dict(zip(new, range(start, start + len(new))))}
            check_tag_index(index, "the extended tag index")
    ids = np.fromiter(map(index.get, tags, itertools.repeat(_MISSING)), dtype=np.int64,
                      count=len(tags))
    missing = np.flatnonzero(ids == _MISSING)
    if missing.size == 0:
        return ids, index
    if unknown != "error":
        ids[missing] = unknown
        return ids, index
    raise ValueError(_unknown_message(tags, missing, lines, source))


def field_tag_ids(buf, starts, ends, tag_index, *, unknown, lines, source):
    """:func:`tag_ids` of the tag fields ``buf[starts[i]:ends[i]]`` of a text:
    each distinct field is decoded and looked up once
    (:func:`~sparsecal.io.bytefields.distinct_fields`); only an error message,
    which lists the unknown tags' lines, looks at every token.

    Parameters
    ----------
    buf : ndarray of uint8
        The text (:func:`~sparsecal.io.textfile.read_bytes`).
    starts, ends : ndarray of int64, shape (n_tokens,)
        The byte range of each token's tag.
    tag_index, unknown, source
        As for :func:`tag_ids`.
    lines : ndarray of int64, shape (n_tokens,)
        The 1-based line of each token, for the error.

    Returns
    -------
    ids : ndarray of int64, shape (n_tokens,)
    index : dict of str to int

    Raises
    ------
    ValueError
        As :func:`tag_ids`.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.io.tagids import field_tag_ids
    >>> buf = np.frombuffer(b"NOUN\\nDET\\nNOUN\\n", np.uint8)
    >>> ids, index = field_tag_ids(buf, np.array([0, 5, 9]), np.array([4, 8, 13]), None,
    ...                            unknown="error", lines=np.array([1, 2, 3]), source="g")
    >>> ids.tolist(), index
    ([1, 0, 1], {'DET': 0, 'NOUN': 1})
    """
    values, inverse = distinct_fields(buf, starts, ends)
    try:
        ids, index = tag_ids(values, tag_index, unknown=unknown, source=source)
    except ValueError:   # the message lists every unknown tag's lines: per token
        ids, index = tag_ids(np.asarray(values, dtype=object)[inverse].tolist(), tag_index,
                             unknown=unknown, lines=lines, source=source)
    else:
        ids = ids[inverse]
    return ids, index


def _unknown_message(tags, missing, lines, source):
    """One message: the first unknown tag, then each unknown tag (the first 10 by
    position) with its first lines."""
    where = "line" if lines is not None else "token"
    at = (missing + 1) if lines is None else np.asarray(lines)[missing]
    names = np.asarray(tags, dtype=object)[missing]
    distinct, first = np.unique(names, return_index=True)
    parts = []
    for k in np.argsort(first, kind="stable")[:_SHOWN_TAGS]:   # a loop over tag types
        mine = at[names == distinct[k]]
        shown = ", ".join(map(str, mine[:_SHOWN_LINES].tolist()))
        parts.append(f"{distinct[k]!r} ({where}{'s' if mine.size > 1 else ''} {shown}"
                     f"{', ...' if mine.size > _SHOWN_LINES else ''})")
    more = "" if distinct.size <= _SHOWN_TAGS else f" and {distinct.size - _SHOWN_TAGS} more"
    n = missing.size
    return (f"{source!r} {where} {at[0]}: unknown tag {names[0]!r} (not in the tag index); "
            f"{n:,} token{'s' if n > 1 else ''} in all: {', '.join(parts)}{more}; pass "
            "unknown='extend' to add the tags to the index, or unknown=<id> to map them to "
            "one id")
