"""The fast selection of distributed equal-mass cuts (sparsecal.distributed.
equal_mass, docs/scale.md "Benchmark"): per-chunk sorted sets kept on the
workers, every set's cuts (SMCE's and each GMCE group's) in the same rounds,
radix rounds or a gather of the few keys of a cut's bucket, then one pass of
bin sums. Each path is compared bit for bit with the single-machine bins on
random data with ties across chunks, empty chunks, chunks with every score below
the threshold, tiny (1- and 2-entry) groups and n = 1, 2: with the gather
threshold at 0 (radix rounds down to one key, then per-chunk counts), 3 (some
cuts gathered, some refined) and the default; with entries persisted on a
cluster (the sorted sets persisted too) and lazy (the sorted sets recomputed by
every pass)."""
import dask
import dask.array as da
import numpy as np
import pytest
from distributed import futures_of

import sparsecal as sc
from sparsecal import distributed as sd
from sparsecal.core.entries import Entries
from sparsecal.distributed import equal_mass
from sparsecal.distributed.chunks import key_scores, native_keys, runs, sorted_sets
from sparsecal.distributed.reduce import tree_merge

from _dask_cluster import tagger_scores, two_workers


@pytest.fixture(scope="module")
def client():
    with two_workers() as c:
        yield c


def _assert_same(got, ref):
    """Distributed CE results equal to the single-machine ones: bins bit for
    bit (score sums within float rounding), values within 1e-12."""
    assert (got is None) == (ref is None)
    if ref is None:
        return
    assert got.n == ref.n
    for field in ("count", "sum_label", "lower", "upper"):
        np.testing.assert_array_equal(getattr(got.bins, field), getattr(ref.bins, field),
                                      err_msg=field)
    np.testing.assert_allclose(got.bins.sum_score, ref.bins.sum_score, rtol=1e-14, atol=0)
    assert abs(got.value - ref.value) <= 1e-12 * abs(ref.value)


def _case(seed, n_tokens, dtype, chunks):
    x, gold = tagger_scores(seed, n_tokens, 9, dtype)
    # tiny groups: tags 7 and 8 (1-2 entries at most survive) form groups of their own
    x[:, 7:] = dtype(0.0)
    x[0, 7] = x[min(1, n_tokens - 1), 8] = dtype(0.5)
    if n_tokens >= 60:
        x[n_tokens // 2] = dtype(0.005)     # a one-row chunk with every score below 0.01
    groups = sc.TagGroups([0, 0, 1, 1, 1, 2, 2, 3, 4], 5)
    scores = da.from_array(x, chunks=(tuple(chunks), (9,)))
    return scores, gold, sc.threshold(x, gold), groups


CASES = [(1, (1,)), (2, (1, 0, 1)), (3, (0, 3)), (60, (7, 0, 23, 1, 29)),
         (700, (350, 0, 1, 349))]


@pytest.mark.parametrize("gather_max", [0, 3, equal_mass.GATHER_MAX])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_round_kind_gives_the_single_machine_bins(monkeypatch, gather_max, dtype):
    monkeypatch.setattr(equal_mass, "GATHER_MAX", gather_max)
    with dask.config.set(scheduler="sync"):
        for seed, (n, chunks) in enumerate(CASES):
            scores, gold, one, groups = _case(seed, n, dtype, chunks)
            entries = sd.threshold(scores, gold)
            for bins in ({"n_bins": 10}, {"bin_size": 2}, {"n_bins": 1}):
                if len(one) == 0:
                    continue
                got, got_groups = sd.smce_and_gmce(entries, groups, **bins)
                ref, ref_groups = sc.smce_and_gmce(one, groups, **bins)
                _assert_same(got, ref)
                for g, r in zip(got_groups, ref_groups, strict=True):
                    _assert_same(g, r)


def test_all_tied_and_heavy_ties_across_chunks(monkeypatch):
    """Every cut inside one run of tied scores spread over many chunks: the
    tie order (chunk, then entry order) decides the bins."""
    rng = np.random.default_rng(5)
    x = np.where(rng.random((300, 4)) < 0.5, 0.25, 0.75)
    gold = rng.integers(0, 4, 300)
    one = sc.threshold(x, gold)
    groups = sc.TagGroups([0, 1, 1, 0], 2)
    with dask.config.set(scheduler="sync"):
        for gather_max in (0, 10, equal_mass.GATHER_MAX):
            monkeypatch.setattr(equal_mass, "GATHER_MAX", gather_max)
            entries = sd.threshold(da.from_array(x, chunks=((37, 0, 200, 63), (4,))), gold)
            got, got_groups = sd.smce_and_gmce(entries, groups, n_bins=7)
            ref, ref_groups = sc.smce_and_gmce(one, groups, n_bins=7)
            _assert_same(got, ref)
            for g, r in zip(got_groups, ref_groups, strict=True):
                _assert_same(g, r)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_persisted_sets_on_a_cluster_equal_lazy_ones(client, dtype):
    scores, gold, one, groups = _case(11, 700, dtype, (350, 0, 1, 349))
    lazy = sd.threshold(scores, gold)
    kept = lazy.persist()
    assert futures_of(kept.blocks) and not futures_of(lazy.blocks)
    ref, ref_groups = sc.smce_and_gmce(one, groups)
    for entries in (lazy, kept, kept):    # the second persisted run repeats the bits
        got, got_groups = sd.smce_and_gmce(entries, groups)
        _assert_same(got, ref)
        for g, r in zip(got_groups, ref_groups, strict=True):
            _assert_same(g, r)
    # the calibrated entries (lazy blocks over persisted ones) are sorted once too
    with pytest.warns(UserWarning, match="fewer than 200 dev entries"):
        model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups, min_entries=1).fit(one)
    _assert_same(sd.smce(model.transform(kept)), sc.smce(model.transform(one)))


def test_smce_and_gmce_one_selection_equals_separate_ones():
    scores, gold, _, groups = _case(3, 300, np.float32, (100, 100, 100))
    entries = sd.threshold(scores, gold)
    with dask.config.set(scheduler="sync"):
        pooled, per_group = sd.smce_and_gmce(entries, groups, bin_size=9)
        _assert_same(pooled, sd.smce(entries, bin_size=9))
        for a, b in zip(per_group, sd.gmce(entries, groups, bin_size=9), strict=True):
            _assert_same(a, b)


def test_no_entries_is_one_clear_error():
    x = np.full((4, 3), 0.001)
    with dask.config.set(scheduler="sync"):
        entries = sd.threshold(da.from_array(x, chunks=(2, 3)), [0, 1, 2, 0])
        with pytest.raises(ValueError, match="no points"):
            sd.smce_and_gmce(entries, sc.TagGroups.scw(3))


def test_runs_against_numpy_unique():
    rng = np.random.default_rng(0)
    for n in (0, 1, 2, 50):
        v = np.sort(rng.integers(0, 5, n))
        distinct, starts, lengths = runs(v)
        u, first, counts = np.unique(v, return_index=True, return_counts=True)
        np.testing.assert_array_equal(distinct, u)
        np.testing.assert_array_equal(starts, first)
        np.testing.assert_array_equal(lengths, counts)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sorted_sets_are_each_groups_stable_sort(dtype):
    rng = np.random.default_rng(1)
    for n in (0, 1, 2, 200):
        score = rng.integers(0, 4, n).astype(dtype) / 4
        score[(score == 0) & (rng.random(n) < 0.5)] = -0.0    # sorts as 0.0
        tag, label = rng.integers(0, 5, n), rng.integers(0, 2, n)
        e = Entries(score, tag, label, n_tags=5)
        tag_to_group = np.array([1, 0, 1, 2, 2])
        sets = sorted_sets(e, True, tag_to_group, 3)
        members = [np.arange(n)] + [np.flatnonzero(tag_to_group[tag] == g) for g in range(3)]
        assert len(sets) == 4
        for (keys, labels), m in zip(sets, members):
            order = m[np.argsort(score[m] + dtype(0), kind="stable")]
            np.testing.assert_array_equal(key_scores(keys, dtype), score[order] + dtype(0))
            np.testing.assert_array_equal(labels, label[order])
            assert keys.dtype == native_keys(score).dtype


@pytest.mark.parametrize("dtype, gather_max, passes", [
    (np.float32, equal_mass.GATHER_MAX, 2),     # gather, sums
    (np.float32, 0, 3),                         # the last digit, counts of one key, sums
    (np.float64, 0, 5),                         # 3 more digits, counts, sums
])
def test_passes_after_the_sort(monkeypatch, dtype, gather_max, passes):
    """The passes over the chunks after the first (sort + top digit): a cut's
    bucket of at most GATHER_MAX entries is finished by one gather."""
    monkeypatch.setattr(equal_mass, "GATHER_MAX", gather_max)
    calls = []

    def counted(func, *args, **kwargs):
        calls.append(func.__name__)
        return tree_merge(func, *args, **kwargs)
    monkeypatch.setattr(equal_mass, "tree_merge", counted)
    scores, gold, _, groups = _case(4, 700, dtype, (350, 0, 1, 349))
    with dask.config.set(scheduler="sync"):
        sd.smce_and_gmce(sd.threshold(scores, gold), groups)
    assert calls == ["_query"] * (passes - 1) + ["_bin_sums"]


def test_split_every_bounds_the_merge_inputs():
    """Partial digit-count tables per merge task: 8 for a few sets, fewer as
    the sets' tables (up to 2**14 pairs of 16 bytes per set) pass
    ``MERGE_BYTES``, never fewer than 2."""
    split = equal_mass._split_every
    per_set = (1 << 14) * 16
    assert [split(s) for s in (1, 16)] == [8, 8]
    assert split(17) == equal_mass.MERGE_BYTES // (17 * per_set) == 7
    assert split(33) == 3 and split(64) == 2 and split(10_000) == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_narrow_merges_give_the_same_bits(monkeypatch, dtype):
    """Two partials per merge task (a 3-level tree over 9 chunks) give the bins
    of the 8-partial tree and of one machine, bit for bit."""
    x, gold = tagger_scores(11, 400, 9, dtype)
    x[200:230] = dtype(0.005)      # an all-below-threshold chunk
    one, groups = sc.threshold(x, gold), sc.TagGroups([0, 0, 1, 1, 1, 2, 2, 3, 4], 5)
    chunks = ((50, 0, 100, 50, 30, 1, 69, 50, 50), (9,))
    entries = sd.threshold(da.from_array(x, chunks=chunks), gold)
    splits = []
    tree = equal_mass.tree

    def recorded(parts, merge, split_every):
        splits.append(split_every)
        return tree(parts, merge, split_every)

    monkeypatch.setattr(equal_mass, "tree", recorded)
    with dask.config.set(scheduler="sync"):
        wide = equal_mass.equal_mass_bin_stats(entries, groups.tag_to_group, 5, n_bins=10,
                                               pooled=True)
        monkeypatch.setattr(equal_mass, "MERGE_BYTES", 1)
        narrow = equal_mass.equal_mass_bin_stats(entries, groups.tag_to_group, 5,
                                                 n_bins=10, pooled=True)
        got, got_groups = sd.smce_and_gmce(entries, groups, n_bins=10)
    assert splits[0] == 8 and splits[1:] == [2, 2]
    for a, b in zip(wide, narrow, strict=True):
        for field in ("count", "sum_label", "sum_score", "lower", "upper"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    ref, ref_groups = sc.smce_and_gmce(one, groups, n_bins=10)
    _assert_same(got, ref)
    for g, r in zip(got_groups, ref_groups, strict=True):
        _assert_same(g, r)
