"""Threshold kernel: dense scores + gold -> entries with ``score >= threshold``.

Two passes over one row chunk: count per block (``threshold_count``), then fill
(``threshold_fill``). The chunk is sized by the caller
(:func:`sparsecal.core.entries.threshold`) to stay in cache, so the matrix is
read from memory once. Invalid values (NaN, <0, >1) are counted in the first
pass; the kernel never raises, the wrapper names the bad value.

References
----------
Kranzlein, Liu & Schneider 2021, "Making Heads and Tails of Models with Marginal
Calibration for Sparse Tagsets", Section 3.1 (thresholding).
"""
from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memcpy, memset

from ._types cimport floating


cdef inline int64_t _count_rows(const floating[:, ::1] scores, Py_ssize_t r0,
                                Py_ssize_t r1, floating t,
                                int64_t* n_invalid) noexcept nogil:
    cdef Py_ssize_t i, j, m = scores.shape[1]
    cdef int64_t kept = 0, bad = 0
    cdef int32_t row_kept, row_bad
    cdef const floating* row
    cdef floating x
    for i in range(r0, r1):
        # Branch-free integer reductions over a contiguous row: vectorised by -O3.
        row = &scores[i, 0]
        row_kept = 0
        row_bad = 0
        for j in range(m):
            x = row[j]
            row_kept = row_kept + (x >= t)
            row_bad = row_bad | ((not (x >= 0)) | (not (x <= 1)))   # NaN fails both
        kept += row_kept
        bad += row_bad
    n_invalid[0] = bad
    return kept


def threshold_count(const floating[:, ::1] scores, double threshold,
                    Py_ssize_t rows_per_block, int64_t[::1] kept,
                    int64_t[::1] n_invalid, int n_threads):
    """Per block of ``rows_per_block`` rows: number of entries ``>= threshold``
    (into ``kept``) and of entries that are NaN or outside [0, 1] (into
    ``n_invalid``)."""
    cdef Py_ssize_t b, r0, r1, n_rows = scores.shape[0]
    cdef Py_ssize_t n_blocks = kept.shape[0]
    cdef floating t = <floating> threshold   # compared in the score dtype, as NumPy does
    with nogil:
        for b in prange(n_blocks, schedule="static", num_threads=n_threads):
            r0 = b * rows_per_block
            r1 = min(r0 + rows_per_block, n_rows)
            kept[b] = _count_rows(scores, r0, r1, t, &n_invalid[b])


cdef enum:
    FILL_SEG = 512      # columns per flag segment (a row of <= 512 tags is one)


cdef inline void _fill_rows(const floating[:, ::1] scores, const int64_t[::1] gold,
                            Py_ssize_t r0, Py_ssize_t r1, floating t,
                            int64_t pos, int64_t token_offset,
                            floating[::1] out_score, int32_t[::1] out_tag,
                            uint8_t[::1] out_label, int64_t[::1] out_token) noexcept nogil:
    # Survivors are sparse (~0.4% at t = 0.01): first write x >= t of a row
    # segment as bytes (a branch-free loop the C compiler vectorizes), then read
    # the flags 8 at a time and only look closer at words that are not zero.
    cdef Py_ssize_t i, j, j0, w, seg, m = scores.shape[1]
    cdef const floating* row
    cdef uint8_t flags[FILL_SEG + 8]
    cdef uint64_t word
    cdef int64_t g
    for i in range(r0, r1):
        g = gold[i]
        row = &scores[i, 0]
        j0 = 0
        while j0 < m:
            seg = min(<Py_ssize_t> FILL_SEG, m - j0)
            for j in range(seg):
                flags[j] = row[j0 + j] >= t
            memset(&flags[seg], 0, 8)
            w = 0
            while w < seg:
                memcpy(&word, &flags[w], 8)
                if word != 0:
                    for j in range(w, w + 8):
                        if flags[j]:
                            out_score[pos] = row[j0 + j]
                            out_tag[pos] = <int32_t> (j0 + j)
                            out_label[pos] = g == j0 + j
                            out_token[pos] = token_offset + i
                            pos = pos + 1
                w += 8
            j0 += FILL_SEG


def threshold_fill(const floating[:, ::1] scores, const int64_t[::1] gold,
                   double threshold, Py_ssize_t rows_per_block,
                   const int64_t[::1] block_start, int64_t token_offset,
                   floating[::1] out_score, int32_t[::1] out_tag,
                   uint8_t[::1] out_label, int64_t[::1] out_token, int n_threads):
    """Write the entries ``>= threshold`` of each block, in row-major order,
    starting at output position ``block_start[b]`` (from ``threshold_count``)."""
    cdef Py_ssize_t b, r0, r1, n_rows = scores.shape[0]
    cdef Py_ssize_t n_blocks = block_start.shape[0]
    cdef floating t = <floating> threshold
    with nogil:
        for b in prange(n_blocks, schedule="static", num_threads=n_threads):
            r0 = b * rows_per_block
            r1 = min(r0 + rows_per_block, n_rows)
            _fill_rows(scores, gold, r0, r1, t, block_start[b], token_offset,
                       out_score, out_tag, out_label, out_token)
