"""classwise_ece (Kull et al. 2019) against a brute-force NumPy formula and the
peer package uncertainty-calibration (``calibration.get_ece``, mode "marginal")."""
import numpy as np
import pytest

import sparsecal as sc
from sparsecal.metrics import classwise_ece


def _brute(p, gold, n_bins):
    """sum over bins |sum(score - label)| / N per class, averaged over classes."""
    n, k = p.shape
    edges = np.arange(1, n_bins) / n_bins
    terms = []
    for j in range(k):
        b = np.searchsorted(edges, p[:, j], side="right")
        r = p[:, j] - (gold == j)
        terms.append(sum(abs(r[b == i].sum()) for i in range(n_bins)) / n)
    return np.array(terms)


def _data(rng, n, k, ties):
    p = rng.dirichlet(np.full(k, 0.3), size=n)
    if ties:                    # many ties, some exactly on bin edges (0.2 = 3/15)
        p = np.round(p, 1)
    gold = rng.integers(-1, k, size=n)
    return p, gold


@pytest.mark.parametrize("n", [1, 2, 7, 300])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("n_bins", [1, 15])
def test_dense_matches_brute_force(n, ties, n_bins):
    rng = np.random.default_rng(n + 3 * ties + n_bins)
    p, gold = _data(rng, n, 5, ties)
    want = _brute(p, gold, n_bins)
    got = classwise_ece(p, gold, n_bins=n_bins)
    np.testing.assert_allclose(got.per_class, want, rtol=1e-12, atol=1e-15)
    assert got.value == pytest.approx(want.mean(), rel=1e-12, abs=1e-15)
    assert got.n == n and got.n_bins == n_bins
    assert classwise_ece(p.astype(np.float32), gold, n_bins=n_bins).value == \
        pytest.approx(_brute(p.astype(np.float32).astype(np.float64), gold, n_bins).mean(),
                      rel=1e-6)


def test_dense_matches_the_peer_package():
    calibration = pytest.importorskip("calibration")
    rng = np.random.default_rng(11)
    p = rng.dirichlet(np.ones(6), size=2000)    # continuous: no score on a bin edge
    gold = np.array([rng.choice(6, p=row ** 2 / (row ** 2).sum()) for row in p])
    want = calibration.get_ece(p, gold, num_bins=15, mode="marginal", debias=False)
    assert classwise_ece(p, gold).value == pytest.approx(want, rel=1e-10)


def test_a_planted_miscalibration_is_measured():
    # class 0 always predicted 0.9 but right half the time: ECE_0 = 0.4,
    # class 1 predicted 0.1 and right half the time: ECE_1 = 0.4
    p = np.tile([0.9, 0.1], (10, 1))
    gold = np.array([0, 1] * 5)
    c = classwise_ece(p, gold)
    np.testing.assert_allclose(c.per_class, [0.4, 0.4])


def test_entries_with_threshold_zero_equal_dense():
    rng = np.random.default_rng(12)
    p, gold = _data(rng, 400, 6, ties=True)
    entries = sc.threshold(p, gold, threshold=0.0)
    assert classwise_ece(entries).value == pytest.approx(classwise_ece(p, gold).value,
                                                          rel=1e-12)


def test_entries_drop_only_the_first_bin_below_the_threshold():
    rng = np.random.default_rng(13)
    p, gold = _data(rng, 500, 8, ties=False)
    t = 0.01
    entries = sc.threshold(p, gold, threshold=t)
    got = classwise_ece(entries)
    kept = np.where(p >= t, p, np.nan)       # brute force over the kept entries
    n, k = p.shape
    edges = np.arange(1, 15) / 15
    want = []
    for j in range(k):
        keep = ~np.isnan(kept[:, j])
        b = np.searchsorted(edges, p[keep, j], side="right")
        r = p[keep, j] - (gold[keep] == j)
        want.append(sum(abs(r[b == i].sum()) for i in range(15)) / n)
    np.testing.assert_allclose(got.per_class, want, rtol=1e-12, atol=1e-15)
    dense = classwise_ece(p, gold)
    dropped = np.abs(np.where(p < t, p - (gold[:, None] == np.arange(k)), 0).sum(0)) / n
    assert np.all(np.abs(got.per_class - dense.per_class) <= dropped + 1e-12)


@pytest.mark.parametrize("args,kwargs,exc,match", [
    (([[0.5, 0.5]],), {}, ValueError, "gold is required"),
    (([[0.5, 0.5]], [2]), {}, ValueError, r"gold\[0\] = 2 is out of range"),
    (([[0.5, 1.5]], [0]), {}, ValueError, "must lie in"),
    (([0.5, 0.5], [0]), {}, ValueError, "2-dimensional"),
    (([[0.5, 0.5]], [0]), {"n_bins": 0}, ValueError, "n_bins"),
    (([["a", "b"]], [0]), {}, TypeError, "float32 or float64"),
])
def test_bad_input(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        classwise_ece(*args, **kwargs)


def test_entries_with_gold_or_without_sizes_are_refused():
    entries = sc.threshold(np.array([[0.7, 0.3]]), np.array([0]), 0.01)
    with pytest.raises(ValueError, match="gold must be None"):
        classwise_ece(entries, [0])
    with pytest.raises(ValueError, match="n_tokens"):
        classwise_ece(sc.Entries([0.5], [0], [1], n_tags=1))


def test_inputs_are_not_modified():
    p = np.array([[0.6, 0.4], [0.3, 0.7]])
    g = np.array([0, 1])
    p0, g0 = p.copy(), g.copy()
    classwise_ece(p, g)
    assert np.array_equal(p, p0) and np.array_equal(g, g0)
