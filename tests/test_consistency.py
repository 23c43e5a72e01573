"""The consistency-resampling calibration test (Bröcker & Smith 2007):
statistic against a brute-force re-implementation, null distribution against
resampling entries one by one, its
size on calibrated data and its power on miscalibrated data (bounded form of
benchmarks/coverage_study.py)."""
import numpy as np
import pytest
from scipy import stats

import sparsecal as sc
from sparsecal.metrics import CalibrationTest, calibration_test


def brute_ce(x, y, n_bins):
    o = np.argsort(x, kind="stable")
    x, y = x[o].astype(np.float64), y[o].astype(np.float64)
    n = len(x)
    b = min(n_bins, n)
    cuts = [i * n // b for i in range(b + 1)]
    return np.sqrt(sum((c1 - c0) / n * (x[c0:c1].mean() - y[c0:c1].mean()) ** 2
                       for c0, c1 in zip(cuts[:-1], cuts[1:]) if c1 > c0))


def entry_null(x, n_bins, reps, seed):
    """The null statistics by resampling entries one by one: ``n`` indices into
    the sorted scores, a ``Bernoulli(score)`` label per copy, brute-force CE_2."""
    rng = np.random.default_rng(seed)
    xs_all = np.sort(x.astype(np.float64), kind="stable")
    null = []
    for _ in range(reps):
        xs = xs_all[np.sort(rng.integers(0, len(x), len(x)))]
        ys = (rng.random(len(x)) < xs).astype(np.uint8)
        null.append(brute_ce(xs, ys, n_bins))
    return np.array(null)


@pytest.mark.parametrize("n", [1, 2, 5, 300])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_statistic_matches_brute_force(n, dtype):
    rng = np.random.default_rng(n)
    x = np.round(rng.random(n), 1).astype(dtype)            # ties
    y = (rng.random(n) < x ** 2).astype(np.uint8)
    res = calibration_test(x, y, n_bins=4, n_resamples=49, random_state=3)
    assert res.statistic == pytest.approx(brute_ce(x, y, 4), abs=1e-12)
    assert (res.n_resamples, res.n) == (49, n)
    assert res.statistic == sc.calibration_error(x, y, n_bins=4).value
    assert 1 / 50 <= res.p_value <= 1.0 and (res.p_value * 50) % 1 == pytest.approx(0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_null_distribution_equals_entry_resampling(dtype):
    # The table draw (multinomial copies per distinct score, binomial positives,
    # hypergeometric splits at cuts inside ties) has the law of resampling
    # entries one by one (labels iid Bernoulli per copy): two-sample KS of the
    # null statistics at fixed seeds on tie-heavy data, and the p-values agree
    # within Monte Carlo error.
    rng = np.random.default_rng(4)
    x = np.round(rng.beta(2, 5, 120), 1).astype(dtype)
    y = (rng.random(120) < x ** 1.5).astype(np.uint8)
    from sparsecal.metrics.resampling import data_table, replicate_errors, replicate_generators
    table = data_table(x, y, None)
    starts = np.arange(5) * 120 // 4
    new = replicate_errors(table, replicate_generators(1, 1500), starts=starts, null=True)
    old = entry_null(x, 4, 1500, 2)
    assert stats.ks_2samp(new, old).pvalue > 1e-3
    t = brute_ce(x, y, 4)
    p_old = (1 + np.sum(old >= t - 1e-15)) / 1501
    p_new = calibration_test(x, y, n_bins=4, n_resamples=1500, random_state=1).p_value
    assert p_new == pytest.approx((1 + np.sum(new >= t - 1e-15)) / 1501)
    assert abs(p_new - p_old) <= 4 * np.sqrt(2 * p_old * (1 - p_old) / 1500)


def test_size_and_power():
    # size: 150 calibrated data sets (n = 200, Beta(2, 5) scores), R = 99; the
    # rejection rate at 5% must lie in the 99.9% binomial band around 0.05.
    rng = np.random.default_rng(0)
    reps = 150
    rej = 0
    for _ in range(reps):
        q = rng.beta(2, 5, 200)
        y = rng.random(200) < q
        rej += calibration_test(q, y, n_resamples=99, random_state=rng).p_value <= 0.05
    lo, hi = stats.binom.ppf([0.0005, 0.9995], reps, 0.05) / reps
    assert lo <= rej / reps <= hi
    # power: thesis §4.3 miscalibration k = 0.1 at n = 1000 is always detected
    for _ in range(5):
        q = rng.beta(2, 5, 1000)
        y = rng.random(1000) < np.where(q <= 0.5, np.maximum(0, q - 0.1), q + 0.1)
        assert calibration_test(q, y, n_resamples=99, random_state=rng).p_value == 0.01


def test_result_and_reproducible():
    rng = np.random.default_rng(1)
    q = rng.random(100)
    y = rng.random(100) < q
    a = calibration_test(q, y, n_resamples=20, random_state=5)
    assert a == calibration_test(q, y, n_resamples=20, random_state=5)
    y2 = np.random.default_rng(7).random(100) < q ** 1.3   # p near 0.1: seeds differ
    assert (calibration_test(q, y2, n_resamples=200, random_state=5).p_value
            != calibration_test(q, y2, n_resamples=200, random_state=6).p_value)
    assert isinstance(a, CalibrationTest) and "p_value=" in repr(a)
    assert a.to_dict()["n_bins"] == 10
    with pytest.raises(AttributeError):
        a.p_value = 0.5


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_resamples=0), "n_resamples"),
    (dict(n_bins=0), "n_bins"),
    (dict(random_state=-1), "random_state"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        calibration_test([0.2, 0.5], [0, 1], **kwargs)
    with pytest.raises(ValueError, match="scores"):
        calibration_test([0.2, 1.5], [0, 1])
