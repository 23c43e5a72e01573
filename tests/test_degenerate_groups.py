"""Degenerate groups (issue 13): a tag group whose dev entries are of one class
(or, for Gaussian and logistic calibration, of zero variance) is handled by GroupedCalibrator as
a group under min_entries (its fallback group's calibrator, else its scores left
unchanged) with one warning naming the groups and the reason, for every registered
method; a measure undefined on a group's entries is NaN in evaluate's per-group
table with one warning. The standalone calibrator and measure still raise."""
import json
import warnings

import numpy as np
import pytest

from sparsecal import Entries, GroupedCalibrator, TagGroups, evaluate
from sparsecal.calibration.registry import METHODS, get_method
from sparsecal.cli.main import main
from sparsecal.core.validation import DegenerateDataError
from sparsecal.metrics.measures import get_measure

N_TAGS = 6
#: TFG with 2 groups: tags 0, 1 (group 1) and 2..5 (group 2)
COUNTS = {"0": 1000, "1": 900, "2": 800, "3": 10, "4": 5, "5": 1}
APPLICATION = ["cllr", "min-cllr", "dcf", "min-dcf"]
#: the methods that refuse dev data of one class (the logistic ones by the rule of
#: calibration/logistic.py; beta's ridge penalty keeps its fit finite)
REFUSING = ("gaussian", "platt", "prior-logistic")


def _dense(n, seed):
    """Scores of n tokens whose gold tags are 0 or 1 only: the entries of tags
    2..5 (TFG group 2) are all negatives."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 2, n)
    scores = rng.dirichlet(np.ones(N_TAGS), n)
    scores[np.arange(n), gold] += rng.random(n) * 2
    scores /= scores.sum(1, keepdims=True)
    return scores, gold


@pytest.fixture(scope="module")
def split():
    from sparsecal import threshold
    scores, gold = _dense(1200, 0)
    entries = threshold(scores, gold, 0.01)
    groups = TagGroups.from_counts({int(k): v for k, v in COUNTS.items()}, 2,
                                   n_tags=N_TAGS)
    assert groups.tag_to_group.tolist() == [0, 0, 1, 1, 1, 1]
    return entries, groups


def _group(entries, groups, g):
    idx = np.flatnonzero(groups.tag_to_group[entries.tag] == g)
    return entries.score[idx], entries.label[idx], idx


def _refuses(method, scores, labels):
    """The error of the standalone calibrator on these dev data, or None."""
    try:
        get_method(method).build(prior=0.3).fit(scores, labels)
    except DegenerateDataError as exc:
        return str(exc)
    return None


def _fit(base, groups, entries, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = GroupedCalibrator(base, groups, **kw).fit(entries)
    return model, [str(w.message) for w in caught if "cannot fit" in str(w.message)]


@pytest.mark.parametrize("method", sorted(METHODS))
def test_a_group_of_one_class(split, method):
    entries, groups = split
    s2, y2, idx2 = _group(entries, groups, 1)
    assert idx2.size >= 200 and not y2.any()
    reason = _refuses(method, s2, y2)
    base = get_method(method).build(prior=0.3)
    model, refused = _fit(base, groups, entries)
    out = model.transform(entries).score
    s1, y1, idx1 = _group(entries, groups, 0)
    # the group with both classes: its own calibrator, as fit alone
    alone = get_method(method).build(prior=0.3).fit(s1, y1)
    np.testing.assert_array_equal(out[idx1], alone.predict(s1))
    if reason is None:   # the method fits one class: the grouped fit is the same
        assert refused == []
        np.testing.assert_array_equal(out[idx2], base.fit(s2, y2).predict(s2))
        return
    assert method in REFUSING
    # group indices from 0, as GroupedCalibrator's other warnings
    assert refused == [f"{type(base).__name__} cannot fit the dev data of 1 tfg group(s) "
                       f"(1): {reason} (groups 1). Like groups under min_entries, their "
                       "tags use their fallback group's calibrator, else keep their scores"]
    # no fallback: unchanged scores, like a group under min_entries
    assert model.tag_to_calibrator_.tolist() == [0, 0, -1, -1, -1, -1]
    np.testing.assert_array_equal(out[idx2], s2)
    # per tag with a one-group fallback: the fallback's calibrator, fit on all entries
    per_tag = TagGroups.per_tag(N_TAGS)
    model, refused = _fit(get_method(method).build(prior=0.3), per_tag, entries,
                          fallback=TagGroups.scw(N_TAGS), min_entries=50)
    assert len(refused) == 1 and "per-tag group(s) (2, 3, 4, 5)" in refused[0]
    everything = get_method(method).build(prior=0.3).fit(entries.score, entries.label)
    np.testing.assert_array_equal(model.transform(entries).score[idx2],
                                  everything.predict(s2))


@pytest.mark.parametrize("method", REFUSING)
def test_zero_variance_group(method):
    """A group whose entries all have one score (logit 0, so the class means are
    exact): Gaussian's variance is zero, the logistic slope undetermined."""
    score = np.r_[np.linspace(0.05, 0.95, 300), np.full(300, 0.5)]
    label = np.r_[np.arange(300) % 2, np.zeros(150), np.ones(150)].astype(np.uint8)
    tag = np.r_[np.zeros(300), np.ones(300)].astype(np.int64)
    entries = Entries(score, tag, label, n_tags=2)
    base = get_method(method).build()
    with pytest.raises(DegenerateDataError, match="zero variance"):
        get_method(method).build().fit(score[300:], label[300:])
    model, refused = _fit(base, TagGroups.per_tag(2), entries)
    assert len(refused) == 1 and "per-tag group(s) (1)" in refused[0]
    assert "zero variance" in refused[0]
    assert model.tag_to_calibrator_.tolist() == [0, -1]


@pytest.mark.parametrize("name", APPLICATION)
def test_undefined_measure_is_nan_in_its_group(split, name):
    entries, groups = split
    s2, y2, _ = _group(entries, groups, 1)
    kw = {"prior": 0.3} if name in ("dcf", "min-dcf") else {}
    with pytest.raises(DegenerateDataError, match="labels must hold both classes"):
        get_measure(name)(s2, y2, **kw)   # the standalone function still raises
    with pytest.warns(UserWarning) as record:
        res = evaluate(entries, groups, ci=None, metrics=[name], **kw)
    messages = [str(w.message) for w in record if "undefined" in str(w.message)]
    assert messages == [f"measures undefined on some groups' entries are NaN there: "
                        f"{name} for group(s) 2 (labels must hold both classes (a miss "
                        f"rate and a false-alarm rate are needed), got 0 positives of "
                        f"{s2.size})"]
    got = res.metrics[name]
    s1, y1, _ = _group(entries, groups, 0)
    assert got["pooled"] == get_measure(name)(entries.score, entries.label, **kw)
    assert got["groups"][0] == get_measure(name)(s1, y1, **kw)
    assert np.isnan(got["groups"][1])
    assert "| — |" in res.to_markdown().splitlines()[-1]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("degenerate")
    for split, seed in (("dev", 1), ("test", 2)):
        scores, gold = _dense(1200, seed)
        np.save(d / f"{split}.npy", scores)
        np.save(d / f"{split}_gold.npy", gold)
    (d / "counts.json").write_text(json.dumps(COUNTS))
    return lambda name: str(d / name)


def test_cli_evaluate_nan_cell_and_warning(files, tmp_path, capsys):
    out = tmp_path / "e.json"
    rc = main(["evaluate", "--scores", files("test.npy"), "--gold", files("test_gold.npy"),
               "--train-counts", files("counts.json"), "--groups", "2", "--metrics",
               *APPLICATION, "--prior", "0.3", "--json", str(out)])
    captured = capsys.readouterr()
    assert rc == 0
    warned = [line for line in captured.err.splitlines() if "undefined" in line]
    assert len(warned) == 1 and warned[0].startswith(
        "sparsecal evaluate: warning: measures undefined on some groups' entries are NaN "
        "there: cllr for group(s) 2 (labels must hold both classes")
    assert all(f"{name} for group(s) 2 (" in warned[0] for name in APPLICATION)
    assert "| Cllr |" in captured.out and captured.out.count("| — |") == len(APPLICATION)
    metrics = json.loads(out.read_text())["metrics"]
    for name in APPLICATION:
        assert np.isnan(metrics[name]["groups"][1]) and np.isfinite(metrics[name]["groups"][0])


def _cli_fit(files, tmp_path, capsys, method):
    """``sparsecal fit`` of ``method`` on TFG groups: its exit code and stderr."""
    rc = main(["fit", "--scores", files("dev.npy"), "--gold", files("dev_gold.npy"),
               "--train-counts", files("counts.json"), "--groups", "2", "--method", method,
               "-o", str(tmp_path / "model"), "-q"])
    return rc, capsys.readouterr().err


@pytest.mark.parametrize("method", REFUSING)
def test_cli_fit_and_compare_warn_and_go_on(files, tmp_path, capsys, method):
    rc, err = _cli_fit(files, tmp_path, capsys, method)
    assert rc == 0
    assert f"sparsecal fit: warning: {type(get_method(method).build()).__name__} cannot " \
           "fit the dev data of 1 tfg group(s) (1)" in err
    out = tmp_path / "c.json"
    rc = main(["compare", "--scores", files("test.npy"), "--gold", files("test_gold.npy"),
               "--dev-scores", files("dev.npy"), "--dev-gold", files("dev_gold.npy"),
               "--train-counts", files("counts.json"), "--groups", "2", "--methods",
               method, "--metrics", "cllr", "--json", str(out), "-q"])
    err = capsys.readouterr().err
    assert rc == 0 and "cannot fit the dev data" in err and "cllr for group(s) 2" in err
    cllr = json.loads(out.read_text())["metrics"]["cllr"]
    assert np.isnan(cllr["methods"][f"{method}/tfg"][2])


@pytest.mark.parametrize("method", sorted(METHODS))
def test_cli_fit_every_method(files, tmp_path, capsys, method):
    """Exit 0 for every method; the warning exactly for the methods that refuse."""
    rc, err = _cli_fit(files, tmp_path, capsys, method)
    assert rc == 0
    assert ("cannot fit the dev data" in err) == (method in REFUSING)
