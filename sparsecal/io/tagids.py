"""Tag strings to tag ids (score-matrix columns): the one rule of every gold
reader. A corpus' tags are looked up in one C-level pass
(``map(dict.get, tags)``); a tag missing from the index is never dropped
silently (``unknown``).
"""
import itertools

import numpy as np

from .._docs import fill_doc
from .bytefields import distinct_fields
from ..core.groups import check_tag_index

__all__ = ["tag_ids", "field_tag_ids", "check_unknown"]

_MISSING = -2   # the id the lookup gives a tag that is not in the index
_SHOWN_TAGS, _SHOWN_LINES = 10, 5


def check_unknown(unknown):
    """``unknown`` if it is ``"error"``, ``"extend"`` or an id ``>= -1``."""
    if unknown in ("error", "extend") and isinstance(unknown, str):
        return unknown
    if isinstance(unknown, (int, np.integer)) and not isinstance(unknown, (bool, np.bool_)) \
            and -1 <= unknown < 2 ** 31:
        return int(unknown)
    raise ValueError(f"unknown must be 'error', 'extend' or a tag id >= -1, got {unknown!r}")


@fill_doc
def tag_ids(tags, tag_index=None, *, unknown="error", lines=None, source="gold"):
    """``(ids, index)``: the column of each tag string, and the index used.

    Parameters
    ----------
    tags : list of str
        One tag per token.
    tag_index : dict of str to int, optional
        A checked tag index; None: built from the tags in code-point order.
    {unknown}
    lines : ndarray of int, optional
        The 1-based line of each tag, for the error (default: token positions).
    source : str, default="gold"
        The file, for the error.
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
    """:func:`tag_ids` of the tag fields ``buf[starts[i]:ends[i]]`` of a text, each
    distinct field decoded and looked up once.
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
    """One message: the first unknown tag, then the unknown tags (the first 10) with
    their first lines.
    """
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
