"""Tag frequency groups from a distributed training gold vector: the counts
are per-chunk ``bincount``s added in a tree on the workers (integers: exact), so
the gold vector never gathers on the client."""
import numpy as np

from ..core.groups import TagGroups
from ..core.validation import TAG_BYTES, check_n_tags, check_size
from ._dask import require_dask
from .reduce import tree_merge

__all__ = ["tfg_from_gold"]


def _chunk_counts(gold, index, n_tags):
    """Tag counts of one chunk of training gold tags (on a worker)."""
    if gold.size and (gold.min() < 0 or gold.max() >= n_tags):
        bad = gold[(gold < 0) | (gold >= n_tags)][0]
        raise ValueError(f"training gold tag {int(bad)} is out of range for n_tags={n_tags}")
    return np.bincount(gold.astype(np.int64, copy=False), minlength=n_tags)


def _add(parts):
    return sum(parts)


def tfg_from_gold(gold, n_groups=5, *, n_tags):
    """Tag frequency groups (TFG) of a distributed training gold vector:
    :meth:`sparsecal.TagGroups.from_counts` on a cluster.

    Parameters
    ----------
    gold : dask.array.Array of int, shape (n_tokens,)
        Training gold tags, each in ``0..n_tags-1`` (checked on the workers).
    n_groups : int, default=5
    n_tags : int
        Size of the tag inventory.

    Returns
    -------
    TagGroups
        Equal to ``TagGroups.from_counts(gold.compute(), n_groups, n_tags=n_tags)``.

    Raises
    ------
    TypeError
        If ``gold`` is not a dask array of integers.
    ValueError
        If ``n_groups`` or ``n_tags`` is not a positive integer, or a tag is out
        of range (when its chunk is counted).

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.3 and Figure 1.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> gold = np.repeat([0, 1, 2, 3], [60, 25, 10, 5])
    >>> got = tfg_from_gold(da.from_array(gold, chunks=30), 2, n_tags=4)
    >>> got.tag_to_group.tolist(), got.train_counts.tolist()
    ([0, 1, 1, 1], [60, 25, 10, 5])
    """
    dask = require_dask()
    if not isinstance(gold, dask.array.Array) or gold.dtype.kind not in "iu":
        raise TypeError("gold must be a dask.array.Array of integer tags")
    if gold.ndim != 1:
        raise ValueError(f"gold must be 1-D, got shape {gold.shape}")
    n_tags = check_n_tags(n_tags)
    check_size(n_groups, "n_groups", TAG_BYTES)
    counts = tree_merge(_chunk_counts, _add, list(gold.to_delayed()), n_tags)
    return TagGroups.from_counts({str(t): int(c) for t, c in enumerate(counts)}, n_groups,
                                 n_tags=n_tags)
