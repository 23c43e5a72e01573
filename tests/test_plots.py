"""Tests of sparsecal.plotting: every figure builds, holds what it should (points per
bin, error bars, arrows per method and column, bars per tag), renders with Agg,
and bad input fails with a clear error; save_figure writes atomically."""
import os
import subprocess
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")   # before anything imports pyplot

import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch

import sparsecal as sc
from sparsecal import plotting as plots
from sparsecal.plotting import _style
from sparsecal.datasets.synthetic import make_tagger_outputs


# --------------------------------------------------------------------------- #
# Data: a small synthetic tagger, evaluated before and after TFG isotonic      #
# --------------------------------------------------------------------------- #

@pytest.fixture(scope="module")
def data():
    dev = make_tagger_outputs(2500, n_tags=60, split_seed=1)
    test = make_tagger_outputs(2500, n_tags=60, split_seed=2)
    groups = sc.TagGroups.tfg(dev.train_counts, n_groups=3, n_tags=60)
    e_dev = sc.threshold(dev.scores, dev.gold, 0.01)
    e_test = sc.threshold(test.scores, test.gold, 0.01)
    kw = dict(n_bins=10, ci=sc.ConfidenceInterval(n_resamples=200), per_tag=True,
              min_entries=50, top_label=True)
    before = sc.evaluate(e_test, groups, **kw)
    tfg = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups).fit(e_dev)
    e_after = tfg.transform(e_test)
    after = sc.evaluate(e_after, groups, **kw)
    scw = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(60)).fit(e_dev)
    after_scw = sc.evaluate(scw.transform(e_test), groups, **kw)
    return {"before": before, "after": after, "after_scw": after_scw, "groups": groups,
            "entries": e_test, "after_entries": e_after}


def n_nonempty(ce):
    return int((ce.bins.count > 0).sum())


def render(fig):
    fig.canvas.draw()   # layout and every artist must draw without error
    return fig


# --------------------------------------------------------------------------- #
# Import without a display                                                     #
# --------------------------------------------------------------------------- #

def test_module_needs_no_display_and_no_pyplot(tmp_path):
    code = textwrap.dedent(f"""
        import sys
        import sparsecal.plotting as p
        import sparsecal.plotting.report
        assert "matplotlib" not in sys.modules, "importing plotting imported matplotlib"
        import numpy as np
        from sparsecal import ConfidenceInterval, calibration_error
        rng = np.random.default_rng(0)
        s = rng.random(500); y = (rng.random(500) < s).astype(np.uint8)
        ce = calibration_error(s, y, ci=ConfidenceInterval(n_resamples=50))
        figs = [p.reliability_diagram(ce), p.modified_reliability(ce)]
        p.save_figure(figs[0], {str(tmp_path / 'fig')!r})
        assert "matplotlib.pyplot" not in sys.modules, "pyplot was imported"
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MPLBACKEND",
                                                            "WAYLAND_DISPLAY")}
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "fig.png").stat().st_size > 0


FIGURE_MODULES = ["reliability", "groups", "methods", "per_tag", "modified", "save",
                  "kernel_reliability", "bayes_error"]


def test_public_names_are_not_shadowed_by_modules():
    import importlib
    import types
    for name in FIGURE_MODULES:
        importlib.import_module(f"sparsecal.plotting.{name}")
    for name in plots.__all__:
        assert not isinstance(getattr(plots, name), types.ModuleType), name


@pytest.mark.parametrize("name", FIGURE_MODULES)
def test_docstring_examples_run(name):
    import doctest
    import importlib
    module = importlib.import_module(f"sparsecal.plotting.{name}")
    res = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0


# --------------------------------------------------------------------------- #
# reliability_diagram                                                          #
# --------------------------------------------------------------------------- #

def test_reliability_diagram_points_errorbars_legend(data):
    b, a = data["before"].smce, data["after"].smce
    fig = render(plots.reliability_diagram({"before": b, "after": a}))
    assert isinstance(fig, Figure)
    main, hist = fig.axes
    conts = [c for c in main.containers if isinstance(c, ErrorbarContainer)]
    assert len(conts) == 2
    for cont, ce in zip(conts, (b, a)):
        line = cont.lines[0]
        t = sc.reliability_table(ce.bins)
        assert len(line.get_xdata()) == n_nonempty(ce)
        np.testing.assert_allclose(line.get_xdata(), t["mean_score"])
        np.testing.assert_allclose(line.get_ydata(), t["mean_label"])
        assert cont.has_yerr
        segs = cont.lines[2][0].get_segments()
        assert len(segs) == n_nonempty(ce)
        # bar = the per-bin 95% Wilson interval of the label rate
        for seg, lo, hi in zip(segs, t["ci_low"], t["ci_high"]):
            np.testing.assert_allclose(sorted(seg[:, 1]), [lo, hi], atol=1e-12)
    texts = [t.get_text() for t in main.get_legend().get_texts()]
    assert any(s.startswith("before:") and f"{b.value:.4f}" in s and
               f"[{b.ci_low:.4f}, {b.ci_high:.4f}]" in s for s in texts)
    assert any("perfect calibration" in s for s in texts)
    assert main.get_title() and main.get_ylabel() and hist.get_xlabel()
    assert hist.get_yscale() == "log"
    assert main.get_shared_x_axes().joined(main, hist)


def test_reliability_histogram_counts_every_score(data):
    ce, e = data["before"].smce, data["entries"]
    fig = plots.reliability_diagram(ce, scores=e.score)
    stairs = [p for p in fig.axes[1].patches if hasattr(p, "get_data")]
    assert stairs and np.isclose(stairs[0].get_data().values.sum(), len(e))
    # without scores the bins are spread over their ranges: same total mass
    fig = plots.reliability_diagram(ce, scale="logit")
    stairs = [p for p in fig.axes[1].patches if hasattr(p, "get_data")]
    assert np.isclose(stairs[0].get_data().values.sum(), ce.n)
    assert "approx" in fig.axes[1].get_ylabel()


@pytest.mark.parametrize("scale", ["linear", "log", "logit"])
def test_reliability_scales(data, scale):
    fig = render(plots.reliability_diagram([data["before"], data["after"]],
                                           labels=["u", "c"], scale=scale))
    assert fig.axes[0].get_xscale() == scale and fig.axes[0].get_yscale() == scale
    lo, hi = fig.axes[0].get_xlim()
    assert lo < hi and (scale == "linear" or (0 < lo and hi <= 1))


def test_reliability_into_given_axes_and_fixed_bins():
    rng = np.random.default_rng(3)
    s = rng.random(2000)
    y = (rng.random(2000) < s ** 1.3).astype(np.uint8)
    ce = sc.calibration_error(s, y, binning="fixed", n_bins=15)
    fig = Figure()
    ax = fig.add_subplot()
    out = plots.reliability_diagram(ce, ax=ax, title="")
    assert out is fig and len(fig.axes) == 1
    cont = [c for c in ax.containers if isinstance(c, ErrorbarContainer)][0]
    assert len(cont.lines[0].get_xdata()) == n_nonempty(ce)
    assert "CE" in ax.get_legend().get_texts()[-1].get_text()


def test_reliability_bad_input(data):
    ce = data["before"].smce
    with pytest.raises(TypeError, match="CalibrationError"):
        plots.reliability_diagram("nope")
    with pytest.raises(TypeError, match="CalibrationError"):
        plots.reliability_diagram([ce, 0.3])
    with pytest.raises(ValueError, match="empty"):
        plots.reliability_diagram([])
    with pytest.raises(ValueError, match="scale"):
        plots.reliability_diagram(ce, scale="symlog2")
    with pytest.raises(ValueError, match="labels"):
        plots.reliability_diagram([ce, ce], labels=["one"])
    with pytest.raises(ValueError, match="score arrays"):
        plots.reliability_diagram([ce, ce], scores=[np.zeros(3)] * 3)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        plots.reliability_diagram(ce, scores=np.array([0.5, 1.5]))
    with pytest.raises(ValueError, match="hist_ax needs ax"):
        plots.reliability_diagram(ce, hist_ax=Figure().add_subplot())


# --------------------------------------------------------------------------- #
# group_reliability                                                            #
# --------------------------------------------------------------------------- #

def test_group_reliability_before_after(data):
    b, a = data["before"], data["after"]
    n_groups = len(b.gmce)
    fig = render(plots.group_reliability({"before": b, "after": a}))
    panels = [ax for ax in fig.axes if ax.axison]
    assert len(panels) == n_groups
    for ax, cb, ca in zip(panels, b.gmce, a.gmce):
        conts = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
        assert [len(c.lines[0].get_xdata()) for c in conts] == [n_nonempty(cb),
                                                                n_nonempty(ca)]
        assert ax.get_title().startswith("Group")
        assert any(f"{cb.value:.4f}" in t.get_text() for t in ax.texts)
    assert fig.get_suptitle()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + fig.legends
    labels = [t.get_text() for leg in legends for t in leg.get_texts()]
    assert "before" in labels and "after" in labels


def test_group_reliability_empty_group_and_names(data):
    b, a = data["before"], data["after"]
    per_group = [[cb, ca] for cb, ca in zip(b.gmce, a.gmce)]
    per_group[1] = None
    names = [f"G{g}" for g in range(len(per_group))]
    fig = render(plots.group_reliability(per_group, names, labels=["u", "c"], ncols=2,
                                         scale="logit"))
    panels = fig.axes[:len(per_group)]
    assert [ax.get_title() for ax in panels] == names
    assert any(t.get_text() == "no entries" for t in panels[1].texts)
    assert not panels[1].containers
    assert len([c for c in panels[0].containers if isinstance(c, ErrorbarContainer)]) == 2


def test_group_reliability_bad_input(data):
    ce = data["before"].gmce[0]
    with pytest.raises(ValueError, match="every group is empty"):
        plots.group_reliability([None, None])
    with pytest.raises(ValueError, match="same number of curves"):
        plots.group_reliability([[ce, ce], [ce]])
    with pytest.raises(TypeError, match="per_group_results\\[1\\]"):
        plots.group_reliability([ce, "x"])
    with pytest.raises(ValueError, match="group names"):
        plots.group_reliability([ce, ce], ["only one"])
    with pytest.raises(ValueError, match="same number of groups"):
        plots.group_reliability({"a": [ce, ce], "b": [ce]})
    with pytest.raises(TypeError):
        plots.group_reliability(42)


# --------------------------------------------------------------------------- #
# method_comparison                                                            #
# --------------------------------------------------------------------------- #

def table3():
    return {"HB": {"none": [0.03, 0.04, 0.02], "tfg": [0.01, 0.05, 0.01],
                   "scw": [0.015, 0.03, 0.012]},
            "IR": {"none": [0.03, 0.04, 0.02], "tfg": [0.012, 0.02, 0.008],
                   "scw": [0.014, 0.035, None]}}


def test_method_comparison_arrows_markers():
    fig = render(plots.method_comparison(table3()))
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == ["All", "Group 1", "Group 2"]
    arrows = [p for ax in axes for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == 2 * 3   # methods x columns
    from matplotlib.colors import to_hex
    colors = [to_hex(p.get_edgecolor()) for p in arrows]
    assert colors.count(_style._RED.lower()) == 1 and colors.count(_style._GREEN.lower()) == 5
    scw = [ln for ax in axes for ln in ax.lines if ln.get_gid() == "scw"]
    none = [ln for ax in axes for ln in ax.lines if ln.get_gid() == "uncalibrated"]
    assert len(scw) == 5 and len(none) == 6   # one SCW value is missing
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["HB", "IR"]
    assert axes[0].get_xlabel() == "SMCE" and axes[1].get_xlabel() == "GMCE"
    assert axes[0].get_xlim()[0] == 0
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "uncalibrated" in labels and "SCW recalibrated" in labels


def test_method_comparison_from_evaluations(data):
    tab = plots.comparison_table(data["before"], {"IR": data["after"]},
                                 {"IR": data["after_scw"]})
    n_cols = 1 + len(data["before"].gmce)
    assert set(tab["IR"]) == {"none", "tfg", "scw"}
    assert all(len(v) == n_cols for v in tab["IR"].values())
    assert tab["IR"]["none"][0] == data["before"].smce.value
    fig = render(plots.method_comparison(tab, ncols=2))
    arrows = [p for ax in fig.axes for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == n_cols
    assert sum(ax.axison for ax in fig.axes) == n_cols


def test_method_comparison_bad_input():
    with pytest.raises(TypeError, match="dict"):
        plots.method_comparison([1, 2])
    with pytest.raises(ValueError, match="lacks 'tfg'"):
        plots.method_comparison({"HB": {"none": [0.1]}})
    with pytest.raises(ValueError, match="unknown keys"):
        plots.method_comparison({"HB": {"none": [0.1], "tfg": [0.1], "xyz": [0.2]}})
    with pytest.raises(ValueError, match="expected 2"):
        plots.method_comparison({"HB": {"none": [0.1, 0.2], "tfg": [0.1]}})
    with pytest.raises(ValueError, match="non-negative"):
        plots.method_comparison({"HB": {"none": [-0.1], "tfg": [0.1]}})
    with pytest.raises(ValueError, match="column names"):
        plots.method_comparison(table3(), columns=["All"])
    with pytest.raises(TypeError, match="EvaluationResult"):
        plots.comparison_table(0.3, {"IR": 0.2})


# --------------------------------------------------------------------------- #
# per_tag_ce                                                                   #
# --------------------------------------------------------------------------- #

def _bars(ax, gid):
    return [p for p in ax.patches if p.get_gid() == gid]


def test_per_tag_ce_top_tags_with_ci(data):
    m = data["before"].mce
    top = min(5, len(m.per_tag))
    names = {t: f"tag{t}" for t in m.per_tag}
    fig = render(plots.per_tag_ce(m, names, top=top))
    ax = fig.axes[0]
    bars = [p for p in ax.patches if str(p.get_gid()).startswith("bars-")]
    assert len(bars) == top
    # most frequent first, by entries
    expected = sorted(m.per_tag, key=lambda t: -m.per_tag[t].n)[:top]
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert [s.split()[0] for s in ticks[:top]] == [f"tag{t}" for t in expected]
    assert f"n={m.per_tag[expected[0]].n:,}" in ticks[0]
    np.testing.assert_allclose(sorted(b.get_width() for b in bars),
                               sorted(m.per_tag[t].value for t in expected))
    assert any(isinstance(c, ErrorbarContainer) for c in ax.containers)
    assert ticks[top:] == [f"RMS, these {top} tags", f"MCE, all {len(m.per_tag)} tags"]
    assert ax.get_xlabel() and ax.get_title()


def test_per_tag_ce_two_models_and_plain_floats(data):
    fig = render(plots.per_tag_ce({"before": data["before"], "after": data["after"]},
                                  top=4))
    ax = fig.axes[0]
    assert len(_bars(ax, "bars-0")) == 4 and len(_bars(ax, "bars-1")) == 4
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[:2] == ["before", "after"]
    fig = render(plots.per_tag_ce({"NN": 0.02, "VB": 0.05, "JJ": 0.01}, show_mean=False,
                                  counts={"NN": 10, "VB": 30, "JJ": 20}))
    ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert [s.split()[0] for s in ticks] == ["VB", "JJ", "NN"]


def test_per_tag_ce_bad_input(data):
    with pytest.raises(ValueError, match="top"):
        plots.per_tag_ce(data["before"], top=0)
    no_mce = sc.evaluate(data["entries"], data["groups"], ci=None)
    with pytest.raises(ValueError, match="per_tag=True"):
        plots.per_tag_ce(no_mce)
    with pytest.raises(TypeError, match="MarginalCalibrationError"):
        plots.per_tag_ce(3.5)
    with pytest.raises(TypeError, match="tag_names"):
        plots.per_tag_ce(data["before"], tag_names=7)


# --------------------------------------------------------------------------- #
# modified_reliability                                                         #
# --------------------------------------------------------------------------- #

def test_modified_reliability_points_and_sizes(data):
    ce = data["before"].top_label_ece
    fig = render(plots.modified_reliability(ce))
    ax = fig.axes[0]
    rings = [c for c in ax.collections if c.get_gid() == "bins-0"]
    assert len(rings) == 1 and isinstance(rings[0], PathCollection)
    offs = rings[0].get_offsets()
    t = sc.reliability_table(ce.bins)
    assert len(offs) == n_nonempty(ce)
    np.testing.assert_allclose(offs[:, 0], t["mean_score"])
    np.testing.assert_allclose(offs[:, 1], t["mean_label"] - t["mean_score"])
    sizes = rings[0].get_sizes()
    np.testing.assert_allclose(sizes / sizes.max(), t["count"] / t["count"].max())
    assert any(np.allclose(ln.get_ydata(), 0) for ln in ax.lines)   # zero line
    assert "accuracy" in ax.get_ylabel() and "confidence" in ax.get_xlabel()
    assert len(ax.get_legend().get_texts()) >= 2   # size key


def test_modified_reliability_inputs(data):
    e, ea = data["entries"], data["after_entries"]
    rng = np.random.default_rng(0)
    s = rng.random(1000)
    y = (rng.random(1000) < s).astype(np.uint8)
    fig = render(plots.modified_reliability({"arrays": (s, y), "entries": e, "after": ea},
                                            n_bins=12, errorbars=True))
    ax = fig.axes[0]
    for i in range(3):
        assert len([c for c in ax.collections if c.get_gid() == f"bins-{i}"]) == 1
    n0 = len([c for c in ax.collections if c.get_gid() == "bins-0"][0].get_offsets())
    assert n0 == 12   # 1000 uniform scores fill every fixed-width bin
    with pytest.raises(ValueError, match="n_bins"):
        plots.modified_reliability((s, y), n_bins=0)
    with pytest.raises(TypeError):
        plots.modified_reliability("scores")
    with pytest.raises(ValueError, match="labels"):
        plots.modified_reliability([(s, y), (s, y)], labels=["a"])


# --------------------------------------------------------------------------- #
# save_figure                                                                  #
# --------------------------------------------------------------------------- #

def small_figure():
    ce = sc.calibration_error(np.linspace(0, 1, 200), (np.arange(200) % 2).astype(np.uint8))
    return plots.reliability_diagram(ce)


def test_save_figure_png_and_svg(tmp_path):
    paths = plots.save_figure(small_figure(), tmp_path / "fig")
    assert paths == [str(tmp_path / "fig.png"), str(tmp_path / "fig.svg")]
    png, svg = (open(p, "rb").read() for p in paths)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    assert b"<svg" in svg and len(svg) > 1000
    assert sorted(os.listdir(tmp_path)) == ["fig.png", "fig.svg"]   # no temp files
    assert os.stat(paths[0]).st_mode & 0o444 == 0o444 & ~_umask()


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_save_figure_extension_and_formats(tmp_path):
    fig = small_figure()
    assert plots.save_figure(fig, tmp_path / "a.pdf") == [str(tmp_path / "a.pdf")]
    assert open(tmp_path / "a.pdf", "rb").read(4) == b"%PDF"
    assert plots.save_figure(fig, str(tmp_path / "b.png"), formats=["svg"]) == \
        [str(tmp_path / "b.svg")]
    assert plots.save_figure(fig, tmp_path / "run.v2", formats="png") == \
        [str(tmp_path / "run.v2.png")]   # an unknown suffix is part of the name
    # overwrite in place
    plots.save_figure(fig, tmp_path / "a.pdf")
    assert sorted(os.listdir(tmp_path)) == ["a.pdf", "b.svg", "run.v2.png"]


def test_save_figure_errors_leave_nothing(tmp_path):
    fig = small_figure()
    with pytest.raises(ValueError, match="unsupported format"):
        plots.save_figure(fig, tmp_path / "x", formats=["docx"])
    with pytest.raises(FileNotFoundError):
        plots.save_figure(fig, tmp_path / "missing" / "x")
    with pytest.raises(TypeError, match="Figure"):
        plots.save_figure("not a figure", tmp_path / "x")
    with pytest.raises(TypeError):
        plots.save_figure(fig, tmp_path / "x", not_a_savefig_option=1)
    assert os.listdir(tmp_path) == []
