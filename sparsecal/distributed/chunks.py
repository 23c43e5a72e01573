"""Per-chunk helpers of the distributed path: the entries of each group of a
chunk sorted by score, and the order-preserving integer keys of scores (the bit
patterns that the selection of :mod:`~sparsecal.distributed.equal_mass` counts
and the distinct-score tables of :mod:`~sparsecal.distributed.isotonic` are
keyed by)."""
import numpy as np

from ..core.binning import argsort_scores
from ..core.groups import split_sorted_by_group

__all__ = ["add_tables", "key_scores", "native_keys", "runs", "sorted_sets"]


def native_keys(score):
    """Order-preserving unsigned keys of scores in [0, 1] (-0.0 as 0.0), in the
    scores' width: uint32 for float32, uint64 for float64.

    Parameters
    ----------
    score : ndarray of float32 or float64, shape (n,)

    Returns
    -------
    ndarray of uint32 or uint64, shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> native_keys(np.array([-0.0, 1.0], np.float32))
    array([         0, 1065353216], dtype=uint32)
    """
    x = score + score.dtype.type(0.0)
    return x.view(np.uint32 if x.dtype == np.float32 else np.uint64)


def key_scores(keys, dtype):
    """The scores (as float64) of :func:`native_keys` of ``dtype`` scores.

    Parameters
    ----------
    keys : ndarray of uint32 or uint64
    dtype : numpy.dtype
        float32 or float64.

    Returns
    -------
    ndarray of float64

    Examples
    --------
    >>> import numpy as np
    >>> key_scores(native_keys(np.array([-0.0, 0.25], np.float32)), np.float32)
    array([0.  , 0.25])
    >>> key_scores(native_keys(np.array([0.25])), np.float64)
    array([0.25])
    """
    if dtype == np.float32:
        return keys.astype(np.uint32).view(np.float32).astype(np.float64)
    return keys.view(np.float64).copy()


def runs(values):
    """The distinct values of a sorted array, where each run of them starts,
    and its length.

    Parameters
    ----------
    values : ndarray, shape (n,)
        Sorted.

    Returns
    -------
    distinct, starts, lengths : ndarray, ndarray of int64, ndarray of int64

    Examples
    --------
    >>> runs(np.array([2, 2, 5, 7, 7, 7]))
    (array([2, 5, 7]), array([0, 2, 3]), array([2, 1, 3]))
    """
    starts = np.flatnonzero(np.concatenate(([values.size > 0], values[1:] != values[:-1])))
    return values[starts], starts, np.diff(np.append(starts, values.size))


def add_tables(keys, *columns):
    """The union of tables keyed by ``keys``, adding the columns of equal keys
    (exact for integers): the merge of per-chunk counts.

    Parameters
    ----------
    keys : list of ndarray
        Each sorted (so that one stable sort merges them, run by run).
    *columns : list of ndarray of int64
        The values of each table, one list per column.

    Returns
    -------
    distinct : ndarray
        Sorted distinct keys.
    *sums : ndarray of int64
        Per column, the sum of each distinct key's values.

    Examples
    --------
    >>> add_tables([np.array([1, 4]), np.array([4, 6])],
    ...            [np.array([2, 3]), np.array([5, 7])])
    (array([1, 4, 6]), array([2, 8, 7]))
    """
    k = np.concatenate(keys)
    order = np.argsort(k, kind="stable")
    distinct, starts, _ = runs(k[order])
    return (distinct, *(np.add.reduceat(np.concatenate(c)[order].astype(np.int64), starts)
                        if starts.size else np.zeros(0, np.int64) for c in columns))


class _Groups:
    """The two fields of a ``TagGroups`` that ``split_sorted_by_group`` reads."""

    def __init__(self, tag_to_group, n_groups):
        self.tag_to_group, self.n_groups = tag_to_group, n_groups


def sorted_sets(entries, pooled, tag_to_group, n_groups):
    """Keys and labels of sets of a chunk's entries, each sorted by score
    (stable: tied entries in entry order): all entries if ``pooled``, then the
    entries of each group.

    One stable sort of the chunk (:func:`sparsecal.core.binning.argsort_scores`)
    serves every set: split by group in sorted order
    (:func:`sparsecal.core.groups.split_sorted_by_group`) each group's entries
    are in the group's own stable order.

    Parameters
    ----------
    entries : Entries
        One chunk.
    pooled : bool
        Whether the first set is all entries.
    tag_to_group : ndarray of int64 or None
        Group of each tag; None: no group sets.
    n_groups : int

    Returns
    -------
    list of (ndarray, ndarray)
        ``(keys, labels)`` per set: :func:`native_keys` ascending, and uint8.

    Examples
    --------
    >>> from sparsecal.core.entries import Entries
    >>> e = Entries([0.5, 0.2, 0.9, 0.2], [1, 0, 1, 1], [1, 0, 0, 1], n_tags=2)
    >>> [(key_scores(k, np.float64).tolist(), y.tolist())
    ...  for k, y in sorted_sets(e, True, np.array([0, 1]), 2)]
    [([0.2, 0.2, 0.5, 0.9], [0, 1, 1, 0]), ([0.2], [0]), ([0.2, 0.5, 0.9], [1, 1, 0])]
    """
    perm, scores = argsort_scores(entries.score, n_threads=1)
    keys = native_keys(scores)
    if tag_to_group is None:
        return [(keys, entries.label[perm])]
    labels, group_scores, group_labels, offsets = split_sorted_by_group(
        entries, _Groups(tag_to_group, n_groups), perm, scores, n_threads=1)
    group_keys = native_keys(group_scores)
    sets = [(keys, labels)] if pooled else []
    return sets + [(group_keys[a:b], group_labels[a:b])
                   for a, b in zip(offsets[:-1], offsets[1:])]
