"""Tests of equal-mass and fixed-width binning and bin lookup (docs/architecture.md, Semantics 2
and 7) against brute-force Python references."""
import numpy as np
import pytest

from sparsecal.core import BinStats, equal_mass_bins, fixed_width_bins
from sparsecal.core.binning import equal_mass_bin_starts, lookup_bins, segment_bin_starts

DTYPES = [np.float32, np.float64]


pytestmark = pytest.mark.usefixtures("one_thread_by_default")


# --------------------------------------------------------------------------- #
# References                                                                   #
# --------------------------------------------------------------------------- #

def ref_starts(n, n_bins=None, bin_size=None):
    """Nguyen & O'Connor 2015, Algorithm 1, spelled out."""
    if bin_size is not None:
        starts = list(range(0, n, bin_size)) + [n]   # the last bin may be short
        if len(starts) > 2 and starts[-1] - starts[-2] < bin_size:
            del starts[-2]                          # merge it into the previous bin
        return starts
    starts = []
    for i in range(n_bins + 1):
        s = (i * n) // n_bins                        # exact Python integers
        if not starts or s != starts[-1]:            # empty bins are dropped
            starts.append(s)
    return starts


def seq_sum(a):
    """Left-to-right float64 sum (the order the kernels add in)."""
    a = np.asarray(a, dtype=np.float64)
    return float(np.cumsum(a)[-1]) if a.size else 0.0


def ref_equal_mass(x, y, starts):
    x = np.asarray(x)
    order = np.argsort(x, kind="stable")
    xs = x[order].astype(np.float64)
    ys = np.asarray(y)[order].astype(np.float64)
    out = {k: [] for k in ("count", "sum_score", "sum_label", "lower", "upper")}
    for a, b in zip(starts[:-1], starts[1:]):
        out["count"].append(b - a)
        out["sum_score"].append(seq_sum(xs[a:b]))
        out["sum_label"].append(seq_sum(ys[a:b]))
        out["lower"].append(xs[a])
        out["upper"].append(xs[b - 1])
    return {k: np.array(v) for k, v in out.items()}


def ref_fixed_bin_index(x, n_bins):
    edges = np.arange(n_bins + 1) / n_bins
    idx = np.searchsorted(edges, np.asarray(x, dtype=np.float64), side="right") - 1
    return np.minimum(idx, n_bins - 1)          # 1.0 belongs to the last bin


def ref_fixed(x, y, n_bins):
    idx = ref_fixed_bin_index(x, n_bins)
    x64 = np.asarray(x, dtype=np.float64)
    out = {"count": np.bincount(idx, minlength=n_bins),
           "sum_score": np.array([seq_sum(x64[idx == b]) for b in range(n_bins)]),
           "sum_label": np.array([seq_sum(np.asarray(y)[idx == b])
                                  for b in range(n_bins)]),
           "lower": np.array([x64[idx == b].min() if (idx == b).any() else np.nan
                              for b in range(n_bins)]),
           "upper": np.array([x64[idx == b].max() if (idx == b).any() else np.nan
                              for b in range(n_bins)])}
    return out


def assert_stats_equal(stats, ref):
    assert isinstance(stats, BinStats)
    assert stats.count.dtype == np.int64
    for k in ("sum_score", "sum_label", "lower", "upper"):
        assert getattr(stats, k).dtype == np.float64
    for k, v in ref.items():
        np.testing.assert_array_equal(getattr(stats, k), v, err_msg=k)
    assert stats.n_bins == len(ref["count"])


def assert_same_stats(a, b):
    for k in ("count", "sum_score", "sum_label", "lower", "upper"):
        np.testing.assert_array_equal(getattr(a, k), getattr(b, k), err_msg=k)


def random_scores(rng, n, dtype, ties="some"):
    if ties == "heavy":
        x = rng.integers(0, 6, size=n) / 5.0
    elif ties == "none":
        x = rng.permutation(np.linspace(0, 1, n)) if n > 1 else np.array([0.5])
    else:
        x = rng.random(n) ** 2
        x[rng.random(n) < 0.2] = 0.5
        x[rng.random(n) < 0.05] = 1.0
        x[rng.random(n) < 0.05] = 0.0
    return x.astype(dtype)


# --------------------------------------------------------------------------- #
# equal_mass_bin_starts                                                        #
# --------------------------------------------------------------------------- #

def test_starts_n_bins_exhaustive():
    for n in range(1, 80):
        for B in range(1, 25):
            got = equal_mass_bin_starts(n, n_bins=B)
            assert got.dtype == np.int64
            assert got.tolist() == ref_starts(n, n_bins=B), (n, B)
            sizes = np.diff(got)
            assert sizes.min() >= 1 and sizes.max() - sizes.min() <= 1
            assert len(sizes) == min(n, B)


def test_starts_bin_size_exhaustive():
    for n in range(1, 80):
        for k in range(1, 25):
            got = equal_mass_bin_starts(n, bin_size=k)
            assert got.dtype == np.int64
            assert got.tolist() == ref_starts(n, bin_size=k), (n, k)
            sizes = np.diff(got)
            assert got[0] == 0 and got[-1] == n and (sizes >= 1).all()
            if n >= k:
                assert (sizes[:-1] == k).all() and k <= sizes[-1] < 2 * k


@pytest.mark.parametrize("B", [1, 2, 3, 7, 10, 20, 100])
def test_starts_around_bin_count(B):
    for n in {1, max(1, B - 1), B, B + 1, 2 * B - 1, 2 * B + 1, 1000 * B - 1,
              1000 * B + 1}:
        assert equal_mass_bin_starts(n, n_bins=B).tolist() == ref_starts(n, n_bins=B)


@pytest.mark.parametrize("k", [1, 2, 10, 100, 1000])
def test_starts_around_bin_size_multiples(k):
    for m in (1, 2, 3, 17):
        for n in {max(1, m * k - 1), m * k, m * k + 1}:
            assert (equal_mass_bin_starts(n, bin_size=k).tolist()
                    == ref_starts(n, bin_size=k))


def test_starts_large_n_exact():
    n = 5 * 10**8 + 7
    for B in (7, 10, 1000):
        assert equal_mass_bin_starts(n, n_bins=B).tolist() == ref_starts(n, n_bins=B)
    assert equal_mass_bin_starts(n, bin_size=10**8).tolist() == ref_starts(
        n, bin_size=10**8)


@pytest.mark.parametrize("bins", [dict(n_bins=1), dict(n_bins=3), dict(n_bins=10),
                                  dict(bin_size=1), dict(bin_size=4), dict(bin_size=200)])
def test_segment_starts_are_each_segments_own(bins):
    """Every segment binned alone, at sizes on each side of the bin count / size."""
    rng = np.random.default_rng(3)
    edge = bins.get("n_bins") or bins["bin_size"]
    for sizes in ([1], [edge], [edge - 1 or 1, edge, edge + 1, 2 * edge - 1, 2 * edge],
                  rng.integers(1, 5 * edge, 50), [10 ** 9 if "n_bins" in bins else 10 ** 5, 3]):
        starts, first = segment_bin_starts(sizes, **bins)
        offsets = np.concatenate(([0], np.cumsum(sizes)))
        assert starts.dtype == first.dtype == np.int64 and starts[-1] == offsets[-1]
        for s, n in enumerate(sizes):
            own = starts[first[s]:first[s + 1] + 1] - offsets[s]
            assert own.tolist() == equal_mass_bin_starts(n, **bins).tolist(), (sizes, s)


def test_starts_examples():
    assert equal_mass_bin_starts(25, bin_size=10).tolist() == [0, 10, 25]
    assert equal_mass_bin_starts(30, bin_size=10).tolist() == [0, 10, 20, 30]
    assert equal_mass_bin_starts(5, bin_size=10).tolist() == [0, 5]
    assert equal_mass_bin_starts(10, n_bins=4).tolist() == [0, 2, 5, 7, 10]
    assert equal_mass_bin_starts(3, n_bins=10).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("kwargs", [{}, {"n_bins": 3, "bin_size": 3}])
def test_starts_exactly_one_of(kwargs):
    with pytest.raises(ValueError, match="exactly one"):
        equal_mass_bin_starts(10, **kwargs)


@pytest.mark.parametrize("kwargs", [{"n_bins": 0}, {"n_bins": -1}, {"n_bins": 2.5},
                                    {"n_bins": True}, {"bin_size": 0},
                                    {"bin_size": 1.0}])
def test_starts_bad_sizes(kwargs):
    with pytest.raises(ValueError, match="positive integer"):
        equal_mass_bin_starts(10, **kwargs)


@pytest.mark.parametrize("n", [0, -3])
def test_starts_empty(n):
    with pytest.raises(ValueError, match="empty"):
        equal_mass_bin_starts(n, n_bins=3)


def test_starts_numpy_integers():
    assert (equal_mass_bin_starts(np.int64(10), n_bins=np.int32(4)).tolist()
            == [0, 2, 5, 7, 10])


# --------------------------------------------------------------------------- #
# equal_mass_bins                                                              #
# --------------------------------------------------------------------------- #

def _n_values_n_bins():
    cases = []
    for B in (1, 2, 3, 10, 15):
        for n in sorted({1, max(1, B - 1), B, B + 1, 3 * B - 1, 3 * B + 1, 997}):
            cases.append((n, B))
    return cases


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ties", ["some", "heavy", "none"])
@pytest.mark.parametrize("n, B", _n_values_n_bins())
def test_equal_mass_n_bins(dtype, ties, n, B):
    rng = np.random.default_rng(n * 100 + B)
    x = random_scores(rng, n, dtype, ties)
    y = (rng.random(n) < x).astype(np.uint8)
    stats = equal_mass_bins(x, y, n_bins=B)
    assert_stats_equal(stats, ref_equal_mass(x, y, ref_starts(n, n_bins=B)))
    assert stats.edges is None
    assert stats.count.sum() == n


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [1, 4, 10, 50])
@pytest.mark.parametrize("m", [1, 2, 5])
@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_equal_mass_bin_size(dtype, k, m, delta):
    n = max(1, m * k + delta)
    rng = np.random.default_rng(n * 7 + k)
    x = random_scores(rng, n, dtype, "heavy" if k % 2 else "some")
    y = (rng.random(n) < 0.3).astype(np.uint8)
    stats = equal_mass_bins(x, y, bin_size=k)
    assert_stats_equal(stats, ref_equal_mass(x, y, ref_starts(n, bin_size=k)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_equal_mass_default_ten_bins(dtype):
    rng = np.random.default_rng(3)
    x = random_scores(rng, 123, dtype)
    y = rng.random(123) < 0.5
    stats = equal_mass_bins(x, y)
    assert stats.n_bins == 10
    assert_stats_equal(stats, ref_equal_mass(x, y, ref_starts(123, n_bins=10)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_equal_mass_ties_split_by_rank_in_entry_order(dtype):
    # six tied scores, two bins: ranks 0..2 and 3..5, the tie broken by entry order
    x = np.full(6, 0.5, dtype=dtype)
    y = np.array([1, 1, 1, 0, 0, 0], dtype=np.uint8)
    stats = equal_mass_bins(x, y, n_bins=2)
    np.testing.assert_array_equal(stats.count, [3, 3])
    np.testing.assert_array_equal(stats.sum_label, [3, 0])
    np.testing.assert_array_equal(stats.lower, [0.5, 0.5])
    np.testing.assert_array_equal(stats.upper, [0.5, 0.5])


@pytest.mark.parametrize("dtype", DTYPES)
def test_equal_mass_single_and_all_equal(dtype):
    s = equal_mass_bins(np.array([0.3], dtype=dtype), [1], n_bins=10)
    np.testing.assert_array_equal(s.count, [1])
    np.testing.assert_array_equal(s.sum_score, [np.float64(dtype(0.3))])
    np.testing.assert_array_equal(s.sum_label, [1])
    x = np.full(25, 0.7, dtype=dtype)
    y = np.arange(25) % 2
    s = equal_mass_bins(x, y, bin_size=10)
    np.testing.assert_array_equal(s.count, [10, 15])
    np.testing.assert_array_equal(s.sum_label, [5, 7])
    assert_stats_equal(s, ref_equal_mass(x, y, [0, 10, 25]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_equal_mass_order_independent_for_distinct_scores(dtype):
    rng = np.random.default_rng(4)
    x = random_scores(rng, 1001, dtype, "none")
    assert np.unique(x).size == x.size
    y = (rng.random(1001) < x).astype(np.uint8)
    base = equal_mass_bins(x, y, n_bins=13)
    for seed in range(3):
        p = np.random.default_rng(seed).permutation(x.size)
        assert_same_stats(equal_mass_bins(x[p], y[p], n_bins=13), base)
        assert_same_stats(equal_mass_bins(x[p], y[p], n_bins=13, n_threads=2), base)


def test_equal_mass_float32_float64_identical():
    rng = np.random.default_rng(5)
    x32 = random_scores(rng, 2001, np.float32, "some")
    y = rng.random(2001) < 0.4
    for kw in ({"n_bins": 7}, {"bin_size": 100}):
        assert_same_stats(equal_mass_bins(x32, y, **kw),
                          equal_mass_bins(x32.astype(np.float64), y, **kw))


def test_equal_mass_label_dtypes_equivalent():
    rng = np.random.default_rng(6)
    x = random_scores(rng, 300, np.float64)
    y = rng.random(300) < 0.5
    base = equal_mass_bins(x, y, n_bins=9)
    for yy in (y.astype(np.uint8), y.astype(np.int64), y.astype(np.float32), list(y)):
        assert_same_stats(equal_mass_bins(x, yy, n_bins=9), base)


def test_equal_mass_threads_identical_and_noncontiguous():
    rng = np.random.default_rng(7)
    base_x = random_scores(rng, 6000, np.float64, "heavy")
    base_y = (rng.random(6000) < 0.5).astype(np.uint8)
    x, y = base_x[::2], base_y[::2]
    ref = ref_equal_mass(x, y, ref_starts(3000, n_bins=10))
    for k in (1, 2, 3):
        assert_stats_equal(equal_mass_bins(x, y, n_bins=10, n_threads=k), ref)


def test_equal_mass_inputs_unmodified():
    rng = np.random.default_rng(8)
    x = random_scores(rng, 500, np.float32)
    y = rng.random(500) < 0.5
    xc, yc = x.copy(), y.copy()
    x.flags.writeable = False
    y.flags.writeable = False
    equal_mass_bins(x, y, n_bins=10)
    np.testing.assert_array_equal(x, xc)
    np.testing.assert_array_equal(y, yc)


def test_mean_properties():
    stats = equal_mass_bins([0.1, 0.2, 0.3, 0.9], [0, 1, 1, 1], n_bins=2)
    np.testing.assert_allclose(stats.mean_score, [0.15, 0.6])
    np.testing.assert_allclose(stats.mean_label, [0.5, 1.0])
    fw = fixed_width_bins([0.05, 0.3], [1, 0], n_bins=4)
    np.testing.assert_array_equal(np.isnan(fw.mean_score), [False, False, True, True])
    np.testing.assert_array_equal(fw.mean_label[:2], [1.0, 0.0])


@pytest.mark.parametrize("func", [equal_mass_bins, fixed_width_bins])
@pytest.mark.parametrize("dtype", DTYPES)
def test_binning_empty_raises(func, dtype):
    with pytest.raises(ValueError, match="empty"):
        func(np.array([], dtype=dtype), np.array([], dtype=np.uint8))


@pytest.mark.parametrize("func", [equal_mass_bins, fixed_width_bins])
@pytest.mark.parametrize("bad, match", [(np.nan, "NaN"), (np.inf, r"\[0, 1\]"),
                                        (-0.1, r"\[0, 1\]"), (1.1, r"\[0, 1\]")])
def test_binning_bad_scores(func, bad, match):
    x = np.array([0.1, 0.5, bad, 0.2])
    with pytest.raises(ValueError, match=match):
        func(x, [0, 1, 0, 1])


@pytest.mark.parametrize("func", [equal_mass_bins, fixed_width_bins])
def test_binning_bad_labels(func):
    x = np.array([0.1, 0.5, 0.2])
    with pytest.raises(ValueError, match="0 or 1"):
        func(x, [0, 2, 1])
    with pytest.raises(ValueError, match="labels"):
        func(x, [0, 1])
    with pytest.raises(ValueError, match="labels"):
        func(x, [[0, 1, 1]])
    with pytest.raises(ValueError, match="1-dimensional"):
        func(np.zeros((3, 1)), [0, 1, 1])


def test_equal_mass_bad_bin_args():
    x, y = [0.1, 0.2, 0.3], [0, 1, 0]
    with pytest.raises(ValueError, match="exactly one"):
        equal_mass_bins(x, y, n_bins=2, bin_size=2)
    with pytest.raises(ValueError, match="positive integer"):
        equal_mass_bins(x, y, n_bins=0)
    with pytest.raises(ValueError, match="positive integer"):
        fixed_width_bins(x, y, n_bins=0)


# --------------------------------------------------------------------------- #
# fixed_width_bins                                                             #
# --------------------------------------------------------------------------- #

def edge_heavy_scores(rng, n, B, dtype):
    """Scores on and next to the bin edges (as linspace and as i/B compute them),
    plus 0, 1 and random values."""
    cand = [np.linspace(0.0, 1.0, B + 1), np.arange(B + 1) / B, np.arange(B + 1) * (1.0 / B),
            np.array([0.0, 1.0, 0.3, 0.1 * 3, 0.7, 0.1 * 7])]
    cand = np.concatenate(cand).astype(dtype)
    near = np.concatenate([np.nextafter(cand, dtype(0)), np.nextafter(cand, dtype(1))])
    cand = np.concatenate([cand, near])
    cand = cand[(cand >= 0) & (cand <= 1)]
    x = np.concatenate([cand, rng.random(n).astype(dtype)])
    return rng.permutation(x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("B", [1, 2, 3, 7, 10, 20, 49, 100])
def test_fixed_width_vs_reference(dtype, B):
    rng = np.random.default_rng(B)
    x = edge_heavy_scores(rng, 400, B, dtype)
    y = (rng.random(x.size) < 0.5).astype(np.uint8)
    stats = fixed_width_bins(x, y, n_bins=B)
    assert_stats_equal(stats, ref_fixed(x, y, B))
    np.testing.assert_array_equal(stats.edges, np.arange(B + 1) / B)
    np.testing.assert_array_equal(stats.boundaries(), (np.arange(B + 1) / B)[1:-1])
    # the bins of lookup_bins agree with the bins of the statistics
    idx = lookup_bins(x, stats.boundaries())
    np.testing.assert_array_equal(idx, ref_fixed_bin_index(x, B))
    np.testing.assert_array_equal(np.bincount(idx, minlength=B), stats.count)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fixed_width_empty_bins(dtype):
    x = np.array([0.05, 0.06, 0.95, 1.0], dtype=dtype)
    stats = fixed_width_bins(x, [1, 0, 1, 1], n_bins=10)
    np.testing.assert_array_equal(stats.count, [2, 0, 0, 0, 0, 0, 0, 0, 0, 2])
    assert np.isnan(stats.lower[1:9]).all() and np.isnan(stats.upper[1:9]).all()
    np.testing.assert_array_equal(stats.sum_score[1:9], 0)
    np.testing.assert_array_equal(stats.sum_label, [1, 0, 0, 0, 0, 0, 0, 0, 0, 2])
    assert stats.upper[9] == 1.0 and stats.lower[9] == np.float64(dtype(0.95))


@pytest.mark.parametrize("dtype", DTYPES)
def test_fixed_width_single_and_all_equal(dtype):
    for v in (0.0, 0.5, 1.0):
        stats = fixed_width_bins(np.full(5, v, dtype=dtype), np.ones(5), n_bins=4)
        b = min(int(v * 4), 3)
        assert stats.count[b] == 5 and stats.count.sum() == 5
        assert stats.lower[b] == stats.upper[b] == v
    stats = fixed_width_bins(np.array([0.5], dtype=dtype), [0], n_bins=1)
    np.testing.assert_array_equal(stats.count, [1])


def test_fixed_width_float32_float64_identical_and_order():
    rng = np.random.default_rng(9)
    x32 = edge_heavy_scores(rng, 1000, 10, np.float32)
    y = rng.random(x32.size) < 0.5
    a = fixed_width_bins(x32, y, n_bins=10)
    b = fixed_width_bins(x32.astype(np.float64), y, n_bins=10)
    assert_same_stats(a, b)
    # counts, label sums and extrema do not depend on input order
    p = rng.permutation(x32.size)
    c = fixed_width_bins(x32[p], y[p], n_bins=10)
    for k in ("count", "sum_label", "lower", "upper"):
        np.testing.assert_array_equal(getattr(a, k), getattr(c, k))
    np.testing.assert_allclose(a.sum_score, c.sum_score, rtol=1e-12)


# --------------------------------------------------------------------------- #
# lookup_bins and BinStats.boundaries                                          #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n_bounds", [0, 1, 2, 9, 100])
def test_lookup_matches_searchsorted(dtype, n_bounds):
    rng = np.random.default_rng(n_bounds)
    b = np.sort(rng.random(n_bounds))
    if n_bounds > 3:
        b[2] = b[3]           # duplicated boundary: an empty bin
        b = np.sort(b)
    x = np.concatenate([rng.random(1000), b, np.nextafter(b, 0), np.nextafter(b, 1),
                        [0.0, 1.0]]).astype(dtype)
    x = x[(x >= 0) & (x <= 1)]
    ref = np.searchsorted(b, x, side="right")
    for k in (1, 2):
        got = lookup_bins(x, b, n_threads=k)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, ref)


def test_lookup_float32_scores_vs_float64_boundaries():
    # a float32 score is compared with the float64 boundary exactly
    b = np.array([0.1, 0.3])            # float32(0.1) > 0.1, float32(0.3) > 0.3
    x = np.array([0.1, 0.3], dtype=np.float32)
    np.testing.assert_array_equal(lookup_bins(x, b), np.searchsorted(b, x, "right"))
    np.testing.assert_array_equal(lookup_bins(x, b), [1, 2])


def test_lookup_empty_scores():
    out = lookup_bins(np.array([], dtype=np.float32), [0.5])
    assert out.shape == (0,) and out.dtype == np.int64


@pytest.mark.parametrize("bounds, match", [([0.5, 0.2], "sorted"),
                                           ([0.2, np.nan], "NaN"),
                                           ([[0.2, 0.5]], "1-dimensional")])
def test_lookup_bad_boundaries(bounds, match):
    with pytest.raises(ValueError, match=match):
        lookup_bins([0.1, 0.4], bounds)


@pytest.mark.parametrize("bad", [np.nan, -0.1, 1.5])
def test_lookup_bad_scores(bad):
    with pytest.raises(ValueError, match="scores"):
        lookup_bins([0.1, bad], [0.5])


def _check_boundaries_cover(stats, dev_x, dtype):
    bounds = stats.boundaries()
    assert bounds.shape == (stats.n_bins - 1,)
    assert (np.diff(bounds) >= 0).all()
    # every score in [0, 1] gets a bin in range, 1.0 and values outside the dev
    # range included
    grid = np.concatenate([np.linspace(0, 1, 1001), [0.0, 1.0], dev_x,
                           np.nextafter(dev_x, 0), np.nextafter(dev_x, 1)])
    grid = np.clip(grid, 0, 1).astype(dtype)
    idx = lookup_bins(grid, bounds)
    assert idx.min() >= 0 and idx.max() <= stats.n_bins - 1
    if stats.n_bins == 1 or stats.lower[1] > 0:   # 0.0 not tied across a boundary
        assert lookup_bins(np.array([0.0], dtype), bounds)[0] == 0
    assert lookup_bins(np.array([1.0], dtype), bounds)[0] == stats.n_bins - 1
    # monotone in the score
    order = np.argsort(grid, kind="stable")
    assert (np.diff(idx[order]) >= 0).all()
    np.testing.assert_array_equal(idx, np.searchsorted(bounds, grid, side="right"))


def _check_dev_scores_own_bin(stats, x, starts):
    """A dev score whose value lies in one bin only maps to that bin; a value
    tied across a boundary maps to one of the bins holding it."""
    xs = np.sort(x, kind="stable")
    rank_bin = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
    idx = lookup_bins(xs, stats.boundaries())
    for v in np.unique(xs):
        bins_of_v = np.unique(rank_bin[xs == v])
        got = np.unique(idx[xs == v])
        assert got.size == 1
        if bins_of_v.size == 1:
            assert got[0] == bins_of_v[0], (v, got, bins_of_v)
        else:
            assert bins_of_v[0] <= got[0] <= bins_of_v[-1]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ties", ["some", "heavy", "none"])
@pytest.mark.parametrize("n, B", [(1, 10), (9, 10), (10, 10), (11, 10), (500, 10),
                                  (37, 3), (200, 1)])
def test_equal_mass_boundaries_and_lookup(dtype, ties, n, B):
    rng = np.random.default_rng(n + B)
    x = random_scores(rng, n, dtype, ties)
    y = rng.random(n) < 0.5
    stats = equal_mass_bins(x, y, n_bins=B)
    _check_boundaries_cover(stats, x, dtype)
    _check_dev_scores_own_bin(stats, x, ref_starts(n, n_bins=B))


@pytest.mark.parametrize("dtype", DTYPES)
def test_boundaries_between_adjacent_floats(dtype):
    # Bin edges between two adjacent representable scores: halfway can round
    # onto the lower score; each score must still map to its own bin.
    cases = []
    for a in (0.5, 0.25, 0.75, 0.1, 0.3, 1e-3, np.nextafter(0.5, 0)):
        a = dtype(a)
        b = np.nextafter(a, dtype(1))
        cases.append((a, b))
    for a, b in cases:
        x = np.array([0.0, a / 2, a, b, (b + 1) / 2, 1.0], dtype=dtype)
        stats = equal_mass_bins(x, np.zeros(6, dtype=np.uint8), n_bins=2)
        assert stats.upper[0] == a and stats.lower[1] == b
        got = lookup_bins(x, stats.boundaries())
        np.testing.assert_array_equal(got, [0, 0, 0, 1, 1, 1], err_msg=repr((a, b)))
        _check_dev_scores_own_bin(stats, x, [0, 3, 6])
    # many bins on a dense run of adjacent floats
    x = np.array([dtype(0.5)], dtype=dtype)
    run = [x[0]]
    for _ in range(59):
        run.append(np.nextafter(run[-1], dtype(1)))
    x = np.array(run, dtype=dtype)
    stats = equal_mass_bins(x, np.zeros(60, dtype=np.uint8), n_bins=60)
    np.testing.assert_array_equal(lookup_bins(x, stats.boundaries()), np.arange(60))


def test_boundaries_with_tie_across_bins():
    x = np.array([0.1, 0.4, 0.4, 0.4, 0.9, 0.95])
    stats = equal_mass_bins(x, np.zeros(6), n_bins=2)
    # 0.4 is in both bins: the cut is at 0.4, so all three go to the upper bin
    np.testing.assert_array_equal(stats.boundaries(), [0.4])
    np.testing.assert_array_equal(lookup_bins(x, stats.boundaries()),
                                  [0, 1, 1, 1, 1, 1])


def test_boundaries_single_bin():
    stats = equal_mass_bins([0.3, 0.6], [0, 1], n_bins=1)
    assert stats.boundaries().shape == (0,)
    np.testing.assert_array_equal(lookup_bins([0.0, 0.3, 1.0], stats.boundaries()),
                                  [0, 0, 0])


def test_fixed_width_edge_value_falls_in_the_bin_it_starts():
    """0.3 is the left edge of [0.3, 0.4): it belongs to bin 3 of 10 (linspace's
    0.30000000000000004 would put it in bin 2)."""
    stats = fixed_width_bins(np.array([0.3, 0.7, 0.1]), np.array([1, 0, 0]), n_bins=10)
    assert stats.count[3] == 1 and stats.count[7] == 1 and stats.count[1] == 1


def _listed_cuts_starts(cum, k, step, denom):
    """The weighted bin starts by listing all k - 1 cuts (the former O(k) code)."""
    cuts = np.arange(1, k) * step * cum[-1] / denom
    return np.unique(np.concatenate(([0], np.searchsorted(cum, cuts, side="right"),
                                     [cum.shape[0]])))


@pytest.mark.parametrize("seed", range(40))
def test_weighted_starts_equal_listing_the_cuts(seed):
    # Bisection over the cut index gives the bins that listing every cut gave,
    # for bin counts below, at and far above the number of points.
    from sparsecal.core.binning import _weighted_starts
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    w = rng.choice([0.1, 1.0, 1e-9, 3.0, 0.3], n) * rng.integers(1, 4, n)
    cum = np.cumsum(w)
    for k in (1, 2, 3, 10, n, n + 1, 3 * n, 1000):
        np.testing.assert_array_equal(_weighted_starts(cum, k, 1, k),
                                      _listed_cuts_starts(cum, k, 1, k))
    for bin_size in (1, 2, 5, n):
        k = max(n // bin_size, 1)
        np.testing.assert_array_equal(_weighted_starts(cum, k, bin_size, n),
                                      _listed_cuts_starts(cum, k, bin_size, n))


def test_bin_counts_above_the_number_of_scores():
    # Equal-mass: more bins than scores is one score per bin, computed in O(n)
    # (n_bins=10**12 once tried to allocate terabytes); fixed-width bins keep
    # their empty bins, up to what memory holds.
    from sparsecal.core.binning import weighted_equal_mass_bins, argsort_scores
    x = np.array([0.3, 0.1, 0.1, 0.9])
    y = np.array([1, 0, 1, 1], dtype=np.uint8)
    np.testing.assert_array_equal(equal_mass_bin_starts(4, n_bins=10**12), [0, 1, 2, 3, 4])
    assert equal_mass_bins(x, y, n_bins=10**12).n_bins == 4
    perm, sx = argsort_scores(x)
    w = np.array([1.0, 2.0, 0.5, 1.0])
    assert weighted_equal_mass_bins(sx, y, w, perm, 10**12, None).n_bins == 4
    assert fixed_width_bins(x, y, n_bins=1000).count.sum() == 4
    with pytest.raises(ValueError, match=r"n_bins=1000000000000 fixed-width bins needs .* GiB"):
        fixed_width_bins(x, y, n_bins=10**12)
