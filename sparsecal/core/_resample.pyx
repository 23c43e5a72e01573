"""Resampling kernel: the bin sums of bootstrap and consistency replicates drawn
from a distinct-score table.

Replicate ``r`` draws only from generator ``r`` (numpy's C distributions on
its bit generator, in the order and with the arguments of the equivalent
``Generator`` calls), so replicates run in parallel and the result does not
depend on the thread count. Wrapped by :mod:`sparsecal.metrics.resampling`,
which validates the table, builds the draw maps and holds the generators' locks.

A replicate's copies per distinct score come from one of four draws
(``mode``): a multinomial over ``cells`` (``MULTINOMIAL``) or ``n`` uniform
ranks mapped to cells by ``rank_map`` (``RANKS``; no map: rank = cell); for
the bootstrap a cell is one label of one score (``cell_index`` = 2 * score +
label), for the consistency resample (``NULL_*``) a cell is a score and its
positives are drawn as Binomial(copies, score) or, with ranks, one uniform
per copy. Equal-mass bins cut the replicate's sorted copies at ranks
``starts``; a cut inside one score's copies splits its positives
hypergeometrically, cuts within one run conditioned in order of depth.
"""
from cython.parallel cimport prange, threadid
from libc.stdint cimport int64_t, uint64_t, uintptr_t
from libc.string cimport memset
from cpython.pycapsule cimport PyCapsule_GetPointer

import numpy as np

from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (binomial_t, random_binomial,
                                           random_bounded_uint64, random_hypergeometric,
                                           random_multinomial, random_standard_uniform)

cpdef enum Draw:
    MULTINOMIAL
    RANKS
    NULL_MULTINOMIAL
    NULL_RANKS


cdef void _draw(bitgen_t *bg, int mode, int64_t n, const double[::1] scores,
                const int64_t[::1] cell_index, const double[::1] pvals,
                const int64_t[::1] rank_map, int64_t[::1] cells, int64_t[::1] items,
                int64_t[::1] copies, int64_t[::1] positives) noexcept nogil:
    """Copies and positives per distinct score of one replicate."""
    cdef Py_ssize_t i, t, m = cells.shape[0], J = copies.shape[0]
    cdef bint mapped = rank_map.shape[0] > 0
    cdef int64_t r
    cdef binomial_t binomial
    memset(&binomial, 0, sizeof(binomial))
    for i in range(m):
        cells[i] = 0
    if (mode == MULTINOMIAL or mode == NULL_MULTINOMIAL) and m:   # Generator.multinomial
        random_multinomial(bg, n, &cells[0], <double*> &pvals[0], m, &binomial)
    elif mode == RANKS:   # bincount(rank_map[Generator.integers(0, n, n)])
        for t in range(n):
            r = <int64_t> random_bounded_uint64(bg, 0, n - 1, 0, 0)
            cells[rank_map[r] if mapped else r] += 1
    else:   # items as above, then Generator.random(n) < scores[items]
        for t in range(n):
            r = <int64_t> random_bounded_uint64(bg, 0, n - 1, 0, 0)
            items[t] = rank_map[r] if mapped else r
    if mode == MULTINOMIAL or mode == RANKS:
        for i in range(J):
            copies[i] = 0
            positives[i] = 0
        for i in range(m):
            copies[cell_index[i] >> 1] += cells[i]
            if cell_index[i] & 1:
                positives[cell_index[i] >> 1] += cells[i]
    elif mode == NULL_MULTINOMIAL:   # Generator.binomial(copies, scores)
        for i in range(J):
            copies[i] = cells[i]
            positives[i] = random_binomial(bg, scores[i], cells[i], &binomial)
    else:
        for i in range(J):
            copies[i] = 0
            positives[i] = 0
        for t in range(n):
            copies[items[t]] += 1
            positives[items[t]] += random_standard_uniform(bg) < scores[items[t]]


cdef void _equal_mass(bitgen_t *bg, const double[::1] scores, const int64_t[::1] copies,
                      const int64_t[::1] positives, const int64_t[::1] starts,
                      int64_t[::1] cuts, double[::1] cum_score, int64_t[::1] cum_copies,
                      int64_t[::1] cum_positives, double[::1] sum_score,
                      double[::1] sum_label) noexcept nogil:
    """Bin sums of one replicate cut at ranks ``starts`` (equal-mass bins);
    ``cuts`` is scratch of 5 x len(starts) + 1."""
    cdef Py_ssize_t b, i, j, k, J = copies.shape[0], S = starts.shape[0]
    cdef int64_t[::1] run = cuts[:S], offset = cuts[S:2 * S], left = cuts[2 * S:3 * S]
    cdef int64_t[::1] order = cuts[3 * S:4 * S], first = cuts[4 * S:]
    cdef int64_t prev_left, prev_offset, good, max_depth = 0
    cum_score[0] = 0.0
    cum_copies[0] = 0
    cum_positives[0] = 0
    for j in range(J):
        cum_score[j + 1] = cum_score[j] + copies[j] * scores[j]
        cum_copies[j + 1] = cum_copies[j] + copies[j]
        cum_positives[j + 1] = cum_positives[j] + positives[j]
    # the score holding each cut and the copies of it before the cut
    # (np.searchsorted(cum_copies, starts, "right") - 1, at most J - 1), and the
    # cut's depth within its run (in ``left`` until the draws)
    k = 0
    for b in range(S):
        while k < J and cum_copies[k + 1] <= starts[b]:
            k += 1
        run[b] = k if k < J else J - 1
        offset[b] = starts[b] - cum_copies[run[b]]
        left[b] = 0 if b == 0 or run[b] != run[b - 1] else left[b - 1] + 1
        if left[b] > max_depth:
            max_depth = left[b]
    # the cuts in order of depth, ascending within one depth (a counting sort)
    for i in range(max_depth + 2):
        first[i] = 0
    for b in range(S):
        first[left[b] + 1] += 1
    for i in range(max_depth + 1):
        first[i + 1] += first[i]
    for b in range(S):
        order[first[left[b]]] = b
        first[left[b]] += 1
    # positives before each cut: Hypergeometric given the cut before it in its run
    for i in range(S):
        b = order[i]
        if b > 0 and run[b] == run[b - 1]:
            prev_left, prev_offset = left[b - 1], offset[b - 1]
        else:
            prev_left, prev_offset = 0, 0
        good = positives[run[b]] - prev_left
        left[b] = prev_left + random_hypergeometric(
            bg, good, copies[run[b]] - prev_offset - good, offset[b] - prev_offset)
    for b in range(S - 1):
        sum_score[b] = ((cum_score[run[b + 1]] + offset[b + 1] * scores[run[b + 1]])
                        - (cum_score[run[b]] + offset[b] * scores[run[b]]))
        sum_label[b] = <double> ((cum_positives[run[b + 1]] + left[b + 1])
                                 - (cum_positives[run[b]] + left[b]))


cdef void _fixed(const double[::1] scores, const int64_t[::1] copies,
                 const int64_t[::1] positives, const int64_t[::1] score_bin,
                 double[::1] count, double[::1] sum_score,
                 double[::1] sum_label) noexcept nogil:
    """Bin sums of one replicate in fixed-width bins (``score_bin`` of each score)."""
    cdef Py_ssize_t j, b
    for b in range(count.shape[0]):
        count[b] = 0.0
        sum_score[b] = 0.0
        sum_label[b] = 0.0
    for j in range(copies.shape[0]):
        b = score_bin[j]
        count[b] += <double> copies[j]
        sum_score[b] += copies[j] * scores[j]
        sum_label[b] += <double> positives[j]


def replicate_bins(bit_generators, int mode, int64_t n,
                   const double[::1] scores, const int64_t[::1] cell_index,
                   const double[::1] pvals, const int64_t[::1] rank_map,
                   const int64_t[::1] starts, const int64_t[::1] score_bin,
                   double[:, ::1] count, double[:, ::1] sum_score, double[:, ::1] sum_label,
                   int64_t[:, ::1] cells, int64_t[:, ::1] items, int64_t[:, ::1] copies,
                   int64_t[:, ::1] positives, int64_t[:, ::1] cuts, double[:, ::1] cum_score,
                   int64_t[:, ::1] cum_counts, int n_threads):
    """Bin sums of replicate ``r``, drawn from ``bit_generators[r]`` (numpy
    BitGenerators whose locks the caller holds), into row ``r`` of ``sum_score`` and ``sum_label`` (and of ``count`` with
    fixed-width bins, when ``starts`` is empty). The other 2-D arrays are
    scratch, one row per thread: ``cells`` (one column per cell), ``items`` (n
    columns for ``NULL_RANKS``, else 0), ``copies`` and ``positives`` (one per
    score), ``cuts`` (5 x len(starts) + 1), ``cum_score`` and ``cum_counts``
    (2 x (scores + 1))."""
    cdef Py_ssize_t r, t, J = scores.shape[0], S = starts.shape[0]
    cdef uintptr_t[::1] bitgens = np.empty(len(bit_generators), dtype=np.uintp)
    for r, g in enumerate(bit_generators):
        bitgens[r] = <uintptr_t> PyCapsule_GetPointer(g.capsule, "BitGenerator")
    with nogil:
        for r in prange(bitgens.shape[0], schedule="dynamic", num_threads=n_threads):
            t = threadid()
            _draw(<bitgen_t*> bitgens[r], mode, n, scores, cell_index, pvals, rank_map,
                  cells[t], items[t], copies[t], positives[t])
            if S:
                _equal_mass(<bitgen_t*> bitgens[r], scores, copies[t], positives[t], starts,
                            cuts[t], cum_score[t], cum_counts[t, :J + 1],
                            cum_counts[t, J + 1:], sum_score[r], sum_label[r])
            else:
                _fixed(scores, copies[t], positives[t], score_bin, count[r], sum_score[r],
                       sum_label[r])
