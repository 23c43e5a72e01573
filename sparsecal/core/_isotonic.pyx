"""Isotonic regression kernels: pool tied x, pool adjacent violators, keep the
endpoints of constant blocks; linear interpolation to predict.

Wrapped by :mod:`sparsecal.core.isotonic`, which validates inputs and sorts x.

References
----------
Barlow et al. 1972, "Statistical inference under order restrictions" (pool
adjacent violators), as in scikit-learn's ``sklearn/_isotonic.pyx``
(``_inplace_contiguous_isotonic_regression``); used for recalibration in
Kranzlein, Liu & Schneider 2021, Section 2.2, after Zadrozny & Elkan 2002.
"""
import numpy as np

from cython.parallel cimport prange
from libc.stdint cimport int64_t, uint8_t

from ._types cimport floating

ctypedef fused target_t:
    uint8_t
    float
    double


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


cdef Py_ssize_t _knots(double[::1] ux, double[::1] uy, double[::1] uw,
                      int64_t[::1] target, Py_ssize_t m, double y_min,
                      double y_max) noexcept nogil:
    """Pool adjacent violators over the pooled points ``ux[:m]`` (values ``uy``,
    weights ``uw``, both overwritten), then keep a point where the value changes
    on either side (block endpoints), clipped to ``[y_min, y_max]``, in the
    first places of ``ux`` and ``uy``; returns how many were kept (``target``:
    scratch of at least ``m`` places)."""
    cdef Py_ssize_t i, k = 0
    _pool_adjacent_violators(uy, uw, target, m)
    for i in range(m):
        if i == 0 or i == m - 1 or uy[i] != uy[i - 1] or uy[i] != uy[i + 1]:
            ux[k] = ux[i]
            uy[k] = min(max(uy[i], y_min), y_max)
            k += 1
    return k


def isotonic_fit_sorted(const floating[::1] xs, const target_t[::1] y,
                        const double[::1] w, const int64_t[::1] perm,
                        double y_min, double y_max):
    """Fit on x sorted ascending (``xs``, with ``perm`` mapping ranks to rows of
    ``y`` and ``w``; ``w`` may be None). Returns the fitted function as knots
    ``(x_knots, y_knots)``: endpoints of the constant blocks, clipped to
    ``[y_min, y_max]``."""
    cdef Py_ssize_t n = xs.shape[0], m, k
    cdef bint weighted = w is not None
    ux_np = np.empty(n, dtype=np.float64)
    uy_np = np.empty(n, dtype=np.float64)
    uw_np = np.empty(n, dtype=np.float64)
    cdef double[::1] ux = ux_np, uy = uy_np, uw = uw_np
    cdef int64_t[::1] target = np.empty(n, dtype=np.int64)
    with nogil:
        m = _pool_ties(xs, y, w, weighted, perm, ux, uy, uw)
        k = _knots(ux, uy, uw, target, m, y_min, y_max)
    return ux_np[:k].copy(), uy_np[:k].copy()


def isotonic_fit_pooled(double[::1] ux, double[::1] uy, double[::1] uw,
                        double y_min, double y_max):
    """Fit on points already pooled by distinct x: ``ux`` strictly increasing,
    ``uy`` the mean target and ``uw`` the total weight of each (what
    ``_pool_ties`` computes; all three are overwritten). Returns the knots, as
    :func:`isotonic_fit_sorted` does from the unpooled points."""
    cdef Py_ssize_t k
    cdef int64_t[::1] target = np.empty(ux.shape[0], dtype=np.int64)
    with nogil:
        k = _knots(ux, uy, uw, target, ux.shape[0], y_min, y_max)
    return np.asarray(ux)[:k].copy(), np.asarray(uy)[:k].copy()


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
