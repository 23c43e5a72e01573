"""Issue 26's "done when" for the HTML report: on the synthetic demo, on UD
English-EWT (a slice, a count-based tagger) and on a perfectly calibrated
tagger, ``sparsecal demo`` / ``sparsecal report`` write no cell that is not a
finite number without a footnote that says why, no point estimate outside its
interval (tables, numbers.json, the per-tag figure), and figures without
detectable overlaps: no text outside the canvas, no legend over plotted data
(checked on the matplotlib artists of every figure the report draws).
"""
import contextlib
import io
import json
import math
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.patches import Rectangle
from matplotlib.text import Text

import sparsecal as sc
from sparsecal import plotting
from sparsecal.cli.main import main
from sparsecal.datasets import make_tagger_outputs
from sparsecal.plotting import report as report_module

REPO = Path(__file__).resolve().parents[1]
UD = REPO.parent / "shared" / "data" / "ud_ewt"


# --------------------------------------------------------------------------- #
# What a reviewer checks                                                       #
# --------------------------------------------------------------------------- #

class Cells(HTMLParser):
    """Every table cell of a page: its text and the footnotes it links to; and
    the ids of the page."""

    def __init__(self):
        super().__init__()
        self.cells, self.ids, self._cell = [], set(), None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag in ("td", "th"):
            self._cell = {"text": "", "notes": []}
        elif tag == "a" and self._cell is not None and attrs.get("href", "").startswith(
                "#note-"):
            self._cell["notes"].append(attrs["href"][1:])

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data


NOT_A_NUMBER = re.compile(r"∞|—|n/a|(?<![\w=|])(?:inf|nan)(?![\w=|])", re.IGNORECASE)
INTERVAL = re.compile(r"(-?[\d.]+(?:e-?\d+)?)\s*\[(-?[\d.]+(?:e-?\d+)?), (-?[\d.]+(?:e-?\d+)?)\]")


def page_defects(page):
    """Cells that show no finite number without a footnote, footnotes that do
    not exist, estimates outside their interval."""
    parser = Cells()
    parser.feed(page)
    out = []
    for cell in parser.cells:
        text = cell["text"]
        if NOT_A_NUMBER.search(text) and not cell["notes"]:
            out.append(f"unexplained cell {text!r}")
        out += [f"missing footnote {n}" for n in cell["notes"] if n not in parser.ids]
        for v, lo, hi in INTERVAL.findall(text):
            if not float(lo) <= float(v) <= float(hi):
                out.append(f"estimate outside its interval: {text!r}")
    return out, parser


def ce_dicts(x):
    """Every calibration error (a dict with an interval) in numbers.json."""
    if isinstance(x, dict):
        if "ci_low" in x and "value" in x:
            yield x
        for v in x.values():
            yield from ce_dicts(v)
    elif isinstance(x, list):
        for v in x:
            yield from ce_dicts(v)


def number_defects(numbers):
    out = []
    for ce in ce_dicts(numbers):
        if ce["ci_low"] is not None and not ce["ci_low"] <= ce["value"] <= ce["ci_high"]:
            out.append(f"estimate {ce['value']} outside [{ce['ci_low']}, {ce['ci_high']}]")
    return out


def _along(xy):
    """Points every ~2 display pixels along a polyline (its vertices included)."""
    xy = xy[np.all(np.isfinite(xy), axis=1)]
    if len(xy) < 2:
        return xy
    out = [xy[:1]]
    for a, b in zip(xy[:-1], xy[1:]):
        k = int(min(np.hypot(*(b - a)) / 2, 2000)) + 1
        out.append(a + (b - a) * np.linspace(0, 1, k + 1)[1:, None])
    return np.concatenate(out)


def _points(ax):
    """Display coordinates of the data an axes draws: points along lines and
    error bars, scatter offsets, bar corners."""
    pts = []
    for line in ax.lines:
        xy = line.get_transform().transform(np.asarray(line.get_xydata(), float))
        drawn = line.get_linestyle() not in ("None", "none", "", " ")
        pts.append(_along(xy) if drawn else xy)
    for coll in ax.collections:
        if isinstance(coll, PathCollection) and len(coll.get_offsets()):
            pts.append(coll.get_offset_transform().transform(coll.get_offsets()))
        elif isinstance(coll, LineCollection):
            for seg in coll.get_segments():
                if len(seg):
                    pts.append(_along(coll.get_transform().transform(seg)))
    for patch in ax.patches:
        if isinstance(patch, Rectangle) and patch.get_width() and patch.get_height():
            box = patch.get_window_extent()
            pts.append(np.array([[box.x0, box.y0], [box.x1, box.y1]]))
    pts = np.concatenate(pts) if pts else np.empty((0, 2))
    return pts[np.all(np.isfinite(pts), axis=1)]


def figure_defects(fig):
    """Detectable overlaps of a drawn figure: text (titles, labels, ticks,
    legend entries, annotations) outside the canvas; a legend box holding a
    plotted point of any axes."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    canvas = fig.bbox
    out = []
    undrawn = set()   # the labels of ticks outside the view, which matplotlib skips
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not lo - 1e-9 * (hi - lo) <= tick.get_loc() <= hi + 1e-9 * (hi - lo):
                    undrawn.update(map(id, (tick.label1, tick.label2)))
    for text in fig.findobj(Text):
        if not text.get_visible() or not text.get_text().strip() or id(text) in undrawn:
            continue
        box = text.get_window_extent(renderer)
        if (box.x0 < canvas.x0 - 1 or box.y0 < canvas.y0 - 1 or box.x1 > canvas.x1 + 1
                or box.y1 > canvas.y1 + 1):
            out.append(f"text outside the canvas: {text.get_text()!r}")
    legends = list(fig.legends) + [a.get_legend() for a in fig.axes if a.get_legend()]
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            pts = _points(ax)
            inside = ((pts[:, 0] > box.x0) & (pts[:, 0] < box.x1)
                      & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1))
            if inside.any():
                out.append(f"legend {[t.get_text() for t in legend.get_texts()][:2]} over "
                           f"{int(inside.sum())} plotted point(s) of {ax.get_title()!r}")
    return out


def test_the_checks_find_what_they_look_for():
    """Each check on a page, on numbers and on a figure that has the defect."""
    page = ("<table><tr><td>0.0100 [0.0200, 0.0300]</td><td>∞</td>"
            "<td>—<sup><a href='#note-1'>1</a></sup></td></tr></table><li id='note-1'>x</li>")
    found, _ = page_defects(page.replace("</tr>", "<td>VERB|VerbForm=Inf</td><td>NaN</td></tr>"))
    assert found == ["estimate outside its interval: '0.0100 [0.0200, 0.0300]'",
                     "unexplained cell '∞'", "unexplained cell 'NaN'"]
    found, _ = page_defects(page)
    assert found == ["estimate outside its interval: '0.0100 [0.0200, 0.0300]'",
                     "unexplained cell '∞'"]
    assert number_defects({"a": [{"value": 0.5, "ci_low": 0.6, "ci_high": 0.7}]})
    from sparsecal.plotting._style import _new_figure
    fig = _new_figure((4, 3))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], label="curve")
    ax.legend(loc="center")                            # over the diagonal
    ax.text(1.3, 0.5, "far outside", transform=ax.transAxes)
    found = figure_defects(fig)
    assert any(d.startswith("legend ['curve'] over") for d in found)
    assert "text outside the canvas: 'far outside'" in found


# --------------------------------------------------------------------------- #
# The reports                                                                  #
# --------------------------------------------------------------------------- #

def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    assert rc == 0, err.getvalue()


@pytest.fixture
def drawn(monkeypatch):
    """The report's figures as matplotlib figures (save_figure is watched)."""
    figures = {}
    save = plotting.save_figure

    def watched(fig, path, *args, **kw):
        figures[Path(path).name] = fig
        return save(fig, path, *args, **kw)
    monkeypatch.setattr(plotting, "save_figure", watched)
    return figures


def check(out_dir, figures):
    """The three checks of a written report."""
    page = (out_dir / "index.html").read_text(encoding="utf-8")
    defects, parser = page_defects(page)
    assert not defects, defects
    numbers = json.loads((out_dir / "numbers.json").read_text())
    assert not number_defects(numbers)
    assert figures and {"reliability", "groups", "per_tag"} <= set(figures)
    for name, fig in figures.items():
        assert not figure_defects(fig), (name, figure_defects(fig))
    return page, numbers, parser


def test_demo_report(tmp_path, drawn):
    """``sparsecal demo`` (a synthetic CCG-like tagger, recalibrated): the
    TFG isotonic scores of exactly 0 meet positives, so some log losses are
    infinite, each explained, with the clipped variant beside it."""
    run(["demo", "--tokens", 4000, "-o", tmp_path / "demo"])
    page, numbers, parser = check(tmp_path / "demo", drawn)
    assert "methods" in drawn
    if "infinite_log_loss" in numbers:
        assert "Entries with infinite log loss" in page
        assert "Log loss, clipped at 1e−15" in page
    # the debiased CE of a set at 0 after recalibration: no "-100.0%"
    assert "-100.0%" not in page and "0.0000" not in page


def _ud_files(tmp_path):
    """A UD EWT slice tagged by the count-based tagger of examples/_ud_unigram.py,
    written as the command line reads it."""
    sys.path.insert(0, str(REPO / "examples"))
    try:
        import _ud_unigram
        data = _ud_unigram.load(UD, train=2500, dev=400, test=400)
    finally:
        sys.path.remove(str(REPO / "examples"))
    for split in ("dev", "test"):
        np.save(tmp_path / f"{split}.npy", data[split][0])
        np.save(tmp_path / f"{split}_gold.npy", data[split][1])
    names = data["tag_names"]
    (tmp_path / "index.json").write_text(json.dumps({t: i for i, t in enumerate(names)}))
    (tmp_path / "counts.json").write_text(json.dumps(
        {names[i]: c for i, c in data["train_counts"].items()}))
    return names


@pytest.mark.skipif(not UD.is_dir(), reason=f"real data not available: {UD} is absent")
def test_ud_ewt_report(tmp_path, drawn):
    """``sparsecal report`` on UD EWT with its defaults (the debiased CE_2 and
    its score interval): tag names from the tag index everywhere a tag is shown."""
    names = _ud_files(tmp_path)
    run(["report", "--scores", tmp_path / "test.npy", "--gold", tmp_path / "test_gold.npy",
         "--dev-scores", tmp_path / "dev.npy", "--dev-gold", tmp_path / "dev_gold.npy",
         "--tag-index", tmp_path / "index.json", "--train-counts", tmp_path / "counts.json",
         "--methods", "isotonic", "histogram", "platt",
         "-o", tmp_path / "ud"])
    page, numbers, _ = check(tmp_path / "ud", drawn)
    s = numbers["evaluation"]["settings"]
    assert (s["ci"], s["debias"], s["bin_size"]) == ("score", True, 200)
    assert "tag 0" not in page and names[0] in page        # NOUN|Number=Sing
    per_tag = numbers["evaluation"]["mce"]["per_tag"]
    most = max(per_tag, key=lambda t: per_tag[t]["n"])
    ticks = [t.get_text() for t in drawn["per_tag"].axes[0].get_yticklabels()]
    assert ticks[0] == f"{names[int(most)]}  (n={per_tag[most]['n']:,})"
    assert f"<td>{names[int(most)]}</td>" in page            # the per-tag table


def test_calibrated_tagger_report(tmp_path, drawn):
    """A perfectly calibrated tagger (gold drawn from its scores): every
    interval holds its estimate, and the calibration tests call no set
    miscalibrated (p > 0.05 after Holm)."""
    dev, test = (make_tagger_outputs(6000, n_tags=80, miscalibration=0.0, split_seed=s)
                 for s in (1, 2))
    groups = sc.TagGroups.from_counts(dev.train_counts, 5, n_tags=80)
    report_module.write_report(tmp_path / "cal", sc.threshold(test.scores, test.gold),
                               groups, dev=sc.threshold(dev.scores, dev.gold),
                               methods=["isotonic", "platt"])
    page, numbers, _ = check(tmp_path / "cal", drawn)
    assert "Miscalibrated sets</strong> (calibration test, Holm, 5%): uncalibrated: none" \
        in page
    per_tag = numbers["evaluation"]["mce"]["per_tag"]
    assert per_tag and all(c["ci_method"] == "score" for c in per_tag.values())
    # the true CE is 0: every per-tag interval should hold it but about 5%
    held = np.mean([c["ci_low"] == 0 for c in per_tag.values()])
    assert held >= 0.8, held
    assert math.isfinite(numbers["evaluation"]["mce"]["value"])
