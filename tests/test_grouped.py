"""Tests of ``GroupedCalibrator`` (SCW, TFG, per tag with fallback; dense and
file transforms; saving and loading) and ``cross_fit_predict`` (K-fold).

Every expected value is recomputed by hand: the entries of a group are selected
with ``np.isin`` and a fresh calibrator is fit on them.
"""
import json
import os
import pickle
from pathlib import Path

import numpy as np
import pytest

from sparsecal import (Entries, GroupedCalibrator, HistogramBinning, IsotonicCalibrator,
                       PlattCalibrator, ScalingBinning, TagGroups, threshold)
from sparsecal.calibration import clone, cross_fit_predict
from sparsecal.datasets.synthetic import make_tagger_outputs
from sparsecal.calibration.folds import stratified_token_folds

N_TAGS = 60
BASES = [HistogramBinning(), IsotonicCalibrator(), ScalingBinning(seed=3),
         PlattCalibrator(), HistogramBinning(bin_size=50), PlattCalibrator(application_prior=0.2)]
BASE_IDS = ["histogram", "isotonic", "scaling-binning", "platt", "histogram-bin-size",
            "platt-prior"]


@pytest.fixture(scope="module")
def data():
    dev = make_tagger_outputs(4000, n_tags=N_TAGS, split_seed=1, tagger_seed=0, n_train=40000)
    test = make_tagger_outputs(3000, n_tags=N_TAGS, split_seed=2, tagger_seed=0, n_train=40000)
    tfg = TagGroups.from_counts(dev.train_counts, 5, n_tags=N_TAGS)
    return {"dev": threshold(dev.scores, dev.gold), "test": threshold(test.scores, test.gold),
            "test_scores": test.scores, "test_gold": test.gold, "tfg": tfg,
            "scw": TagGroups.scw(N_TAGS), "per_tag": TagGroups.per_tag(N_TAGS)}


def by_hand(base, groups, dev, test):
    """Expected test scores: a fresh clone of ``base`` per group, fit on the dev
    entries of the group's tags (selected with np.isin)."""
    expected = test.score.copy()
    for g in range(groups.n_groups):
        members = np.flatnonzero(groups.tag_to_group == g)
        dm, tm = np.isin(dev.tag, members), np.isin(test.tag, members)
        if tm.any():
            cal = clone(base).fit(dev.score[dm], dev.label[dm])
            expected[tm] = cal.predict(test.score[tm])
    return expected


# --------------------------------------------------------------------------- #
# fit / transform                                                             #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("base", BASES, ids=BASE_IDS)
def test_per_group_fit_equals_fitting_by_hand(data, base):
    model = GroupedCalibrator(base, data["tfg"]).fit(data["dev"])
    out = model.transform(data["test"])
    np.testing.assert_array_equal(out.score,
                                  by_hand(base, data["tfg"], data["dev"], data["test"]))
    assert len(model.calibrators_) == data["tfg"].n_groups
    assert not base.__sklearn_is_fitted__()                  # the base itself is only cloned


@pytest.mark.parametrize("base", BASES[:4], ids=BASE_IDS[:4])
def test_scw_is_one_calibrator_on_all_entries(data, base):
    dev, test = data["dev"], data["test"]
    model = GroupedCalibrator(base, data["scw"]).fit(dev)
    one = clone(base).fit(dev.score, dev.label)
    np.testing.assert_array_equal(model.transform(test).score, one.predict(test.score))
    assert len(model.calibrators_) == 1


def test_per_tag_with_tfg_fallback(data):
    dev, test, tfg = data["dev"], data["test"], data["tfg"]
    min_entries = 80
    model = GroupedCalibrator(IsotonicCalibrator(), data["per_tag"], fallback=tfg,
                              min_entries=min_entries).fit(dev)
    counts = np.bincount(dev.tag, minlength=N_TAGS)
    own, weak = counts >= min_entries, counts < min_entries
    assert own.sum() >= 5 and weak.sum() >= 5   # both cases are exercised
    expected = test.score.copy()
    for t in range(N_TAGS):
        tm = test.tag == t
        if not tm.any():
            continue
        if own[t]:
            dm = dev.tag == t
        else:   # the tag's TFG group, fit on all dev entries of that group
            dm = np.isin(dev.tag, np.flatnonzero(tfg.tag_to_group == tfg.tag_to_group[t]))
        expected[tm] = IsotonicCalibrator().fit(dev.score[dm], dev.label[dm]).predict(
            test.score[tm])
    np.testing.assert_array_equal(model.transform(test).score, expected)
    # Weak tags of one TFG group share one fallback calibrator.
    fb = model.tag_to_calibrator_[weak]
    for g in np.unique(tfg.tag_to_group[weak]):
        assert np.unique(fb[tfg.tag_to_group[weak] == g]).size == 1


def test_group_without_calibrator_warns_and_is_left_unchanged(data):
    dev, test = data["dev"], data["test"]
    counts = np.bincount(dev.tag, minlength=N_TAGS)
    rare = counts < 45                                  # a handful of tags
    mapping = np.where(rare, 1, 0)
    groups = TagGroups(mapping, 2)
    assert 0 < counts[rare].sum() < 1000
    with pytest.warns(UserWarning, match="left unchanged"):
        model = GroupedCalibrator(IsotonicCalibrator(), groups,
                                  min_entries=int(counts[rare].sum()) + 1).fit(dev)
    out = model.transform(test)
    tm = np.isin(test.tag, np.flatnonzero(rare))
    np.testing.assert_array_equal(out.score[tm], test.score[tm])
    np.testing.assert_array_equal(out.score[~tm],
                                  by_hand(IsotonicCalibrator(), TagGroups(np.zeros(N_TAGS, int), 1),
                                          dev.take(~np.isin(dev.tag, np.flatnonzero(rare))),
                                          test)[~tm])
    assert (model.tag_to_calibrator_[rare] == -1).all()


@pytest.mark.parametrize("prior", [None, 0.3])
def test_platt_group_of_one_class_uses_its_fallback(data, prior):
    """A per-tag group whose dev entries are all negatives: Platt refuses it (as
    PriorWeightedLogistic does) and its tag uses its TFG group's calibrator,
    with one warning naming it."""
    dev, test, tfg = data["dev"], data["test"], data["tfg"]
    counts = np.bincount(dev.tag, minlength=N_TAGS)
    tag = int(np.argmax(np.where(tfg.tag_to_group == 1, counts, 0)))   # a TFG group of 3
    label = np.where(dev.tag == tag, 0, dev.label).astype(np.uint8)
    dev = Entries(dev.score, dev.tag, label, dev.token, n_tags=N_TAGS)
    base = PlattCalibrator(application_prior=prior)
    with pytest.warns(UserWarning, match=rf"PlattCalibrator cannot fit the dev data of 1 "
                      rf"per-tag group\(s\) \({tag}\): logistic calibration needs both "
                      "positive and negative dev labels"):
        model = GroupedCalibrator(base, data["per_tag"], fallback=tfg,
                                  min_entries=200).fit(dev)
    members = np.flatnonzero(tfg.tag_to_group == tfg.tag_to_group[tag])
    fallback = clone(base).fit(dev.score[np.isin(dev.tag, members)],
                               dev.label[np.isin(dev.tag, members)])
    tm = test.tag == tag
    np.testing.assert_array_equal(model.transform(test).score[tm],
                                  fallback.predict(test.score[tm]))


def test_group_with_no_dev_entries_warns(data):
    """A group none of whose tags has a dev entry gets no calibrator either."""
    dev, test = data["dev"], data["test"]
    mapping = np.zeros(N_TAGS, dtype=np.int64)
    mapping[[7, 11]] = 1
    dev_wo = dev.take(~np.isin(dev.tag, [7, 11]))
    with pytest.warns(UserWarning, match="2 tags"):
        model = GroupedCalibrator(HistogramBinning(), TagGroups(mapping, 2)).fit(dev_wo)
    tm = np.isin(test.tag, [7, 11])
    assert tm.any()
    np.testing.assert_array_equal(model.transform(test).score[tm], test.score[tm])


def test_fallback_too_small_warns(data):
    dev = data["dev"]
    counts = np.bincount(dev.tag, minlength=N_TAGS)
    with pytest.warns(UserWarning, match="left unchanged"):
        model = GroupedCalibrator(IsotonicCalibrator(), data["per_tag"], fallback=data["scw"],
                                  min_entries=len(dev) + 1).fit(dev)
    assert (model.tag_to_calibrator_ == -1).all() and counts.sum() == len(dev)


def test_transform_keeps_order_tags_labels_tokens(data):
    test = data["test"]
    model = GroupedCalibrator(PlattCalibrator(), data["tfg"]).fit(data["dev"])
    out = model.transform(test)
    assert out is not test and len(out) == len(test)
    np.testing.assert_array_equal(out.tag, test.tag)
    np.testing.assert_array_equal(out.label, test.label)
    np.testing.assert_array_equal(out.token, test.token)
    assert out.threshold == test.threshold and out.n_tags == test.n_tags
    assert not np.array_equal(out.score, test.score)
    assert out.score.dtype == test.score.dtype


def test_unknown_tag_raises(data):
    model = GroupedCalibrator(IsotonicCalibrator(), data["tfg"]).fit(data["dev"])
    bad = Entries(np.array([0.5, 0.2], dtype=np.float32), np.array([3, N_TAGS]),
                  np.array([1, 0]))
    with pytest.raises(ValueError, match="unknown tag"):
        model.transform(bad)
    with pytest.raises(TypeError):
        model.transform(bad.score)


def test_not_fitted_and_bad_params(data):
    with pytest.raises(ValueError, match="not fitted"):
        GroupedCalibrator(IsotonicCalibrator(), data["tfg"]).transform(data["test"])
    with pytest.raises(TypeError):
        GroupedCalibrator("isotonic", data["tfg"]).fit(data["dev"])
    with pytest.raises(ValueError):
        GroupedCalibrator(IsotonicCalibrator(), data["tfg"],
                          fallback=TagGroups.scw(N_TAGS + 1)).fit(data["dev"])


@pytest.mark.parametrize("setup", ["scw", "tfg", "per-tag+fallback"])
@pytest.mark.parametrize("base", BASES[:4], ids=BASE_IDS[:4])
def test_no_test_leakage(data, setup, base):
    """An entry's calibrated score does not depend on the other test entries."""
    if setup == "per-tag+fallback":
        model = GroupedCalibrator(base, data["per_tag"], fallback=data["tfg"], min_entries=80)
    else:
        model = GroupedCalibrator(base, data[setup])
    model.fit(data["dev"])
    test = data["test"]
    full = model.transform(test).score
    rng = np.random.default_rng(7)
    perm = rng.permutation(len(test))
    np.testing.assert_array_equal(model.transform(test.take(perm)).score, full[perm])
    sub = np.sort(rng.choice(len(test), 101, replace=False))
    np.testing.assert_array_equal(model.transform(test.take(sub)).score, full[sub])


# --------------------------------------------------------------------------- #
# dense and file transforms                                                   #
# --------------------------------------------------------------------------- #

@pytest.fixture(scope="module")
def fitted(data):
    return GroupedCalibrator(IsotonicCalibrator(), data["tfg"]).fit(data["dev"])


def test_transform_dense_matches_entries(data, fitted):
    scores = data["test_scores"]
    out = fitted.transform_dense(scores)
    assert out.dtype == scores.dtype and out.shape == scores.shape
    e = threshold(scores, data["test_gold"], fitted.threshold_)
    np.testing.assert_array_equal(out[e.token, e.tag], fitted.transform(e).score)
    below = scores < fitted.threshold_
    np.testing.assert_array_equal(out[below], scores[below])
    assert below.sum() + len(e) == scores.size


def test_transform_dense_renormalize(data):
    scores = data["test_scores"]
    plain = GroupedCalibrator(IsotonicCalibrator(), data["tfg"]).fit(data["dev"])
    renorm = GroupedCalibrator(IsotonicCalibrator(), data["tfg"],
                               renormalize=True).fit(data["dev"])
    a, b = plain.transform_dense(scores), renorm.transform_dense(scores)
    np.testing.assert_allclose(b.sum(axis=1), 1.0, atol=1e-5)
    assert np.abs(a.sum(axis=1) - 1).max() > 1e-3           # unnormalised by default
    np.testing.assert_allclose(b, a / a.sum(axis=1, keepdims=True), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("chunk_rows", [1, 7, 64])
def test_transform_dense_chunking(data, fitted, chunk_rows):
    scores = data["test_scores"][:300]
    np.testing.assert_array_equal(fitted.transform_dense(scores, chunk_rows=chunk_rows),
                                  fitted.transform_dense(scores))


@pytest.mark.parametrize("chunk_rows", [0, -5, 2.0, 1e12, True, "7", np.float64(3)])
def test_transform_dense_bad_chunk_rows(data, fitted, chunk_rows):
    # A negative chunk once skipped the loop and returned np.empty's garbage.
    scores = data["test_scores"][:30]
    before = scores.copy()
    with pytest.raises(ValueError, match="chunk_rows must be a positive integer"):
        fitted.transform_dense(scores, chunk_rows=chunk_rows)
    np.testing.assert_array_equal(scores, before)


def test_transform_dense_memmaps(data, fitted, tmp_path):
    scores = data["test_scores"]
    np.save(tmp_path / "scores.npy", scores)
    mm = np.load(tmp_path / "scores.npy", mmap_mode="r")
    assert not mm.flags.writeable
    expected = fitted.transform_dense(scores)
    np.testing.assert_array_equal(fitted.transform_dense(mm, chunk_rows=257), expected)
    out = np.lib.format.open_memmap(tmp_path / "out.npy", mode="w+", dtype=mm.dtype,
                                    shape=mm.shape)
    ret = fitted.transform_dense(mm, out, chunk_rows=500)
    assert ret is out
    out.flush()
    del out, ret
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), expected)
    np.testing.assert_array_equal(np.load(tmp_path / "scores.npy"), scores)   # untouched


def test_transform_dense_bad_shapes(data, fitted):
    scores = data["test_scores"]
    with pytest.raises(ValueError):
        fitted.transform_dense(scores[:, :-1])
    with pytest.raises(ValueError):
        fitted.transform_dense(scores, np.empty((scores.shape[0], N_TAGS), dtype=np.float64))


def test_transform_file(data, fitted, tmp_path):
    scores = data["test_scores"]
    np.save(tmp_path / "scores.npy", scores)
    ret = fitted.transform_file(tmp_path / "scores.npy", tmp_path / "out.npy", chunk_rows=400)
    assert os.fspath(ret) == os.fspath(tmp_path / "out.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), fitted.transform_dense(scores))
    assert sorted(os.listdir(tmp_path)) == ["out.npy", "scores.npy"]


@pytest.mark.parametrize("existing", [False, True])
def test_transform_file_failure_leaves_nothing(data, tmp_path, monkeypatch, existing):
    model = GroupedCalibrator(IsotonicCalibrator(), data["tfg"]).fit(data["dev"])
    np.save(tmp_path / "scores.npy", data["test_scores"])
    if existing:
        (tmp_path / "out.npy").write_bytes(b"old")
    before = sorted(os.listdir(tmp_path))
    original, calls = model._calibrate, []

    def failing(scores, tags):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("disk on fire")
        return original(scores, tags)

    monkeypatch.setattr(model, "_calibrate", failing)
    with pytest.raises(RuntimeError, match="disk on fire"):
        model.transform_file(tmp_path / "scores.npy", tmp_path / "out.npy", chunk_rows=500)
    assert len(calls) == 2
    assert sorted(os.listdir(tmp_path)) == before            # no output, no temp file
    if existing:
        assert (tmp_path / "out.npy").read_bytes() == b"old"


# --------------------------------------------------------------------------- #
# save / load                                                                 #
# --------------------------------------------------------------------------- #

def _models(data):
    for base, name in zip(BASES, BASE_IDS):
        yield name, GroupedCalibrator(base, data["tfg"])
    yield "per-tag+fallback", GroupedCalibrator(ScalingBinning(n_bins=5, seed=9),
                                                data["per_tag"], fallback=data["tfg"],
                                                min_entries=80, renormalize=True)


@pytest.mark.parametrize("which", BASE_IDS + ["per-tag+fallback"])
def test_save_load_round_trip(data, tmp_path, which):
    model = dict(_models(data))[which].fit(data["dev"])
    model.save(tmp_path / "cal")
    assert sorted(os.listdir(tmp_path / "cal")) == ["arrays.npz", "calibrator.json"]
    assert sorted(os.listdir(tmp_path)) == ["cal"]
    back = GroupedCalibrator.load(tmp_path / "cal")
    test = data["test"]
    np.testing.assert_array_equal(back.transform(test).score, model.transform(test).score)
    np.testing.assert_array_equal(back.transform_dense(data["test_scores"][:500]),
                                  model.transform_dense(data["test_scores"][:500]))
    assert back.groups == model.groups and back.fallback == model.fallback
    assert (back.min_entries, back.renormalize, back.threshold_) == \
        (model.min_entries, model.renormalize, model.threshold_)
    assert type(back.base) is type(model.base)
    assert back.base.get_params() == model.base.get_params()
    np.testing.assert_array_equal(back.tag_to_calibrator_, model.tag_to_calibrator_)
    # Saving over an earlier save replaces it.
    other = GroupedCalibrator(PlattCalibrator(), data["scw"]).fit(data["dev"])
    other.save(tmp_path / "cal")
    assert sorted(os.listdir(tmp_path)) == ["cal"]
    np.testing.assert_array_equal(GroupedCalibrator.load(tmp_path / "cal").transform(test).score,
                                  other.transform(test).score)


@pytest.fixture
def saved(data, tmp_path):
    GroupedCalibrator(IsotonicCalibrator(), data["tfg"]).fit(data["dev"]).save(tmp_path / "cal")
    return tmp_path / "cal"


def _edit_json(path, edit):
    meta = json.loads((path / "calibrator.json").read_text())
    edit(meta)
    (path / "calibrator.json").write_text(json.dumps(meta))


def _edit_npz(path, edit):
    with np.load(path / "arrays.npz", allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    edit(arrays)
    np.savez(path / "arrays.npz", **arrays)


@pytest.mark.parametrize("case,match", [
    ("format", "calibrator.json: the file is not a sparsecal.GroupedCalibrator file"),
    ("version", "calibrator.json: format version 2 cannot be read"),
    ("class", r"calibrator.json: calibrators\[0\]\.class: saved calibrator uses unknown "
              "class 'Pickled'"),
    ("base-class", r"calibrator.json: base\.class: saved calibrator uses unknown class "
                   "'os.system'"),
    ("no-json", "no calibrator.json"),
    ("bad-json", "calibrator.json' is not valid JSON"),
    ("no-npz", "no arrays.npz"),
    ("missing-array", r"arrays.npz: c0\.x_knots_ is missing"),
    ("missing-map", "arrays.npz: tag_to_calibrator is missing"),
    ("missing-groups", "arrays.npz: groups_tag_to_group is missing"),
    ("missing-field", "calibrator.json: n_tags is missing"),
    ("object-array", "array 'tag_to_calibrator': holds an array of object"),
])
def test_load_rejects(saved, case, match):
    if case == "format":
        _edit_json(saved, lambda m: m.update(format="something.else"))
    elif case == "version":
        _edit_json(saved, lambda m: m.update(version=2))
    elif case == "class":
        _edit_json(saved, lambda m: m["calibrators"][0].update({"class": "Pickled"}))
    elif case == "base-class":
        _edit_json(saved, lambda m: m["base"].update({"class": "os.system"}))
    elif case == "no-json":
        os.remove(saved / "calibrator.json")
    elif case == "bad-json":
        (saved / "calibrator.json").write_text("{not json")
    elif case == "no-npz":
        os.remove(saved / "arrays.npz")
    elif case == "missing-array":
        _edit_npz(saved, lambda a: a.pop("c0.x_knots_"))
    elif case == "missing-map":
        _edit_npz(saved, lambda a: a.pop("tag_to_calibrator"))
    elif case == "missing-groups":
        _edit_npz(saved, lambda a: a.pop("groups_tag_to_group"))
    elif case == "missing-field":
        _edit_json(saved, lambda m: m.pop("n_tags"))
    elif case == "object-array":
        _edit_npz(saved, lambda a: a.update(tag_to_calibrator=np.array([{}], dtype=object)))
    with pytest.raises(ValueError, match=match):
        GroupedCalibrator.load(saved)


def test_load_never_unpickles(saved, data, monkeypatch):
    calls = []
    real_load = np.load

    def spy(*args, **kwargs):
        calls.append(kwargs.get("allow_pickle", False))
        return real_load(*args, **kwargs)

    def no_pickle(*args, **kwargs):
        raise AssertionError("pickle used while loading a calibrator")

    monkeypatch.setattr(np, "load", spy)
    monkeypatch.setattr(pickle, "load", no_pickle)
    monkeypatch.setattr(pickle, "loads", no_pickle)
    model = GroupedCalibrator.load(saved)
    assert calls == []                  # not even np.load: the headers are read first
    assert len(model.transform(data["test"])) == len(data["test"])


# --------------------------------------------------------------------------- #
# K-fold cross-fitting                                                        #
# --------------------------------------------------------------------------- #

def test_cross_fit_predict_reconstructed_by_hand(data):
    dev, tfg = data["dev"], data["tfg"]
    template = GroupedCalibrator(HistogramBinning(), tfg)
    out = cross_fit_predict(template, dev, n_folds=4, seed=3)
    fold = stratified_token_folds(dev, tfg, 4, 3)
    expected = dev.score.copy()
    for k in range(4):
        held = fold == k
        model = GroupedCalibrator(HistogramBinning(), tfg).fit(dev.take(~held))
        expected[held] = model.transform(dev.take(held)).score
        # The fold's scores come from the model of the other folds only, and
        # not from one fit on all dev entries.
        np.testing.assert_array_equal(out.score[held], expected[held])
    full = GroupedCalibrator(HistogramBinning(), tfg).fit(dev).transform(dev).score
    assert not np.array_equal(out.score, full)
    np.testing.assert_array_equal(out.tag, dev.tag)
    np.testing.assert_array_equal(out.token, dev.token)
    assert not hasattr(template, "calibrators_")      # the template is not fitted


def test_cross_fit_never_splits_tokens(data, monkeypatch):
    dev = data["dev"]
    fits, transforms = [], []
    real_fit, real_transform = GroupedCalibrator.fit, GroupedCalibrator.transform

    def fit(self, entries, sample_weight=None):
        fits.append(entries.token.copy())
        return real_fit(self, entries, sample_weight)

    def transform(self, entries):
        transforms.append(entries.token.copy())
        return real_transform(self, entries)

    monkeypatch.setattr(GroupedCalibrator, "fit", fit)
    monkeypatch.setattr(GroupedCalibrator, "transform", transform)
    cross_fit_predict(GroupedCalibrator(IsotonicCalibrator(), data["tfg"]), dev, n_folds=5,
                      seed=11)
    assert len(fits) == len(transforms) == 5
    per_token = np.bincount(dev.token, minlength=dev.n_tokens)
    for train_tok, held_tok in zip(fits, transforms):
        assert np.intersect1d(train_tok, held_tok).size == 0
        # A held-out token brings all of its entries.
        np.testing.assert_array_equal(np.bincount(held_tok, minlength=dev.n_tokens)[held_tok],
                                      per_token[held_tok])
    all_held = np.concatenate(transforms)
    assert all_held.size == len(dev)
    np.testing.assert_array_equal(np.sort(all_held), np.sort(dev.token))


def test_cross_fit_seeded(data):
    dev = data["dev"]
    template = GroupedCalibrator(ScalingBinning(), data["scw"])
    a = cross_fit_predict(template, dev, n_folds=3, seed=1).score
    b = cross_fit_predict(template, dev, n_folds=3, seed=1).score
    c = cross_fit_predict(template, dev, n_folds=3, seed=2).score
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    with pytest.raises(ValueError):
        cross_fit_predict(template, dev, n_folds=1)
    with pytest.raises(ValueError, match="token"):
        cross_fit_predict(template, Entries(dev.score, dev.tag, dev.label), n_folds=3)


def test_a_calibrator_saved_before_the_redesign_loads_and_applies_identically():
    """``tests/data/saved_v1`` was written by the flat-layout sparsecal (format
    version 1: per-tag scaling-binning with TFG fallback, commit e91de5a) with
    the calibrated scores of ``saved_v1_input.npy`` beside it: the redesigned
    package reads the same format and gives the same numbers, bit for bit, but
    for the 9 entries fixed in issue 11: v1 rounded the isotonic-scaled score of a
    float32 input to float32 before the bin lookup, which moved them across a bin
    boundary (by up to 0.64); now float32 input gives the float64 result, rounded."""
    data = Path(__file__).parent / "data"
    model = GroupedCalibrator.load(data / "saved_v1")
    assert type(model.base).__name__ == "ScalingBinning"
    assert model.get_params()["base__n_bins"] == 4 and model.fallback is not None
    scores = np.load(data / "saved_v1_input.npy")
    assert scores.dtype == np.float32
    got, v1 = model.transform_dense(scores), np.load(data / "saved_v1_expected.npy")
    assert np.count_nonzero(got != v1) == 9
    np.testing.assert_allclose(got, model.transform_dense(scores.astype(np.float64)),
                               rtol=0, atol=1e-7)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(renormalize="false"), TypeError, "renormalize must be True or False, got 'false'"),
    (dict(groups="tfg"), TypeError, "groups must be a TagGroups .* got str"),
    (dict(fallback=TagGroups.scw(3)), ValueError, "fallback cover 3 tags"),
])
def test_fit_checks_the_parameters_loading_checks(kw, exc, match):
    entries = threshold(np.array([[0.6, 0.4], [0.3, 0.7]]), [0, 1])
    params = {"base": IsotonicCalibrator(), "groups": TagGroups.scw(2), **kw}
    with pytest.raises(exc, match=match):
        GroupedCalibrator(**params).fit(entries)
