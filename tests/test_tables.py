"""Result tables as DataFrames and HTML (sparsecal/io/tables.py): every table's
``to_frame()`` holds the object's own numbers, its ``_repr_html_`` is a valid
table with the same cells (escaped), and a missing pandas names its install."""
import math
import sys
from html.parser import HTMLParser

import numpy as np
import pytest

from sparsecal import (TagGroups, calibration_error, compare, compare_methods, evaluate,
                       mce, reliability_table, threshold)
from sparsecal.datasets import make_tagger_outputs
from sparsecal.io.tables import html_table
from sparsecal.metrics.evaluation import Comparison

pd = pytest.importorskip("pandas")


class Cells(HTMLParser):
    """The header and body cells of one table; fails on unbalanced tags."""

    def __init__(self):
        super().__init__()
        self.stack, self.head, self.rows, self.caption = [], [], [], None

    def handle_starttag(self, tag, attrs):
        self.stack.append(tag)
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th"):
            self.rows[-1].append("")

    def handle_endtag(self, tag):
        assert self.stack and self.stack.pop() == tag, f"unbalanced </{tag}>"

    def handle_data(self, data):
        if self.stack and self.stack[-1] in ("td", "th"):
            self.rows[-1][-1] += data
        elif self.stack and self.stack[-1] == "caption":
            self.caption = data


def parse(text):
    p = Cells()
    p.feed(text)
    p.close()
    assert p.stack == [], p.stack
    return p.rows[0], p.rows[1:], p.caption


def cell(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def check_views(obj, expected):
    """to_frame() equals ``expected`` (name -> values) exactly; HTML shows it."""
    frame = obj.to_frame()
    assert list(frame.columns) == list(expected)
    for name, values in expected.items():
        got = frame[name].tolist()
        assert len(got) == len(values), name
        for g, v in zip(got, values):
            if v is None:
                assert g is None or (isinstance(g, float) and math.isnan(g)), (name, g)
            else:
                assert g == v, (name, g, v)
    head, rows, caption = parse(obj._repr_html_())
    assert head == list(expected) and caption == type(obj).__name__
    assert rows == [[cell(v) for v in row] for row in zip(*expected.values())]


@pytest.fixture(scope="module")
def data():
    dev = make_tagger_outputs(2000, n_tags=30, split_seed=1)
    test = make_tagger_outputs(2000, n_tags=30, split_seed=2)
    groups = TagGroups.from_counts(test.train_counts, 3, n_tags=30)
    return threshold(dev.scores, dev.gold), threshold(test.scores, test.gold), groups


@pytest.mark.parametrize("ci", [None, "simulation"])
def test_reliability_table(data, ci):
    bins = calibration_error(data[1].score, data[1].label, n_bins=7).bins
    table = reliability_table(bins, ci=ci)
    assert isinstance(table, dict)   # still the dict it always was
    keys = ["mean_score", "mean_label", "count"] + (["ci_low", "ci_high"] if ci else []) + \
        ["lower", "upper"]
    check_views(table, {k: table[k].tolist() for k in keys})
    frame = table.to_frame()
    assert len(frame) == 7 and frame["count"].sum() == len(data[1])
    if ci:   # each bin's 95% Wilson interval, not another level's or method's
        from scipy.stats import binomtest
        for row in frame.itertuples():
            k = round(row.mean_label * row.count)
            ref = binomtest(k, int(row.count)).proportion_ci(0.95, method="wilson")
            assert (row.ci_low, row.ci_high) == pytest.approx((ref.low, ref.high), rel=1e-9)


def test_evaluation_result_group_table(data):
    res = evaluate(data[1], data[2], metrics=["ece", "brier"])
    g = res.groups
    expected = {"group": ["all", 1, 2, 3],
                "tag_types": [30] + [r["tag_types"] for r in g],
                "train_share_min": [None] + [r["train_share_min"] for r in g],
                "train_share_max": [None] + [r["train_share_max"] for r in g],
                "entries": [len(data[1])] + [r["entries"] for r in g],
                "tokens": [None] + [r["tokens"] for r in g],
                "ce": [res.smce.value] + [c.value for c in res.gmce],
                "ci_low": [res.smce.ci_low] + [c.ci_low for c in res.gmce],
                "ci_high": [res.smce.ci_high] + [c.ci_high for c in res.gmce],
                "ece": [res.metrics["ece"]["pooled"]] + res.metrics["ece"]["groups"],
                "brier": [res.metrics["brier"]["pooled"]] + res.metrics["brier"]["groups"]}
    check_views(res, expected)
    assert sum(expected["entries"][1:]) == expected["entries"][0]
    assert all(lo < v < hi for lo, v, hi in zip(expected["ci_low"], expected["ce"],
                                                 expected["ci_high"]))


def test_per_tag_mce_table(data):
    res = mce(data[1], min_entries=150, ci="simulation", debias=False)
    assert res.per_tag and res.too_few
    tags = sorted(res.per_tag)
    few = sorted(res.too_few)
    check_views(res, {
        "tag": tags + few, "evaluated": [True] * len(tags) + [False] * len(few),
        "n": [res.per_tag[t].n for t in tags] + [res.too_few[t] for t in few],
        "ce": [res.per_tag[t].value for t in tags] + [None] * len(few),
        "ci_low": [res.per_tag[t].ci_low for t in tags] + [None] * len(few),
        "ci_high": [res.per_tag[t].ci_high for t in tags] + [None] * len(few)})
    frame = res.to_frame()
    ev = frame[frame["evaluated"]]
    assert math.isclose(math.sqrt((ev["ce"] ** 2).mean()), res.value, rel_tol=1e-12)


def test_comparison_and_method_comparison(data):
    dev, test, groups = data
    table = compare_methods(dev, test, groups, methods=["histogram", "isotonic"], ci=None)
    before = table.before
    values = [table.values(before)] + [table.values(r) for r in table.after.values()]
    expected = {"method": ["none"] + [m for m, _ in table.after],
                "grouping": [None] + [g for _, g in table.after],
                "n_groups": [None] + [1 if g == "scw" else 3 for _, g in table.after]}
    expected.update({c: [v[i] for v in values] for i, c in enumerate(table.columns())})
    check_views(table, expected)
    assert len(table.to_frame()) == 5
    after = table.after[("isotonic", "tfg")]
    comparison = compare(before, after)
    check_views(comparison, {k: [r[k] for r in comparison.rows] for k in
                             ("name", "before", "after", "change", "relative_change")})
    frame = comparison.to_frame()
    np.testing.assert_allclose(frame["change"], frame["after"] - frame["before"])


def test_html_escapes_text_and_shows_missing_values():
    table = Comparison([{"name": "<b>&\"x'", "before": 0.0, "after": None, "change": None,
                         "relative_change": float("nan")}])
    text = table._repr_html_()
    assert "<b>" not in text and "&lt;b&gt;&amp;&quot;x&#x27;" in text
    head, rows, _ = parse(text)
    assert rows == [["<b>&\"x'", "0", "—", "—", "—"]]
    assert parse(html_table({"a": []}))[1] == []


def test_missing_pandas_names_the_install(data, monkeypatch):
    res = evaluate(data[1], data[2], ci=None)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r'EvaluationResult.to_frame\(\) needs pandas: '
                                          r'pip install "sparsecal\[pandas\]"'):
        res.to_frame()
    assert "<table" in res._repr_html_()   # HTML needs no pandas
