"""Exact, order-free sums of scores in [0, 1] as three 22-bit integer parts of
``floor(v * 2**63)`` (docs/scale.md, "The fixed reduction of score sums")."""
import numpy as np

__all__ = ["PARTS", "fixed_parts", "fixed_value"]

#: bits per part: 3 parts cover the 64 bits of floor(v * 2**63), v <= 1
_BITS = 22
PARTS = 3
_MASK = np.uint64((1 << _BITS) - 1)


def fixed_parts(scores, bounds):
    """Per-bin sums of the parts of ``floor(score * 2**63)``, bins
    ``scores[bounds[b]:bounds[b + 1]]``."""
    q = (scores.astype(np.float64) * 2.0 ** 63).astype(np.uint64)
    out = np.empty((PARTS, bounds.size - 1), dtype=np.uint64)
    running = np.zeros(q.size + 1, dtype=np.uint64)
    for p in range(PARTS):
        np.cumsum((q >> np.uint64(_BITS * p)) & _MASK, out=running[1:])
        out[p] = running[bounds[1:]] - running[bounds[:-1]]
    return out


def fixed_value(parts):
    """The sums of (merged) :func:`fixed_parts`, correctly rounded to float64."""
    totals = [sum(int(parts[p, b]) << (_BITS * p) for p in range(PARTS))
              for b in range(parts.shape[1])]
    return np.array([t / (1 << 63) for t in totals], dtype=np.float64)
