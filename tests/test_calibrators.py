"""Tests of the binary recalibration models (docs/architecture.md, Semantics 7): histogram
binning, isotonic regression, scaling-binning and Platt / prior-weighted
logistic regression, each against an independent reference (scikit-learn,
SciPy, or a brute-force re-implementation written here), plus the properties
every calibrator must have (range, dtype, no test leakage, monotonicity where
it holds).
"""
import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from sparsecal import (BetaCalibration, GaussianCalibration, PriorWeightedLogistic,
                       HistogramBinning, IsotonicCalibrator, PlattCalibrator, ScalingBinning)
from sparsecal.calibration import clone
from sparsecal.calibration import NotFittedError
from sparsecal.calibration.registry import calibrator_class
from sparsecal.core.validation import DegenerateDataError

ALL = [HistogramBinning, IsotonicCalibrator, ScalingBinning, PlattCalibrator,
       BetaCalibration, PriorWeightedLogistic, GaussianCalibration]


def make_dev(seed, n=3000, dtype=np.float64, power=1.6):
    """Continuous scores (no ties) on a bimodal-ish distribution, labels drawn
    from a miscalibrated truth ``x ** power``."""
    rng = np.random.default_rng(seed)
    x = rng.beta(0.6, 0.6, n).astype(dtype)
    y = (rng.random(n) < x.astype(np.float64) ** power).astype(np.uint8)
    return x, y


def logit(x, eps=1e-7):
    x = np.clip(np.asarray(x, dtype=np.float64), eps, 1 - eps)
    return np.log(x) - np.log1p(-x)


# --------------------------------------------------------------------------- #
# Isotonic regression                                                         #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("seed", range(12))
def test_isotonic_equals_sklearn(seed):
    """Float64 scores with heavy ties (a grid 1e-3 apart, so scikit-learn's
    extra pooling of near-ties does not apply), optional weights with zeros."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([1, 7, 200, 2500]))
    support = rng.choice(np.arange(1001) / 1000.0, size=min(n, 80), replace=False)
    x = rng.choice(support, size=n)
    y = (rng.random(n) < x ** 2).astype(np.uint8)
    wkind = seed % 3
    w = None if wkind == 0 else (rng.random(n) * 2 if wkind == 1
                                 else rng.integers(0, 4, n).astype(np.float64))
    if w is not None:
        w[rng.random(n) < 0.2] = 0.0
        w[0] = 1.0
    cal = IsotonicCalibrator().fit(x, y, w)
    ref = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(x, y, sample_weight=w)
    q = np.concatenate([x, support, np.linspace(0, 1, 1001), [0.0, 1.0]])
    np.testing.assert_allclose(cal.predict(q), ref.predict(q), rtol=0, atol=1e-12)


def test_isotonic_non_decreasing_and_constant_outside():
    x, y = make_dev(1)
    cal = IsotonicCalibrator().fit(x * 0.5 + 0.25, y)          # dev in [0.25, 0.75]
    q = np.linspace(0, 1, 5001)
    p = cal.predict(q)
    assert (np.diff(p) >= 0).all()
    assert (p[q <= 0.25 * (1 - 1e-12)] == cal.predict(np.array([0.0]))[0]).all()
    assert (p[q >= 0.75 * (1 + 1e-12)] == cal.predict(np.array([1.0]))[0]).all()


# --------------------------------------------------------------------------- #
# Histogram binning                                                           #
# --------------------------------------------------------------------------- #

def ref_rank_bins(x, n_bins=None, bin_size=None):
    """Brute-force equal-mass bins (Nguyen & O'Connor Algorithm 1): bin index of
    every point. Stable sort; bin i holds ranks [floor(i n/B), floor((i+1) n/B)),
    or runs of ``bin_size`` ranks with a short remainder merged into the last."""
    n = len(x)
    order = np.argsort(x, kind="stable")
    if n_bins is not None:
        starts = sorted({i * n // n_bins for i in range(n_bins + 1)})
    else:
        k = max(n // bin_size, 1)
        starts = [i * bin_size for i in range(k)] + [n]
    bin_of = np.empty(n, dtype=np.int64)
    for b in range(len(starts) - 1):
        bin_of[order[starts[b]:starts[b + 1]]] = b
    return bin_of, len(starts) - 1


def ref_weighted_bins(x, w, n_bins=None, bin_size=None):
    """Brute-force equal-weight bins over the points with positive (integer)
    weight: with total weight W, bin j starts at the first point (stable score
    order) whose cumulative weight, itself included, exceeds j W / B."""
    order = [int(i) for i in np.argsort(x, kind="stable") if w[i] > 0]
    total = float(sum(w[i] for i in order))
    if n_bins is not None:
        cuts = [j * total / n_bins for j in range(1, n_bins)]
    else:
        k = max(len(order) // bin_size, 1)
        cuts = [j * bin_size * total / len(order) for j in range(1, k)]
    bin_of, c = {}, 0.0
    for i in order:
        c += w[i]
        bin_of[i] = sum(1 for t in cuts if t < c)
    return bin_of


@pytest.mark.parametrize("n,n_bins", [(1, 10), (7, 10), (10, 10), (999, 10), (3001, 7),
                                      (5000, 1), (4000, 25)])
def test_histogram_reproduces_dev_bin_rates(n, n_bins):
    x, y = make_dev(n, n=n)                        # continuous: no ties
    cal = HistogramBinning(n_bins=n_bins).fit(x, y)
    bin_of, k = ref_rank_bins(x, n_bins=n_bins)
    rates = np.array([y[bin_of == b].mean() for b in range(k)])
    assert cal.bin_rates_.shape == (k,)
    np.testing.assert_array_equal(cal.bin_rates_, rates)
    np.testing.assert_array_equal(cal.predict(x), rates[bin_of])


@pytest.mark.parametrize("n,bin_size", [(1, 5), (9, 10), (10, 10), (1000, 100), (1234, 100),
                                        (1299, 100), (500, 1)])
def test_histogram_bin_size(n, bin_size):
    x, y = make_dev(n + 3, n=n)
    cal = HistogramBinning(bin_size=bin_size).fit(x, y)
    bin_of, k = ref_rank_bins(x, bin_size=bin_size)
    rates = np.array([y[bin_of == b].mean() for b in range(k)])
    assert cal.bin_rates_.shape == (k,)
    np.testing.assert_array_equal(cal.predict(x), rates[bin_of])
    counts = np.bincount(bin_of)
    assert (counts >= min(bin_size, n)).all() and (counts[:-1] == bin_size).all()


def test_histogram_covers_unit_interval():
    """Scores below / above the dev range, 0.0 and exactly 1.0 get the first /
    last bin; every score in [0, 1] gets one of the bin rates."""
    x, y = make_dev(3, n=2000)
    x = 0.2 + 0.6 * x                                   # dev scores in [0.2, 0.8]
    cal = HistogramBinning(n_bins=10).fit(x, y)
    first, last = cal.bin_rates_[0], cal.bin_rates_[-1]
    np.testing.assert_array_equal(cal.predict(np.array([0.0, 0.05, 0.19, x.min()])), first)
    np.testing.assert_array_equal(cal.predict(np.array([x.max(), 0.81, 0.99, 1.0])), last)
    q = np.linspace(0, 1, 10001)
    assert np.isin(cal.predict(q), cal.bin_rates_).all()
    # Between two bins the cut lies halfway between their dev scores.
    xs = np.sort(x)
    upper0, lower1 = xs[199], xs[200]
    mid = (upper0 + lower1) / 2
    assert cal.predict(np.array([np.nextafter(mid, 0)]))[0] == cal.bin_rates_[0]
    assert cal.predict(np.array([mid]))[0] == cal.bin_rates_[1]


@pytest.mark.parametrize("seed", range(6))
def test_histogram_sample_weight_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.choice([13, 200, 2000]))
    x, y = make_dev(seed + 50, n=n)
    w = rng.integers(0, 5, n).astype(np.float64)       # integer weights: exact sums
    w[0] = 3.0
    kw = {"n_bins": int(rng.choice([1, 4, 10]))} if seed % 2 == 0 else \
        {"bin_size": int(rng.choice([3, 40]))}
    cal = HistogramBinning(**kw).fit(x, y, sample_weight=w)
    bin_of = ref_weighted_bins(x, w, **kw)
    idx = np.array(sorted(bin_of))
    b = np.array([bin_of[i] for i in idx])
    k = b.max() + 1
    wsum = np.array([w[idx][b == j].sum() for j in range(k)])
    rates = np.array([(w[idx] * y[idx])[b == j].sum() for j in range(k)]) / wsum
    np.testing.assert_array_equal(cal.bin_rates_, rates)
    np.testing.assert_array_equal(cal.predict(x[idx]), rates[b])
    if "n_bins" in kw:
        # Bins hold equal weight, up to one point's weight.
        assert (np.abs(wsum - w.sum() / kw["n_bins"]) <= w.max()).all() or k < kw["n_bins"]


@pytest.mark.parametrize("kw", [{"n_bins": 10}, {"n_bins": 3}, {"bin_size": 7}])
def test_unit_weights_equal_unweighted(kw):
    x, y = make_dev(9, n=1001)
    for cls in (HistogramBinning, ScalingBinning):
        if cls is ScalingBinning and "bin_size" in kw:
            continue
        a = cls(**kw).fit(x, y)
        b = cls(**kw).fit(x, y, sample_weight=np.ones(x.shape[0]))
        np.testing.assert_array_equal(a.predict(x), b.predict(x))


def test_histogram_ties_follow_the_lookup():
    """With tied dev scores (a coarse grid), a tied value is never split between
    bins: predict(dev) is the positive rate of the dev points predicted alike,
    and every bin holds dev points."""
    rng = np.random.default_rng(4)
    x = rng.choice(np.arange(21) / 20, size=3000, p=np.r_[[0.3], np.full(19, 0.02), [0.32]])
    y = (rng.random(3000) < x ** 1.5).astype(np.uint8)
    cal = HistogramBinning(n_bins=10).fit(x, y)
    p = cal.predict(x)
    for v in np.unique(p):
        assert v == y[p == v].mean()
    assert np.unique(p).size == cal.bin_rates_.size
    assert np.isin(cal.bin_rates_, p).all()


# --------------------------------------------------------------------------- #
# Scaling-binning                                                             #
# --------------------------------------------------------------------------- #

def ref_splitmix64(v):
    """SplitMix64's output of the state ``v`` (Steele et al. 2014), on Python ints."""
    mask = (1 << 64) - 1
    z = (v + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def ref_split(n, seed):
    """The dev split of docs/recalibration.md ("Scaling-binning"), one point at a
    time: key = the first uint64 of default_rng(seed); of the pair (2i, 2i+1),
    point 2i goes to the second half iff the top bit of
    splitmix64(splitmix64(key) ^ i) is set, point 2i+1 to the other half."""
    key = int(np.random.default_rng(seed).integers(2 ** 64 - 1, dtype=np.uint64,
                                                   endpoint=True))
    k = ref_splitmix64(key)
    second = [p for p in range(n) if (ref_splitmix64(k ^ (p // 2)) >> 63) ^ (p % 2)]
    first = [p for p in range(n) if p not in set(second)]
    return np.array(first, dtype=np.int64), np.array(second, dtype=np.int64)


def ref_scaling_binning(x, y, n_bins, seed):
    """Kumar, Liang & Ma 2019 scaling-binning with isotonic scaling, brute force:
    the seeded split of docs/architecture.md, Semantics 7, scikit-learn's isotonic regression on the
    first half, equal-mass rank bins of the second half's scaled scores, cuts
    halfway between adjacent bins (at the upper bin's smallest value when they
    touch), a cut dropped where no scaled value would be looked up below it (so
    tied values stay together), and as bin value the mean scaled score of the
    second-half points looked up in the bin (as Kumar et al.'s code re-bins)."""
    first, second = ref_split(len(x), seed)
    iso = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(x[first], y[first])
    z = iso.predict(x[second].astype(np.float64))
    zs = np.sort(z, kind="stable")
    m = len(zs)
    starts = sorted({i * m // n_bins for i in range(n_bins + 1)})
    cuts, touching = [], 0
    for b in range(1, len(starts) - 1):
        below, above = zs[starts[b] - 1], zs[starts[b]]
        half = (below + above) / 2
        touching += below == above
        cuts.append(half if half > below else above)
    cuts = sorted(set(cuts))

    def lookup(c, v):
        return np.array([sum(1 for t in c if t <= vi) for vi in v])

    idx = lookup(cuts, z)
    cuts = [c for k, c in enumerate(cuts) if (idx == k).any()]
    idx = lookup(cuts, z)
    means = np.array([math.fsum(z[idx == k]) / np.count_nonzero(idx == k)
                      for k in range(len(cuts) + 1)])

    def predict(q):
        return means[lookup(cuts, iso.predict(np.asarray(q, dtype=np.float64)))]
    return np.array(cuts), means, predict, touching, z


@pytest.mark.parametrize("seed,n,n_bins", [(0, 4000, 10), (1, 1500, 10), (2, 3001, 5),
                                           (3, 600, 20), (4, 9, 10)])
def test_scaling_binning_against_brute_force(seed, n, n_bins):
    x, y = make_dev(seed + 10, n=n, power=2.0)
    cal = ScalingBinning(n_bins=n_bins, seed=seed).fit(x, y)
    cuts, means, predict, touching, z = ref_scaling_binning(x, y, n_bins, seed)
    if n >= 1000:
        # Isotonic output is a step function: rank cuts fall inside runs of ties,
        # the case the bin statistics must get right.
        assert touching >= 1
    np.testing.assert_allclose(cal.boundaries_, cuts, rtol=1e-12, atol=0)
    np.testing.assert_allclose(cal.bin_values_, means, rtol=1e-12, atol=1e-15)
    q = np.concatenate([x, np.linspace(0, 1, 2001)])
    np.testing.assert_allclose(cal.predict(q), predict(q), rtol=1e-12, atol=1e-15)
    # The outputs are exactly the bin means of the second half's scaled scores:
    # each output value is the mean of the scaled scores of the second-half dev
    # points mapped to it.
    first, second = ref_split(n, seed)
    assert len(first) + len(second) == n and abs(len(first) - len(second)) <= 1
    assert not np.isin(first, second).any()
    p2 = cal.predict(x[second])
    for v in np.unique(p2):
        np.testing.assert_allclose(v, z[p2 == v].mean(), rtol=1e-12)
    assert np.isin(cal.predict(q), cal.bin_values_).all()


def test_scaling_binning_never_depends_on_test_data():
    x, y = make_dev(21, n=3000)
    cal = ScalingBinning(seed=5).fit(x, y)
    state = (cal.boundaries_.copy(), cal.bin_values_.copy())
    rng = np.random.default_rng(0)
    q1 = rng.random(4000)
    q2 = rng.beta(5, 0.3, 4000)                       # a very different test set
    p1 = cal.predict(np.concatenate([q1, q2]))
    np.testing.assert_array_equal(p1[:4000], cal.predict(q1))
    np.testing.assert_array_equal(p1[4000:], cal.predict(q2))
    np.testing.assert_array_equal(state[0], cal.boundaries_)
    np.testing.assert_array_equal(state[1], cal.bin_values_)


def test_scaling_binning_seed_changes_split():
    x, y = make_dev(22, n=3000)
    a = ScalingBinning(seed=0).fit(x, y)
    b = ScalingBinning(seed=0).fit(x, y)
    c = ScalingBinning(seed=1).fit(x, y)
    np.testing.assert_array_equal(a.bin_values_, b.bin_values_)
    np.testing.assert_array_equal(a.x_knots_, b.x_knots_)
    assert not (a.x_knots_.shape == c.x_knots_.shape and np.array_equal(a.x_knots_, c.x_knots_))
    assert not np.array_equal(a.predict(x), c.predict(x))


def test_scaling_binning_split_is_pairwise_and_positional():
    from sparsecal.calibration.scaling_binning import second_half, split_key
    for seed in (0, 1, 7):
        for n in (2, 3, 4, 5, 1001):
            first, second = ref_split(n, seed)
            side = second_half(np.arange(n), split_key(seed))
            np.testing.assert_array_equal(np.flatnonzero(side), second)
            # a point's side depends on its position only, not on n or the others
            np.testing.assert_array_equal(second_half(np.arange(3, n), split_key(seed)),
                                          side[3:])
    # the halves differ between seeds, and both sides are drawn about equally
    sides = second_half(np.arange(0, 20000, 2), split_key(5))
    assert 4800 < sides.sum() < 5200
    assert not np.array_equal(second_half(np.arange(64), split_key(0)),
                              second_half(np.arange(64), split_key(1)))


def test_scaling_binning_two_points_one_in_each_half():
    x, y = np.array([0.2, 0.9]), np.array([0, 1])
    for seed in range(6):
        cal = ScalingBinning(n_bins=3, seed=seed).fit(x, y)
        first, second = ref_split(2, seed)
        assert len(first) == len(second) == 1
        np.testing.assert_array_equal(cal.x_knots_, x[first])
        np.testing.assert_array_equal(cal.y_knots_, y[first].astype(float))


def test_scaling_binning_needs_two_points():
    with pytest.raises(ValueError, match="at least 2"):
        ScalingBinning().fit(np.array([0.5]), np.array([1]))


# --------------------------------------------------------------------------- #
# Platt / prior-weighted logistic regression                                  #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("weighted", [False, True])
def test_platt_equals_sklearn_unregularised(seed, weighted):
    x, y = make_dev(seed + 30, n=2500)
    w = np.random.default_rng(seed).random(x.shape[0]) * 2 if weighted else None
    cal = PlattCalibrator().fit(x, y, sample_weight=w)
    lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10000)
    lr.fit(logit(x)[:, None], y, sample_weight=w)
    assert cal.slope_ == pytest.approx(lr.coef_[0, 0], abs=1e-5)
    assert cal.offset_ == pytest.approx(lr.intercept_[0], abs=1e-5)
    q = np.linspace(0, 1, 1001)
    np.testing.assert_allclose(cal.predict(q), lr.predict_proba(logit(q)[:, None])[:, 1],
                               atol=1e-6)


def pin_data(n, dtype, weighted):
    """Scores on the grid 0, 0.1, ..., 1 (ties; 0 and 1 are clipped by eps) and
    labels drawn from ``0.15 + 0.7 x``."""
    rng = np.random.default_rng(2 + n)
    x = (rng.integers(0, 11, n) / 10).astype(dtype)
    y = (rng.random(n) < 0.15 + 0.7 * x).astype(np.uint8)
    return x, y, rng.random(n) * 2 if weighted else None


#: (n, application_prior, weighted, dtype) -> (slope_, offset_) of PlattCalibrator
#: at commit 9743533, before it became a case of calibration/logistic.py: its own
#: L-BFGS (gtol 1e-12) stopped up to 3.1e-9 from the optimum on these data.
PINNED = {
    (12, None, False, "float32"): (1.410746210752223, 0.18286157456284843),
    (12, None, False, "float64"): (1.4107462284126764, 0.18286158724007118),
    (12, 0.2, True, "float32"): (3.556066362064266, 1.22489768818498),
    (12, 0.2, True, "float64"): (3.556066256825145, 1.2248977414850946),
    (100_000, None, True, "float32"): (0.13628840938790918, -0.003174059373875042),
    (100_000, None, True, "float64"): (0.13628841010877873, -0.00317405972698597),
    (100_000, 0.2, False, "float32"): (0.1290752929453217, 0.005596013997102549),
    (100_000, 0.2, False, "float64"): (0.1290752935948552, 0.005596013857883345),
}


@pytest.mark.parametrize("case", list(PINNED), ids=str)
def test_platt_pinned_to_its_previous_fit_and_to_sklearn(case):
    n, prior, weighted, dtype = case
    x, y, w = pin_data(n, dtype, weighted)
    assert x[y == 0].max() > x[y == 1].min()     # the classes overlap: a finite optimum
    cal = PlattCalibrator(application_prior=prior).fit(x, y, sample_weight=w)
    a, g = PINNED[case]
    assert (cal.slope_, cal.offset_) == pytest.approx((a, g), rel=0, abs=1e-8)
    shift = 0.0 if prior is None else math.log(prior / (1 - prior))
    q = np.linspace(0, 1, 1001).astype(dtype)
    out = cal.predict(q)
    assert out.dtype == dtype
    atol = 1e-7 if dtype == "float32" else 1e-8
    np.testing.assert_allclose(out, expit(a * logit(q) + g + shift), rtol=0, atol=atol)
    # scikit-learn on the log-odds, with the prior weights written out here
    pos = y == 1
    w = np.ones(n) if w is None else w
    if prior is not None:
        w = w * np.where(pos, prior / w[pos].sum(), (1 - prior) / w[~pos].sum()) * n
    lr = LogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-14, max_iter=1000)
    lr.fit(logit(x)[:, None], y, sample_weight=w)
    assert (cal.slope_, cal.offset_) == pytest.approx(
        (lr.coef_[0, 0], lr.intercept_[0] - shift), rel=0, abs=1e-10)
    np.testing.assert_allclose(cal.predict(q.astype(np.float64)),
                               lr.predict_proba(logit(q)[:, None])[:, 1], rtol=0, atol=1e-10)


def lecture_notes_R(params, s, z, prior):
    """R(a, g) of the lecture notes (``004``, prior-weighted logistic regression),
    written out independently: sum_i w_i log(1 + exp(-z_i (a s_i + g +
    log(prior / (1 - prior))))), w_i = prior / n_T or (1 - prior) / n_F."""
    a, g = params
    n_t, n_f = np.sum(z == 1), np.sum(z == -1)
    w = np.where(z == 1, prior / n_t, (1 - prior) / n_f)
    return np.sum(w * np.logaddexp(0.0, -z * (a * s + g + math.log(prior / (1 - prior)))))


@pytest.mark.parametrize("prior", [0.05, 0.3, 0.5, 0.9])
def test_platt_prior_weighted_minimises_lecture_notes_objective(prior):
    x, y = make_dev(40, n=3000, power=1.3)
    cal = PlattCalibrator(application_prior=prior).fit(x, y)
    s, z = logit(x), np.where(y == 1, 1, -1)
    ref = minimize(lecture_notes_R, np.array([0.5, 0.5]), args=(s, z, prior),
                   method="Nelder-Mead",
                   options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20000})
    assert cal.slope_ == pytest.approx(ref.x[0], abs=1e-5)
    assert cal.offset_ == pytest.approx(ref.x[1], abs=1e-5)
    assert lecture_notes_R([cal.slope_, cal.offset_], s, z, prior) <= ref.fun + 1e-12
    # llr() is the affine calibrated LLR, predict() its posterior at the prior.
    q = np.linspace(0, 1, 501)
    np.testing.assert_allclose(cal.llr(q), cal.slope_ * logit(q) + cal.offset_, rtol=1e-13)
    np.testing.assert_allclose(cal.predict(q),
                               expit(cal.llr(q) + math.log(prior / (1 - prior))), rtol=1e-13)


def test_platt_prior_at_dev_rate_equals_plain_ml():
    """With the application prior equal to the dev positive rate the weights are
    1/n for every point: the same fit as plain maximum likelihood."""
    x, y = make_dev(41, n=3000)
    a = PlattCalibrator().fit(x, y)
    b = PlattCalibrator(application_prior=float(y.mean())).fit(x, y)
    q = np.linspace(0, 1, 501)
    np.testing.assert_allclose(a.predict(q), b.predict(q), rtol=0, atol=1e-13)


@pytest.mark.parametrize("prior", [None, 0.2])
def test_platt_is_prior_weighted_logistic(prior):
    """One fit: with a prior, PriorWeightedLogistic(training_prior=prior) bit for
    bit; without, its slope, and its offset plus the dev log-odds."""
    x, y = make_dev(43, n=3000)
    w = np.random.default_rng(3).random(x.shape[0])
    platt = PlattCalibrator(application_prior=prior).fit(x, y, sample_weight=w)
    pwl = PriorWeightedLogistic(training_prior=prior).fit(x, y, sample_weight=w)
    p = pwl.training_prior_
    assert platt.slope_ == pwl.slope_
    assert platt.offset_ == pwl.offset_ + (0.0 if prior else np.log(p) - np.log1p(-p))
    q = np.linspace(0, 1, 501)
    np.testing.assert_allclose(platt.predict(q), pwl.predict(q), rtol=1e-14, atol=0)
    if prior is not None:
        assert platt.predict(q).tobytes() == pwl.predict(q).tobytes()
        assert platt.llr(q).tobytes() == pwl.llr(q).tobytes()


def test_platt_strictly_increasing_and_errors():
    x, y = make_dev(42, n=3000)
    cal = PlattCalibrator().fit(x, y)
    assert cal.slope_ > 0
    q = np.linspace(0.001, 0.999, 999)
    assert (np.diff(cal.predict(q)) > 0).all()
    with pytest.raises(ValueError, match=r"application_prior must lie in \(0, 1\), got 0.0"):
        PlattCalibrator(application_prior=0.0).fit(x, y)


@pytest.mark.parametrize("cls", [PlattCalibrator, PriorWeightedLogistic])
@pytest.mark.parametrize("prior", [None, 0.3])
def test_logistic_refuses_one_class_and_equal_scores(cls, prior):
    """The shared rule of calibration/logistic.py: a DegenerateDataError (which
    GroupedCalibrator treats as a group under min_entries)."""
    x, y = make_dev(44, n=300)
    cal = cls(**{"application_prior" if cls is PlattCalibrator else "training_prior": prior})
    one_class = "both positive and negative dev labels"
    for labels in (np.ones_like(y), np.zeros_like(y)):
        with pytest.raises(DegenerateDataError, match=one_class):
            cal.fit(x, labels)
    with pytest.raises(DegenerateDataError, match=one_class):   # the positives weigh 0
        cal.fit(x, y, sample_weight=(y == 0).astype(float))
    for scores, w in ((np.full(300, 0.7), None),
                      (np.r_[0.2, np.full(299, 0.7)], np.r_[0.0, np.ones(299)]),
                      (np.r_[0.0, np.full(299, 1e-9)], None)):   # equal after clipping
        with pytest.raises(DegenerateDataError, match="zero variance"):
            cal.fit(scores, y, sample_weight=w)
    # two values, each with both classes, one of little weight: the saturated fit
    scores, labels = np.r_[0.2, 0.2, np.full(298, 0.7)], np.r_[0, 1, y[2:]]
    cal.fit(scores, labels, sample_weight=np.r_[0.01, 0.01, np.ones(298)])
    rate = labels[2:].mean()   # and 1/2 at 0.2: the slope is free of the prior weights
    assert cal.slope_ == pytest.approx(logit(rate) / (logit(0.7) - logit(0.2)), rel=1e-7)


# --------------------------------------------------------------------------- #
# Properties of every calibrator                                              #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_output_range_and_dtype(cls, dtype):
    x, y = make_dev(50, n=2000, dtype=dtype)
    cal = cls().fit(x, y)
    q = np.concatenate([np.linspace(0, 1, 1001), x]).astype(dtype)
    p = cal.predict(q)
    assert p.dtype == dtype
    assert np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()


@pytest.mark.parametrize("cls", ALL)
def test_no_test_leakage(cls):
    """A test score's calibrated value depends on that score only: permuting or
    subsetting the test set permutes / subsets the predictions exactly."""
    x, y = make_dev(51, n=3000)
    cal = cls().fit(x, y)
    rng = np.random.default_rng(1)
    q = np.concatenate([rng.random(3000), x[:500], [0.0, 1.0]])
    full = cal.predict(q)
    perm = rng.permutation(q.shape[0])
    np.testing.assert_array_equal(cal.predict(q[perm]), full[perm])
    sub = rng.choice(q.shape[0], 37, replace=False)
    np.testing.assert_array_equal(cal.predict(q[sub]), full[sub])
    np.testing.assert_array_equal(np.concatenate([cal.predict(q[i:i + 1]) for i in range(20)]),
                                  full[:20])


@pytest.mark.parametrize("cls", ALL)
def test_clone_state_and_not_fitted(cls):
    x, y = make_dev(52, n=1000)
    cal = cls().fit(x, y)
    fresh = clone(cal)
    assert type(fresh) is cls and fresh.get_params() == cal.get_params()
    assert not fresh.__sklearn_is_fitted__()
    with pytest.raises(NotFittedError):
        fresh.predict(x)
    meta, arrays = cal.get_state()
    back = calibrator_class(cls.__name__).from_state(meta, arrays)
    np.testing.assert_array_equal(back.predict(x), cal.predict(x))


@pytest.mark.parametrize("cls", ALL)
def test_bad_inputs(cls):
    with pytest.raises(ValueError):
        cls().fit(np.array([0.2, 1.5]), np.array([0, 1]))
    with pytest.raises(ValueError):
        cls().fit(np.array([0.2, np.nan]), np.array([0, 1]))
    with pytest.raises(ValueError):
        cls().fit(np.array([0.2, 0.3]), np.array([0, 2]))
    with pytest.raises(ValueError):
        cls().fit(np.array([]), np.array([]))
    x, y = make_dev(53, n=100)
    cal = cls().fit(x, y)
    with pytest.raises(ValueError):
        cal.predict(np.array([0.5, -0.1]))


@pytest.mark.parametrize("scores, labels, exc, match", [
    (np.array([0.2, 0.7]), None, TypeError, "labels is required, got None"),
    (None, np.array([0, 1]), TypeError, "scores is required, got None"),
    (np.array([0.2, 0.7]), np.array([0, 2]), ValueError, r"labels\[1\] = 2$"),
    (np.array([0.2, 1.5]), np.array([0, 1]), ValueError, r"scores\[1\] = 1\.5$"),
])
def test_fit_names_missing_and_bad_arguments_plainly(scores, labels, exc, match):
    with pytest.raises(exc, match=match):
        IsotonicCalibrator().fit(scores, labels)


def test_fit_refuses_sparse_input_with_the_fix():
    sparse = pytest.importorskip("scipy.sparse")
    x = sparse.csr_matrix(np.array([[0.2], [0.7]]))
    with pytest.raises(TypeError, match=r"scores is a sparse matrix; pass a dense array "
                                        r"\(scores\.toarray\(\)\)"):
        IsotonicCalibrator().fit(x, np.array([0, 1]))
