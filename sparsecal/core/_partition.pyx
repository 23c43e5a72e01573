"""Partition kernel: stable partition of entries by tag group (counting sort).

Wrapped by :func:`sparsecal.core.groups.partition_by_group`, which validates
inputs; the kernel reports the first unknown tag instead of raising.

References
----------
Kranzlein, Liu & Schneider 2021, "Making Heads and Tails of Models with Marginal
Calibration for Sparse Tagsets", Section 3.3 (SCW and tag frequency grouping).
"""
from libc.stdint cimport int32_t, int64_t


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
