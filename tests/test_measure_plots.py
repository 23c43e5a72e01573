"""The figures of the smooth reliability diagram and the Bayes error plot draw
the data they are given (checked on the artists), and refuse other input."""
import numpy as np
import pytest

pytest.importorskip("matplotlib")

import sparsecal as sc                                   # noqa: E402
from sparsecal.plotting import plot_bayes_error, plot_smooth_reliability   # noqa: E402


def test_smooth_reliability_figure_draws_the_curve_and_density():
    rng = np.random.default_rng(0)
    f = rng.random(1000)
    r = sc.smooth_reliability(f, rng.random(1000) < f ** 2)
    fig = plot_smooth_reliability({"model": r})
    main, dens = fig.axes
    line = next(a for a in main.lines if a.get_gid() == "curve-0")
    x, y = line.get_data()
    assert np.array_equal(x, r.mesh)
    ok = ~np.isnan(y)
    np.testing.assert_allclose(y[ok], r.curve[ok])
    assert "smECE = " in main.get_legend().get_texts()[0].get_text()
    np.testing.assert_allclose(dens.lines[0].get_ydata(), r.density)


def test_bayes_error_figure_draws_both_curves():
    rng = np.random.default_rng(1)
    y = rng.random(500) < 0.5
    b = sc.bayes_error_plot(np.where(y, 1.0, -1.0) + rng.normal(0, 1, 500), y,
                            scores_are="llr")
    ax = plot_bayes_error(b).axes[0]
    lines = {a.get_gid(): a for a in ax.lines}
    np.testing.assert_allclose(lines["actual-0"].get_ydata(), b.actual_dcf)
    np.testing.assert_allclose(lines["min-0"].get_ydata(), b.min_dcf)


def test_wrong_inputs_are_type_errors():
    with pytest.raises(TypeError, match="SmoothReliability"):
        plot_smooth_reliability([0.1, 0.2])
    with pytest.raises(TypeError, match="BayesErrorPlot"):
        plot_bayes_error({"a": 1})
    with pytest.raises(ValueError, match="empty"):
        plot_bayes_error({})
