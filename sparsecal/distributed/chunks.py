"""Per-chunk helpers of the distributed path: the entries of each group of a
chunk, and the order-preserving integer keys of scores (the bit patterns that
the radix selection of :mod:`~sparsecal.distributed.equal_mass` counts and the
distinct-score tables of :mod:`~sparsecal.distributed.isotonic` are keyed by)."""
import numpy as np

from ..core.groups import partition_by_group

__all__ = ["key_scores", "score_keys", "subsets"]


def score_keys(score):
    """Order-preserving unsigned keys of scores in [0, 1] (-0.0 as 0.0): the
    bit patterns, as uint64.

    Parameters
    ----------
    score : ndarray of float32 or float64, shape (n,)

    Returns
    -------
    ndarray of uint64, shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> key_scores(score_keys(np.array([-0.0, 0.5], np.float32)), np.float32)
    array([0. , 0.5])
    """
    x = score + score.dtype.type(0.0)
    return x.view(np.uint32 if x.dtype == np.float32 else np.uint64).astype(np.uint64)


def key_scores(keys, dtype):
    """The scores (as float64) of :func:`score_keys` of ``dtype`` scores.

    Parameters
    ----------
    keys : ndarray of uint64
    dtype : numpy.dtype
        float32 or float64.

    Returns
    -------
    ndarray of float64

    Examples
    --------
    >>> import numpy as np
    >>> key_scores(score_keys(np.array([0.25])), np.float64)
    array([0.25])
    """
    if dtype == np.float32:
        return keys.astype(np.uint32).view(np.float32).astype(np.float64)
    return keys.view(np.float64).copy()


def subsets(entries, tag_to_group, n_groups):
    """Scores and labels of the entries of each group, each in entry order.

    Parameters
    ----------
    entries : Entries
        One chunk.
    tag_to_group : ndarray of int64 or None
        Group of each tag; None: one group of all entries.
    n_groups : int

    Returns
    -------
    list of (ndarray, ndarray)
        ``(score, label)`` per group.

    Examples
    --------
    >>> from sparsecal.core.entries import Entries
    >>> e = Entries([0.5, 0.2, 0.9], [1, 0, 1], [1, 0, 0], n_tags=2)
    >>> [s.tolist() for s, _ in subsets(e, np.array([0, 1]), 2)]
    [[0.2], [0.5, 0.9]]
    """
    if tag_to_group is None:
        return [(entries.score, entries.label)]
    perm, offsets = partition_by_group(entries.tag, tag_to_group, n_groups)
    return [(entries.score[perm[a:b]], entries.label[perm[a:b]])
            for a, b in zip(offsets[:-1], offsets[1:])]
