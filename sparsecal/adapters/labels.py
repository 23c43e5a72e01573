"""Gold tags from per-sentence label lists, the shape every tagging library uses.

Hugging Face datasets (``ner_tags``), sklearn-crfsuite (``y``) and most corpora
give gold as a list of sentences, each a list of label names or ids per word.
Here they become the one gold vector the package takes: an int64 tag index per
word, sentence after sentence, with -1 for "no gold tag in the inventory"
(docs/architecture.md, "Data model").
"""
from itertools import chain

import numpy as np

from ..core.dispatch import LIBRARY_OUTPUTS, takes_data
from ..core.validation import check_choice, check_gold

__all__ = ["gold_ids"]


@takes_data(refuse=LIBRARY_OUTPUTS)
def gold_ids(labels, label_names=None, *, unknown="error"):
    """The gold tag index of every word of every sentence, in order.

    Parameters
    ----------
    labels : sequence of sequences of str or int
        Per sentence, the gold label of each word: label names (looked up in
        ``label_names``) or tag ids (in ``[-1, len(label_names))``; -1 means no
        gold tag in the inventory).
    label_names : sequence of str, optional
        The tag inventory in column order (e.g. :func:`label_names` of a model's
        config, or ``CRF.classes_``); required for names, bounds the ids.
    unknown : {"error", "missing"}, default "error"
        A name not in ``label_names``: an error, or gold -1 (the token then
        gives negative entries only, as in :func:`sparsecal.threshold`).

    Returns
    -------
    ndarray of int64, shape (n_words,)

    Raises
    ------
    TypeError
        If ``labels`` is not a sequence of sequences, or holds values that are
        neither all names nor all integers.
    ValueError
        If a name is unknown (with ``unknown="error"``; the first is named with
        its sentence and position), names are given without ``label_names``,
        ``label_names`` repeats a name, or an id is out of range.

    References
    ----------
    Kranzlein, Liu & Schneider (2021), Section 3.1: an entry is labelled 1
    when its tag is the token's gold tag.

    Examples
    --------
    >>> from sparsecal.adapters import gold_ids
    >>> gold_ids([["B-PER", "O"], ["O"]], ["O", "B-PER", "I-PER"])
    array([1, 0, 0])
    >>> gold_ids([[2, 0]], ["O", "B-PER", "I-PER"])
    array([2, 0])
    >>> gold_ids([["B-ORG"]], ["O", "B-PER"], unknown="missing")
    array([-1])
    """
    return _gold_and_lengths(labels, label_names, unknown)[0]


def _gold_and_lengths(labels, label_names, unknown, first=0):
    """(gold int64 [n_words], words per sentence int64 [n_sentences]): one pass
    over the Python lists to flatten them, the rest vectorised. Sentences are
    numbered from ``first`` in messages."""
    check_choice(unknown, "unknown", {"error", "missing"})
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__iter__"):
        raise TypeError(f"labels must be a sequence of sentences (lists of labels), got "
                        f"{type(labels).__name__}")
    labels = list(labels)
    if any(isinstance(s, (str, bytes)) or not hasattr(s, "__len__") for s in labels):
        raise TypeError("labels must be a sequence of sentences, each a list of labels")
    lengths = np.fromiter(map(len, labels), dtype=np.int64, count=len(labels))
    flat = np.array(list(chain.from_iterable(labels)))
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


def _names(label_names):
    names = np.asarray(list(label_names), dtype=object)
    if not all(isinstance(n, str) for n in names):
        raise TypeError("label_names must hold strings")
    names = names.astype(str) if names.size else np.empty(0, dtype="U1")
    if np.unique(names).size != names.size:
        raise ValueError("label_names repeats a name: names must map to one tag each")
    return names
