"""Per-chunk helpers: each group's entries sorted by score, and the
order-preserving integer keys of scores."""
import numpy as np

from ..core.binning import argsort_scores
from ..core.groups import split_sorted_by_group

__all__ = ["add_tables", "key_scores", "native_keys", "runs", "sorted_sets"]


def native_keys(score):
    """Order-preserving unsigned keys of scores in [0, 1], in the scores' width."""
    x = score + score.dtype.type(0.0)
    return x.view(np.uint32 if x.dtype == np.float32 else np.uint64)


def key_scores(keys, dtype):
    """The scores, as float64, of :func:`native_keys` of ``dtype`` scores."""
    if dtype == np.float32:
        return keys.astype(np.uint32).view(np.float32).astype(np.float64)
    return keys.view(np.float64).copy()


def runs(values):
    """The distinct values of a sorted array, where each run starts, and its length."""
    starts = np.flatnonzero(np.concatenate(([values.size > 0], values[1:] != values[:-1])))
    return values[starts], starts, np.diff(np.append(starts, values.size))


def add_tables(keys, *columns):
    """The union of tables with sorted ``keys``, adding the int64 ``columns`` of equal keys."""
    k = np.concatenate(keys)
    order = np.argsort(k, kind="stable")
    distinct, starts, _ = runs(k[order])
    return (distinct, *(np.add.reduceat(np.concatenate(c)[order].astype(np.int64), starts)
                        if starts.size else np.zeros(0, np.int64) for c in columns))


class _Groups:

    def __init__(self, tag_to_group, n_groups):
        self.tag_to_group, self.n_groups = tag_to_group, n_groups


def sorted_sets(entries, pooled, tag_to_group, n_groups):
    """``(keys, labels)`` of all entries if ``pooled``, then of each group, sorted by score."""
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
