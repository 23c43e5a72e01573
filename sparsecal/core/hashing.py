"""Counter-based randomness: a value hashed from (seed, counter) depends on nothing
else, so any process holding the counter draws the same bits without a shared
random stream (CRF samples, the scaling-binning split).
"""
import numpy as np

__all__ = ["splitmix64"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def splitmix64(x):
    """SplitMix64's output function of ``x + golden ratio`` on uint64 arrays,
    elementwise, wrapping (Steele, Lea & Flood 2014).

    Examples
    --------
    >>> import numpy as np
    >>> hex(int(splitmix64(np.array([0], np.uint64))[0]))
    '0xe220a8397b1dcdaf'
    """
    x = x + _GOLDEN
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))
