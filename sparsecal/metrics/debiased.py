"""The debiased squared calibration error of Kumar, Liang & Ma (2019) and a
score-type interval around it.

Over bins ``B_i`` of ``n_i`` points (``N`` in all), with mean score ``q_i`` and
positive rate ``p_i``, the plug-in ``CE_2² = sum_i n_i/N (q_i - p_i)²`` is biased
upward by the sampling variance of ``p_i``. Kumar et al. subtract its unbiased
estimate per bin:

    D = sum_i n_i/N t_i,   t_i = (q_i - p_i)² - p_i (1 - p_i) / (n_i - 1)   (n_i >= 2),

``t_i = 0`` for a bin of one point, and report ``sqrt(max(D, 0))``: **0 when the
debiased square is negative** (the convention of their ``uncertainty-calibration``
package, ``calibration.utils.unbiased_l2_ce``).

The interval (``ConfidenceInterval("score")``) is for ``θ = CE_2²`` of the binned
population. Given the bins, ``t_i`` has mean ``μ_i²`` (``μ_i`` the bin's true gap)
and variance ``4 μ_i² σ_i² + 2 σ_i⁴`` to first order (``σ_i²`` the variance of
``p_i``, estimated by ``v_i = p_i (1 - p_i) / (n_i - 1)``). Writing ``μ_i² = θ π_i
/ w_i`` with ``w_i = n_i/N`` and ``π_i`` the share of ``θ`` in bin ``i``
(estimated from ``max(t_i, 0)``, equal to ``w_i`` when all are 0),

    Var(D | θ) = 4 A θ + C,   A = sum_i π_i w_i v_i,   C = 2 sum_i w_i² v_i².

The interval is every ``θ >= 0`` that the normal test ``|D - θ| <= z sqrt(Var(D | θ))``
accepts (a score interval, as Wilson's for a proportion): the roots
``D + 2 z² A ± z sqrt(4 A D + 4 z² A² + C)``, clipped at 0 ([0, 0] when no ``θ``
is accepted, i.e. D far below 0), then mapped to CE by the square root. Because
the variance is taken under each candidate ``θ`` rather than plugged in from the
noisy gaps, the interval covers ``θ = 0`` of a calibrated model at about the
nominal rate (a plug-in variance grows with the noise and covers 0 almost always).

**Random bin membership** (equal-mass bins only; :func:`membership_allowance`).
The truth is the binned CE of the *population's* equal-mass bins; the sample's
cut ``j`` (at cumulative weight ``u_j``) lies ``δ_j ~ N(0, u_j (1 - u_j) / N)``
(in probability mass) from the population's. Moving a cut between bins with
gaps ``G_i``, ``G_{i+1}`` changes ``θ`` at the rate ``(G_i - G_{i+1}) (2 g(c) -
G_i - G_{i+1})``, ``g(c)`` the gap at the cut: about 0 where the gap is smooth,
but ``∓Δ_j²`` (``Δ_j = G_i - G_{i+1}``) on either side of a cut where the gap
*jumps*, so there ``θ - θ(sample cuts) = Δ_j² |δ_j| >= 0``: D is biased low by
``Δ_j² σ_j sqrt(2/π)``, an amount of the order of its sd. Measured on the
coverage suite's Beta(0.2, 0.2), thesis §4.3 miscalibration (``t`` jumps at
0.5, the median, a population cut): mean D 0.00342, 0.00367 and 0.00378 at
n = 10³, 10⁴, 10⁵ against ``θ = 0.00383`` (−0.32 to −0.38 sd at every n; the
conditional sd itself was right to 6%), and the conditional interval covered
89.1%, 92.3% and 92.5%. The upper
end therefore allows for this worst case: it is the score-interval end of
``D + m`` with ``m = sqrt(2/π) Σ_j σ_j Δ̂_j²`` (``Δ̂_j² = (Ĝ_i - Ĝ_{i+1})² - v_i
- v_{i+1}``, clipped at 0) and ``C`` increased by the spread ``(1 - 2/π) Σ_j
σ_j² Δ̂_j⁴`` of ``Δ_j² |δ_j|`` and by the delta-method variance that ``m``
adds to ``D + m`` (``m`` is computed from the same noisy gaps). The lower end
is unchanged (a jump only lowers D). With it the spiky case covers 94.2%,
96.5% and 96.8% (2,000, 2,000 and 1,000 replicates) and the other miscalibrated
cells 94.2–96.6%. A re-binning bootstrap was not used: in the bootstrap world the
jump is no longer at a cut, so it would not reproduce the loss (the functional
is not differentiable there). Fixed-width bins
do not move, and get no allowance. Coverage: docs/ci_coverage.md.
"""
import numpy as np

from .ce import bin_rates

__all__ = ["debiased_ce_from_bins", "debiased_terms", "membership_allowance",
           "score_interval"]


def debiased_terms(bins):
    """Per-bin weights, debiased squared gaps and variance estimates.

    Parameters
    ----------
    bins : BinStats

    Returns
    -------
    w : ndarray of float64
        ``n_i / N`` over the non-empty bins.
    t : ndarray of float64
        ``(q_i - p_i)² - p_i (1 - p_i) / (n_i - 1)``; 0 for bins of one point.
    v : ndarray of float64
        ``p_i (1 - p_i) / (n_i - 1)``; 0 for bins of one point.

    References
    ----------
    Kumar, Liang & Ma 2019, "Verified Uncertainty Calibration", NeurIPS,
    Section 5 (the debiased estimator; their ``unbiased_square_ce``).

    Examples
    --------
    >>> from sparsecal.core.binning import fixed_width_bins
    >>> w, t, v = debiased_terms(fixed_width_bins([0.1, 0.3, 0.9], [0, 1, 1], n_bins=2))
    >>> w.round(4).tolist(), t.round(4).tolist(), v.round(4).tolist()
    ([0.6667, 0.3333], [-0.16, 0.0], [0.25, 0.0])
    """
    count, q, p = bin_rates(bins)
    several = count > 1
    v = np.where(several, p * (1.0 - p) / np.maximum(count - 1, 1), 0.0)
    t = np.where(several, (q - p) ** 2 - v, 0.0)
    return count / count.sum(), t, v


def debiased_ce_from_bins(bins):
    """Kumar et al.'s debiased CE_2, ``sqrt(max(D, 0))``.

    Parameters
    ----------
    bins : BinStats

    Returns
    -------
    float
        The square root of the debiased squared CE, 0 where that is negative.

    References
    ----------
    Kumar, Liang & Ma 2019, Section 5; ``calibration.utils.unbiased_l2_ce``.

    Examples
    --------
    >>> from sparsecal.core.binning import fixed_width_bins
    >>> debiased_ce_from_bins(fixed_width_bins([0.1, 0.3, 0.9], [0, 1, 1], n_bins=2))
    0.0
    """
    w, t, _ = debiased_terms(bins)
    return float(np.sqrt(max(float(w @ t), 0.0)))


def membership_allowance(bins):
    """Bias and variance of D from the randomness of equal-mass bin membership.

    Parameters
    ----------
    bins : BinStats
        Equal-mass bins (``edges`` None); fixed-width bins do not move.

    Returns
    -------
    m : float
        ``sqrt(2/π) Σ_j σ_j Δ̂_j²`` over the inner cuts ``j``: the expected
        amount by which D falls below ``θ`` if the gap jumps by ``Δ_j`` at the
        population's cut (``σ_j² = u_j (1 - u_j) / N``, ``u_j`` the weight below
        cut ``j``; ``Δ̂_j² = (Ĝ_i - Ĝ_{i+1})² - v_i - v_{i+1}``, clipped at 0).
    extra_var : float
        ``(1 - 2/π) Σ_j σ_j² Δ̂_j⁴`` (the spread of ``Δ_j² |δ_j|``) plus the
        delta-method variance that ``m``, computed from the same gaps, adds to
        ``D + m`` (clipped at 0). Both are 0 for fixed-width bins.

    References
    ----------
    Kumar, Liang & Ma 2019, Section 5 (D); Nguyen & O'Connor 2015, Algorithm 1
    (the equal-mass cuts); the measurement in the module docstring and
    docs/ci_coverage.md.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.core.binning import bin_statistics, fixed_width_bins
    >>> q = np.linspace(0.01, 0.99, 400)
    >>> y = (q > 0.5).astype(np.uint8)   # gaps ±0.255 jump at the median: m = 0.798·0.025·0.51²
    >>> m, extra = membership_allowance(bin_statistics(q, y, n_bins=2)[0])
    >>> round(m, 4), round(extra, 6)
    (0.0052, 1.5e-05)
    >>> membership_allowance(fixed_width_bins(q, y, n_bins=2))
    (0.0, 0.0)
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
    """Score-type interval of the binned CE_2 from the debiased squared CE.

    Parameters
    ----------
    bins : BinStats
    spec : ConfidenceInterval
        Its ``z`` (confidence level) is used; nothing is drawn.

    Returns
    -------
    (float, float)
        ``sqrt`` of the ends of ``{θ >= 0 : D - θ <= z sqrt(4 A θ + C),
        θ - D - m <= z sqrt(4 A θ + C + C_m)}`` with ``(m, C_m)`` of
        :func:`membership_allowance` (see the module docstring); ``(0.0, 0.0)``
        when that set is empty.

    References
    ----------
    Kumar, Liang & Ma 2019, Section 5 (the estimator D); Wilson 1927 (the
    score-interval construction, here for a sum of squared gaps); the
    membership allowance is this package's (module docstring, measured in
    docs/ci_coverage.md).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.core.binning import bin_statistics
    >>> from sparsecal.metrics.intervals import ConfidenceInterval
    >>> rng = np.random.default_rng(0)
    >>> q = rng.random(5000)
    >>> y = (rng.random(5000) < q).astype(np.uint8)        # calibrated
    >>> lo, hi = score_interval(bin_statistics(q, y)[0], ConfidenceInterval("score"))
    >>> lo, round(hi, 3)
    (0.0, 0.024)
    """
    w, t, v = debiased_terms(bins)
    d = float(w @ t)
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
