"""Tests of the HTML report (``sparsecal report``, ``sparsecal demo``,
``sparsecal.report``).

Figures are the slow part, so two reports are rendered: ``sparsecal demo
--tokens 3000`` (run through the installed console script) writes one with
recalibration (dev split, method comparison), and ``sparsecal report`` without
--dev-scores is then written over it, checking that a re-run replaces the directory.
Every link of a page must point to a file inside its report directory.
"""
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlparse

import numpy as np
import pytest

from sparsecal import GroupedCalibrator, IsotonicCalibrator, TagGroups, evaluate, threshold
from sparsecal.plotting import report as report_module
from sparsecal.cli.main import main
from sparsecal.calibration.comparison import compare_methods
from sparsecal.calibration.registry import METHODS
from sparsecal.metrics import ConfidenceInterval
from sparsecal.plotting.report import MARKER, REPORT_METRICS, markdown_to_html
from sparsecal.datasets.synthetic import make_tagger_outputs

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
DEMO_TOKENS = 3000


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("report-data")
    dev = make_tagger_outputs(1500, split_seed=1)
    test = make_tagger_outputs(1500, split_seed=2)
    for name, arr in [("dev.npy", dev.scores), ("dev_gold.npy", dev.gold),
                      ("test.npy", test.scores), ("test_gold.npy", test.gold)]:
        np.save(d / name, arr)
    counts = {str(k): v for k, v in dev.train_counts.items()}
    (d / "counts.json").write_text(json.dumps(counts))
    return SimpleNamespace(
        p=lambda name: str(d / name),
        dev=threshold(dev.scores, dev.gold), test=threshold(test.scores, test.gold),
        groups=TagGroups.from_counts(counts, 5, n_tags=dev.scores.shape[1]))


def run_quietly(argv):
    """``main(argv)`` in a module fixture (no capsys): (rc, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


def report_argv(data, out_dir, *, title, dev=False):
    argv = ["report", "--scores", data.p("test.npy"), "--gold", data.p("test_gold.npy"),
            "--train-counts", data.p("counts.json"), "--title", title, "-o", str(out_dir)]
    if dev:
        argv += ["--dev-scores", data.p("dev.npy"), "--dev-gold", data.p("dev_gold.npy")]
    return argv


def console_script():
    exe = Path(sys.executable).parent / "sparsecal"
    if not exe.is_file():
        pytest.skip(f"console script not installed next to {sys.executable}")
    return str(exe)


@pytest.fixture(scope="module")
def reports(data, tmp_path_factory):
    """``sparsecal demo`` writes ``live`` (snapshotted to ``demo``); then
    ``sparsecal report`` without --dev-scores is written over ``live`` (a re-run)."""
    root = tmp_path_factory.mktemp("reports")
    live = root / "report"
    # the package under test (this checkout first on the path), not the installed one
    path = os.pathsep.join([str(Path(__file__).resolve().parents[1])]
                           + [p for p in [os.environ.get("PYTHONPATH")] if p])
    demo = subprocess.run([console_script(), "demo", "--tokens", str(DEMO_TOKENS), "-o",
                           str(live)], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=path))
    assert demo.returncode == 0, demo.stderr
    snapshot = root / "snapshot-demo"
    shutil.copytree(live, snapshot)
    (live / "stale.txt").write_text("from an earlier run")
    (live / "figures" / "old.png").write_bytes(PNG_MAGIC)
    rc, out, err = run_quietly(report_argv(data, live, title="Run <B> & co")
                               + ["--ci", "simulation"])   # Algorithm 2's plug-in CE
    assert rc == 0, err
    return SimpleNamespace(root=root, demo=snapshot, demo_proc=demo, rerun=live,
                           rerun_out=out, rerun_err=err)


@pytest.fixture(scope="module")
def demo_data():
    """The demo's dev and test entries and groups, rebuilt with the API."""
    dev = make_tagger_outputs(DEMO_TOKENS, split_seed=1)
    test = make_tagger_outputs(DEMO_TOKENS, split_seed=2)
    return SimpleNamespace(dev=threshold(dev.scores, dev.gold),
                           test=threshold(test.scores, test.gold),
                           groups=TagGroups.from_counts(dev.train_counts, 5))


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        self.links += [(tag, name, value) for name, value in attrs
                       if name in ("src", "href")]


def links_of(report_dir):
    parser = Links()
    parser.feed((report_dir / "index.html").read_text(encoding="utf-8"))
    return parser.links


def check_links(report_dir):
    """Every link is a file inside the report, or an anchor of the page."""
    links = links_of(report_dir)
    assert links, "the page links to nothing"
    root = report_dir.resolve()
    page = (report_dir / "index.html").read_text(encoding="utf-8")
    for tag, name, value in links:
        if value.startswith("#"):   # the contents, the footnotes
            assert f"id='{value[1:]}'" in page, value
            continue
        parsed = urlparse(value)
        assert not parsed.scheme and not parsed.netloc, value   # no http:, file:, data:
        assert not value.startswith("/") and not os.path.isabs(value), value
        target = (report_dir / value).resolve()
        assert target.is_relative_to(root), value
        assert target.is_file() and target.stat().st_size > 0, value
    return links


def figure_files(report_dir):
    return sorted(p.name for p in (report_dir / "figures").iterdir())


def table_rows(text):
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith("|")
            and not line.startswith("|---")]


# ------------------------------------------------------------------- demo -- #

def test_demo_prints_smce_and_table_1(reports, demo_data):
    proc = reports.demo_proc
    assert "Traceback" not in proc.stderr
    out = proc.stdout
    assert f"{DEMO_TOKENS:,} tokens x 426 tags" in out
    before = evaluate(demo_data.test, demo_data.groups, top_label=True)
    assert (f"**SMCE** {before.smce.value:.4f} [{before.smce.ci_low:.4f}, "
            f"{before.smce.ci_high:.4f}] over {len(demo_data.test):,} entries") in out
    table = compare_methods(demo_data.dev, demo_data.test, demo_data.groups).to_markdown()
    assert table in out   # Table 1: None, every method x {1, 5} groups, bottom rows
    names = [r[:2] for r in table_rows(table)]
    assert ["None", ""] in names
    for m in METHODS:
        assert [METHODS[m].display_name, "1"] in names and [METHODS[m].display_name, "5"] in names
    assert f"Report with figures: {reports.rerun / 'index.html'}" in out


def test_demo_report_files(reports):
    d = reports.demo
    assert sorted(p.name for p in d.iterdir()) == ["figures", "index.html", "numbers.json"]
    names = figure_files(d)
    stems = {n.rsplit(".", 1)[0] for n in names}
    assert {"reliability", "groups", "methods", "per_tag", "modified_reliability",
            "smooth_reliability", "bayes_error"} <= stems
    assert names == sorted(f"{s}.{ext}" for s in stems for ext in ("png", "svg"))
    for stem in stems:
        png = (d / "figures" / f"{stem}.png").read_bytes()
        assert len(png) > 1000 and png.startswith(PNG_MAGIC)
        svg = (d / "figures" / f"{stem}.svg").read_text(encoding="utf-8")
        assert "<svg" in svg and svg.rstrip().endswith("</svg>")


def test_demo_report_links_stay_inside_the_directory(reports):
    d = reports.demo
    links = check_links(d)
    targets = {value for _, _, value in links}
    assert "numbers.json" in targets
    assert {"#summary", "#groups", "#measures", "#tags", "#methods", "#figures"} <= targets
    for name in figure_files(d):   # every figure is shown (PNG) or linked (SVG)
        assert f"figures/{name}" in targets
    page = (d / "index.html").read_text(encoding="utf-8")
    assert "http://" not in page and "https://" not in page
    assert str(d) not in page and str(reports.rerun) not in page


def test_demo_report_page_content(reports):
    page = (reports.demo / "index.html").read_text(encoding="utf-8")
    assert MARKER in page
    assert "<title>sparsecal demo: a synthetic CCG-like tagger</title>" in page
    # contents first, then the summary, the matrices, the tags, the methods, figures
    order = [page.index(f"<h2 id='{a}'>") for a in
             ("summary", "groups", "measures", "tags", "methods", "figures")]
    assert order == sorted(order) and page.index("<nav class='toc'>") < order[0]
    summary = page[order[0]:order[1]]
    assert "All entries (SMCE)" in summary and "Group 5 (GMCE)" in summary
    assert "uncalibrated: CE [95% interval]" in summary
    assert "TFG isotonic: CE [95% interval]" in summary
    assert "<strong>Miscalibrated sets</strong>" in summary
    assert "<strong>Miscalibrated tags</strong>" in summary and "<strong>MCE</strong>" in summary
    for m in METHODS:
        assert f"<td>{METHODS[m].display_name}</td>" in page
    for shown in ("Plug-in CE₂", "Smooth ECE", "Brier MCB", "Brier DSC", "Brier UNC",
                  "Log loss", "Log loss MCB", "Log loss DSC", "Log loss UNC"):
        assert f"<td>{shown}</td>" in page     # one row per measure, a column per set
    assert "group 1</td>" not in page           # no flat list of measure x group rows
    assert "**" not in page and not re.search(r"<td>\s*\|", page)


def report_kw(seed=0):
    """The evaluation of a report with the default interval."""
    return dict(ci=ConfidenceInterval("score", random_state=seed), debias=True,
                bin_size=200, metrics=list(REPORT_METRICS),
                min_entries=report_module.MIN_TAG_ENTRIES)


def test_demo_report_numbers_equal_the_api(reports, demo_data):
    numbers = json.loads((reports.demo / "numbers.json").read_text())
    assert set(numbers) == {"evaluation", "after_tfg_isotonic", "comparison",
                            "tag_calibration_test_p"} | (set(numbers) & {"infinite_log_loss"})
    before = evaluate(demo_data.test, demo_data.groups, per_tag=True, top_label=True,
                      **report_kw())
    assert numbers["evaluation"] == json.loads(before.to_json())
    after = GroupedCalibrator(IsotonicCalibrator(), demo_data.groups).fit(
        demo_data.dev).transform(demo_data.test)
    assert numbers["after_tfg_isotonic"] == json.loads(
        evaluate(after, demo_data.groups, per_tag=True, top_label=True, **report_kw()).to_json())
    comparison = compare_methods(demo_data.dev, demo_data.test, demo_data.groups,
                                 ci=ConfidenceInterval("score", random_state=0),
                                 evaluation={"bin_size": 200, "debias": True})
    assert numbers["comparison"]["methods"] == comparison.to_dict()["methods"]
    assert numbers["comparison"]["none"] == comparison.to_dict()["none"]
    # the tests per tag: a calibration test of each tag with its own CE
    tags = numbers["tag_calibration_test_p"]["evaluation"]
    assert sorted(tags, key=int) == sorted(numbers["evaluation"]["mce"]["per_tag"], key=int)
    t = max(before.mce.per_tag, key=lambda t: before.mce.per_tag[t].n)
    mine = demo_data.test.tag == t
    from sparsecal.metrics import calibration_test
    assert tags[str(t)] == calibration_test(demo_data.test.score[mine],
                                            demo_data.test.label[mine],
                                            bin_size=200).p_value


# ------------------------------------------------- re-run, without --dev-scores #

def test_rerun_replaces_the_report(reports):
    d = reports.rerun
    assert not (d / "stale.txt").exists()
    assert not (d / "figures" / "old.png").exists()
    page = (d / "index.html").read_text(encoding="utf-8")
    assert "<title>Run &lt;B&gt; &amp; co</title>" in page   # escaped
    assert "synthetic CCG-like tagger" not in page
    assert [p.name for p in reports.root.iterdir() if p.name.startswith(".tmp-")] == []
    assert f"wrote the report: {d / 'index.html'}" in reports.rerun_out
    assert "(no --train-counts" not in reports.rerun_out


def test_report_without_dev_has_no_method_comparison(reports, data):
    d = reports.rerun
    names = figure_files(d)
    stems = {n.rsplit(".", 1)[0] for n in names}
    assert "methods" not in stems
    assert {"reliability", "groups", "modified_reliability"} <= stems
    assert names == sorted(f"{s}.{ext}" for s in stems for ext in ("png", "svg"))
    for stem in stems:
        assert (d / "figures" / f"{stem}.png").read_bytes().startswith(PNG_MAGIC)
    check_links(d)
    numbers = json.loads((d / "numbers.json").read_text())
    assert {"evaluation"} <= set(numbers) <= {"evaluation", "tag_calibration_test_p",
                                              "infinite_log_loss"}
    # per-tag CE where a tag has the entries the report asks for (mce's default)
    per_tag = bool(np.bincount(data.test.tag).max() >= report_module.MIN_TAG_ENTRIES)
    expected = evaluate(data.test, data.groups, ci="simulation", per_tag=per_tag,
                        min_entries=report_module.MIN_TAG_ENTRIES, top_label=True,
                        metrics=list(REPORT_METRICS))
    assert "bayes_error" in stems and "smooth_reliability" in stems
    assert numbers["evaluation"] == json.loads(expected.to_json())
    page = (d / "index.html").read_text(encoding="utf-8")
    assert "Recalibration" not in page and "Isotonic Regression" not in page


def test_report_directory_has_ordinary_permissions(reports):
    mask = os.umask(0o022)
    os.umask(mask)
    for d in (reports.rerun, reports.rerun / "figures"):
        assert d.stat().st_mode & 0o777 == 0o777 & ~mask, d


def test_report_with_dev_passes_everything_on(data, capsys, tmp_path, monkeypatch):
    """``report --dev`` plumbing (rendering is covered by the demo report)."""
    calls = []

    def fake_write_report(out_dir, test, groups, **kw):
        calls.append((out_dir, test, groups, kw))
        return os.path.join(out_dir, "index.html")
    monkeypatch.setattr(report_module, "write_report", fake_write_report)
    argv = report_argv(data, tmp_path / "r", title="T", dev=True) + [
        "--methods", "platt", "histogram", "--bins", "7", "--seed", "4"]
    assert main(argv) == 0
    (out_dir, test, groups, kw), = calls
    assert out_dir == str(tmp_path / "r")
    np.testing.assert_array_equal(test.score, data.test.score)
    np.testing.assert_array_equal(kw["dev"].score, data.dev.score)
    assert groups == data.groups
    assert kw["methods"] == ["platt", "histogram"]
    assert (kw["n_bins"], kw["seed"], kw["title"]) == (7, 4, "T")
    assert (kw["ci"].method, kw["ci"].random_state) == ("score", 4)   # the default
    assert "wrote the report" in capsys.readouterr().out


def test_report_passes_the_evaluation_flags_on(data, capsys, tmp_path, monkeypatch):
    """--bin-size, --binning, --norm, --debias, --metrics, --prior reach
    write_report under the API's names; --debias makes the score interval the
    default (the report always shows intervals)."""
    calls = []
    monkeypatch.setattr(report_module, "write_report",
                        lambda out_dir, test, groups, **kw: calls.append(kw) or "x")
    argv = report_argv(data, tmp_path / "r", title="T", dev=True) + [
        "--methods", "gaussian", "--bin-size", "300", "--debias", "--metrics", "dcf",
        "--prior", "0.2", "--level", "0.9"]
    assert main(argv) == 0
    kw, = calls
    assert kw["evaluation"] == {"bin_size": 300, "binning": "equal-mass", "norm": 2,
                                "debias": True, "metrics": ["dcf"]}
    assert kw["prior"] == 0.2 and kw["n_bins"] is None
    assert kw["ci"] == ConfidenceInterval("score", confidence_level=0.9, random_state=0)
    calls.clear()
    assert main(report_argv(data, tmp_path / "r", title="T") + [
        "--binning", "fixed", "--norm", "1", "--bins", "15"]) == 0
    assert calls[0]["evaluation"] == {"bin_size": None, "binning": "fixed", "norm": 1,
                                      "debias": False, "metrics": []}
    assert calls[0]["ci"].method == "simulation"
    calls.clear()   # by default: the debiased CE_2 with its score interval
    assert main(report_argv(data, tmp_path / "r", title="T")) == 0
    assert calls[0]["evaluation"]["debias"] is True and calls[0]["ci"].method == "score"


def test_report_options_reach_every_evaluation(data, tmp_path, monkeypatch):
    """write_report's evaluation options and prior: the numbers equal evaluate's."""
    monkeypatch.setattr(report_module, "_figures", lambda directory, *a: [])
    opts = dict(bin_size=150, norm=1)
    report_module.write_report(tmp_path / "r", data.test, data.groups, dev=data.dev,
                               methods=["gaussian"], ci=None, prior=0.3,
                               evaluation=dict(opts, metrics=["min-dcf"]))
    numbers = json.loads((tmp_path / "r" / "numbers.json").read_text())
    min_entries = report_module.MIN_TAG_ENTRIES
    per_tag = bool(np.bincount(data.test.tag).max() >= min_entries)
    want = evaluate(data.test, data.groups, per_tag=per_tag, min_entries=min_entries,
                    top_label=True,
                    ci=ConfidenceInterval(random_state=0), prior=0.3,
                    metrics=list(REPORT_METRICS) + ["min-dcf"], **opts)
    assert numbers["evaluation"] == json.loads(want.to_json())
    assert numbers["evaluation"]["settings"]["bin_size"] == 150
    compared = compare_methods(data.dev, data.test, data.groups, methods=["gaussian"],
                               ci=ConfidenceInterval(random_state=0), prior=0.3,
                               evaluation=opts)
    assert numbers["comparison"]["methods"] == json.loads(json.dumps(
        compared.to_dict()["methods"]))
    default = compare_methods(data.dev, data.test, data.groups, methods=["gaussian"],
                              ci=ConfidenceInterval(random_state=0), evaluation=opts)
    assert numbers["comparison"]["methods"] != json.loads(json.dumps(
        default.to_dict()["methods"]))   # the prior changed the Gaussian calibrator


def test_report_refuses_a_prior_no_method_takes(data, tmp_path):
    with pytest.raises(ValueError, match="prior applies to methods with an application "
                                         "prior"):
        report_module.write_report(tmp_path / "r", data.test, data.groups, dev=data.dev,
                                   methods=["isotonic"], prior=0.3)
    assert not (tmp_path / "r").exists()


def test_report_on_a_small_test_set_without_per_tag_ce(data, tmp_path, monkeypatch):
    """No tag with 100 entries: the report goes without per-tag CE (it used to
    raise). Figures are stubbed out (they are checked above)."""
    tagger = make_tagger_outputs(200, split_seed=5)
    small = threshold(tagger.scores, tagger.gold)
    assert np.bincount(small.tag).max() < 100

    def no_figures(directory, *args):
        os.mkdir(os.path.join(directory, "figures"))
        return []
    monkeypatch.setattr(report_module, "_figures", no_figures)
    path = report_module.write_report(tmp_path / "r", small, data.groups)
    numbers = json.loads((tmp_path / "r" / "numbers.json").read_text())
    assert "mce" not in numbers["evaluation"] and "top_label_ece" in numbers["evaluation"]
    assert path == os.path.join(tmp_path / "r", "index.html")


@pytest.mark.parametrize("methods", [("isotonic", "platt"), ("platt",)])
def test_report_reuses_the_calibrators_compare_fitted(data, tmp_path, monkeypatch, methods):
    """Each (method, grouping) is fit once; the figures' TFG isotonic model is
    compare's own, fit again only when isotonic was not compared (issue 10)."""
    from sparsecal.calibration.grouped import GroupedCalibrator
    fits = []
    real_fit = GroupedCalibrator.fit

    def counting_fit(self, entries, sample_weight=None):
        fits.append((type(self.base).__name__, self.groups.kind))
        return real_fit(self, entries, sample_weight)
    monkeypatch.setattr(GroupedCalibrator, "fit", counting_fit)
    monkeypatch.setattr(report_module, "_figures", lambda directory, *a: (
        os.mkdir(os.path.join(directory, "figures")), [])[1])
    report_module.write_report(tmp_path / "r", data.test, data.groups, dev=data.dev,
                               methods=methods)
    compared = [(METHODS[m].cls.__name__, g.kind) for m in methods
                for g in (TagGroups.scw(data.groups.n_tags), data.groups)]
    extra = [] if "isotonic" in methods else [("IsotonicCalibrator", data.groups.kind)]
    assert fits == compared + extra


# ----------------------------------------------------------- failures -- #

def test_report_refuses_a_directory_that_is_not_a_report(data, capsys, tmp_path):
    target = tmp_path / "my-files"
    target.mkdir()
    (target / "keep.txt").write_text("precious")
    (target / "index.html").write_text("<html>my own page</html>")
    rc = main(report_argv(data, target, title="x"))
    err = capsys.readouterr().err
    assert rc == 2
    assert str(target) in err and "not a sparsecal report" in err
    assert "Traceback" not in err
    assert sorted(p.name for p in target.iterdir()) == ["index.html", "keep.txt"]
    assert (target / "keep.txt").read_text() == "precious"
    assert (target / "index.html").read_text() == "<html>my own page</html>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my-files"]


def test_report_refuses_a_file(data, capsys, tmp_path):
    target = tmp_path / "report"
    target.write_text("not a directory")
    assert main(report_argv(data, target, title="x")) == 2
    assert "not a sparsecal report" in capsys.readouterr().err
    assert target.read_text() == "not a directory"


def test_report_failure_keeps_the_earlier_report(data, capsys, tmp_path, monkeypatch):
    target = tmp_path / "report"
    (target / "figures").mkdir(parents=True)
    page = f"<html>{MARKER} earlier report</html>"
    (target / "index.html").write_text(page)

    def broken_figures(directory, *args):
        (Path(directory) / "figures").mkdir()
        raise OSError("disk full (simulated)")
    monkeypatch.setattr(report_module, "_figures", broken_figures)
    rc = main(report_argv(data, target, title="x"))
    err = capsys.readouterr().err
    assert rc == 2 and "disk full" in err
    assert (target / "index.html").read_text() == page
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]   # no temp dirs


# ------------------------------------------------------- markdown_to_html -- #

def test_markdown_table_to_html():
    md = "| Group | GMCE |\n|---|---:|\n| 1 | 0.0123 |\n| 2 | — |"
    assert markdown_to_html(md) == ("<table><tr><th>Group</th><th>GMCE</th></tr>"
                                    "<tr><td>1</td><td>0.0123</td></tr>"
                                    "<tr><td>2</td><td>—</td></tr></table>")


def test_markdown_bold_paragraphs_and_escaping():
    md = "**SMCE** 0.02 over 1,000 entries\n\nscores < 0.01 & **a<b**"
    assert markdown_to_html(md) == ("<p><strong>SMCE</strong> 0.02 over 1,000 entries</p>\n"
                                    "<p>scores &lt; 0.01 &amp; <strong>a&lt;b</strong></p>")


def test_markdown_text_between_tables():
    md = "| a |\n|---|\n| **1** |\ntext\n| b |\n|---|\n| 2 |"
    html = markdown_to_html(md)
    assert html.count("<table>") == 2
    assert "<td><strong>1</strong></td>" in html and "<p>text</p>" in html
    assert html.index("<th>a</th>") < html.index("<p>text</p>") < html.index("<th>b</th>")


def test_markdown_of_an_evaluation(data):
    result = evaluate(data.test, data.groups, ci=None)
    html = markdown_to_html(result.to_markdown())
    assert html.count("<tr>") == 1 + data.groups.n_groups
    assert "|" not in html and "---" not in html
    assert f"<strong>SMCE</strong> {result.smce.value:.4f}" in html


def test_report_prior_of_measures_only(data, tmp_path, monkeypatch):
    """--prior for DCF alone: methods without a prior are fit as usual."""
    monkeypatch.setattr(report_module, "_figures", lambda directory, *a: [])
    report_module.write_report(tmp_path / "r", data.test, data.groups, dev=data.dev,
                               methods=["platt"], prior=0.2,
                               evaluation={"metrics": ["dcf"]})
    numbers = json.loads((tmp_path / "r" / "numbers.json").read_text())
    from sparsecal.metrics import dcf
    assert numbers["evaluation"]["metrics"]["dcf"]["pooled"] == dcf(
        data.test.score, data.test.label, prior=0.2).value


def test_report_names_tags_from_the_tag_index_without_train_counts(data, tmp_path,
                                                                   monkeypatch):
    """--tag-index without --train-counts (one SCW group): the figures still get
    the tag names (they showed bare indices)."""
    seen = []
    monkeypatch.setattr(report_module, "_figures",
                        lambda directory, *a: seen.append(a[-2]) or [])
    n_tags = data.test.n_tags
    index = tmp_path / "index.json"
    index.write_text(json.dumps({f"TAG{t}": t for t in range(n_tags) if t != 1}))
    assert main(["report", "--scores", data.p("test.npy"), "--gold", data.p("test_gold.npy"),
                 "--tag-index", str(index), "-o", str(tmp_path / "r")]) == 0
    assert seen[0].tag_names == ["TAG0", ""] + [f"TAG{t}" for t in range(2, n_tags)]
