"""Exact, order-free sums of probabilities: the reduction rule of the
distributed bin sums.

A score ``v`` in [0, 1] is added as the integer ``floor(v * 2**63)``, split
into three 22-bit parts that NumPy sums exactly in float64 (per chunk and bin,
fewer than 2**31 values) and that merge as unsigned 64-bit integers (fewer
than 2**42 values in all). Integer addition is associative, so a bin's sum does
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


def fixed_parts(scores, index, n_bins):
    """Per-bin sums of the three parts of ``floor(score * 2**63)``.

    Parameters
    ----------
    scores : ndarray of float32 or float64, shape (n,)
        In [0, 1]; ``n < 2**31``.
    index : ndarray of int64, shape (n,)
        Bin of each score, in ``[0, n_bins)``.
    n_bins : int

    Returns
    -------
    ndarray of uint64, shape (PARTS, n_bins)
        Exact part sums; merge by adding.

    Examples
    --------
    >>> import numpy as np
    >>> parts = fixed_parts(np.array([0.5, 0.25, 1.0]), np.array([0, 0, 1]), 2)
    >>> fixed_value(parts).tolist()
    [0.75, 1.0]
    """
    q = (scores.astype(np.float64) * 2.0 ** 63).astype(np.uint64)
    out = np.empty((PARTS, n_bins), dtype=np.uint64)
    for p in range(PARTS):
        part = ((q >> np.uint64(_BITS * p)) & _MASK).astype(np.float64)
        out[p] = np.bincount(index, weights=part, minlength=n_bins)
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
