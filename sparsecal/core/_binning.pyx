"""Binning kernels: bin statistics and bin lookup.

Equal-mass bins over sorted scores (bin boundaries as sorted ranks) and
fixed-width bins over [0, 1]; the bin of each score given sorted inner
boundaries. Wrapped by :mod:`sparsecal.core.binning`, which validates inputs.

References
----------
Nguyen & O'Connor 2015, "Posterior calibration and exploratory analysis for NLP
models", Algorithm 1 (adaptive binning).
"""
from cython.parallel cimport prange
from libc.stdint cimport int64_t, uint8_t
from libc.math cimport NAN

from ._types cimport floating


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
# Bin lookup: index of the bin of each score given sorted inner boundaries    #
# (np.searchsorted(boundaries, x, side="right")).                             #
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
