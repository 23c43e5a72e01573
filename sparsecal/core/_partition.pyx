"""Partition kernels: stable partition of entries by tag group (counting sort).

Wrapped by :func:`sparsecal.core.groups.partition_by_group`, which validates
inputs (the kernel reports the first unknown tag instead of raising), and by
:func:`sparsecal.core.groups.split_sorted_by_group` (entries already sorted by
score, split by group in that order: one sort serves SMCE and every GMCE).

References
----------
Kranzlein, Liu & Schneider 2021, "Making Heads and Tails of Models with Marginal
Calibration for Sparse Tagsets", Section 3.3 (SCW and tag frequency grouping).
"""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t

from ._types cimport floating


def partition_by_group(const int32_t[::1] tag, const int64_t[::1] tag_to_group,
                       int64_t[::1] perm, int64_t[::1] offsets):
    """Stable order of entries grouped by ``tag_to_group[tag]``; group ``g``
    occupies ``perm[offsets[g]:offsets[g + 1]]``. Returns the index of the first
    entry whose tag is outside ``tag_to_group``, or -1."""
    cdef Py_ssize_t i, n = tag.shape[0], n_tags = tag_to_group.shape[0]
    cdef Py_ssize_t g, n_groups = offsets.shape[0] - 1
    cdef int32_t t
    cdef int64_t pos
    cdef Py_ssize_t bad = -1
    with nogil:
        for g in range(n_groups + 1):
            offsets[g] = 0
        for i in range(n):
            t = tag[i]
            if t < 0 or t >= n_tags:
                bad = i
                break
            offsets[tag_to_group[t] + 1] += 1
    if bad >= 0:
        return bad
    with nogil:
        for g in range(n_groups):
            offsets[g + 1] += offsets[g]
        for i in range(n):
            g = tag_to_group[tag[i]]
            pos = offsets[g]
            offsets[g] = pos + 1
            perm[pos] = i
        for g in range(n_groups, 0, -1):
            offsets[g] = offsets[g - 1]
        offsets[0] = 0
    return -1


def split_sorted_by_group(const int64_t[::1] perm, const floating[::1] sorted_scores,
                          const uint8_t[::1] labels, const int32_t[::1] tag,
                          const int64_t[::1] tag_to_group, uint8_t[::1] sorted_labels,
                          floating[::1] group_scores, uint8_t[::1] group_labels,
                          int64_t[::1] offsets):
    """Entries sorted by score (``perm``, ``sorted_scores``), split by group
    without sorting again: ``sorted_labels[r] = labels[perm[r]]``, and group
    ``g``'s scores and labels in sorted order (a stable partition of the sorted
    ranks) at ``offsets[g]:offsets[g + 1]`` of ``group_scores`` /
    ``group_labels``. Tags are valid (the caller's ``Entries``)."""
    cdef Py_ssize_t r, n = perm.shape[0], g, n_groups = offsets.shape[0] - 1
    cdef int64_t pos
    cdef int32_t[::1] group_np = np.empty(n, dtype=np.int32)
    cdef int32_t* group = &group_np[0] if n else NULL
    with nogil:
        for g in range(n_groups + 1):
            offsets[g] = 0
        for r in range(n):
            group[r] = <int32_t>tag_to_group[tag[perm[r]]]
            sorted_labels[r] = labels[perm[r]]
            offsets[group[r] + 1] += 1
        for g in range(n_groups):
            offsets[g + 1] += offsets[g]
        for r in range(n):
            g = group[r]
            pos = offsets[g]
            offsets[g] = pos + 1
            group_scores[pos] = sorted_scores[r]
            group_labels[pos] = sorted_labels[r]
        for g in range(n_groups, 0, -1):
            offsets[g] = offsets[g - 1]
        offsets[0] = 0
