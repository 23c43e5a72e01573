"""Gold tags from per-sentence label lists (Hugging Face ``ner_tags``,
sklearn-crfsuite ``y``).
"""
from itertools import chain

import numpy as np

from ..core.dispatch import LIBRARY_OUTPUTS, takes_data
from ..core.validation import check_choice, check_gold
from .._docs import fill_doc

__all__ = ["gold_ids"]


@takes_data(refuse=LIBRARY_OUTPUTS)
@fill_doc
def gold_ids(labels, label_names=None, *, unknown="error"):
    """The gold tag index of every word of every sentence, in order.

    Parameters
    ----------
    labels : sequence of sequences of str or int
        Per sentence, each word's gold label name or tag id (-1: no gold tag).
    label_names : sequence of str, optional
        The tag inventory in column order; required for names.
    {gold_unknown}

    Returns
    -------
    ndarray of int64, shape (n_words,)

    Examples
    --------
    >>> gold_ids([["B-PER", "O"], ["B-ORG"]], ["O", "B-PER"], unknown="missing")
    array([ 1,  0, -1])
    """
    return _gold_and_lengths(labels, label_names, unknown)[0]


def _gold_and_lengths(labels, label_names, unknown, first=0):
    """``(gold [n_words], words per sentence)`` (sentences numbered from ``first`` in messages)."""
    check_choice(unknown, "unknown", {"error", "missing"})
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__iter__"):
        raise TypeError(f"labels must be a sequence of sentences (lists of labels), got "
                        f"{type(labels).__name__}")
    labels = list(labels)
    if any(isinstance(s, (str, bytes)) or not hasattr(s, "__len__") for s in labels):
        raise TypeError("labels must be a sequence of sentences, each a list of labels")
    lengths = np.fromiter(map(len, labels), dtype=np.int64, count=len(labels))
    words = list(chain.from_iterable(labels))
    try:
        flat = np.array(words)
    except ValueError:   # labels of unequal lengths
        flat = None
    if flat is None or flat.ndim != 1:
        _refuse_nested(words, lengths, first)
    if flat.size == 0:
        return np.empty(0, np.int64), lengths
    names = None if label_names is None else _names(label_names)
    if flat.dtype.kind in "iu":
        return check_gold(flat, flat.size, len(names) if names is not None else
                          np.iinfo(np.int32).max, "labels"), lengths
    if flat.dtype.kind != "U":
        raise TypeError(f"labels must be all label names or all integer ids, got "
                        f"values of dtype {flat.dtype}")
    if names is None:
        raise ValueError("labels are names: give label_names (the tag inventory in "
                         "column order) to map them to tag ids")
    order = np.argsort(names, kind="stable")
    pos = np.searchsorted(names[order], flat).clip(max=names.size - 1)
    found = names[order][pos] == flat
    gold = np.where(found, order[pos], -1).astype(np.int64)
    if unknown == "error" and not found.all():
        i = int(np.flatnonzero(~found)[0])
        s = int(np.searchsorted(np.cumsum(lengths), i, side="right"))
        j = i - int(lengths[:s].sum())
        raise ValueError(f"labels[{first + s}][{j}] = {str(flat[i])!r} is not in "
                         "label_names "
                         "(pass unknown='missing' to count it as 'no gold tag')")
    return gold, lengths


def _refuse_nested(words, lengths, first):
    """Raise for the first word whose label is a sequence (an error path)."""
    i = next(i for i, v in enumerate(words)
             if hasattr(v, "__len__") and not isinstance(v, (str, bytes)))
    s = int(np.searchsorted(np.cumsum(lengths), i, side="right"))
    raise TypeError(f"labels[{first + s}][{i - int(lengths[:s].sum())}] is a "
                    f"{type(words[i]).__name__}: each word's label must be one name or "
                    "tag id")


def _names(label_names):
    names = np.asarray(list(label_names), dtype=object)
    if not all(isinstance(n, str) for n in names):
        raise TypeError("label_names must hold strings")
    names = names.astype(str) if names.size else np.empty(0, dtype="U1")
    if np.unique(names).size != names.size:
        raise ValueError("label_names repeats a name: names must map to one tag each")
    return names
