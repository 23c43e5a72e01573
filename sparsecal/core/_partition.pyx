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

from cython.parallel cimport prange
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


ctypedef fused code_t:
    uint8_t
    int32_t
    int64_t


def split_sorted_by_group(const int64_t[::1] perm, const floating[::1] sorted_scores,
                          const uint8_t[::1] labels, const int32_t[::1] tag,
                          const int64_t[::1] tag_to_group, code_t[::1] code,
                          uint8_t[::1] sorted_labels, floating[::1] group_scores,
                          uint8_t[::1] group_labels, int64_t[::1] offsets, int n_threads):
    """Entries sorted by score (``perm``, ``sorted_scores``), split by group
    without sorting again: ``sorted_labels[r] = labels[perm[r]]``, and group
    ``g``'s scores and labels in sorted order (a stable partition of the sorted
    ranks) at ``offsets[g]:offsets[g + 1]`` of ``group_scores`` /
    ``group_labels``. Tags are valid (the caller's ``Entries``).

    ``code`` (n values, scratch) first gets ``2 * group + label`` of each entry
    in entry order, a streaming pass; the sorted order then gathers that one
    small value per entry (uint8 for at most 128 groups) instead of a tag and a
    label from two arrays, and after the gather it holds the sorted codes."""
    cdef Py_ssize_t i, r, n = perm.shape[0], g, n_groups = offsets.shape[0] - 1
    cdef int t
    cdef int64_t running, count
    cdef code_t c
    if n == 0:
        offsets[:] = 0
        return
    cdef code_t[::1] sorted_code_np = np.empty_like(np.asarray(code))
    cdef code_t* sorted_code = &sorted_code_np[0]
    # per thread t (ranks t * n // n_threads onward): its entries of each group,
    # then where it writes them; rows padded to whole cache lines, so the
    # threads' counters never share one
    cdef int64_t[:, ::1] at = np.zeros((n_threads, (n_groups + 15) // 8 * 8),
                                       dtype=np.int64)
    with nogil:
        for i in prange(n, schedule="static", num_threads=n_threads):
            code[i] = <code_t>((tag_to_group[tag[i]] << 1) | labels[i])
        for t in prange(n_threads, schedule="static", num_threads=n_threads):
            _gather_codes(perm, code, sorted_code, sorted_labels, &at[t, 0],
                          t * n // n_threads, (t + 1) * n // n_threads)
        # group-major, then thread order: a stable partition of the ranks
        running = 0
        for g in range(n_groups):
            offsets[g] = running
            for t in range(n_threads):
                count = at[t, g]
                at[t, g] = running
                running = running + count
        offsets[n_groups] = running
        for t in prange(n_threads, schedule="static", num_threads=n_threads):
            _scatter_by_group(sorted_code, sorted_scores, group_scores, group_labels,
                              &at[t, 0], t * n // n_threads, (t + 1) * n // n_threads)


cdef void _gather_codes(const int64_t[::1] perm, const code_t[::1] code, code_t* sorted_code,
                        uint8_t[::1] sorted_labels, int64_t* count, Py_ssize_t lo,
                        Py_ssize_t hi) noexcept nogil:
    """Codes and labels of ranks lo..hi-1 in sorted order; ``count[g]`` gets
    how many of them are in group g."""
    cdef Py_ssize_t r
    cdef code_t c
    for r in range(lo, hi):
        c = code[perm[r]]
        sorted_code[r] = c
        sorted_labels[r] = c & 1
        count[c >> 1] += 1


cdef void _scatter_by_group(const code_t* sorted_code, const floating[::1] sorted_scores,
                            floating[::1] group_scores, uint8_t[::1] group_labels,
                            int64_t* at, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """Ranks lo..hi-1 to their group's next places ``at[g]``."""
    cdef Py_ssize_t r, g
    cdef int64_t pos
    cdef code_t c
    for r in range(lo, hi):
        c = sorted_code[r]
        g = c >> 1
        pos = at[g]
        at[g] = pos + 1
        group_scores[pos] = sorted_scores[r]
        group_labels[pos] = c & 1
