"""The "How to add a measure / a calibrator" steps, followed as a contributor
would: a toy measure (a function of ``(scores, labels)`` in a module of
``sparsecal.metrics``, one :class:`Measure` entry) and a toy calibrator (a
:class:`BaseCalibrator` in a module of ``sparsecal.calibration``, one
:class:`Method` entry). Nothing else is edited: the registry lists them, the
command line offers them, ``evaluate`` / ``GroupedCalibrator`` / ``sparsecal fit``
run them, and the cluster path refuses them by name (neither declares a
distributed form) before computing anything."""
import json
import sys

import numpy as np
import pytest

import sparsecal as sc
from sparsecal.calibration.base import BaseCalibrator
from sparsecal.calibration.registry import METHODS, Method, get_method
from sparsecal.cli.main import main
from sparsecal.metrics.measures import MEASURES, Measure, get_measure


def rate_gap(scores, labels):
    """The toy measure: |mean score - positive rate| (a one-bin CE_1)."""
    return abs(float(np.mean(scores)) - float(np.mean(labels)))


class Constant(BaseCalibrator):
    """The toy calibrator: the dev positive rate whatever the score."""
    _value_state = ("rate_",)

    def _fit(self, x, y, w):
        self.rate_ = float(np.average(y, weights=w))
        return self

    def _predict(self, x):
        return np.full_like(x, self.rate_)


@pytest.fixture
def toys(monkeypatch):
    """Register both toys (this module stands for the new modules
    ``sparsecal/metrics/toy.py`` and ``sparsecal/calibration/toy.py``); undone
    after the test."""
    for package in ("sparsecal.metrics", "sparsecal.calibration"):
        monkeypatch.setitem(sys.modules, f"{package}.toy", sys.modules[__name__])
    monkeypatch.setitem(MEASURES, "toy-gap", Measure("toy-gap", "Toy gap", "toy.rate_gap",
                                                     attribute=None, options=()))
    monkeypatch.setitem(METHODS, "toy", Method("toy", "Toy Constant", "toy.Constant"))


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    x = rng.dirichlet(np.ones(6), size=400).round(2)
    gold = rng.integers(0, 6, 400)
    return x, gold, sc.threshold(x, gold)


def _run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_registered_toys_are_in_the_registries_and_undone(toys):
    assert get_measure("toy-gap").function is rate_gap
    assert get_method("toy").cls is Constant and isinstance(get_method("toy").build(),
                                                            Constant)
    assert sc.calibration.make_calibrator("toy").fit([0.2, 0.9], [0, 1]).predict([0.7]).tolist() == [0.5]


def test_the_fixture_leaves_nothing_behind():
    assert "toy-gap" not in MEASURES and "toy" not in METHODS
    assert "sparsecal.metrics.toy" not in sys.modules


def test_command_line_choices_come_from_the_registries(toys, capsys, tmp_path):
    """--metrics and --method accept the toys (argparse refuses any name not
    among its choices: exit status 2 before anything is read)."""
    missing = tmp_path / "missing.npy"
    for argv in (["evaluate", "--scores", missing, "--gold", missing, "--metrics", "toy-gap"],
                 ["fit", "--scores", missing, "--gold", missing, "--method", "toy", "--grouping", "scw",
                  "-o", tmp_path / "m"]):
        rc, out, err = _run(capsys, *argv)
        assert rc != 0 and "invalid choice" not in err and "missing.npy" in err, err
    with pytest.raises(SystemExit):
        main(["evaluate", "--scores", str(missing), "--metrics", "toy-gap-2"])
    assert "invalid choice: 'toy-gap-2'" in capsys.readouterr().err


def test_toy_measure_through_evaluate(toys, data):
    """Pooled and per group, against the brute-force formula on the entries."""
    _, _, entries = data
    groups = sc.TagGroups.from_counts({t: 10 * (t + 1) for t in range(6)}, 2, n_tags=6)
    got = sc.evaluate(entries, groups, ci=None, metrics=["toy-gap", "ece"]).metrics
    assert got["toy-gap"]["pooled"] == rate_gap(entries.score, entries.label)
    for g, value in enumerate(got["toy-gap"]["groups"]):
        kept = np.isin(entries.tag, groups.members(g))
        assert value == pytest.approx(rate_gap(entries.score[kept], entries.label[kept]),
                                      rel=1e-15)
    assert got["ece"]["pooled"] == sc.calibration_error(entries.score, entries.label,
                                                        norm=1).value


def test_toy_calibrator_through_grouped_and_the_command_line(toys, data, capsys, tmp_path):
    x, gold, entries = data
    groups = sc.TagGroups.scw(6)
    model = sc.GroupedCalibrator(get_method("toy").build(), groups).fit(entries)
    assert np.all(model.transform(entries).score == entries.label.mean())
    model.save(tmp_path / "saved")                  # loading looks the class up by name
    again = sc.GroupedCalibrator.load(tmp_path / "saved")
    assert type(again.calibrators_[0]) is Constant
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "gold.npy", gold)
    rc, out, err = _run(capsys, "fit", "--scores", tmp_path / "x.npy", "--gold",
                        tmp_path / "gold.npy", "--method", "toy", "--grouping", "scw",
                        "-o", tmp_path / "cli")
    assert rc == 0, err
    assert "Toy Constant" in out
    cli = sc.GroupedCalibrator.load(tmp_path / "cli")
    assert cli.calibrators_[0].rate_ == model.calibrators_[0].rate_
    rc, out, err = _run(capsys, "evaluate", "--scores", tmp_path / "x.npy", "--gold",
                        tmp_path / "gold.npy", "--metrics", "toy-gap", "--json",
                        tmp_path / "e.json")
    assert rc == 0, err
    assert "Toy gap" in out
    table = json.loads((tmp_path / "e.json").read_text())["metrics"]["toy-gap"]
    assert table["pooled"] == rate_gap(entries.score, entries.label)


def test_cluster_path_refuses_the_toys_by_name(toys, data, capsys, tmp_path):
    """Neither toy declares a distributed form: one error naming it, not an
    AttributeError, before any chunk is computed (the chunks would raise)."""
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    x, gold, _ = data

    def boom():
        raise AssertionError("computed")
    exploding = da.from_delayed(dask.delayed(boom)(), shape=x.shape, dtype=x.dtype)
    entries = sc.threshold(exploding, gold)
    groups = sc.TagGroups.scw(6)
    with pytest.raises(TypeError, match="method 'toy' has no distributed fit"):
        sc.GroupedCalibrator(Constant(), groups).fit(entries)
    with pytest.raises(TypeError, match="method 'toy' has no distributed fit"):
        sc.GroupedCalibrator(Constant(), groups).fit(entries, sample_weight=np.ones(len(x)))
    with pytest.raises(ValueError, match=r"measure\(s\) toy-gap have no distributed form"):
        sc.evaluate(entries, groups, metrics=["toy-gap"])
    with pytest.warns(UserWarning, match=r"no distributed fit\): toy$"):
        assert sc.distributed.comparison.distributed_methods(["isotonic", "toy"]) == ["isotonic"]
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "gold.npy", gold)
    inputs = ["--scores", tmp_path / "x.npy", "--gold", tmp_path / "gold.npy", "--dask"]
    for argv, message in [
            (["evaluate", *inputs, "--metrics", "toy-gap"],
             "--metrics: measure(s) toy-gap have no distributed form"),
            (["fit", *inputs, "--method", "toy", "--grouping", "scw", "-o",
              tmp_path / "m"],
             "method 'toy' has no distributed fit")]:
        rc, out, err = _run(capsys, *argv)
        assert rc == 2 and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "m").exists()
