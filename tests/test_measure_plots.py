"""The smooth reliability diagram and the Bayes error plot: the displays hold
what the package's functions compute, draw exactly that, keep their legends off
the data (the faint curves; the line at 1), and refuse other input."""
import numpy as np
import pytest

pytest.importorskip("matplotlib")

import sparsecal as sc                                                # noqa: E402
from sparsecal.plotting import BayesErrorDisplay, SmoothReliabilityDisplay   # noqa: E402
from test_plots import assert_legends_off_the_data, legend_texts      # noqa: E402


@pytest.fixture(scope="module")
def entries():
    rng = np.random.default_rng(0)
    scores = rng.dirichlet(np.full(4, 0.3), size=600)
    gold = (rng.random((600, 1)) < scores.cumsum(1)).argmax(1)
    return sc.threshold(scores, gold)


def test_smooth_reliability_data_and_drawing(entries):
    d = SmoothReliabilityDisplay.from_entries({"model": entries})
    ref = sc.smooth_reliability(entries.score, entries.label)
    for name in ("mesh", "curve", "density"):
        np.testing.assert_array_equal(getattr(d.diagrams[0], name), getattr(ref, name))
    assert d.diagrams[0].smooth_ece.value == ref.smooth_ece.value
    d.plot()
    line = next(a for a in d.ax_.lines if a.get_gid() == "curve-0")
    x, y = line.get_data()
    assert np.array_equal(x, ref.mesh)
    dense = ref.density >= 0.02 * ref.density.max()
    np.testing.assert_array_equal(y[dense], ref.curve[dense])
    assert np.isnan(y[~dense]).all()
    dens = next(a for a in d.density_ax_.lines if a.get_gid() == "density-0")
    np.testing.assert_array_equal(dens.get_ydata(), ref.density)
    texts = legend_texts(d.figure_)
    assert any(t.startswith(f"model: smECE = {ref.smooth_ece.value:.4f}") for t in texts)
    assert_legends_off_the_data(d.figure_)


def test_bayes_error_data_and_drawing(entries):
    rng = np.random.default_rng(1)
    y = rng.random(500) < 0.5
    b = sc.bayes_error_plot(np.where(y, 1.0, -1.0) + rng.normal(0, 1, 500), y,
                            scores_are="llr")
    d = BayesErrorDisplay.from_results({"llr": b}).plot()
    lines = {a.get_gid(): a for a in d.ax_.lines}
    np.testing.assert_array_equal(lines["actual-0"].get_ydata(), b.actual_dcf)
    np.testing.assert_array_equal(lines["min-0"].get_ydata(), b.min_dcf)
    assert {"llr: actual DCF", "llr: minimum DCF", "no information"} <= set(
        legend_texts(d.figure_))
    assert_legends_off_the_data(d.figure_)   # never over the line at 1
    e = BayesErrorDisplay.from_entries(entries)
    ref = sc.bayes_error_plot(entries.score, entries.label)
    np.testing.assert_array_equal(e.plots[0].actual_dcf, ref.actual_dcf)
    np.testing.assert_array_equal(e.plots[0].min_dcf, ref.min_dcf)


def test_given_axes_get_the_legend_there(entries):
    from matplotlib.figure import Figure
    ax = Figure().add_subplot()
    d = BayesErrorDisplay.from_entries(entries).plot(ax)
    assert d.ax_ is ax and ax.get_legend() is not None and not ax.figure.legends


def test_wrong_inputs_are_type_errors():
    with pytest.raises(TypeError, match="SmoothReliability"):
        SmoothReliabilityDisplay.from_results([0.1, 0.2])
    with pytest.raises(TypeError, match="BayesErrorPlot"):
        BayesErrorDisplay.from_results({"a": 1})
    with pytest.raises(ValueError, match="empty"):
        BayesErrorDisplay.from_results({})
    with pytest.raises(TypeError, match="Entries"):
        SmoothReliabilityDisplay.from_entries(np.zeros(3))
