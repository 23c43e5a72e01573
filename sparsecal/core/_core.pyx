"""Compiled kernels of sparsecal.

Small, typed, GIL-free loops in the style of ``sklearn/_isotonic.pyx``. They take
float32 and float64 without copying (fused types), index with int64 and assume
their inputs were validated by the Python wrappers (``sparsecal.entries``,
``sparsecal.binning``, ``sparsecal.isotonic``, ``sparsecal.groups``): they never
raise on bad data, they report it (counts of invalid values, index of a bad tag).

References
----------
Nguyen & O'Connor 2015, "Posterior calibration and exploratory analysis for NLP
models", Algorithm 1 (adaptive binning); Kranzlein, Liu & Schneider 2021,
"Making Heads and Tails of Models with Marginal Calibration for Sparse Tagsets",
Section 3.1 (thresholding); Barlow et al. 1972 / scikit-learn's
``_inplace_contiguous_isotonic_regression`` (pool adjacent violators).
"""
import numpy as np

from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.math cimport NAN
from libc.string cimport memcpy, memset

ctypedef fused floating:
    float
    double

ctypedef fused target_t:
    uint8_t
    float
    double

ctypedef fused key_t:
    uint32_t
    uint64_t

cdef enum:
    RADIX_BITS = 11
    RADIX_SIZE = 2048   # 1 << RADIX_BITS
    RADIX_MASK = 2047


# --------------------------------------------------------------------------- #
# 1. Threshold: dense scores + gold -> entries with score >= threshold.        #
#    Two passes over one row chunk: count per block, then fill. The chunk is   #
#    sized by the caller to stay in cache, so the matrix is read from memory   #
#    once. Invalid values (NaN, <0, >1) are counted in the first pass.         #
# --------------------------------------------------------------------------- #

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


# --------------------------------------------------------------------------- #
# 2. Stable ascending argsort of floats: parallel LSD radix sort on the bit    #
#    patterns (mapped so unsigned order equals float order; -0.0 -> +0.0).    #
# --------------------------------------------------------------------------- #

cdef inline uint32_t _float_key(float x) noexcept nogil:
    cdef uint32_t u
    memcpy(&u, &x, 4)
    if u == 0x80000000u:
        u = 0
    return ~u if (u & 0x80000000u) else (u | 0x80000000u)


cdef inline uint64_t _double_key(double x) noexcept nogil:
    cdef uint64_t u
    memcpy(&u, &x, 8)
    if u == 0x8000000000000000u:
        u = 0
    return ~u if (u & 0x8000000000000000u) else (u | 0x8000000000000000u)


cdef inline float _key_float(uint32_t u) noexcept nogil:
    cdef float x
    u = (u ^ 0x80000000u) if (u & 0x80000000u) else ~u
    memcpy(&x, &u, 4)
    return x


cdef inline double _key_double(uint64_t u) noexcept nogil:
    cdef double x
    u = (u ^ 0x8000000000000000u) if (u & 0x8000000000000000u) else ~u
    memcpy(&x, &u, 8)
    return x


cdef void _make_keys(const floating[::1] x, key_t* keys, Py_ssize_t lo,
                     Py_ssize_t hi, int64_t* hist, int n_passes) noexcept nogil:
    """Keys of x[lo:hi] and the digit histograms of every pass over them."""
    cdef Py_ssize_t i
    cdef int p
    cdef key_t k
    memset(hist, 0, n_passes * RADIX_SIZE * sizeof(int64_t))
    for i in range(lo, hi):
        if key_t is uint32_t:
            k = _float_key(x[i])
        else:
            k = _double_key(x[i])
        keys[i] = k
        for p in range(n_passes):
            hist[p * RADIX_SIZE + ((k >> (p * RADIX_BITS)) & RADIX_MASK)] += 1


cdef void _digit_histogram(const key_t* keys, Py_ssize_t lo, Py_ssize_t hi,
                           int shift, int64_t* hist) noexcept nogil:
    cdef Py_ssize_t i
    memset(hist, 0, RADIX_SIZE * sizeof(int64_t))
    for i in range(lo, hi):
        hist[(keys[i] >> shift) & RADIX_MASK] += 1


cdef void _scatter(const key_t* keys, key_t* keys_out, const int64_t* perm,
                   int64_t* perm_out, Py_ssize_t lo, Py_ssize_t hi, int shift,
                   int64_t* offset, bint identity) noexcept nogil:
    """Stable scatter of keys[lo:hi] (and their permutation) by one digit."""
    cdef Py_ssize_t i
    cdef int64_t pos
    cdef key_t k
    for i in range(lo, hi):
        k = keys[i]
        pos = offset[(k >> shift) & RADIX_MASK]
        offset[(k >> shift) & RADIX_MASK] = pos + 1
        keys_out[pos] = k
        perm_out[pos] = i if identity else perm[i]


cdef int _radix_argsort(const floating[::1] x, key_t* keys, key_t* keys_alt,
                        int64_t* perm, int64_t* perm_alt, int64_t[:, ::1] hist,
                        int n_threads) noexcept nogil:
    """Sort; returns 0 if the result is in (keys, perm), 1 if in the alt buffers,
    -1 if no pass was needed (every key has the same digits: perm is identity).

    ``hist`` is [n_threads, (n_passes + 1) * RADIX_SIZE]: row block p + 1 holds the
    per-thread digit counts of pass p over the input order (their sum over
    threads does not depend on order, so trivial passes are skipped from it);
    row block 0 is the working histogram / scatter offsets of the current pass.
    """
    cdef Py_ssize_t n = x.shape[0]
    cdef int n_passes = (8 * sizeof(key_t) + RADIX_BITS - 1) // RADIX_BITS
    cdef int t, p, d, shift, in_alt = 0
    cdef int64_t running, c, top
    cdef bint sorted_once = False
    cdef key_t* tmp_k
    cdef int64_t* tmp_p
    for t in prange(n_threads, schedule="static", num_threads=n_threads):
        _make_keys(x, keys, t * n // n_threads, (t + 1) * n // n_threads,
                   &hist[t, RADIX_SIZE], n_passes)
    for p in range(n_passes):
        shift = p * RADIX_BITS
        d = (keys[0] >> shift) & RADIX_MASK
        top = 0
        for t in range(n_threads):
            top = top + hist[t, (p + 1) * RADIX_SIZE + d]
        if top == n:
            continue
        if sorted_once:
            for t in prange(n_threads, schedule="static", num_threads=n_threads):
                _digit_histogram(keys, t * n // n_threads, (t + 1) * n // n_threads,
                                 shift, &hist[t, 0])
        else:
            for t in range(n_threads):
                memcpy(&hist[t, 0], &hist[t, (p + 1) * RADIX_SIZE],
                       RADIX_SIZE * sizeof(int64_t))
        # Exclusive offsets: digit-major, then thread order (keeps it stable).
        running = 0
        for d in range(RADIX_SIZE):
            for t in range(n_threads):
                c = hist[t, d]
                hist[t, d] = running
                running = running + c
        for t in prange(n_threads, schedule="static", num_threads=n_threads):
            _scatter(keys, keys_alt, perm, perm_alt, t * n // n_threads,
                     (t + 1) * n // n_threads, shift, &hist[t, 0], not sorted_once)
        sorted_once = True
        tmp_k = keys
        keys = keys_alt
        keys_alt = tmp_k
        tmp_p = perm
        perm = perm_alt
        perm_alt = tmp_p
        in_alt = 1 - in_alt
    return in_alt if sorted_once else -1


def argsort_floats(const floating[::1] x, int64_t[::1] perm, floating[::1] sorted_x,
                   int n_threads):
    """Stable ascending argsort of ``x`` (no NaN) into ``perm``; the sorted values
    go to ``sorted_x``. Parallel LSD radix sort, 11-bit digits, trivial passes
    skipped."""
    cdef Py_ssize_t i, n = x.shape[0]
    cdef int n_passes, where
    if n == 0:
        return
    if floating is float:
        keys_np = np.empty((2, n), dtype=np.uint32)
        n_passes = 3
    else:
        keys_np = np.empty((2, n), dtype=np.uint64)
        n_passes = 6
    perm_alt_np = np.empty(n, dtype=np.int64)
    hist_np = np.zeros((n_threads, (n_passes + 1) * RADIX_SIZE), dtype=np.int64)
    cdef int64_t[::1] perm_alt = perm_alt_np
    cdef int64_t[:, ::1] hist = hist_np
    cdef uint32_t[:, ::1] k32
    cdef uint64_t[:, ::1] k64
    if floating is float:
        k32 = keys_np
        with nogil:
            where = _radix_argsort(x, &k32[0, 0], &k32[1, 0], &perm[0], &perm_alt[0],
                                   hist, n_threads)
            if where == 1:
                memcpy(&perm[0], &perm_alt[0], n * sizeof(int64_t))
            for i in prange(n, schedule="static", num_threads=n_threads):
                sorted_x[i] = _key_float(k32[where if where >= 0 else 0, i])
            if where == -1:
                for i in range(n):
                    perm[i] = i
    else:
        k64 = keys_np
        with nogil:
            where = _radix_argsort(x, &k64[0, 0], &k64[1, 0], &perm[0], &perm_alt[0],
                                   hist, n_threads)
            if where == 1:
                memcpy(&perm[0], &perm_alt[0], n * sizeof(int64_t))
            for i in prange(n, schedule="static", num_threads=n_threads):
                sorted_x[i] = _key_double(k64[where if where >= 0 else 0, i])
            if where == -1:
                for i in range(n):
                    perm[i] = i


# --------------------------------------------------------------------------- #
# 3. Bin statistics: equal-mass bins over sorted scores (Nguyen & O'Connor     #
#    Algorithm 1, bin boundaries as sorted ranks) and fixed-width bins.        #
# --------------------------------------------------------------------------- #

def equal_mass_bin_stats(const floating[::1] sorted_scores, const uint8_t[::1] labels,
                         const int64_t[::1] perm, const int64_t[::1] starts,
                         int64_t[::1] count, double[::1] sum_score,
                         double[::1] sum_label, double[::1] lower,
                         double[::1] upper):
    """Bin ``b`` holds sorted ranks ``starts[b]:starts[b + 1]``; the label of rank
    ``r`` is ``labels[perm[r]]`` (or ``labels[r]`` when ``perm`` is None).
    Sums run in rank order, so results do not depend on threads or chunking."""
    cdef Py_ssize_t b, r, n_bins = starts.shape[0] - 1
    cdef double s_score, s_label
    cdef bint gather = perm is not None
    with nogil:
        for b in range(n_bins):
            s_score = 0.0
            s_label = 0.0
            for r in range(starts[b], starts[b + 1]):
                s_score += sorted_scores[r]
                s_label += labels[perm[r]] if gather else labels[r]
            count[b] = starts[b + 1] - starts[b]
            sum_score[b] = s_score
            sum_label[b] = s_label
            lower[b] = sorted_scores[starts[b]]
            upper[b] = sorted_scores[starts[b + 1] - 1]


cdef inline Py_ssize_t _fixed_bin(double x, const double[::1] edges,
                                  Py_ssize_t n_bins) noexcept nogil:
    """Index i with edges[i] <= x < edges[i + 1] (the last bin includes 1.0)."""
    cdef Py_ssize_t i = <Py_ssize_t> (x * n_bins)
    if i >= n_bins:
        i = n_bins - 1
    elif i < 0:
        i = 0
    if x < edges[i]:
        i -= 1
    elif i < n_bins - 1 and x >= edges[i + 1]:
        i += 1
    return i


def fixed_bin_stats(const floating[::1] scores, const uint8_t[::1] labels,
                    const double[::1] edges, int64_t[::1] count,
                    double[::1] sum_score, double[::1] sum_label,
                    double[::1] lower, double[::1] upper):
    """Equal-width bins ``[edges[i], edges[i+1])`` over [0, 1]; ``lower``/``upper``
    receive the smallest/largest score seen in each bin (NaN when empty)."""
    cdef Py_ssize_t i, b, n = scores.shape[0], n_bins = edges.shape[0] - 1
    cdef double x
    with nogil:
        for b in range(n_bins):
            count[b] = 0
            sum_score[b] = 0.0
            sum_label[b] = 0.0
            lower[b] = 2.0
            upper[b] = -1.0
        for i in range(n):
            x = scores[i]
            b = _fixed_bin(x, edges, n_bins)
            count[b] += 1
            sum_score[b] += x
            sum_label[b] += labels[i]
            if x < lower[b]:
                lower[b] = x
            if x > upper[b]:
                upper[b] = x
        for b in range(n_bins):
            if count[b] == 0:
                lower[b] = NAN
                upper[b] = NAN


# --------------------------------------------------------------------------- #
# 4. Bin lookup: index of the bin of each score given sorted inner boundaries #
#    (np.searchsorted(boundaries, x, side="right")).                          #
# --------------------------------------------------------------------------- #

def lookup_bins(const floating[::1] x, const double[::1] boundaries, int64_t[::1] out,
                int n_threads):
    cdef Py_ssize_t i, lo, hi, mid, n = x.shape[0], m = boundaries.shape[0]
    cdef double v
    with nogil:
        for i in prange(n, schedule="static", num_threads=n_threads):
            v = x[i]
            lo = 0
            hi = m
            while lo < hi:
                mid = (lo + hi) // 2
                if boundaries[mid] <= v:
                    lo = mid + 1
                else:
                    hi = mid
            out[i] = lo


# --------------------------------------------------------------------------- #
# 5. Isotonic regression: pool tied x, pool adjacent violators, keep the       #
#    endpoints of constant blocks; linear interpolation to predict.           #
# --------------------------------------------------------------------------- #

cdef Py_ssize_t _pool_ties(const floating[::1] xs, const target_t[::1] y,
                           const double[::1] w, bint weighted, const int64_t[::1] perm,
                           double[::1] ux, double[::1] uy, double[::1] uw) noexcept nogil:
    """Weighted mean of y over equal sorted x (zero weights dropped)."""
    cdef Py_ssize_t r, j, n = xs.shape[0], k = -1
    cdef double wr, sum_wy = 0.0, sum_w = 0.0
    for r in range(n):
        j = perm[r]
        wr = w[j] if weighted else 1.0
        if wr == 0.0:
            continue
        if k < 0 or xs[r] != ux[k]:
            if k >= 0:
                uy[k] = sum_wy / sum_w
                uw[k] = sum_w
            k += 1
            ux[k] = xs[r]
            sum_wy = 0.0
            sum_w = 0.0
        sum_wy += wr * y[j]
        sum_w += wr
    if k >= 0:
        uy[k] = sum_wy / sum_w
        uw[k] = sum_w
    return k + 1


cdef void _pool_adjacent_violators(double[::1] y, double[::1] w,
                                   int64_t[::1] target, Py_ssize_t n) noexcept nogil:
    """In-place non-decreasing weighted least squares fit of y[:n].

    ``target[i]`` is the last index of the block starting at ``i`` and
    ``target[last]`` its first; blocks are written back at the end. The same
    single-pass, backtracking scheme as scikit-learn's
    ``_inplace_contiguous_isotonic_regression`` (so results agree to rounding).
    """
    cdef Py_ssize_t i, k, r
    cdef double prev_y, sum_wy, sum_w
    for i in range(n):
        target[i] = i
    i = 0
    while i < n:
        k = target[i] + 1
        if k == n:
            break
        if y[i] < y[k]:
            i = k
            continue
        sum_wy = w[i] * y[i]
        sum_w = w[i]
        while True:
            prev_y = y[k]
            sum_wy += w[k] * y[k]
            sum_w += w[k]
            k = target[k] + 1
            if k == n or prev_y < y[k]:
                y[i] = sum_wy / sum_w
                w[i] = sum_w
                target[i] = k - 1
                target[k - 1] = i
                if i > 0:
                    i = target[i - 1]
                break
    i = 0
    while i < n:
        k = target[i] + 1
        for r in range(i + 1, k):
            y[r] = y[i]
        i = k


def isotonic_fit_sorted(const floating[::1] xs, const target_t[::1] y,
                        const double[::1] w, const int64_t[::1] perm,
                        double y_min, double y_max):
    """Fit on x sorted ascending (``xs``, with ``perm`` mapping ranks to rows of
    ``y`` and ``w``; ``w`` may be None). Returns the fitted function as knots
    ``(x_knots, y_knots)``: endpoints of the constant blocks, clipped to
    ``[y_min, y_max]``."""
    cdef Py_ssize_t n = xs.shape[0], m, i, k
    cdef bint weighted = w is not None
    ux_np = np.empty(n, dtype=np.float64)
    uy_np = np.empty(n, dtype=np.float64)
    uw_np = np.empty(n, dtype=np.float64)
    target_np = np.empty(n, dtype=np.int64)
    cdef double[::1] ux = ux_np, uy = uy_np, uw = uw_np
    cdef int64_t[::1] target = target_np
    with nogil:
        m = _pool_ties(xs, y, w, weighted, perm, ux, uy, uw)
        _pool_adjacent_violators(uy, uw, target, m)
        # Keep a point where the value changes on either side (block endpoints).
        k = 0
        for i in range(m):
            if i == 0 or i == m - 1 or uy[i] != uy[i - 1] or uy[i] != uy[i + 1]:
                ux[k] = ux[i]
                uy[k] = min(max(uy[i], y_min), y_max)
                k += 1
    return ux_np[:k].copy(), uy_np[:k].copy()


cdef inline Py_ssize_t _bucket(double v, double x0, double scale,
                               Py_ssize_t n_buckets) noexcept nogil:
    """Monotone (non-decreasing in v) bucket index in [0, n_buckets]; NaN
    (only possible with NaN knots) maps to 0, so lookups stay in bounds."""
    cdef double f = (v - x0) * scale
    if not f > 0:
        return 0
    if f >= n_buckets:
        return n_buckets
    return <Py_ssize_t> f


def isotonic_predict(const floating[::1] x, const double[::1] x_knots,
                     const double[::1] y_knots, floating[::1] out, int n_threads):
    """Piecewise-linear interpolation through the knots, constant outside them
    (``np.interp`` after clipping x to the knot range).

    Branch-free per point: clip ``v`` to the knot range; a table over ~4
    buckets per knot (``start[b]``: first knot whose bucket is ``>= b``; the
    bucket map is monotone) bounds the knots bracketing ``v`` to
    ``[start[b] - 1, start[b + 1]]``; a fixed number of conditional-move
    bisection steps (enough for the most crowded bucket) finds the last knot
    ``<= v``. Same bracket and same arithmetic as a plain bisection, so the
    same result bit for bit; slopes are computed once per segment."""
    cdef Py_ssize_t i, lo, size, half, step, b, kb, n = x.shape[0], m = x_knots.shape[0]
    cdef Py_ssize_t n_buckets = 1, widest = 1
    cdef int n_steps = 0
    cdef double v, x_first = x_knots[0], x_last = x_knots[m - 1], scale = 0.0
    slope_np = np.zeros(m, dtype=np.float64)
    cdef double[::1] slope = slope_np
    for i in range(m - 1):   # the expression of the former loop, hoisted
        slope[i] = (y_knots[i + 1] - y_knots[i]) / (x_knots[i + 1] - x_knots[i])
    while n_buckets < 4 * m and n_buckets < (1 << 22):
        n_buckets *= 2
    start_np = np.empty(n_buckets + 2, dtype=np.int64)
    cdef int64_t[::1] start = start_np
    if m > 1 and x_last > x_first:
        scale = n_buckets / (x_last - x_first)
    with nogil:
        b = 0
        for i in range(m):
            kb = _bucket(x_knots[i], x_first, scale, n_buckets)
            while b <= kb:
                start[b] = i
                b += 1
        while b <= n_buckets + 1:
            start[b] = m
            b += 1
        for b in range(n_buckets + 1):   # candidates of bucket b: [start[b] - 1, start[b + 1]]
            widest = max(widest, min(start[b + 1] + 1, m) - max(start[b] - 1, 0))
        while (<Py_ssize_t> 1 << n_steps) < widest:
            n_steps += 1
        for i in prange(n, schedule="static", num_threads=n_threads):
            v = min(max(<double> x[i], x_first), x_last)
            b = _bucket(v, x_first, scale, n_buckets)
            lo = max(start[b] - 1, 0)
            size = min(start[b + 1] + 1, m) - lo   # answer in [lo, lo + size)
            for step in range(n_steps):
                half = size >> 1
                lo = lo + half if x_knots[lo + half] <= v else lo
                size = size - half
            out[i] = <floating> (slope[lo] * (v - x_knots[lo]) + y_knots[lo])


# --------------------------------------------------------------------------- #
# 6. Stable partition of entries by tag group (counting sort).                #
# --------------------------------------------------------------------------- #

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
