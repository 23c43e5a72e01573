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
"""
import numpy as np

from .ce import bin_rates

__all__ = ["debiased_ce_from_bins", "debiased_terms", "score_interval"]


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
        ``sqrt`` of the ends of ``{θ >= 0 : |D - θ| <= z sqrt(4 A θ + C)}``
        (see the module docstring); ``(0.0, 0.0)`` when that set is empty.

    References
    ----------
    Kumar, Liang & Ma 2019, Section 5 (the estimator D); Wilson 1927 (the
    score-interval construction, here for a sum of squared gaps).

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
    z2 = spec.z ** 2
    disc = z2 * (4.0 * a * d + 4.0 * z2 * a * a + c)
    if disc < 0:
        return 0.0, 0.0
    centre = d + 2.0 * z2 * a
    half = np.sqrt(disc)
    return float(np.sqrt(max(centre - half, 0.0))), float(np.sqrt(max(centre + half, 0.0)))
