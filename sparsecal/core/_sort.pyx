"""Sort kernel: stable ascending argsort of floats.

A parallel LSD radix sort on the bit patterns (mapped so unsigned order equals
float order; -0.0 -> +0.0), 11-bit digits, trivial passes skipped. Wrapped by
:func:`sparsecal.core.binning.argsort_scores`, which rejects NaN.

References
----------
Nguyen & O'Connor 2015, "Posterior calibration and exploratory analysis for NLP
models", Algorithm 1 (adaptive binning sorts the scores first).
"""
import numpy as np

from cython.parallel cimport prange
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

from ._types cimport floating

ctypedef fused key_t:
    uint32_t
    uint64_t

cdef enum:
    RADIX_BITS = 11
    RADIX_SIZE = 2048   # 1 << RADIX_BITS
    RADIX_MASK = 2047


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
