"""Exact, order-free sums of probabilities: the reduction rule of the
distributed bin sums.

A score ``v`` in [0, 1] is added as the integer ``floor(v * 2**63)``, split
into three 22-bit parts that NumPy sums exactly as unsigned 64-bit integers
(running sums over a chunk's sorted scores, cut at the bin boundaries) and that
merge by adding (fewer than 2**42 values in all). Integer addition is associative, so a bin's sum does
not depend on the order of its entries, on the chunking or on the order the
workers' partial sums arrive in; the one rounding is the final division by
2**63 (Python's int / int, correctly rounded). Every float32 value >= 2**-40
and every float64 value >= 2**-10 is a multiple of 2**-63, so their sums are
exact to that rounding; smaller values lose the bits below 2**-63 (at most
1.1e-19 each). The rule of the ``select-binning`` branch's ``_sums.pxd``, in
NumPy.
"""
import numpy as np

__all__ = ["PARTS", "fixed_parts", "fixed_value"]

#: bits per part: 3 parts cover the 64 bits of floor(v * 2**63), v <= 1
_BITS = 22
PARTS = 3
_MASK = np.uint64((1 << _BITS) - 1)


def fixed_parts(scores, bounds):
    """Per-bin sums of the three parts of ``floor(score * 2**63)``, for bins
    of consecutive scores.

    Parameters
    ----------
    scores : ndarray of float32 or float64, shape (n,)
        In [0, 1]; ``n < 2**42``.
    bounds : ndarray of int64, shape (n_bins + 1,)
        Bin ``b`` holds ``scores[bounds[b]:bounds[b + 1]]``; non-decreasing,
        from 0 to ``n``.

    Returns
    -------
    ndarray of uint64, shape (PARTS, n_bins)
        Exact part sums; merge by adding.

    Examples
    --------
    >>> import numpy as np
    >>> parts = fixed_parts(np.array([0.5, 0.25, 1.0]), np.array([0, 2, 2, 3]))
    >>> fixed_value(parts).tolist()
    [0.75, 0.0, 1.0]
    """
    q = (scores.astype(np.float64) * 2.0 ** 63).astype(np.uint64)
    out = np.empty((PARTS, bounds.size - 1), dtype=np.uint64)
    running = np.zeros(q.size + 1, dtype=np.uint64)
    for p in range(PARTS):
        np.cumsum((q >> np.uint64(_BITS * p)) & _MASK, out=running[1:])
        out[p] = running[bounds[1:]] - running[bounds[:-1]]
    return out


def fixed_value(parts):
    """The sums of :func:`fixed_parts` (merged), correctly rounded to float64.

    Parameters
    ----------
    parts : ndarray of uint64, shape (PARTS, n_bins)

    Returns
    -------
    ndarray of float64, shape (n_bins,)

    Examples
    --------
    >>> import numpy as np
    >>> fixed_value(np.array([[0], [0], [1 << 19]], dtype=np.uint64))   # 2**63 / 2**63
    array([1.])
    """
    totals = [sum(int(parts[p, b]) << (_BITS * p) for p in range(PARTS))
              for b in range(parts.shape[1])]
    return np.array([t / (1 << 63) for t in totals], dtype=np.float64)
