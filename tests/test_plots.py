"""Tests of sparsecal.plotting: each display holds the data the package's
functions compute (values checked against them), draws exactly that data
(points, bar ends, arrows, bars per tag), names the interval level and method
the data carry, keeps its legend off the data, and refuses bad input with a
clear error; save_figure writes atomically."""
import os
import subprocess
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")   # before anything imports pyplot

import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.colors import to_hex
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch

import sparsecal as sc
from sparsecal import plotting as plots
from sparsecal.plotting import _style
from sparsecal.datasets.synthetic import make_tagger_outputs
from sparsecal.metrics import binomial_interval


# --------------------------------------------------------------------------- #
# Data: a small synthetic tagger, evaluated before and after TFG isotonic      #
# --------------------------------------------------------------------------- #

def _evaluations(level):
    dev = make_tagger_outputs(2500, n_tags=60, split_seed=1)
    test = make_tagger_outputs(2500, n_tags=60, split_seed=2)
    index = {f"T{t}": t for t in range(60) if t != 3}   # tag 3 has no name
    groups = sc.TagGroups.from_counts({f"T{t}": c for t, c in dev.train_counts.items()
                                       if t != 3}, 3, n_tags=60, tag_index=index)
    e_dev = sc.threshold(dev.scores, dev.gold, 0.01)
    e_test = sc.threshold(test.scores, test.gold, 0.01)
    kw = dict(n_bins=10, ci=sc.ConfidenceInterval(confidence_level=level, n_resamples=200),
              per_tag=True, min_entries=50, top_label=True)
    before = sc.evaluate(e_test, groups, **kw)
    tfg = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups).fit(e_dev)
    e_after = tfg.transform(e_test)
    return {"before": before, "after": sc.evaluate(e_after, groups, **kw),
            "groups": groups, "entries": e_test, "after_entries": e_after, "dev": e_dev}


@pytest.fixture(scope="module")
def data():
    return _evaluations(0.95)


@pytest.fixture(scope="module")
def data90():
    """The same at a 90% level: every figure must say 90%."""
    return _evaluations(0.90)


def n_nonempty(ce):
    return int((ce.bins.count > 0).sum())


def legend_texts(fig):
    """Every legend's entries and title, of the figure and of its axes."""
    legends = list(fig.legends) + [a.get_legend() for a in fig.axes if a.get_legend()]
    return [t.get_text() for leg in legends for t in leg.get_texts() + [leg.get_title()]]


def assert_legends_off_the_data(fig):
    """No legend of the figure overlaps an axes that shows data, or the
    figure's own axis labels."""
    fig.canvas.draw()
    labels = [t for t in (fig._supxlabel, fig._supylabel) if t is not None]
    for leg in fig.legends:
        box = leg.get_window_extent()
        for a in fig.axes:
            if a.axison and (a.lines or a.collections or a.patches or a.containers):
                assert not box.overlaps(a.get_window_extent()), (leg, a)
        for t in labels:
            assert not box.overlaps(t.get_window_extent()), (leg, t.get_text())


def bar_ends(container):
    """(low, high) of each vertical error bar of an errorbar container."""
    segs = container.lines[2][0].get_segments()
    return np.array([sorted(s[:, 1]) for s in segs])


# --------------------------------------------------------------------------- #
# The module: no display, no pyplot, the public names                          #
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
        figs = [p.reliability_diagram(ce),
                p.ModifiedReliabilityDisplay.from_results(ce).plot().figure_]
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


def test_public_names():
    assert plots.__all__ == [
        "BayesErrorDisplay", "COLORS", "GroupReliabilityDisplay", "MethodComparisonDisplay",
        "ModifiedReliabilityDisplay", "PerTagDisplay", "ReliabilityDisplay",
        "SmoothReliabilityDisplay", "reliability_diagram", "save_figure", "write_report"]


@pytest.mark.parametrize("name", FIGURE_MODULES)
def test_docstring_examples_run(name):
    import doctest
    import importlib
    module = importlib.import_module(f"sparsecal.plotting.{name}")
    res = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0


# --------------------------------------------------------------------------- #
# ReliabilityDisplay                                                           #
# --------------------------------------------------------------------------- #

def test_reliability_data_are_the_package_tables(data):
    b, a = data["before"].smce, data["after"].smce
    scores = [data["entries"].score, data["after_entries"].score]
    d = plots.ReliabilityDisplay.from_results({"before": b, "after": a}, scores=scores,
                                              scale="logit")
    assert d.labels == ["before", "after"] and d.errors == [b, a]
    for t, ce in zip(d.tables, (b, a)):
        ref = sc.reliability_table(ce.bins)
        for key in ("mean_score", "mean_label", "count", "ci_low", "ci_high"):
            np.testing.assert_array_equal(t[key], ref[key])
    # the edges are evenly spaced in logit display coordinates over the axis range
    u = np.log10(d.hist_edges) - np.log10(1 - d.hist_edges)
    np.testing.assert_allclose(np.diff(u), np.diff(u)[0], rtol=1e-9)
    assert (d.hist_edges[0], d.hist_edges[-1]) == pytest.approx(d.limits[:2])
    for counts, s in zip(d.hist_counts, scores):
        np.testing.assert_array_equal(counts, sc.core.binning.histogram_counts(s, d.hist_edges))
    assert d.hist_exact
    # from_entries: the entries' SMCE and their exact histogram
    e = plots.ReliabilityDisplay.from_entries({"before": data["entries"]}, n_bins=10,
                                              scale="logit")
    assert e.errors[0].value == sc.smce(data["entries"], n_bins=10).value
    np.testing.assert_array_equal(e.hist_counts[0],
                                  sc.core.binning.histogram_counts(data["entries"].score, e.hist_edges))


def test_reliability_draws_points_and_interval_ends(data):
    b, a = data["before"].smce, data["after"].smce
    d = plots.ReliabilityDisplay.from_results({"before": b, "after": a}).plot()
    main, hist = d.ax_, d.hist_ax_
    assert d.figure_ is main.figure and main.get_shared_x_axes().joined(main, hist)
    conts = [c for c in main.containers if isinstance(c, ErrorbarContainer)]
    assert len(conts) == 2
    for cont, ce, t in zip(conts, (b, a), d.tables):
        assert len(cont.lines[0].get_xdata()) == n_nonempty(ce)
        np.testing.assert_array_equal(cont.lines[0].get_xdata(), t["mean_score"])
        np.testing.assert_array_equal(cont.lines[0].get_ydata(), t["mean_label"])
        np.testing.assert_allclose(bar_ends(cont), np.c_[t["ci_low"], t["ci_high"]],
                                   atol=1e-12)
    texts = legend_texts(d.figure_)
    assert any(s.startswith("before:") and f"{b.value:.4f}" in s and
               f"[{b.ci_low:.4f}, {b.ci_high:.4f}]" in s for s in texts)
    assert "perfect calibration" in texts
    assert any("bars: 95% Wilson interval" in s and "95% interval (simulation)" in s
               for s in texts)
    assert hist.get_yscale() == "log" and hist.get_ylabel() == "entries (approx.)"
    assert_legends_off_the_data(d.figure_)


def test_reliability_levels_come_from_the_data(data90):
    """A 90% interval says 90%, and its bars are the 90% Wilson intervals."""
    ce = data90["before"].smce
    d = plots.ReliabilityDisplay.from_results(ce).plot()
    title = " ".join(legend_texts(d.figure_))
    assert "90% Wilson interval" in title and "90% interval (simulation)" in title
    assert "95%" not in title
    nonempty = ce.bins.count > 0
    lo, hi = binomial_interval(ce.bins.sum_label[nonempty], ce.bins.count[nonempty],
                               confidence_level=0.90)
    cont = next(c for c in d.ax_.containers if isinstance(c, ErrorbarContainer))
    np.testing.assert_allclose(bar_ends(cont), np.c_[lo, hi], atol=1e-12)
    cp = plots.ReliabilityDisplay.from_results(ce, bin_interval="clopper-pearson").plot()
    assert "90% Clopper–Pearson interval" in " ".join(legend_texts(cp.figure_))


def test_reliability_without_interval_says_95_for_the_bars():
    s = np.linspace(0.01, 0.99, 400)
    ce = sc.calibration_error(s, (s > 0.4).astype(np.uint8))
    texts = legend_texts(plots.ReliabilityDisplay.from_results(ce).plot().figure_)
    assert any("bars: 95% Wilson" in t and "brackets" not in t for t in texts)


def test_reliability_histogram_counts(data):
    ce, e = data["before"].smce, data["entries"]
    d = plots.ReliabilityDisplay.from_results(ce, scores=e.score)
    assert d.hist_counts[0].sum() == len(e)
    stairs = [p for p in d.plot().hist_ax_.patches if p.get_gid() == "hist-0"]
    np.testing.assert_array_equal(stairs[0].get_data().values, d.hist_counts[0])
    # without scores the bins are spread over their ranges: the same total mass
    approx = plots.ReliabilityDisplay.from_results(ce, scale="logit")
    assert not approx.hist_exact and np.isclose(approx.hist_counts[0].sum(), ce.n)


@pytest.mark.parametrize("scale", ["linear", "log", "logit"])
def test_reliability_scales(data, scale):
    d = plots.ReliabilityDisplay.from_results([data["before"], data["after"]],
                                              labels=["u", "c"], scale=scale).plot()
    assert d.ax_.get_xscale() == scale and d.ax_.get_yscale() == scale
    lo, hi = d.ax_.get_xlim()
    assert lo < hi and (scale == "linear" or (0 < lo and hi <= 1))


def test_reliability_into_given_axes_and_the_one_call():
    rng = np.random.default_rng(3)
    s = rng.random(2000)
    y = (rng.random(2000) < s ** 1.3).astype(np.uint8)
    ce = sc.calibration_error(s, y, binning="fixed", n_bins=15)
    ax = Figure().add_subplot()
    d = plots.ReliabilityDisplay.from_results(ce).plot(ax, title="")
    assert d.ax_ is ax and d.hist_ax_ is None and len(ax.figure.axes) == 1
    assert "CE" in ax.get_legend().get_texts()[0].get_text()   # a legend on the axes
    fig = plots.reliability_diagram(ce, scores=s, title="x")
    assert fig.axes[0].get_title() == "x" and fig.axes[1].get_ylabel() == "entries"


def test_reliability_bad_input(data):
    ce = data["before"].smce
    make = plots.ReliabilityDisplay.from_results
    with pytest.raises(TypeError, match="CalibrationError"):
        make("nope")
    with pytest.raises(TypeError, match="CalibrationError"):
        make([ce, 0.3])
    with pytest.raises(ValueError, match="empty"):
        make([])
    with pytest.raises(ValueError, match="scale"):
        make(ce, scale="symlog2")
    with pytest.raises(ValueError, match="labels"):
        make([ce, ce], labels=["one"])
    with pytest.raises(ValueError, match="score arrays"):
        make([ce, ce], scores=[np.zeros(3)] * 3)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        make(ce, scores=np.array([0.5, 1.5]))
    with pytest.raises(ValueError, match="hist_bins"):
        make(ce, hist_bins=0)
    with pytest.raises(ValueError, match="bin_interval"):
        make(ce, bin_interval="normal")
    with pytest.raises(ValueError, match="not both"):
        make(ce, scores=np.zeros(3), hist_counts=[np.zeros(40)])
    with pytest.raises(ValueError, match="hist_ax needs ax"):
        make(ce).plot(hist_ax=Figure().add_subplot())
    with pytest.raises(TypeError, match="Entries"):
        plots.ReliabilityDisplay.from_entries(ce)


# --------------------------------------------------------------------------- #
# GroupReliabilityDisplay                                                      #
# --------------------------------------------------------------------------- #

def test_group_data_and_panels(data):
    b, a = data["before"], data["after"]
    d = plots.GroupReliabilityDisplay.from_results({"before": b, "after": a})
    n_groups = len(b.gmce)
    assert d.labels == ["before", "after"]
    assert [[ce for ce in row] for row in d.errors] == [[cb, ca] for cb, ca in
                                                         zip(b.gmce, a.gmce)]
    for row, ces in zip(d.tables, d.errors):
        for t, ce in zip(row, ces):
            np.testing.assert_array_equal(t["ci_high"],
                                          sc.reliability_table(ce.bins)["ci_high"])
    assert d.group_names[0] == (f"Group 1\n{b.groups[0]['tag_types']} tags, "
                                f"{b.groups[0]['entries']:,} entries")
    d.plot()
    assert len(d.axes_) == n_groups
    for ax, cb, ca, tabs in zip(d.axes_, b.gmce, a.gmce, d.tables):
        conts = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
        assert [len(c.lines[0].get_xdata()) for c in conts] == [n_nonempty(cb),
                                                                n_nonempty(ca)]
        np.testing.assert_allclose(bar_ends(conts[0]),
                                   np.c_[tabs[0]["ci_low"], tabs[0]["ci_high"]], atol=1e-12)
        assert any(f"{cb.value:.4f} [{cb.ci_low:.4f}, {cb.ci_high:.4f}]" == t.get_text()
                   for t in ax.texts)
    texts = legend_texts(d.figure_)
    assert {"before", "after", "perfect calibration"} <= set(texts)
    assert any("95% Wilson interval per bin" in t and "95% interval (simulation)" in t
               for t in texts)
    assert d.figure_.get_suptitle()


def test_group_levels_come_from_the_data(data90):
    d = plots.GroupReliabilityDisplay.from_results(data90["before"]).plot()
    title = " ".join(legend_texts(d.figure_))
    assert "90% Wilson interval per bin" in title and "95%" not in title
    assert len(d.axes_) == 3 and d.figure_.legends   # no spare panel: a key beside
    assert_legends_off_the_data(d.figure_)


def test_group_empty_group_and_names(data):
    b, a = data["before"], data["after"]
    per_group = {"u": list(b.gmce), "c": list(a.gmce)}
    per_group["u"][1] = per_group["c"][1] = None
    names = [f"G{g}" for g in range(len(b.gmce))]
    d = plots.GroupReliabilityDisplay.from_results(per_group, group_names=names,
                                                   scale="logit").plot(ncols=2)
    assert [ax.get_title() for ax in d.axes_] == names
    assert any(t.get_text() == "no entries" for t in d.axes_[1].texts)
    assert not d.axes_[1].containers
    assert len([c for c in d.axes_[0].containers if isinstance(c, ErrorbarContainer)]) == 2


def test_group_bad_input(data):
    ce = data["before"].gmce[0]
    make = plots.GroupReliabilityDisplay.from_results
    with pytest.raises(ValueError, match="every group is empty"):
        make([None, None])
    with pytest.raises(TypeError, match=r"results\[1\]"):
        make([ce, "x"])
    with pytest.raises(ValueError, match="group names"):
        make([ce, ce], group_names=["only one"])
    with pytest.raises(ValueError, match="same number of groups"):
        make({"a": [ce, ce], "b": [ce]})
    with pytest.raises(TypeError, match="EvaluationResult"):
        make(42)
    with pytest.raises(ValueError, match="ncols"):
        make([ce]).plot(ncols=0)


# --------------------------------------------------------------------------- #
# MethodComparisonDisplay                                                      #
# --------------------------------------------------------------------------- #

def table3():
    return plots.MethodComparisonDisplay(
        ["HB", "IR"], ["All", "Group 1", "Group 2"],
        none=[[0.03, 0.04, 0.02], [0.03, 0.04, 0.02]],
        tfg=[[0.01, 0.05, 0.01], [0.012, 0.02, 0.008]],
        scw=[[0.015, 0.03, 0.012], [0.014, 0.035, np.nan]])


def test_method_comparison_arrows_markers():
    d = table3().plot()
    axes = d.axes_
    assert [ax.get_title() for ax in axes] == ["All", "Group 1", "Group 2"]
    arrows = [p for ax in axes for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == 2 * 3   # methods x columns
    np.testing.assert_allclose([p._posA_posB[1][0] for p in arrows],
                               d.tfg.T.ravel())   # each arrow ends at its TFG value
    colors = [to_hex(p.get_edgecolor()) for p in arrows]
    assert colors.count(_style._RED.lower()) == 1 and colors.count(_style._GREEN.lower()) == 5
    scw = [ln for ax in axes for ln in ax.lines if ln.get_gid() == "scw"]
    none = [ln for ax in axes for ln in ax.lines if ln.get_gid() == "uncalibrated"]
    assert len(scw) == 5 and len(none) == 6   # one SCW value is missing
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["HB", "IR"]
    assert axes[0].get_xlabel() == "SMCE" and axes[1].get_xlabel() == "GMCE"
    assert axes[0].get_xlim()[0] == 0
    assert {"uncalibrated", "SCW recalibrated"} <= set(legend_texts(d.figure_))
    assert_legends_off_the_data(d.figure_)


def test_method_comparison_from_comparison(data):
    groups = data["groups"]
    comparison = sc.compare_methods(data["dev"], data["entries"], groups,
                                    methods=["isotonic", "histogram"], ci=None)
    d = plots.MethodComparisonDisplay.from_comparison(comparison)
    assert d.methods == ["Isotonic Regression", "Histogram Binning"]
    assert d.columns == comparison.columns()
    np.testing.assert_array_equal(d.none[1], comparison.values(comparison.before))
    for i, m in enumerate(["isotonic", "histogram"]):
        np.testing.assert_array_equal(d.tfg[i], comparison.values(comparison.after[(m, "tfg")]))
        np.testing.assert_array_equal(d.scw[i], comparison.values(comparison.after[(m, "scw")]))
    arrows = [p for ax in d.plot(ncols=2).axes_ for p in ax.patches
              if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == 2 * len(d.columns)


def test_method_comparison_bad_input():
    make = plots.MethodComparisonDisplay
    with pytest.raises(ValueError, match=r"shape \(1, 1\)"):
        make(["HB"], ["All"], none=[[0.1, 0.2]], tfg=[[0.1]])
    with pytest.raises(ValueError, match="tfg must be numbers"):
        make(["HB"], ["All", "G1"], none=[[0.1, 0.2]], tfg=[[0.1, 0.2, 0.3], [0.1]])
    with pytest.raises(ValueError, match="non-negative"):
        make(["HB"], ["All"], none=[[-0.1]], tfg=[[0.1]])
    with pytest.raises(ValueError, match="non-negative"):
        make(["HB"], ["All"], none=[[np.inf]], tfg=[[0.1]])
    with pytest.raises(ValueError, match="at least one method"):
        make([], ["All"], none=np.zeros((0, 1)), tfg=np.zeros((0, 1)))
    with pytest.raises(TypeError, match="MethodComparison"):
        make.from_comparison({"IR": 0.2})


# --------------------------------------------------------------------------- #
# PerTagDisplay                                                                #
# --------------------------------------------------------------------------- #

def _bars(ax, gid):
    return [p for p in ax.patches if p.get_gid() == gid]


def test_per_tag_data_are_the_mce(data):
    m = data["before"].mce
    d = plots.PerTagDisplay.from_results(m, tag_names=data["groups"], top=5)
    expected = sorted(m.per_tag, key=lambda t: (-m.per_tag[t].n, t))[:5]
    assert d.tags == expected
    np.testing.assert_array_equal(d.values[0], [m.per_tag[t].value for t in expected])
    np.testing.assert_array_equal(d.ci_low[0], [m.per_tag[t].ci_low for t in expected])
    np.testing.assert_array_equal(d.ci_high[0], [m.per_tag[t].ci_high for t in expected])
    np.testing.assert_array_equal(d.counts, [m.per_tag[t].n for t in expected])
    assert d.rms[0] == pytest.approx(np.sqrt(np.mean(d.values[0] ** 2)), rel=1e-12)
    assert d.mce.tolist() == [m.value] and d.n_evaluated == len(m.per_tag)
    assert (d.ci_level, d.ci_method, d.debias) == (0.95, "score", True)
    # names from the TagGroups' tag index; "tag t" where the index has none
    names = data["groups"].tag_names
    assert d.tag_names == [names[t] or f"tag {t}" for t in expected]


def test_per_tag_draws_bars_whiskers_and_summary(data):
    m = data["before"].mce
    d = plots.PerTagDisplay.from_results(m, tag_names=data["groups"], top=5).plot()
    ax = d.ax_
    bars = _bars(ax, "bars-0")
    np.testing.assert_array_equal([b.get_width() for b in bars], d.values[0])
    whiskers = next(c for c in ax.containers if isinstance(c, ErrorbarContainer))
    segs = whiskers.lines[2][0].get_segments()
    np.testing.assert_allclose([sorted(s[:, 0]) for s in segs],
                               np.c_[d.ci_low[0], d.ci_high[0]], atol=1e-12)
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks[0] == f"{d.tag_names[0]}  (n={d.counts[0]:,})"
    assert ticks[5:] == ["RMS, these 5 tags", f"MCE, all {len(m.per_tag)} tags"]
    np.testing.assert_allclose([b.get_width() for b in _bars(ax, "summary-0")],
                               [d.rms[0], m.value])
    assert "95% score interval" in legend_texts(d.figure_)
    assert ax.get_xlabel().startswith("per-tag debiased calibration error")
    assert_legends_off_the_data(d.figure_)
    # every evaluated tag shown: the RMS would repeat the MCE
    every = plots.PerTagDisplay.from_results(m, top=len(m.per_tag)).plot().ax_
    labels = [t.get_text() for t in every.get_yticklabels()]
    assert labels[-1] == f"MCE, all {len(m.per_tag)} tags" and not any(
        s.startswith("RMS") for s in labels)


def test_per_tag_level_comes_from_the_data(data90):
    d = plots.PerTagDisplay.from_results(data90["before"], top=3).plot()
    texts = legend_texts(d.figure_)
    assert "90% score interval" in texts and not any("95%" in t for t in texts)


def test_per_tag_two_models_and_numbers(data):
    d = plots.PerTagDisplay.from_results({"before": data["before"], "after": data["after"]},
                                         top=4).plot()
    assert len(_bars(d.ax_, "bars-0")) == 4 and len(_bars(d.ax_, "bars-1")) == 4
    np.testing.assert_array_equal(d.values[1], [data["after"].mce.per_tag[t].value
                                                for t in d.tags])
    assert legend_texts(d.figure_)[:2] == ["before", "after"]
    raw = plots.PerTagDisplay(["VB", "JJ"], [0.05, 0.01], counts=[30, 20]).plot(
        show_mean=False)
    assert [t.get_text() for t in raw.ax_.get_yticklabels()] == ["VB  (n=30)", "JJ  (n=20)"]
    assert legend_texts(raw.figure_) == []   # one unnamed model, no intervals


def test_per_tag_bad_input(data):
    with pytest.raises(ValueError, match="top"):
        plots.PerTagDisplay.from_results(data["before"], top=0)
    no_mce = sc.evaluate(data["entries"], data["groups"], ci=None)
    with pytest.raises(ValueError, match="per_tag=True"):
        plots.PerTagDisplay.from_results(no_mce)
    with pytest.raises(TypeError, match="MarginalCalibrationError"):
        plots.PerTagDisplay.from_results(3.5)
    with pytest.raises(TypeError, match="tag_names"):
        plots.PerTagDisplay.from_results(data["before"], tag_names=7)
    with pytest.raises(ValueError, match="one CE per tag"):
        plots.PerTagDisplay(["a", "b"], [0.1])
    with pytest.raises(ValueError, match="labels"):
        plots.PerTagDisplay(["a"], [[0.1], [0.2]], labels=["x"])


# --------------------------------------------------------------------------- #
# ModifiedReliabilityDisplay                                                   #
# --------------------------------------------------------------------------- #

def test_modified_data_are_the_top_label_bins(data):
    e = data["entries"]
    d = plots.ModifiedReliabilityDisplay.from_entries({"tagger": e}, n_bins=12)
    ref = sc.calibration_error(*sc.top_label(e), binning="fixed", n_bins=12, norm=1)
    assert d.errors[0].value == ref.value and d.errors[0].bins.n_bins == 12
    np.testing.assert_array_equal(d.tables[0]["mean_score"],
                                  sc.reliability_table(ref.bins)["mean_score"])
    np.testing.assert_array_equal(d.positives[0], ref.bins.sum_label[ref.bins.count > 0])
    ev = plots.ModifiedReliabilityDisplay.from_results(data["before"])
    assert ev.errors[0] is data["before"].top_label_ece


def test_modified_draws_points_sizes_and_interval_ends(data):
    ce = data["before"].top_label_ece
    d = plots.ModifiedReliabilityDisplay.from_results(ce).plot(errorbars=True)
    ax, t = d.ax_, d.tables[0]
    rings = [c for c in ax.collections if c.get_gid() == "bins-0"]
    assert len(rings) == 1 and isinstance(rings[0], PathCollection)
    offs = rings[0].get_offsets()
    assert len(offs) == n_nonempty(ce)
    np.testing.assert_allclose(offs[:, 0], t["mean_score"])
    np.testing.assert_allclose(offs[:, 1], t["mean_label"] - t["mean_score"])
    sizes = rings[0].get_sizes()
    np.testing.assert_allclose(sizes / sizes.max(), t["count"] / t["count"].max())
    bars = next(c for c in ax.containers if isinstance(c, ErrorbarContainer))
    np.testing.assert_allclose(bar_ends(bars), np.c_[t["ci_low"], t["ci_high"]]
                               - t["mean_score"][:, None], atol=1e-12)
    assert any(np.allclose(ln.get_ydata(), 0) for ln in ax.lines)   # zero line
    texts = legend_texts(d.figure_)
    assert any("95% Wilson interval of each bin's accuracy" in s for s in texts)
    assert "1,000" in texts or "100" in texts   # the size key
    assert_legends_off_the_data(d.figure_)


def test_modified_inputs(data):
    e, ea = data["entries"], data["after_entries"]
    d = plots.ModifiedReliabilityDisplay.from_entries({"entries": e, "after": ea}).plot()
    for i in range(2):
        assert len([c for c in d.ax_.collections if c.get_gid() == f"bins-{i}"]) == 1
    with pytest.raises(ValueError, match="n_bins"):
        plots.ModifiedReliabilityDisplay.from_entries(e, n_bins=0)
    with pytest.raises(TypeError, match="Entries"):
        plots.ModifiedReliabilityDisplay.from_entries("scores")
    with pytest.raises(ValueError, match="labels"):
        plots.ModifiedReliabilityDisplay.from_results([data["before"]] * 2, labels=["a"])


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


def test_save_figure_lays_a_figure_out_once_for_every_format(tmp_path, monkeypatch):
    """The layout of the first format serves the others (each save would run it
    again); the figure keeps its layout engine, and a second save lays it out again.
    The figure is drawn once per format, and once more for the layout."""
    fig = small_figure()
    engine = fig.get_layout_engine()
    assert engine is not None
    runs, draws = [], []
    execute, draw = type(engine).execute, type(fig).draw
    monkeypatch.setattr(type(engine), "execute",
                        lambda self, f: (runs.append(f), execute(self, f))[1])
    monkeypatch.setattr(type(fig), "draw", lambda self, r: (draws.append(r), draw(self, r))[1])
    plots.save_figure(fig, tmp_path / "fig", ("png", "svg", "pdf"))
    assert runs == [fig] and fig.get_layout_engine() is engine
    assert len(draws) == 4
    positions = [ax.get_position().bounds for ax in fig.axes]
    plots.save_figure(fig, tmp_path / "again", ("svg",))
    # laid out again, with the SVG renderer's text sizes: the same layout within 0.1%
    assert len(runs) == 2
    np.testing.assert_allclose([ax.get_position().bounds for ax in fig.axes], positions,
                               atol=1e-3)


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


@pytest.mark.parametrize("scale", ["log", "logit", "linear"])
def test_rates_off_a_log_or_logit_axis_are_triangles_at_its_edge(scale):
    """Bins of label rate 0 (and 1) lie beyond a log (logit) axis: each is a
    triangle on the edge it lies beyond, with its bar drawn up to that edge and a
    line in the legend's title; on a linear axis they are ordinary points."""
    s = np.repeat([0.05, 0.3, 0.6, 0.95], 50)
    y = np.concatenate([np.zeros(50), np.arange(50) < 15, np.arange(50) < 30, np.ones(50)])
    ce = sc.calibration_error(s, y.astype(np.uint8), n_bins=4)
    for display in (plots.ReliabilityDisplay.from_results(ce, scale=scale, yscale=scale)
                    .plot(show_distribution=False),
                    plots.GroupReliabilityDisplay.from_results(
                        sc.evaluate(sc.threshold(np.column_stack([s, 1 - s]),
                                                 np.where(y == 1, 0, 1), threshold=0.0),
                                    sc.TagGroups([0, 0], 1), n_bins=4), scale=scale).plot()):
        ax = display.ax_ if hasattr(display, "ax_") else display.axes_[0]
        lo, hi = ax.get_ylim()
        marks = {line.get_marker(): line.get_ydata()
                 for line in ax.lines if str(line.get_gid()).startswith("off-axis-")}
        curve = next(line for line in ax.lines if line.get_gid() == "curve-0")
        bars = next(c for c in ax.collections if c.get_segments())
        tops = sorted(max(seg[:, 1]) for seg in bars.get_segments())
        lows = sorted(min(seg[:, 1]) for seg in bars.get_segments())
        if scale == "linear":
            assert marks == {} and list(curve.get_markevery()) == [0, 1, 2, 3]
            continue
        assert list(marks["v"]) == [lo] and lows[0] == lo          # rate 0: bottom edge
        assert list(curve.get_markevery()) == ([1, 2] if scale == "logit" else [1, 2, 3])
        if scale == "logit":
            assert list(marks["^"]) == [hi] and tops[-1] == hi     # rate 1: top edge
        else:
            assert "^" not in marks and tops[-1] == hi == 1.0            # 1 is on a log axis
        note = (display.figure_.legends[0] if display.figure_.legends else
                ax.get_legend()).get_title().get_text()
        assert note.endswith("triangles: bins at 0 or 1, off the axes")


def test_a_mean_score_off_a_logit_axis_is_a_triangle_at_its_right_edge():
    """A bin of scores 1.0 (e.g. after isotonic recalibration) lies beyond a logit
    score axis: at its right edge, "^" when its rate is 1 too (the corner), ">" else."""
    s = np.repeat([0.2, 0.6, 1.0], 40)
    for last, marker in ((np.ones(40), "^"), (np.arange(40) < 30, ">")):
        y = np.concatenate([np.arange(40) < 8, np.arange(40) < 24, last]).astype(np.uint8)
        ax = plots.ReliabilityDisplay.from_results(
            sc.calibration_error(s, y, n_bins=3), scale="logit").plot(
            show_distribution=False).ax_
        (line,) = [g for g in ax.lines if str(g.get_gid()).startswith("off-axis-")]
        assert line.get_marker() == marker
        assert list(line.get_xdata()) == [ax.get_xlim()[1]]
        assert list(line.get_ydata()) == [ax.get_ylim()[1] if marker == "^" else 0.75]
