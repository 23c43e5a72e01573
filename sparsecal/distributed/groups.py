"""Tag frequency groups from a distributed training gold vector: per-chunk
``bincount`` results added in a tree (exact); the gold never reaches the client."""
import numpy as np

from ..core.groups import TagGroups
from ..core.validation import TAG_BYTES, check_n_tags, check_size
from ._dask import require_dask
from .reduce import tree_merge

__all__ = ["tfg_from_gold"]


def _chunk_counts(gold, index, n_tags):
    if gold.size and (gold.min() < 0 or gold.max() >= n_tags):
        bad = gold[(gold < 0) | (gold >= n_tags)][0]
        raise ValueError(f"training gold tag {int(bad)} is out of range for n_tags={n_tags}")
    return np.bincount(gold.astype(np.int64, copy=False), minlength=n_tags)


def _add(parts):
    return sum(parts)


def tfg_from_gold(gold, n_groups=5, *, n_tags):
    """:meth:`sparsecal.TagGroups.from_gold` of a distributed training gold vector.

    Parameters
    ----------
    gold : dask.array.Array of int, shape (n_tokens,)
        Training gold tags in ``0..n_tags-1`` (checked on the workers).
    n_groups, n_tags : int
        As :meth:`~sparsecal.TagGroups.from_gold`.

    Returns
    -------
    TagGroups

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> gold = da.from_array(np.repeat([0, 1, 2, 3], [60, 25, 10, 5]), chunks=30)
    >>> tfg_from_gold(gold, 2, n_tags=4).tag_to_group.tolist()
    [0, 1, 1, 1]
    """
    dask = require_dask()
    if not isinstance(gold, dask.array.Array) or gold.dtype.kind not in "iu":
        raise TypeError("gold must be a dask.array.Array of integer tags")
    if gold.ndim != 1:
        raise ValueError(f"gold must be 1-D, got shape {gold.shape}")
    n_tags = check_n_tags(n_tags)
    check_size(n_groups, "n_groups", TAG_BYTES)
    counts = tree_merge(_chunk_counts, _add, list(gold.to_delayed()), n_tags)
    return TagGroups.from_counts(counts, n_groups, n_tags=n_tags)
