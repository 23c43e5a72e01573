"""Per-bin intervals of a positive rate (sparsecal.metrics.bin_intervals), against
scipy's ``binomtest(k, n).proportion_ci`` and the closed forms of Wilson (1927)
and Clopper & Pearson (1934)."""
import numpy as np
import pytest
from scipy import stats

import sparsecal as sc
from sparsecal.metrics import binomial_interval


def scipy_ci(k, n, level, method):
    ci = stats.binomtest(int(k), int(n)).proportion_ci(
        level, method="exact" if method == "clopper-pearson" else "wilson")
    return ci.low, ci.high


def wilson_closed_form(k, n, z):
    # Wilson 1927: roots in pi of (k/n - pi)^2 = z^2 pi (1 - pi) / n
    a = n + z * z
    b = -(2 * k + z * z)
    c = k * k / n
    disc = np.sqrt(b * b - 4 * a * c)
    return (-b - disc) / (2 * a), (-b + disc) / (2 * a)


@pytest.mark.parametrize("method", ["wilson", "clopper-pearson"])
@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99])
def test_matches_scipy_on_all_counts_small_n(method, level):
    # every k of n = 1, 2, 3, 7, 50: the all-0 and all-1 bins included
    for n in (1, 2, 3, 7, 50):
        k = np.arange(n + 1)
        lo, hi = binomial_interval(k, np.full(n + 1, n), confidence_level=level,
                                   method=method)
        ref = np.array([scipy_ci(ki, n, level, method) for ki in k])
        np.testing.assert_allclose(lo, ref[:, 0], atol=1e-12)
        np.testing.assert_allclose(hi, ref[:, 1], atol=1e-12)
        assert np.all(hi - lo > 0)                     # never zero width
        assert lo[0] == 0.0 and hi[-1] == 1.0


def test_random_bins_against_closed_forms():
    rng = np.random.default_rng(3)
    n = rng.integers(1, 5000, 300)
    k = rng.binomial(n, rng.random(300))
    for level in (0.9, 0.95):
        z = stats.norm.ppf(0.5 + level / 2)
        lo, hi = binomial_interval(k, n, confidence_level=level)
        rlo, rhi = wilson_closed_form(k.astype(float), n.astype(float), z)
        np.testing.assert_allclose(lo, np.maximum(rlo, 0), atol=1e-12)
        np.testing.assert_allclose(hi, np.minimum(rhi, 1), atol=1e-12)
        clo, chi = binomial_interval(k, n, confidence_level=level, method="clopper-pearson")
        alpha = 1 - level
        np.testing.assert_allclose(
            clo, np.where(k > 0, stats.beta.ppf(alpha / 2, k, n - k + 1), 0), atol=1e-12)
        np.testing.assert_allclose(
            chi, np.where(k < n, stats.beta.ppf(1 - alpha / 2, k + 1, n - k), 1), atol=1e-12)
        # Clopper-Pearson contains Wilson's centre interval only loosely; both
        # contain the rate
        p = k / n
        assert np.all((lo <= p) & (p <= hi) & (clo <= p) & (p <= chi))


def test_level_changes_the_ends():
    # a planted 95% -> 90% must change the ends, by the known amount
    lo95, hi95 = binomial_interval(3, 10)
    lo90, hi90 = binomial_interval(3, 10, confidence_level=0.9)
    assert hi95 - lo95 > hi90 - lo90
    np.testing.assert_allclose([lo95, hi95], scipy_ci(3, 10, 0.95, "wilson"), atol=1e-12)
    np.testing.assert_allclose([lo90, hi90], scipy_ci(3, 10, 0.9, "wilson"), atol=1e-12)


def test_exact_coverage_of_clopper_pearson_and_wilson():
    # Coverage computed exactly (sum of binomial probabilities), not simulated:
    # Clopper-Pearson >= level for every rate; Wilson close to it on average.
    n = 40
    k = np.arange(n + 1)
    cp = binomial_interval(k, np.full(n + 1, n), method="clopper-pearson")
    wi = binomial_interval(k, np.full(n + 1, n))
    rates = np.linspace(0.01, 0.99, 99)
    pmf = stats.binom.pmf(k[None, :], n, rates[:, None])
    cov_cp = (pmf * ((cp[0] <= rates[:, None]) & (rates[:, None] <= cp[1]))).sum(1)
    cov_wi = (pmf * ((wi[0] <= rates[:, None]) & (rates[:, None] <= wi[1]))).sum(1)
    assert cov_cp.min() >= 0.95 - 1e-12
    assert 0.935 <= cov_wi.mean() <= 0.965


def test_scalar_and_float_input_and_dtype():
    lo, hi = binomial_interval(2, 5)
    assert np.ndim(lo) == 0
    lo32, hi32 = binomial_interval(np.float32([2]), np.float32([5]))
    np.testing.assert_allclose([lo32[0], hi32[0]], [lo, hi], rtol=1e-7)
    k = np.array([1, 2])
    n = np.array([3, 4])
    binomial_interval(k, n)
    assert k.tolist() == [1, 2] and n.tolist() == [3, 4]


@pytest.mark.parametrize("kwargs, match", [
    (dict(successes=[3], trials=[2]), "successes"),
    (dict(successes=[-1], trials=[2]), "successes"),
    (dict(successes=[np.nan], trials=[2]), "successes"),
    (dict(successes=[0], trials=[0]), "trials"),
    (dict(successes=[1, 2], trials=[3]), "same shape"),
    (dict(successes=[1], trials=[3], confidence_level=1.0), "confidence_level"),
    (dict(successes=[1], trials=[3], method="normal"), "method"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        binomial_interval(**kwargs)


def test_bad_type():
    with pytest.raises(TypeError, match="successes"):
        binomial_interval(["a"], [3])


def test_exported():
    assert sc.metrics.binomial_interval is binomial_interval
