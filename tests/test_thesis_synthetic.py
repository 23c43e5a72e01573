"""Nguyen's thesis, Section 4.3, as tests: synthetic prediction/label pairs.

Predictions ``q ~ Beta(a, b)``; labels ``y ~ Bernoulli(t(q))`` with
``t(q) = q`` (perfectly calibrated) or, miscalibrated,
``t(q) = max(0, q - k)`` for ``q <= 0.5`` and ``min(1, q + k)`` otherwise
(the thesis prints ``min(0, p + k)``: a typo, it would zero out every label above
0.5). The "MSE calibration score" is CE_2 squared over equal-mass bins.

What theory says and what is asserted:

- Bin size doubling (2^1 .. 2^16 on 10^5 pairs). With Algorithm 1's merge rule the
  bins of size 2m are unions of bins of size m (the short remainder always ends in
  the last bin of both), so by Jensen's inequality (x^2 is convex) the score can
  only go down: asserted exactly, up to floating-point rounding, for calibrated
  *and* miscalibrated data (the thesis' "unpredictable" uncalibrated curve was
  over non-nested bin sizes). For calibrated data the expected score given the
  predictions is known in closed form, ``E[CE_2^2 | q] = 1/N sum_B 1/|B| sum_{i in B}
  q_i (1 - q_i)``: the observed score is checked against it.
- Sample size (bin size sqrt(n), n = 10^3 .. 10^6): calibrated CE_2 decreases to 0
  (like ``(E[q(1-q)] / sqrt(n))^(1/2)``); miscalibrated CE_2 converges to the
  analytic ``sqrt(E[(q - t(q))^2])``, integrated over the Beta density.
"""
import math

import numpy as np
import pytest
from scipy import integrate, special

import sparsecal as sc
from sparsecal.core.binning import equal_mass_bin_starts

SHAPES = [(0.5, 0.5), (2.0, 5.0)]
K = 0.1


def t_true(q, k):
    return np.where(q <= 0.5, np.maximum(0.0, q - k), np.minimum(1.0, q + k))


def draw(n, a, b, k, seed):
    rng = np.random.default_rng(seed)
    q = rng.beta(a, b, n)
    y = (rng.random(n) < t_true(q, k)).astype(np.uint8)
    return q, y


def analytic_ce(a, b, k):
    """sqrt(E[(q - t(q))^2]) for q ~ Beta(a, b), by quad over the Beta density.

    The integrand is split where q - t(q) changes form (q = k, 0.5, 1 - k); the
    end pieces carry the density's (possibly infinite) endpoint factor as an
    algebraic quad weight."""
    norm = special.beta(a, b)

    def gap2(q):
        return float(q - t_true(q, k)) ** 2

    total = 0.0
    # [0, k]: weight q^(a-1); [1-k, 1]: weight (1-q)^(b-1); interior: plain density
    total += integrate.quad(lambda q: gap2(q) * (1 - q) ** (b - 1), 0.0, k,
                            weight="alg", wvar=(a - 1, 0.0))[0]
    for lo, hi in [(k, 0.5), (0.5, 1 - k)]:
        total += integrate.quad(lambda q: gap2(q) * q ** (a - 1) * (1 - q) ** (b - 1),
                                lo, hi, limit=200)[0]
    total += integrate.quad(lambda q: gap2(q) * q ** (a - 1), 1 - k, 1.0,
                            weight="alg", wvar=(0.0, b - 1))[0]
    return math.sqrt(total / norm)


def expected_score_given_q(q, bin_size):
    """E[CE_2^2 | q] for calibrated labels: per bin Var(p_hat) = sum q(1-q) / |B|^2."""
    order = np.sort(q)
    starts = equal_mass_bin_starts(q.size, bin_size=bin_size)
    v = order * (1 - order)
    cs = np.concatenate(([0.0], np.cumsum(v)))
    sums = cs[starts[1:]] - cs[starts[:-1]]
    sizes = np.diff(starts)
    return float(np.sum(sums / sizes) / q.size), sizes.size


def test_analytic_value_agrees_with_monte_carlo():
    for a, b in SHAPES:
        q = np.random.default_rng(0).beta(a, b, 2_000_000)
        mc = math.sqrt(np.mean((q - t_true(q, K)) ** 2))
        assert analytic_ce(a, b, K) == pytest.approx(mc, rel=2e-3)
    assert analytic_ce(0.5, 0.5, 0.0) == 0.0


@pytest.mark.parametrize("n", [100000, 99999, 3 * 2 ** 15 + 7])
def test_doubling_bin_size_gives_nested_bins(n):
    """Bins of size 2m are unions of bins of size m, merge rule included."""
    for e in range(1, 16):
        fine = set(equal_mass_bin_starts(n, bin_size=2 ** e).tolist())
        coarse = set(equal_mass_bin_starts(n, bin_size=2 ** (e + 1)).tolist())
        assert coarse <= fine


@pytest.mark.parametrize("k", [0.0, K])
@pytest.mark.parametrize("a,b", SHAPES)
def test_mse_score_does_not_increase_as_bin_size_doubles(a, b, k):
    q, y = draw(100_000, a, b, k, seed=[1, int(10 * a), int(10 * b), int(100 * k)])
    sizes = [2 ** e for e in range(1, 17)]
    scores = [sc.calibration_error(q, y, bin_size=m).value ** 2 for m in sizes]
    for m, s0, s1 in zip(sizes[1:], scores, scores[1:]):
        # Jensen on nested bins: exact up to rounding
        assert s1 <= s0 * (1 + 1e-9) + 1e-16, (m, s0, s1)
    assert scores[-1] < scores[0]
    if k == 0:
        # calibrated: the score is pure sampling noise, E[.|q] = mean q(1-q) / |B|
        assert scores[-1] < 0.05 * scores[0]
        for m, s in zip(sizes, scores):
            expected, n_bins = expected_score_given_q(q, m)
            if n_bins >= 20:
                tol = 5 * math.sqrt(2.0 / n_bins) + 0.02
                assert s == pytest.approx(expected, rel=tol), (m, s, expected)
    else:
        # miscalibrated: the score does not vanish; with one or two bins the
        # opposite shifts below and above 0.5 cancel in part
        assert scores[7] > 0.5 * analytic_ce(a, b, k) ** 2


def test_calibrated_ce_goes_to_zero_with_sample_size():
    a, b = SHAPES[0]
    values = []
    for e, n in enumerate([10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6]):
        q, y = draw(n, a, b, 0.0, seed=[2, e])
        m = math.isqrt(n)
        ce = sc.calibration_error(q, y, bin_size=m).value
        values.append(ce)
        expected, n_bins = expected_score_given_q(q, m)
        # CE_2^2 ~ mean q(1-q) / sqrt(n), with chi-square-like noise over n_bins bins
        assert ce ** 2 == pytest.approx(expected, rel=4 * math.sqrt(2.0 / n_bins) + 0.02)
    assert all(v1 < v0 for v0, v1 in zip(values, values[1:])), values
    # E[q(1-q)] = 1/8 for Beta(1/2, 1/2): CE_2 ~ sqrt(0.125 / 1000) ~ 0.011 at 10^6
    assert values[-1] < 0.015
    assert values[-1] < values[0] / 4


@pytest.mark.parametrize("a,b", SHAPES)
def test_miscalibrated_ce_converges_to_analytic_value(a, b):
    truth = analytic_ce(a, b, K)
    values = []
    for e, n in enumerate([10 ** 4, 10 ** 6]):
        q, y = draw(n, a, b, K, seed=[3, e, int(10 * a)])
        values.append(sc.calibration_error(q, y, bin_size=math.isqrt(n)).value)
    # n = 10^6, 1,000 bins of 1,000: label noise adds ~E[t(1-t)]/1000 to CE_2^2
    # (< 1% of CE_2) and the bin straddling 0.5 loses ~1/1000 of it
    assert values[-1] == pytest.approx(truth, rel=0.03)
    # it does not go to zero: already close at 10^4
    assert values[0] == pytest.approx(truth, rel=0.15)
