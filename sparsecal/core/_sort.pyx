"""Sort kernel: stable ascending argsort of floats.

A parallel LSD radix sort on the bit patterns (mapped so unsigned order equals
float order; -0.0 -> +0.0), 11-bit digits, trivial passes skipped. Wrapped by
:func:`sparsecal.core.binning.argsort_scores`, which rejects NaN.

Two layouts of the keys:

- **packed** (float32, fewer than 2**32 values): one 64-bit word per value, the
  32-bit key above the 32-bit index. The index rides along with its key, so a
  pass reads and writes one array instead of two, and the words are unique, so
  the order is stable by construction. The second buffer of the sort is the
  caller's ``perm`` (int64, the same size), and the sorted floats are written
  over the first half of the other buffer: the working memory is 16 bytes per
  value (two 8-byte words), against 28 for separate keys and indices.
- **separate** (float64, or 2**32 values and more): keys and int64 indices in
  two pairs of buffers.

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
    PACKED_SHIFT = 32   # the key's bits in a packed word


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


cdef inline floating _key_value(uint64_t key, floating kind) noexcept nogil:
    """The float whose key is ``key`` (``kind`` only selects the type)."""
    if floating is float:
        return _key_float(<uint32_t>key)
    else:
        return _key_double(key)


cdef void _make_keys(const floating[::1] x, key_t* keys, Py_ssize_t lo, Py_ssize_t hi,
                     int shift0, int n_passes, int64_t* hist) noexcept nogil:
    """Keys of x[lo:hi] and the digit histograms of every pass over them; with
    ``shift0 == PACKED_SHIFT`` each word is the float32 key above the index."""
    cdef Py_ssize_t i
    cdef int p
    cdef key_t k
    memset(hist, 0, n_passes * RADIX_SIZE * sizeof(int64_t))
    for i in range(lo, hi):
        if floating is float:
            if key_t is uint64_t and shift0 == PACKED_SHIFT:
                k = ((<uint64_t>_float_key(x[i])) << PACKED_SHIFT) | <uint64_t>i
            else:
                k = _float_key(x[i])
        else:
            k = _double_key(x[i])
        keys[i] = k
        for p in range(n_passes):
            hist[p * RADIX_SIZE + ((k >> (shift0 + p * RADIX_BITS)) & RADIX_MASK)] += 1


cdef void _digit_histogram(const key_t* keys, Py_ssize_t lo, Py_ssize_t hi,
                           int shift, int64_t* hist) noexcept nogil:
    cdef Py_ssize_t i
    memset(hist, 0, RADIX_SIZE * sizeof(int64_t))
    for i in range(lo, hi):
        hist[(keys[i] >> shift) & RADIX_MASK] += 1


cdef void _scatter(const key_t* keys, key_t* keys_out, const int64_t* perm,
                   int64_t* perm_out, Py_ssize_t lo, Py_ssize_t hi, int shift,
                   int64_t* offset, bint identity) noexcept nogil:
    """Stable scatter of keys[lo:hi] (and their permutation, unless ``perm_out``
    is NULL) by one digit."""
    cdef Py_ssize_t i
    cdef int64_t pos
    cdef key_t k
    for i in range(lo, hi):
        k = keys[i]
        pos = offset[(k >> shift) & RADIX_MASK]
        offset[(k >> shift) & RADIX_MASK] = pos + 1
        keys_out[pos] = k
        if perm_out != NULL:
            perm_out[pos] = i if identity else perm[i]


cdef int _radix_sort(const floating[::1] x, key_t* keys, key_t* keys_alt,
                     int64_t* perm, int64_t* perm_alt, int shift0, int n_passes,
                     int64_t[:, ::1] hist, int n_threads) noexcept nogil:
    """Sort; returns 0 if the result is in (keys, perm), 1 if in the alt buffers,
    -1 if no pass was needed (every key has the same digits: the input order is
    sorted). ``perm`` and ``perm_alt`` are NULL for packed keys.

    ``hist`` is [n_threads, (n_passes + 1) * RADIX_SIZE]: row block p + 1 holds the
    per-thread digit counts of pass p over the input order (their sum over
    threads does not depend on order, so trivial passes are skipped from it, and
    one thread needs no other histogram); row block 0 is the working histogram /
    scatter offsets of the current pass.
    """
    cdef Py_ssize_t n = x.shape[0]
    cdef int t, p, d, shift, in_alt = 0
    cdef int64_t running, c, top
    cdef bint sorted_once = False
    cdef key_t* tmp_k
    cdef int64_t* tmp_p
    for t in prange(n_threads, schedule="static", num_threads=n_threads):
        _make_keys(x, keys, t * n // n_threads, (t + 1) * n // n_threads,
                   shift0, n_passes, &hist[t, RADIX_SIZE])
    for p in range(n_passes):
        shift = shift0 + p * RADIX_BITS
        d = (keys[0] >> shift) & RADIX_MASK
        top = 0
        for t in range(n_threads):
            top = top + hist[t, (p + 1) * RADIX_SIZE + d]
        if top == n:
            continue
        if sorted_once and n_threads > 1:   # each thread's share of the new order
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
    go to ``sorted_x``.

    Keys are packed when ``sorted_x`` holds ``2 * n`` floats (``x`` float32 of
    fewer than 2**32 values): ``sorted_x`` is then the sort's second buffer and
    the sorted values are left in its first ``n`` (the caller shrinks it).
    Otherwise it holds ``n``, and keys and indices are kept apart.
    """
    cdef Py_ssize_t n = x.shape[0]
    cdef int n_passes = 3 if floating is float else 6
    cdef bint packed = n > 0 and sorted_x.shape[0] == 2 * n
    if perm.shape[0] != n or not (sorted_x.shape[0] == n or packed):
        raise ValueError("perm must hold n values and sorted_x n (or 2 n to pack)")
    if packed and (floating is double or n > 0xFFFFFFFF):
        raise ValueError("packed keys need float32 and fewer than 2**32 values")
    if n == 0:
        return
    hist_np = np.zeros((n_threads, (n_passes + 1) * RADIX_SIZE), dtype=np.int64)
    cdef int64_t[:, ::1] hist = hist_np
    if floating is float and packed:
        with nogil:
            _argsort_packed(x, &perm[0], <uint64_t*>&sorted_x[0], n_passes, hist,
                            n_threads)
        return
    perm_alt_np = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] perm_alt = perm_alt_np
    cdef uint32_t[::1] k32
    cdef uint64_t[::1] k64
    if floating is float:
        k32 = np.empty(2 * n, dtype=np.uint32)
        with nogil:
            _argsort_separate(x, &k32[0], &perm[0], &perm_alt[0], &sorted_x[0],
                              n_passes, hist, n_threads)
    else:
        k64 = np.empty(2 * n, dtype=np.uint64)
        with nogil:
            _argsort_separate(x, &k64[0], &perm[0], &perm_alt[0], &sorted_x[0],
                              n_passes, hist, n_threads)


cdef void _argsort_packed(const float[::1] x, int64_t* perm, uint64_t* words,
                          int n_passes, int64_t[:, ::1] hist,
                          int n_threads) noexcept nogil:
    """Packed keys, sorted between ``words`` and ``perm``'s memory."""
    cdef Py_ssize_t i, n = x.shape[0]
    cdef float* out = <float*>words
    cdef uint64_t* result = <uint64_t*>perm
    cdef uint64_t low = 0xFFFFFFFFu
    if _radix_sort(x, words, result, <int64_t*>NULL, <int64_t*>NULL, PACKED_SHIFT,
                   n_passes, hist, n_threads) != 1:
        memcpy(result, words, n * sizeof(uint64_t))   # it ended in words: move it
    # The first half of ``words`` is free now: the values go there, the
    # indices stay in place.
    for i in prange(n, schedule="static", num_threads=n_threads):
        out[i] = _key_float(<uint32_t>(result[i] >> PACKED_SHIFT))
        perm[i] = <int64_t>(result[i] & low)


cdef void _argsort_separate(const floating[::1] x, key_t* keys, int64_t* perm,
                            int64_t* perm_alt, floating* out, int n_passes,
                            int64_t[:, ::1] hist, int n_threads) noexcept nogil:
    """Keys (``keys``: 2 n of them, two buffers) and indices kept apart."""
    cdef Py_ssize_t i, n = x.shape[0]
    cdef int where = _radix_sort(x, keys, keys + n, perm, perm_alt, 0, n_passes,
                                 hist, n_threads)
    cdef key_t* result = keys + n if where == 1 else keys
    for i in prange(n, schedule="static", num_threads=n_threads):
        out[i] = _key_value(result[i], <floating>0)
    if where == 1:
        memcpy(perm, perm_alt, n * sizeof(int64_t))
    elif where == -1:
        for i in range(n):
            perm[i] = i


def carried_order(const floating[::1] x, const int64_t[::1] perm, floating[::1] sorted_x):
    """Whether ``perm`` is the stable ascending order of ``x`` (consecutive ranks
    ascending, equal values in index order); if so ``sorted_x`` holds ``x[perm]``
    as :func:`argsort_floats` leaves it (-0.0 as +0.0). Stops at the first rank
    out of order.
    """
    cdef Py_ssize_t i, n = x.shape[0]
    cdef floating v, prev = 0
    cdef bint ok = True
    if perm.shape[0] != n or sorted_x.shape[0] != n:
        raise ValueError("perm and sorted_x must hold one value per x")
    with nogil:
        for i in range(n):
            if perm[i] < 0 or perm[i] >= n:
                ok = False
                break
            v = x[perm[i]]
            if v == 0:
                v = 0   # -0.0 sorts and is stored as +0.0
            if i and (v < prev or (v == prev and perm[i] <= perm[i - 1])):
                ok = False
                break
            sorted_x[i] = v
            prev = v
    return ok
