"""Tag groups: a map from tag index to group index (SCW, TFG, per tag).

Kranzlein, Liu & Schneider 2021, Section 2: SCW pools all tags in one group;
TFG groups tags by training frequency.
"""
import numpy as np

from . import _core

__all__ = ["partition_by_group"]


def partition_by_group(tag, tag_to_group, n_groups=None):
    """Stable order of entries by the group of their tag (counting sort).

    Parameters
    ----------
    tag : array_like of int, shape (n,)
        Tag index per entry.
    tag_to_group : array_like of int, shape (n_tags,)
        Group index in ``[0, n_groups)`` of each tag.
    n_groups : int, optional
        Defaults to ``max(tag_to_group) + 1``.

    Returns
    -------
    perm : ndarray of int64, shape (n,)
        Entries of group ``g`` are ``perm[offsets[g]:offsets[g + 1]]``, in their
        original order.
    offsets : ndarray of int64, shape (n_groups + 1,)
    """
    tag = np.ascontiguousarray(tag, dtype=np.int32)
    if tag.ndim != 1:
        raise ValueError(f"tag must be 1-dimensional, got shape {tag.shape}")
    mapping = np.ascontiguousarray(tag_to_group, dtype=np.int64)
    if mapping.ndim != 1 or mapping.shape[0] == 0:
        raise ValueError("tag_to_group must be a non-empty 1-D array")
    if n_groups is None:
        n_groups = int(mapping.max()) + 1
    if mapping.min() < 0 or mapping.max() >= n_groups:
        raise ValueError(f"tag_to_group values must lie in [0, {n_groups})")
    perm = np.empty(tag.shape[0], dtype=np.int64)
    offsets = np.empty(n_groups + 1, dtype=np.int64)
    bad = _core.partition_by_group(tag, mapping, perm, offsets)
    if bad >= 0:
        raise ValueError(f"tag[{bad}] = {tag[bad]} is an unknown tag: tag_to_group "
                         f"covers tags 0..{mapping.shape[0] - 1}")
    return perm, offsets
