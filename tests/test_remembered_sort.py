"""Entries remember the sort of their scores (``argsort_scores``) and its split by
their last groupings (``split_sorted_by_group``): every measure and fit gives bit for
bit what it gives without the memo, derived entries carry the order only where it
is exactly theirs, and the memo lives and dies with the entries."""
import dataclasses
import gc
import pickle
import warnings

import numpy as np
import pytest

from sparsecal import (Entries, GroupedCalibrator, HistogramBinning, IsotonicCalibrator,
                       PlattCalibrator, TagGroups, calibration_test, evaluate, gmce, mce,
                       smce, smce_and_gmce, threshold)
from sparsecal.core import binning
from sparsecal.core.binning import argsort_scores, remembered_sort
from sparsecal.core.groups import split_sorted_by_group
from sparsecal.metrics import ConfidenceInterval, calibration_error

N_TAGS = 12
DTYPES = [np.float32, np.float64]


def _entries(dtype, seed=0, rows=3000, decimals=2):
    """Thresholded entries with many tied scores (rounded), and their groups."""
    rng = np.random.default_rng(seed)
    m = rng.dirichlet(np.full(N_TAGS, 0.3), rows)
    m = np.round(m, decimals) / np.round(m, decimals).sum(axis=1, keepdims=True)
    m = np.round(m, decimals).astype(dtype)
    gold = rng.integers(0, N_TAGS, rows)
    e = threshold(m, gold, 0.01)
    groups = TagGroups.from_counts(np.arange(N_TAGS)[::-1] + 1, 3, n_tags=N_TAGS)
    return e, groups


def _unremembered(e):
    """The same entries over writable arrays: they never remember a sort."""
    return Entries(e.score.copy(), e.tag.copy(), e.label.copy(), e.token.copy(),
                   n_tags=e.n_tags, n_tokens=e.n_tokens, threshold=e.threshold)


def _same(a, b, where="result"):
    """Exactly equal: floats bit for bit (NaN equal), arrays with their dtype."""
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), where
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        assert a.tobytes() == b.tobytes(), where
    elif isinstance(a, float):
        assert np.float64(a).tobytes() == np.float64(b).tobytes(), (where, a, b)
    else:
        assert a == b, where


MEASURES = {
    "smce": lambda e, g: smce(e),
    "smce, fixed bins": lambda e, g: smce(e, binning="fixed"),
    "smce, bins of 50, bootstrap": lambda e, g: smce(
        e, bin_size=50, ci=ConfidenceInterval("bootstrap", n_resamples=20)),
    "gmce": lambda e, g: gmce(e, g, n_bins=7),
    "smce and gmce, simulation": lambda e, g: smce_and_gmce(
        e, g, ci=ConfidenceInterval("simulation", n_resamples=20)),
    "mce": lambda e, g: mce(e, min_entries=40, bin_size=20),
    "mce, bootstrap": lambda e, g: mce(e, min_entries=40, n_bins=3, debias=False,
                                       ci=ConfidenceInterval("bootstrap", n_resamples=10)),
    "mce, score": lambda e, g: mce(e, min_entries=40, bin_size=20, ci="score"),
    "mce, fixed bins": lambda e, g: mce(e, min_entries=40, binning="fixed", n_bins=5),
    "evaluate": lambda e, g: evaluate(e, g, ci=None, per_tag=True, min_entries=40,
                                      metrics=["brier"]).to_dict(),
    "calibration test": lambda e, g: calibration_test(e.score, e.label, n_resamples=19),
    "calibration error": lambda e, g: calibration_error(e.score, e.label, n_bins=15),
    "isotonic": lambda e, g: IsotonicCalibrator().fit(e.score, e.label).get_state(),
    "histogram binning": lambda e, g: HistogramBinning(n_bins=8).fit(
        e.score, e.label).get_state(),
    "grouped isotonic": lambda e, g: GroupedCalibrator(
        IsotonicCalibrator(), g, min_entries=10).fit(e).transform(e).score,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", MEASURES)
def test_measures_same_with_and_without_the_memo(name, dtype):
    e, groups = _entries(dtype)
    measure = MEASURES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = _unremembered(e)
        expected = measure(plain, groups)
        assert remembered_sort(plain.score) is None and plain._splits is None
        for other in MEASURES.values():   # warm every memo (sort, several splits)
            other(e, groups)
        cold_then_warm = [measure(e, groups), measure(e, groups)]
    assert remembered_sort(e.score) is not None
    for got in cold_then_warm:
        _same(got, expected, name)


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_sort_is_computed_once_and_read_only(dtype, monkeypatch):
    e, groups = _entries(dtype)
    calls = []
    argsort = binning._argsort
    monkeypatch.setattr(binning, "_argsort", lambda *a: calls.append(1) or argsort(*a))
    smce(e)
    gmce(e, groups)
    mce(e, min_entries=40, bin_size=20)
    calibration_test(e.score, e.label, n_resamples=3)
    evaluate(e, groups, ci=None)
    assert len(calls) == 1
    perm, sorted_x = argsort_scores(e.score, n_threads=1)
    assert argsort_scores(e.score) == (perm, sorted_x)   # the same objects
    np.testing.assert_array_equal(perm, np.argsort(e.score, kind="stable"))
    for a in (perm, sorted_x, e.score, e.tag, e.label, e.token):
        with pytest.raises(ValueError, match="read-only"):
            a[:1] = 0
    split = split_sorted_by_group(e, groups, perm, sorted_x)
    assert split_sorted_by_group(e, groups, perm, sorted_x) is split
    fresh = split_sorted_by_group(_unremembered(e), groups, perm, sorted_x)
    _same(split, fresh)


def test_splits_kept_for_the_last_two_groupings():
    e, groups = _entries(np.float32)
    perm, sorted_x = argsort_scores(e.score)
    groupings = [groups, TagGroups.scw(N_TAGS), TagGroups.per_tag(N_TAGS)]
    first = [split_sorted_by_group(e, g, perm, sorted_x) for g in groupings]
    assert len(e._splits) == 2
    # equal groupings (another object) share one split; the oldest was dropped
    again = TagGroups(groupings[2].tag_to_group.copy())
    assert split_sorted_by_group(e, again, perm, sorted_x) is first[2]
    redone = split_sorted_by_group(e, groups, perm, sorted_x)
    assert redone is not first[0]
    _same(redone, first[0])
    # another sort (not the remembered one) is never served from the memo
    other = (perm.copy(), sorted_x.copy())
    assert split_sorted_by_group(e, groups, *other) is not redone


def test_memo_only_for_arrays_nothing_can_change():
    e, _ = _entries(np.float64)
    writable = _unremembered(e)
    smce(writable)
    assert remembered_sort(writable.score) is None
    # the caller's arrays stay writable; the entries' own views are read-only
    score = e.score.copy()
    mine = Entries(score, e.tag.copy(), e.label.copy(), n_tags=N_TAGS)
    assert score.flags.writeable and not mine.score.flags.writeable
    # read-only all the way down: remembered (also for a read-only view of it)
    frozen = e.score.copy()
    frozen.flags.writeable = False
    ro = Entries(frozen[:], e.tag, e.label, n_tags=N_TAGS)
    smce(ro)
    assert remembered_sort(ro.score) is not None
    # a read-only view of a writable array is not
    view = score[:]
    view.flags.writeable = False
    smce(Entries(view, e.tag, e.label, n_tags=N_TAGS))
    assert remembered_sort(view) is None


def _carried_check(parent, child):
    """The child's remembered order is the stable sort of its scores, and its sorted
    values are argsort_scores' (+0.0 for -0.0)."""
    perm, sorted_x = argsort_scores(child.score)
    ref_perm, ref_sorted = argsort_scores(child.score.copy())
    _same((perm, sorted_x), (ref_perm, ref_sorted))
    return perm is remembered_sort(parent.score)[0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_transform_carries_the_order_only_where_it_holds(dtype):
    e, groups = _entries(dtype, decimals=4)
    smce(e)
    # one increasing Platt map for all tags: the order holds where no two
    # different scores meet in one calibrated value (float rounding may merge)
    platt = GroupedCalibrator(PlattCalibrator(), TagGroups.scw(N_TAGS)).fit(e)
    out = platt.transform(e)
    y = out.score[remembered_sort(e.score)[0]]
    merged = np.any((y[1:] == y[:-1]) & (np.diff(remembered_sort(e.score)[1]) > 0))
    assert _carried_check(e, out) is not merged
    # an increasing map that creates ties: the tied entries go back to entry order
    coarse = np.floor(e.score * 10) / 10
    coarse.flags.writeable = False
    assert not _carried_check(e, e.with_scores(coarse))
    # per-group isotonic maps: checked, sorted anew where they disagree
    iso = GroupedCalibrator(IsotonicCalibrator(), groups, min_entries=10).fit(e)
    _carried_check(e, iso.transform(e))
    # -0.0 keeps the order of 0.0 and is stored as +0.0 like the sort does
    lowest = remembered_sort(e.score)[0][0]
    signed = e.score.copy()
    if np.count_nonzero(signed == signed[lowest]) == 1:
        signed[lowest] = -0.0
        signed.flags.writeable = False
        child = e.with_scores(signed)
        assert _carried_check(e, child)
        assert not np.signbit(argsort_scores(child.score)[1][0])


@pytest.mark.parametrize("index", ["mask", "slice", "increasing", "shuffled", "step"])
def test_take_carries_the_order_of_a_subset(index, monkeypatch):
    e, _ = _entries(np.float32)
    smce(e)
    rng = np.random.default_rng(3)
    n = len(e)
    idx = {"mask": rng.random(n) < 0.5, "slice": slice(10, n - 7),
           "increasing": np.flatnonzero(rng.random(n) < 0.3),
           "shuffled": rng.permutation(n)[: n // 2], "step": slice(None, None, 3)}[index]
    part = e.take(idx)
    calls = []
    argsort = binning._argsort
    monkeypatch.setattr(binning, "_argsort", lambda *a: calls.append(1) or argsort(*a))
    _carried_check(e, part)
    # (the reference sort of a copy is one call)
    assert len(calls) == (2 if index == "shuffled" else 1)


def test_memo_dies_with_the_entries_and_survives_pickling():
    gc.collect()
    before = len(binning._MEMOS)
    e, groups = _entries(np.float64)
    gmce(e, groups)
    assert len(binning._MEMOS) == before + 1
    copy = pickle.loads(pickle.dumps(e))
    assert not copy.score.flags.writeable and copy._splits == []
    _same(gmce(copy, groups), gmce(e, groups))
    assert remembered_sort(copy.score) is not None
    del e, copy
    gc.collect()
    assert len(binning._MEMOS) == before
