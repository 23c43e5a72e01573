"""Debiased CE_2 (Kumar, Liang & Ma 2019) against the ``uncertainty-calibration``
package on the same bins, and the coverage of its score interval (bounded form of
benchmarks/coverage_study.py; docs/ci_coverage.md)."""
import numpy as np
import pytest
from scipy import stats

import sparsecal as sc
from sparsecal.core.binning import bin_statistics
from sparsecal.metrics import ConfidenceInterval

calib = pytest.importorskip("calibration.utils")   # the peer package (test extra)


def package_on_our_bins(x, y, bins_order):
    """The package's unbiased_l2_ce over the bins sparsecal made (same points)."""
    perm, _, starts = bins_order
    data = np.column_stack([x[perm].astype(np.float64), y[perm].astype(np.float64)])
    return calib.unbiased_l2_ce([data[a:b] for a, b in zip(starts[:-1], starts[1:])])


@pytest.mark.parametrize("n", [1, 2, 3, 17, 1000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_package_on_same_bins(n, dtype):
    rng = np.random.default_rng(n)
    for k in (0.0, 0.1):
        x = np.round(rng.beta(2, 5, n), 2).astype(dtype)      # ties
        t = np.clip(np.where(x <= 0.5, x - k, x + k), 0, 1)
        y = (rng.random(n) < t).astype(np.uint8)
        for n_bins in (1, 3, 10):
            _, xs, ys, order = bin_statistics(x, y, n_bins=n_bins)
            ours = sc.calibration_error(x, y, n_bins=n_bins, debias=True).value
            assert ours == pytest.approx(package_on_our_bins(xs, ys, order), abs=1e-10)


def test_matches_package_public_function():
    # distinct continuous scores, n divisible by 15: the package's own equal bins
    # (get_calibration_error -> 15 equal-mass bins) are sparsecal's bins
    rng = np.random.default_rng(5)
    for k in (0.0, 0.05, 0.2):
        x = rng.random(1500)
        y = (rng.random(1500) < np.clip(x + k, 0, 1)).astype(np.int64)
        ref = calib.get_calibration_error(x, y, p=2, debias=True)
        ours = sc.calibration_error(x, y, n_bins=15, debias=True).value
        assert ours == pytest.approx(ref, abs=1e-10)
        plug = sc.calibration_error(x, y, n_bins=15).value
        assert plug == pytest.approx(calib.get_calibration_error(x, y, p=2, debias=False),
                                     abs=1e-10)


def test_negative_square_gives_zero_and_brute_force():
    x = np.array([0.5, 0.5, 0.5, 0.5])
    y = np.array([0, 1, 0, 1], dtype=np.uint8)
    # one bin: (0.5 - 0.5)^2 - 0.25 / 3 < 0 -> 0
    assert sc.calibration_error(x, y, n_bins=1, debias=True).value == 0.0
    rng = np.random.default_rng(1)
    x = rng.random(200)
    y = (rng.random(200) < x ** 2).astype(np.uint8)
    b = np.array_split(np.argsort(x, kind="stable"), 4)   # n divisible by 4
    d = sum(len(i) / 200 * ((x[i].mean() - y[i].mean()) ** 2
                            - y[i].mean() * (1 - y[i].mean()) / (len(i) - 1)) for i in b)
    got = sc.calibration_error(x, y, n_bins=4, debias=True).value
    assert got == pytest.approx(np.sqrt(d), rel=1e-12)
    assert got < sc.calibration_error(x, y, n_bins=4).value


def test_score_interval_closed_form():
    rng = np.random.default_rng(2)
    x = rng.random(3000)
    y = (rng.random(3000) < np.clip(x + 0.1, 0, 1)).astype(np.uint8)
    for level in (0.9, 0.95):
        res = sc.calibration_error(x, y, n_bins=10, debias=True,
                                   ci=ConfidenceInterval("score", confidence_level=level))
        bins = res.bins
        c = bins.count.astype(float)
        q, p, w = bins.sum_score / c, bins.sum_label / c, c / c.sum()
        v = p * (1 - p) / (c - 1)
        t = (q - p) ** 2 - v
        d = w @ t
        z = stats.norm.ppf(0.5 + level / 2)
        share = w * np.maximum(t, 0) / (w * np.maximum(t, 0)).sum()
        a, cc = share @ (w * v), 2 * np.sum((w * v) ** 2)
        # the ends solve (d - theta)^2 = z^2 (4 a theta + cc)
        for end in (res.ci_low, res.ci_high):
            th = end ** 2
            assert (d - th) ** 2 == pytest.approx(z * z * (4 * a * th + cc), rel=1e-9)
        assert res.ci_low < res.value < res.ci_high
        assert res.ci_method == "score" and res.ci_level == level


def test_bad_input():
    x, y = [0.2, 0.7], [0, 1]
    with pytest.raises(ValueError, match="debias=True needs norm=2"):
        sc.calibration_error(x, y, norm=1, debias=True)
    with pytest.raises(ValueError, match="ci='score'"):
        sc.calibration_error(x, y, debias=True, ci="bootstrap")
    with pytest.raises(ValueError, match="debias=True"):
        sc.calibration_error(x, y, ci="score")
    with pytest.raises(TypeError, match="debias"):
        sc.calibration_error(x, y, debias="yes")
    xa = np.array(x)
    sc.calibration_error(xa, y, debias=True, ci="score")
    assert xa.tolist() == x


def _beta_draw(rng, n, a, b, k):
    q = rng.beta(a, b, n)
    t = np.where(q <= 0.5, np.maximum(0, q - k), np.minimum(1, q + k))
    return q, (rng.random(n) < t).astype(np.uint8)


@pytest.mark.parametrize("a, b, k, truth", [
    (2, 5, 0.0, 0.0),
    # miscalibrated Beta(5, 2): population binned CE_2 with 10 bins, the mirror
    # image of docs/ci_coverage.md's Beta(2, 5) value 0.0949
    (5, 2, 0.1, 0.0949),
])
def test_score_interval_coverage_band(a, b, k, truth):
    # 300 replicates at n = 1000: 99.9% binomial band around 95% is about
    # [0.91, 0.985]; a planted 90% level (coverage ~0.90) or a plug-in
    # variance (covers 0 ~100% of the time) falls outside.
    rng = np.random.default_rng(11)
    reps = 300
    hit = 0
    for _ in range(reps):
        q, y = _beta_draw(rng, 1000, a, b, k)
        res = sc.calibration_error(q, y, n_bins=10, debias=True, ci="score")
        hit += res.ci_low <= truth <= res.ci_high
    lo, hi = stats.binom.ppf([0.0005, 0.9995], reps, 0.95) / reps
    assert lo <= hit / reps <= hi
