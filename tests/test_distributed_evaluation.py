"""MCE and evaluate on distributed entries (sparsecal.distributed.evaluation)
against the single-machine sc.mce / sc.evaluate(ci=None) on two worker
processes: same tags evaluated, same bins (counts, label sums, score ranges
bit-identical), values within 1e-12 relative, same group rows and settings, and
sc.compare of two distributed evaluations equal to that of two single-machine ones."""
import warnings

import dask.array as da
import numpy as np
import pytest

import sparsecal as sc
from sparsecal import distributed as sd

from _dask_cluster import tagger_scores, two_workers


@pytest.fixture(scope="module", autouse=True)
def client():
    with two_workers() as c:
        yield c


def _data(seed, n_tokens, n_tags, dtype):
    x, gold = tagger_scores(seed, n_tokens, n_tags, dtype)
    x[:, -1] = 0.0                                   # a tag with no entries
    x[:, -2] = np.where(np.arange(n_tokens) == 3, 0.5, 0.0).astype(dtype)   # 1 entry
    return x, gold


def _same_ce(got, ref):
    assert type(got) is type(ref) and got.n == ref.n
    for f in ("count", "sum_label", "lower", "upper"):
        np.testing.assert_array_equal(getattr(got.bins, f), getattr(ref.bins, f))
    assert abs(got.value - ref.value) <= 1e-12 * abs(ref.value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bins", [{}, {"n_bins": 3}, {"bin_size": 7}])
def test_mce_equals_single_machine(dtype, bins):
    x, gold = _data(1, 400, 9, dtype)
    entries = sd.threshold(da.from_array(x, chunks=((150, 0, 1, 249), (9,))), gold)
    for debias in (True, False):   # the default (debiased), and the plug-in CE
        with warnings.catch_warnings(record=True) as w_ref:
            warnings.simplefilter("always")
            ref = sc.mce(sc.threshold(x, gold), min_entries=20, debias=debias, **bins)
        with warnings.catch_warnings(record=True) as w_got:
            warnings.simplefilter("always")
            got = sd.mce(entries, min_entries=20, debias=debias, **bins)
        assert [str(w.message) for w in w_got] == [str(w.message) for w in w_ref]
        if bins and not debias:                # small plug-in bins: the same warning
            assert "bins of fewer than 200" in str(w_got[0].message)
        assert type(got) is type(ref) and got.debias == ref.debias == debias
        assert got.too_few == ref.too_few and got.min_entries == 20
        assert sorted(got.per_tag) == sorted(ref.per_tag) and ref.too_few == {7: 1}
        for t in ref.per_tag:
            _same_ce(got.per_tag[t], ref.per_tag[t])
        assert abs(got.value - ref.value) <= 1e-12 * ref.value


def test_mce_errors():
    x, gold = _data(2, 50, 4, np.float64)
    entries = sd.threshold(da.from_array(x, chunks=(20, 4)), gold)
    with pytest.raises(ValueError, match="min_entries=1000"):
        sd.mce(entries, min_entries=1000)
    with pytest.raises(ValueError, match="min_entries"):
        sd.mce(entries, min_entries=0)
    with pytest.raises(ValueError, match="n_bins"):
        sd.mce(entries, n_bins=0)
    with pytest.raises(TypeError, match="DaskEntries"):
        sd.mce(sc.threshold(x, gold))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_evaluate_and_compare_equal_single_machine(dtype):
    x, gold = _data(3, 600, 10, dtype)
    y, _ = _data(4, 600, 10, dtype)
    groups = sc.TagGroups.from_counts({t: (10 - t) ** 2 for t in range(10)}, 3, n_tags=10)
    results = []
    for scores in (x, y):
        one = sc.evaluate(sc.threshold(scores, gold), groups, ci=None, per_tag=True,
                          min_entries=30, n_bins=7)
        got = sd.evaluate(sd.threshold(da.from_array(scores, chunks=(130, 10)), gold),
                          groups, per_tag=True, min_entries=30, n_bins=7)
        assert type(got) is type(one)
        assert got.groups == one.groups and got.settings == one.settings
        _same_ce(got.smce, one.smce)
        for g, r in zip(got.gmce, one.gmce):
            _same_ce(g, r)
        assert sorted(got.mce.per_tag) == sorted(one.mce.per_tag)
        assert abs(got.mce.value - one.mce.value) <= 1e-12 * one.mce.value
        assert got.top_label_ece is None and got.metrics == {}
        results.append((got, one))
    cmp_d = sc.compare(results[0][0], results[1][0])
    cmp_1 = sc.compare(results[0][1], results[1][1])
    assert [r["name"] for r in cmp_d.rows] == [r["name"] for r in cmp_1.rows]
    for a, b in zip(cmp_d.rows, cmp_1.rows):
        for key in ("before", "after", "change"):
            assert a[key] == pytest.approx(b[key], rel=1e-12, abs=1e-15)


def test_evaluate_default_groups_and_token_counts():
    x, gold = _data(5, 90, 5, np.float32)
    got = sd.evaluate(sd.threshold(da.from_array(x, chunks=((1,) * 4 + (0, 86), 5)), gold))
    one = sc.evaluate(sc.threshold(x, gold), ci=None)
    assert got.groups == one.groups and got.groups[0]["tokens"] > 0
    _same_ce(got.smce, one.smce)
    with pytest.raises(ValueError, match="tags"):
        sd.evaluate(sd.threshold(da.from_array(x, chunks=(30, 5)), gold), sc.TagGroups.scw(6))


@pytest.mark.parametrize("n_groups", [1, 3, 5])
def test_tfg_from_gold_equals_from_counts(n_groups):
    rng = np.random.default_rng(n_groups)
    gold = np.minimum((12 * rng.random(700) ** 3).astype(np.int64), 11)   # Zipf-like
    gold[:5] = 11                                  # ties in counts, a rare tag
    got = sd.tfg_from_gold(da.from_array(gold, chunks=((300, 0, 1, 399),)), n_groups,
                           n_tags=14)              # tags 12, 13 never seen
    ref = sc.TagGroups.from_gold(gold, n_groups, n_tags=14)
    np.testing.assert_array_equal(got.tag_to_group, ref.tag_to_group)
    np.testing.assert_array_equal(got.train_counts, ref.train_counts)
    assert got.n_groups == ref.n_groups and got.kind == "tfg"


def test_tfg_from_gold_errors():
    with pytest.raises(TypeError, match="dask.array.Array of integer"):
        sd.tfg_from_gold(np.arange(3), n_tags=3)
    with pytest.raises(ValueError, match="n_tags"):
        sd.tfg_from_gold(da.arange(3), n_tags=0)
    with pytest.raises(ValueError, match="training gold tag 5 is out of range"):
        sd.tfg_from_gold(da.from_array(np.array([0, 5, 1]), chunks=2), n_tags=3)
    with pytest.raises(ValueError, match="training gold tag -1"):
        sd.tfg_from_gold(da.from_array(np.array([0, -1]), chunks=1), n_tags=3)
