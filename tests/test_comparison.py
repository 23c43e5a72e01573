"""Tests of ``sparsecal.comparison``: every method x {SCW, TFG} (Kranzlein et al.
2021, Table 1), checked against calibrators fit and evaluated by hand."""
import json
import re

import numpy as np
import pytest

from sparsecal import (BetaCalibration, GaussianCalibration, GroupedCalibrator,
                       HistogramBinning, IsotonicCalibrator, PlattCalibrator,
                       PriorWeightedLogistic, ScalingBinning, TagGroups, evaluate, threshold)
from sparsecal.calibration.comparison import MethodComparison, compare_methods
from sparsecal.calibration.registry import METHODS
from sparsecal.datasets.synthetic import make_tagger_outputs

N_TAGS = 120


@pytest.fixture(scope="module")
def data():
    dev = make_tagger_outputs(2500, n_tags=N_TAGS, split_seed=1, n_train=60000)
    test = make_tagger_outputs(2000, n_tags=N_TAGS, split_seed=2, n_train=60000)
    return {"dev": threshold(dev.scores, dev.gold), "test": threshold(test.scores, test.gold),
            "tfg": TagGroups.from_counts(dev.train_counts, 5, n_tags=N_TAGS)}


@pytest.fixture(scope="module")
def result(data):
    return compare_methods(data["dev"], data["test"], data["tfg"], n_bins=12, seed=5)


def rows(markdown):
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in markdown.splitlines() if not line.startswith("|---")]


def test_methods_are_the_papers_four_then_issue_13s():
    assert list(METHODS) == ["scaling-binning", "isotonic", "histogram", "platt", "beta",
                             "prior-logistic", "gaussian"]
    assert {m: METHODS[m].display_name for m in METHODS} == {
        "scaling-binning": "Scaling Binning", "isotonic": "Isotonic Regression",
        "histogram": "Histogram Binning", "platt": "Platt Scaling",
        "beta": "Beta Calibration", "prior-logistic": "Prior-Weighted Logistic",
        "gaussian": "Gaussian Calibration"}
    classes = {m: type(METHODS[m].build(10, 0)) for m in METHODS}
    assert classes == {"scaling-binning": ScalingBinning, "isotonic": IsotonicCalibrator,
                       "histogram": HistogramBinning, "platt": PlattCalibrator,
                       "beta": BetaCalibration, "prior-logistic": PriorWeightedLogistic,
                       "gaussian": GaussianCalibration}
    assert METHODS["histogram"].build(7, 0).get_params()["n_bins"] == 7


def test_results_equal_fits_by_hand(data, result):
    dev, test, tfg = data["dev"], data["test"], data["tfg"]
    assert list(result.after) == [(m, g) for m in METHODS for g in ("scw", "tfg")]
    kw = dict(n_bins=12, ci=None)
    assert result.before.to_dict() == evaluate(test, tfg, **kw).to_dict()
    scw = TagGroups.scw(N_TAGS)
    for (method, grouping), got in result.after.items():
        base = METHODS[method].build(12, 5)
        model = GroupedCalibrator(base, scw if grouping == "scw" else tfg).fit(dev)
        expected = evaluate(model.transform(test), tfg, **kw)
        assert got.to_dict() == expected.to_dict(), (method, grouping)
        # GMCE is always over the TFG groups, also after SCW recalibration.
        assert len(got.gmce) == tfg.n_groups
    # Recalibration changes the numbers (the comparison is not vacuous).
    assert result.after[("isotonic", "tfg")].smce.value != result.before.smce.value
    assert (result.after[("isotonic", "scw")].smce.value
            != result.after[("isotonic", "tfg")].smce.value)
    assert result.test_tokens == np.unique(test.token).size


def test_subset_of_methods_and_groupings(data, result):
    sub = compare_methods(data["dev"], data["test"], data["tfg"], methods=["platt"],
                          groupings=("tfg",), n_bins=12, seed=5)
    assert list(sub.after) == [("platt", "tfg")]
    assert sub.after[("platt", "tfg")].to_dict() == \
        result.after[("platt", "tfg")].to_dict()


def test_confidence_intervals(data):
    res = compare_methods(data["dev"], data["test"], data["tfg"], methods=["histogram"],
                          ci="simulation", seed=1)
    smce = res.after[("histogram", "tfg")].smce
    assert smce.ci_low is not None and smce.ci_low <= smce.value <= smce.ci_high


@pytest.mark.parametrize("kw, match", [
    (dict(methods=["isotonic", "temperature"]), r"unknown method 'temperature'; choose from"),
    (dict(methods=["Isotonic"]), "unknown method 'Isotonic'"),
    (dict(groupings=("scw", "per-tag")), r"unknown grouping 'per-tag'; choose from"),
])
def test_unknown_method_or_grouping(data, kw, match):
    with pytest.raises(ValueError, match=match):
        compare_methods(data["dev"], data["test"], data["tfg"], **kw)


def test_to_dict(result):
    d = result.to_dict()
    assert d["columns"] == ["All", "Group 1", "Group 2", "Group 3", "Group 4", "Group 5"]
    assert d["none"] == [result.before.smce.value] + [c.value for c in result.before.gmce]
    assert list(d["methods"]) == [f"{m}/{g}" for m in METHODS for g in ("scw", "tfg")]
    for (m, g), r in result.after.items():
        assert d["methods"][f"{m}/{g}"] == result.values(r)
    assert d["groups"] == result.before.groups
    assert json.loads(json.dumps(d)) == d   # plain JSON


def test_markdown_default_shows_first_and_last_group(result):
    table = rows(result.to_markdown())
    assert table[0] == ["Recalibration", "Groups", "All (SMCE)", "Group 1 (GMCE)",
                        "Group 5 (GMCE)"]
    body = [r for r in table[1:] if r[0] not in ("Entries", "Tag types",
                                                 "Tag freq in train", "Tokens")]
    assert len(body) == 1 + 2 * len(METHODS)
    none = result.values(result.before)
    assert body[0] == ["None", "", f"{none[0]:.4f}", f"{none[1]:.4f}", f"{none[5]:.4f}"]
    for row, ((method, grouping), r) in zip(body[1:], result.after.items()):
        assert row[:2] == [METHODS[method].display_name, "1" if grouping == "scw" else "5"]
        vals = result.values(r)
        for cell, col in zip(row[2:], (0, 1, 5)):
            rel = (vals[col] - none[col]) / none[col]
            assert cell == f"{vals[col]:.4f} ({rel:+.1%})"


def test_markdown_all_groups(result):
    table = rows(result.to_markdown(all_groups=True))
    assert table[0][2:] == ["All (SMCE)"] + [f"Group {g} (GMCE)" for g in range(1, 6)]
    assert all(len(r) == 8 for r in table)
    none = result.values(result.before)
    assert table[1][2:] == [f"{v:.4f}" for v in none]


def test_markdown_bottom_rows_equal_the_group_summary(data, result):
    test, tfg = data["test"], data["tfg"]
    summary = tfg.summary(test)
    bottom = {r[0]: r[2:] for r in rows(result.to_markdown(all_groups=True))
              if r[0] in ("Entries", "Tag types", "Tag freq in train", "Tokens")}
    assert list(bottom) == ["Entries", "Tag types", "Tag freq in train", "Tokens"]
    assert bottom["Entries"] == [f"{len(test):,}"] + [f"{s['entries']:,}" for s in summary]
    assert bottom["Tag types"] == [str(N_TAGS)] + [str(s["tag_types"]) for s in summary]
    assert bottom["Tokens"] == ([f"{np.unique(test.token).size:,}"]
                                + [f"{s['tokens']:,}" for s in summary])
    share = tfg.train_counts / tfg.train_counts.sum()
    assert bottom["Tag freq in train"][0] == f"[{share.min():.1%}, {share.max():.1%}]"
    for cell, s in zip(bottom["Tag freq in train"][1:], summary):
        assert cell == f"[{s['train_share_min']:.1%}, {s['train_share_max']:.1%}]"
    # The default layout shows the same rows for groups 1 and 5 only.
    short = {r[0]: r[2:] for r in rows(result.to_markdown())}
    assert short["Entries"] == [bottom["Entries"][i] for i in (0, 1, 5)]


def test_markdown_empty_group_and_no_training_counts(data):
    # Group 2 of 3 holds no tag: its GMCE and share are shown as "—".
    mapping = np.where(np.arange(N_TAGS) < 10, 0, 2)
    groups = TagGroups(mapping, 3)
    res = compare_methods(data["dev"], data["test"], groups, methods=["isotonic"])
    assert res.values(res.before)[2] is None
    table = rows(res.to_markdown(all_groups=True))
    assert table[1] == ["None", ""] + [f"{v:.4f}" if v is not None else "—"
                                       for v in res.values(res.before)]
    assert table[1][4] == "—"
    labels = [r[0] for r in table]
    assert "Tag freq in train" not in labels   # no training counts given
    tag_types = next(r for r in table if r[0] == "Tag types")
    assert tag_types[2:] == [str(N_TAGS), "10", "0", str(N_TAGS - 10)]
    # Without the token column the Tokens row says so.
    no_tokens = data["test"].take(np.arange(len(data["test"])))
    no_tokens.token = None
    res = compare_methods(data["dev"], no_tokens, groups, methods=["isotonic"])
    assert res.test_tokens is None
    tokens = next(r for r in rows(res.to_markdown()) if r[0] == "Tokens")
    assert tokens[2:] == ["—"] * 3


def test_comparison_with_scw_groups_only(data):
    scw = TagGroups.scw(N_TAGS)
    res = compare_methods(data["dev"], data["test"], scw, methods=["isotonic", "platt"])
    table = rows(res.to_markdown())
    assert table[0] == ["Recalibration", "Groups", "All (SMCE)", "Group 1 (GMCE)"]
    # With one group both groupings are "1" group and give identical numbers.
    assert [r[:2] for r in table[2:6]] == [["Isotonic Regression", "1"]] * 2 + \
        [["Platt Scaling", "1"]] * 2
    assert res.to_dict()["methods"]["isotonic/scw"] == res.to_dict()["methods"]["isotonic/tfg"]
    smce_none = float(re.match(r"[\d.]+", table[1][2]).group())
    assert smce_none == pytest.approx(res.before.smce.value, abs=5e-5)
    assert isinstance(res, MethodComparison)
