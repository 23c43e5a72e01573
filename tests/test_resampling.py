"""Resampling from the distinct-score table (sparsecal.metrics.resampling): the
table against np.unique; the compiled replicates against the numpy Generator
calls of tests/_resampling_reference.py, bit for bit (every draw path, both
binnings, ties, any thread count), whose law is checked here: the multinomial
cell draw against resampling entry indices (means and variances over many
replicates, both draw paths), the hypergeometric split at cuts inside ties
against an exact enumeration of the arrangements; replicate bin sums against
the old entry-index procedure; the spawned generators (reproducible,
seed-dependent, independent of blocking)."""
import itertools
import math

import numpy as np
import pytest
from scipy import stats

import _resampling_reference as reference
import sparsecal as sc
from _resampling_reference import _Draws, _bootstrap, _null, replicated_bin_sums
from sparsecal.core import _resample
from sparsecal.core.binning import equal_mass_bin_starts
from sparsecal.metrics import ConfidenceInterval
from sparsecal.metrics.resampling import (data_table, replicate_bins, replicate_errors,
                                          replicate_generators, score_table)
from sparsecal.metrics import resampling


def bootstrap_cells(rng, table):
    """A bootstrap replicate's copies and positives per distinct score."""
    return _bootstrap(rng, _Draws(table))


def null_cells(rng, table):
    """A consistency resample's copies and positives per distinct score."""
    return _null(rng, _Draws(table))


@pytest.mark.parametrize("n", [1, 2, 7, 500])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_score_table_is_unique_with_sums(n, dtype):
    rng = np.random.default_rng(n)
    x = np.round(rng.random(n), 1).astype(dtype)
    y = (rng.random(n) < 0.5).astype(np.uint8)
    s, c, k = data_table(x, y, None)
    u, inv = np.unique(x.astype(np.float64), return_inverse=True)
    np.testing.assert_array_equal(s, u)
    np.testing.assert_array_equal(c, np.bincount(inv))
    np.testing.assert_array_equal(k, np.bincount(inv, weights=y).astype(np.int64))
    o = np.argsort(x, kind="stable")
    assert all(np.array_equal(a, b) for a, b in zip(score_table(x[o], y[o]), (s, c, k)))


def _cell_moments(draw, reps, seed):
    rows = np.array([np.concatenate(draw(g)) for g in replicate_generators(seed, reps)])
    return rows.mean(axis=0), rows.var(axis=0, ddof=1)


@pytest.mark.parametrize("n_distinct", [3, 400])   # multinomial path, index-draw path
def test_bootstrap_cells_have_the_law_of_entry_resampling(n_distinct):
    rng = np.random.default_rng(0)
    n = 500
    x = np.sort(rng.integers(0, n_distinct, n) / n_distinct)
    y = (rng.random(n) < 0.4).astype(np.uint8)
    table = score_table(x, y)
    reps = 3000
    mean, var = _cell_moments(lambda g: bootstrap_cells(g, table), reps, 1)

    def entries(g):   # n entry indices, counted per distinct score and positives
        idx = g.integers(0, n, n)
        j = np.searchsorted(table[0], x[idx])
        return (np.bincount(j, minlength=table[0].size),
                np.bincount(j, weights=y[idx], minlength=table[0].size))
    ref_mean, ref_var = _cell_moments(entries, reps, 2)
    c, k = table[1], table[2]
    exact_mean = np.concatenate((c, k)).astype(float)
    exact_var = np.concatenate((c * (1 - c / n), k * (1 - k / n)))
    se = np.sqrt(exact_var / reps) + 1e-12
    assert np.all(np.abs(mean - exact_mean) <= 5 * se)
    assert np.all(np.abs(ref_mean - exact_mean) <= 5 * se)
    big = exact_var > 0.5
    np.testing.assert_allclose(var[big], exact_var[big], rtol=0.2)
    np.testing.assert_allclose(var[big], ref_var[big], rtol=0.25)
    m, m1 = bootstrap_cells(np.random.default_rng(3), table)
    assert m.sum() == n and np.all((0 <= m1) & (m1 <= m)) and np.all(m1[k == 0] == 0)


@pytest.mark.parametrize("n_distinct", [4, 400])
def test_null_cells_draw_labels_from_their_scores(n_distinct):
    rng = np.random.default_rng(5)
    n = 400
    x = np.sort(rng.integers(1, n_distinct + 1, n) / (n_distinct + 1))
    table = score_table(x, np.zeros(n, np.uint8))
    reps = 3000
    mean, var = _cell_moments(lambda g: null_cells(g, table), reps, 7)
    s, c = table[0], table[1]
    J = s.size
    # E m = c; E positives = c s; Var positives = E[m] s (1 - s) + Var[m] s^2
    var_m = c * (1 - c / n)
    exact = np.concatenate((c, c * s))
    exact_var = np.concatenate((var_m, c * s * (1 - s) + var_m * s ** 2))
    assert np.all(np.abs(mean - exact) <= 5 * np.sqrt(exact_var / reps) + 1e-12)
    big = exact_var > 0.5
    np.testing.assert_allclose(var[big], exact_var[big], rtol=0.2)
    assert mean[:J].sum() == pytest.approx(n)


@pytest.mark.parametrize("n", [4, 40])   # index-draw path, multinomial path
def test_null_cells_at_scores_zero_and_one_are_certain(n):
    table = (np.array([0.0, 1.0]), np.array([n - 1, 1]), np.array([1, 1]))
    for seed in range(5):
        m, m1 = null_cells(np.random.default_rng(seed), table)
        assert m.sum() == n and m1[0] == 0 and m1[1] == m[1]


def test_hypergeometric_split_matches_enumeration():
    # one score with 6 copies (3 positive) cut at ranks 1 and 4 and another
    # score with 5 copies (2 positive) cut at 8 (3 into it): the positives left
    # of each cut, against every arrangement of the copies (exchangeable).
    scores = np.array([0.3, 0.7])
    copies, positives = np.array([6, 5]), np.array([3, 2])
    starts = np.array([0, 1, 4, 9, 11])
    exact = {}
    for a in itertools.combinations(range(6), 3):      # where the positives lie
        for b in itertools.combinations(range(5), 2):
            labels = np.zeros(11, int)
            labels[list(a)] = 1
            labels[[6 + i for i in b]] = 1
            key = tuple(np.diff(np.r_[0, np.cumsum(labels)][starts]))
            exact[key] = exact.get(key, 0) + 1
    total = sum(exact.values())
    reps = 4000
    seen = {}
    for g in replicate_generators(11, reps):
        count, sum_score, sum_label = reference.replicate_bin_sums(
            g, scores, copies, positives, starts=starts)
        key = tuple(sum_label.astype(int))
        seen[key] = seen.get(key, 0) + 1
    np.testing.assert_array_equal(count, np.diff(starts))
    np.testing.assert_allclose(sum_score, [0.3, 0.9, 0.3 * 2 + 0.7 * 3, 1.4])
    assert set(seen) <= set(exact)
    keys = sorted(exact)
    observed = np.array([seen.get(k, 0) for k in keys])
    expected = np.array([exact[k] / total * reps for k in keys])
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_equal_mass_replicate_sums_match_entry_index_bootstrap():
    # distinct scores: the old procedure (entry indices in sorted order,
    # replicated_bin_sums) and the table draw give the same law of bin sums
    rng = np.random.default_rng(8)
    n = 300
    x = np.sort(rng.random(n))
    y = (rng.random(n) < x).astype(np.uint8)
    table = score_table(x, y)
    starts = equal_mass_bin_starts(n, n_bins=7)
    reps = 3000
    new = replicate_bins(table, replicate_generators(3, reps), starts=starts)[2]
    rng = np.random.default_rng(4)
    old = np.array([replicated_bin_sums(np.bincount(rng.integers(0, n, n), minlength=n),
                                        starts, y.astype(float))[0] for _ in range(reps)])
    sd = old.std(axis=0)
    assert np.all(np.abs(new.mean(axis=0) - old.mean(axis=0)) <= 5 * sd * math.sqrt(2 / reps))
    np.testing.assert_allclose(new.std(axis=0), sd, rtol=0.1)


def _random_table(rng, n, n_distinct):
    x = np.sort(rng.integers(0, n_distinct, n) / n_distinct * rng.random())
    return score_table(x, (rng.random(n) < rng.random()).astype(np.uint8))


def test_compiled_replicates_are_the_generator_calls_bit_for_bit():
    """250 random tables (few or many ties, 1 to 5,000 points), bootstrap and
    consistency resamples, equal-mass bins (from one bin to one per point) and
    fixed-width bins, norms 1, 2 and inf: every replicate's CE equals the
    reference's, and each generator is left where the reference leaves it."""
    rng = np.random.default_rng(0)
    modes = set()
    for _ in range(250):
        n = int(rng.choice([1, 2, 3, 5, 20, 100, 1000, 5000]))
        table = _random_table(rng, n, int(rng.choice([1, 2, 3, 10, n])))
        null = bool(rng.integers(2))
        modes.add(int(resampling._Draws(table, null).mode))
        if rng.integers(2):
            kw = dict(starts=equal_mass_bin_starts(n, n_bins=int(rng.integers(1, n + 1))))
        else:
            kw = dict(n_bins=int(rng.integers(1, 30)))
        norm = [1.0, 2.0, np.inf][rng.integers(3)]
        seed = int(rng.integers(1000))
        ours, theirs = replicate_generators(seed, 9), replicate_generators(seed, 9)
        np.testing.assert_array_equal(
            replicate_errors(table, ours, norm=norm, null=null, **kw),
            reference.replicate_errors(table, theirs, norm=norm, null=null, **kw))
        assert [g.random() for g in ours] == [g.random() for g in theirs]
    assert modes == {int(m) for m in _resample.Draw}


@pytest.mark.parametrize("null", [False, True])
def test_replicate_bins_do_not_depend_on_threads(null):
    rng = np.random.default_rng(3)
    table = _random_table(rng, 3000, 40)
    starts = equal_mass_bin_starts(3000, n_bins=15)
    one = replicate_bins(table, replicate_generators(5, 50), starts=starts, null=null,
                         n_threads=1)
    for threads in (2, 3):
        many = replicate_bins(table, replicate_generators(5, 50), starts=starts, null=null,
                              n_threads=threads)
        for a, b in zip(one, many):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(one[0], np.broadcast_to(np.diff(starts), one[0].shape))
    assert np.all(one[2].sum(axis=1) <= 3000) and np.all(one[2] >= 0)


def test_threads_beyond_the_first_only_within_the_scratch_bound(monkeypatch):
    """A consistency resample by ranks needs n ranks of scratch per thread: past
    ``_SCRATCH_BYTES`` the kernel gets one thread, and the same replicates."""
    table = _random_table(np.random.default_rng(2), 4000, 4000)   # many distinct: ranks
    assert resampling._Draws(table, True).mode == _resample.Draw.NULL_RANKS
    threads, kernel = [], _resample.replicate_bins
    monkeypatch.setattr(_resample, "replicate_bins",
                        lambda *a: (threads.append(a[-1]), kernel(*a))[1])
    starts = equal_mass_bin_starts(4000, n_bins=8)
    wide = replicate_bins(table, replicate_generators(1, 6), starts=starts, null=True,
                          n_threads=2)
    monkeypatch.setattr(resampling, "_SCRATCH_BYTES", 8 * 4000)
    narrow = replicate_bins(table, replicate_generators(1, 6), starts=starts, null=True,
                            n_threads=2)
    assert threads == [2, 1]
    for a, b in zip(wide, narrow):
        np.testing.assert_array_equal(a, b)


def test_one_generator_twice_draws_in_turn():
    """The same generator for two replicates (two draws in turn, as in a loop),
    not two threads on one generator."""
    table = _random_table(np.random.default_rng(1), 500, 7)
    g, h = np.random.default_rng(4), np.random.default_rng(4)
    starts = equal_mass_bin_starts(500, n_bins=5)
    np.testing.assert_array_equal(replicate_errors(table, [g, g, g], starts=starts),
                                  reference.replicate_errors(table, [h, h, h], starts=starts))


def test_generators_reproducible_seeded_and_blocking_free():
    rng = np.random.default_rng(2)
    x = np.round(rng.random(200), 2)
    y = (rng.random(200) < x).astype(np.uint8)
    table = score_table(np.sort(x), y[np.argsort(x, kind="stable")])
    starts = equal_mass_bin_starts(200, n_bins=5)
    one = replicate_errors(table, replicate_generators(9, 40), starts=starts)
    gens = replicate_generators(9, 40)
    blocks = np.concatenate([replicate_errors(table, gens[i:i + 7], starts=starts)
                             for i in range(0, 40, 7)])
    np.testing.assert_array_equal(one, blocks)
    assert not np.array_equal(one, replicate_errors(table, replicate_generators(10, 40),
                                                    starts=starts))
    g = np.random.default_rng(1)   # a Generator spawns new children at each call
    assert not np.array_equal(replicate_errors(table, replicate_generators(g, 5), n_bins=4),
                              replicate_errors(table, replicate_generators(g, 5), n_bins=4))


@pytest.mark.parametrize("binning", ["equal-mass", "fixed"])
def test_bootstrap_of_one_point_and_two(binning):
    spec = ConfidenceInterval("bootstrap", n_resamples=50)
    one = sc.calibration_error([0.3], [1], binning=binning, ci=spec)
    assert one.ci_low == one.ci_high == pytest.approx(one.value)   # every replicate the same
    two = sc.calibration_error([0.3, 0.3], [1, 0], binning=binning, n_bins=2, ci=spec)
    # replicates: both negative (CE .3), both positive (.7) or one each (.2 or 0)
    assert two.ci_low == pytest.approx(0.0 if binning == "fixed" else 0.2, abs=0.21)
    assert two.ci_high == pytest.approx(0.7)
    a = sc.calibration_error([0.3, 0.3], [1, 0], n_bins=2,
                             ci=ConfidenceInterval("bootstrap", n_resamples=50,
                                                   random_state=3))
    assert (a.ci_low, a.ci_high) == (
        sc.calibration_error([0.3, 0.3], [1, 0], n_bins=2,
                             ci=ConfidenceInterval("bootstrap", n_resamples=50,
                                                   random_state=3)).ci_low, a.ci_high)
