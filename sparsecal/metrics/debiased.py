"""The debiased squared calibration error of Kumar, Liang & Ma (2019) and a
score-type interval around it.

Over bins of ``n_i`` points (``w_i = n_i/N``) with mean score ``q_i`` and
positive rate ``p_i``, Kumar et al. subtract from the plug-in ``CE_2²`` the
unbiased estimate of its upward bias per bin and report ``sqrt(max(D, 0))``::

    D = sum_i w_i t_i,   t_i = (q_i - p_i)² - v_i,   v_i = p_i (1 - p_i) / (n_i - 1)

The interval (``ci="score"``) is every ``θ = CE_2² >= 0`` with ``|D - θ| <= z
sqrt(Var(D | θ))``, ``Var(D | θ) = 4 A θ + C`` (``A = sum_i π_i w_i v_i``, ``π_i``
θ's share per bin; ``C = 2 sum_i w_i² v_i²``), its upper end allowing for the
bias of equal-mass bins (:func:`membership_allowance`; docs/ci_coverage.md).
"""
import numpy as np

from .ce import bin_rates, segment_rates, segment_weights

__all__ = ["debiased_ce_from_bins", "debiased_squares", "score_interval"]


def _terms(count, q, p):
    several = count > 1
    v = np.where(several, p * (1.0 - p) / np.maximum(count - 1, 1), 0.0)
    return np.where(several, (q - p) ** 2 - v, 0.0), v


def debiased_terms(bins):
    """``(w, t, v)`` of the non-empty bins (``t``, ``v`` 0 for bins of one point)."""
    count, q, p = bin_rates(bins)
    return (count / count.sum(), *_terms(count, q, p))


def debiased_squares(bins, starts):
    """Kumar et al.'s ``D`` of each segment of bins (see
    :func:`~sparsecal.metrics.ce.segment_ce`), its sums in bin order."""
    count, q, p, n, starts = segment_rates(bins, starts)
    return np.add.reduceat(segment_weights(count, n, starts) * _terms(count, q, p)[0], starts)


def debiased_ce_from_bins(bins):
    """Kumar et al.'s debiased CE_2, ``sqrt(max(D, 0))``."""
    return float(np.sqrt(max(float(debiased_squares(bins, [0])[0]), 0.0)))


def membership_allowance(bins):
    """``(m, extra_var)``: the bias allowance ``m = sqrt(2/π) Σ_j σ_j Δ̂_j²`` over the
    inner equal-mass cuts and the variance it adds (both 0 for fixed-width bins).
    """
    if bins.edges is not None:
        return 0.0, 0.0
    w, _, v = debiased_terms(bins)
    count, q, p = bin_rates(bins)
    u = np.cumsum(w)[:-1]
    sigma = np.sqrt(u * (1.0 - u) / count.sum())
    gap = q - p
    jump = gap[:-1] - gap[1:]
    sq = jump ** 2 - v[:-1] - v[1:]
    active = sq > 0
    sq = np.where(active, sq, 0.0)
    c = sigma * np.sqrt(2.0 / np.pi)
    # d m / d gap_i, against d D / d gap_i = 2 w_i gap_i: Var(D + m) - Var(D)
    e = np.where(active, 2.0 * c * jump, 0.0)
    grad = np.append(e, 0.0) - np.insert(e, 0, 0.0)
    var_m = float(np.sum(v * (grad ** 2 + 4.0 * w * gap * grad)))
    spread = (1.0 - 2.0 / np.pi) * float((sigma ** 2) @ (sq ** 2))
    return float(c @ sq), max(var_m, 0.0) + spread


def _score_roots(d, a, c, z2):
    """Roots ``θ`` of ``(d - θ)² = z² (4 a θ + c)``, or None when there are none."""
    disc = z2 * (4.0 * a * d + 4.0 * z2 * a * a + c)
    if disc < 0:
        return None
    half = np.sqrt(disc)
    return d + 2.0 * z2 * a - half, d + 2.0 * z2 * a + half


def score_interval(bins, spec):
    """Score-type interval of the binned CE_2 (``(0.0, 0.0)`` when no ``θ`` is accepted)."""
    w, t, v = debiased_terms(bins)
    d = float(debiased_squares(bins, [0])[0])   # the estimate's own sum
    tp = w * np.maximum(t, 0.0)
    share = tp / tp.sum() if tp.sum() > 0 else w
    a = float(share @ (w * v))
    c = 2.0 * float((w * v) @ (w * v))
    m, extra = membership_allowance(bins)
    z2 = spec.z ** 2
    lower, upper = _score_roots(d, a, c, z2), _score_roots(d + m, a, c + extra, z2)
    if upper is None:   # no θ >= 0 is accepted (D far below 0)
        return 0.0, 0.0
    lo = 0.0 if lower is None else max(lower[0], 0.0)
    return float(np.sqrt(lo)), float(np.sqrt(max(upper[1], 0.0)))
