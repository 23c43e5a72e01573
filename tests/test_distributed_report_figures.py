"""The cluster report's Bayes error plot and exact score histogram (issue 15) on
two worker processes: equal to the single machine's bit for bit on random data
with ties, tiny data, empty and all-below-threshold chunks, float32 and float64;
the shared Bayes decisions (metrics.decisions) against a brute force of the
DCF formula; the report's figures and numbers against the single-machine
report's."""
import json
import os
import shutil
import warnings

import dask.array as da
import numpy as np
import pytest

import sparsecal as sc
from sparsecal import distributed as sd
from sparsecal import plotting
from sparsecal.core.validation import DegenerateDataError
from sparsecal.plotting.report import write_report

from _dask_cluster import tagger_scores, two_workers
from test_distributed_compare import assert_close

#: where the rendered figures are left to look at
RENDER = "/tmp/sparsecal_report_figures"


@pytest.fixture(scope="module")
def client():
    with two_workers() as c:
        yield c


def _data(seed, n, dtype, chunks):
    """Single-machine and distributed entries of the same scores: ties, rows
    below the threshold; an empty chunk and an all-below-threshold chunk."""
    x, gold = tagger_scores(seed, n, 5, dtype)
    x[chunks[0]:chunks[0] + chunks[1]] = dtype(0.001)   # all below the threshold
    return (sc.threshold(x, gold),
            sd.threshold(da.from_array(x, chunks=(chunks, -1)), gold))


# -- the shared Bayes decisions against the paper's formula ---------------------

def _brute_dcf(llr, y, prior, t):
    """Normalized DCF of deciding "positive" where llr > t (Brümmer & du Preez
    2006, Section 2), entry by entry."""
    p_miss = np.mean(~(llr[y == 1] > t))
    p_fa = np.mean(llr[y == 0] > t)
    return (prior * p_miss + (1 - prior) * p_fa) / min(prior, 1 - prior)


@pytest.mark.parametrize("n", [2, 3, 40, 500])
def test_bayes_error_plot_against_brute_force(n):
    rng = np.random.default_rng(n)
    s = rng.random(n).round(1)                      # ties
    y = (rng.random(n) < s).astype(np.uint8)
    y[:2] = [0, 1]                                  # both classes
    grid = np.array([-3.0, -1.5, 0.0, 0.7, 2.0])
    got = sc.bayes_error_plot(s, y, prior_log_odds=grid)
    pi_t = y.mean()
    with np.errstate(divide="ignore"):
        llr = np.log(s / (1 - s)) - np.log(pi_t / (1 - pi_t))
    for j, g in enumerate(grid):
        prior = 1 / (1 + np.exp(-g))
        actual = _brute_dcf(llr, y, prior, -np.log(prior / (1 - prior)))
        best = min(_brute_dcf(llr, y, prior, t) for t in np.r_[-np.inf, llr])
        assert got.actual_dcf[j] == pytest.approx(actual, rel=1e-12, abs=1e-15)
        assert got.min_dcf[j] == pytest.approx(best, rel=1e-12, abs=1e-15)
        assert got.min_dcf[j] <= got.actual_dcf[j]


def test_dcf_and_min_dcf_unchanged_by_the_shared_home():
    """dcf / min_dcf as Cumani's worked numbers: an exact small case."""
    llr, y = np.array([-2.0, -1.0, 0.5, 1.0, 3.0]), np.array([0, 1, 0, 1, 1])
    d = sc.dcf(llr, y, prior=0.5, scores_are="llr")   # threshold 0: 1 miss of 3, 1 fa of 2
    assert (d.p_miss, d.p_fa, d.threshold) == (1 / 3, 1 / 2, -0.0)
    assert d.value == pytest.approx(1 / 3 + 1 / 2, rel=1e-15)
    m = sc.min_dcf(llr, y, prior=0.5, scores_are="llr", c_fa=2.0, normalize=False)
    assert (m.threshold, m.p_miss, m.p_fa) == (0.5, 1 / 3, 0.0)
    assert m.value == pytest.approx(0.5 / 3, rel=1e-15)


# -- the distributed Bayes error plot --------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_distributed_bayes_error_plot_bit_for_bit(client, dtype):
    one, entries = _data(11, 700, dtype, (200, 90, 0, 1, 409))
    for kw in ({}, {"prior_log_odds": [-4.0, -0.3, 0.0, 2.5]}, {"training_prior": 0.2}):
        got = sd.bayes_error_plot(entries, **kw)
        ref = sc.bayes_error_plot(one.score, one.label, **kw)
        assert isinstance(got, sc.metrics.BayesErrorPlot)
        for name in ("prior_log_odds", "actual_dcf", "min_dcf"):
            a, b = getattr(got, name), getattr(ref, name)
            assert a.dtype == b.dtype == np.float64 and np.array_equal(a, b), (kw, name)
    # a planted change of the application moves the curves
    assert not np.array_equal(sd.bayes_error_plot(entries).actual_dcf,
                              sd.bayes_error_plot(entries, training_prior=0.3).actual_dcf)


def test_distributed_bayes_error_plot_tiny_and_refusals(client):
    x = np.array([[0.6, 0.4], [0.3, 0.7]])          # four entries, two rows
    one = sc.threshold(x, np.array([0, 0]))
    got = sd.bayes_error_plot(sd.threshold(da.from_array(x, chunks=(1, -1)), [0, 0]))
    ref = sc.bayes_error_plot(one.score, one.label)
    assert np.array_equal(got.actual_dcf, ref.actual_dcf)
    assert np.array_equal(got.min_dcf, ref.min_dcf)
    single = sd.threshold(da.from_array(np.array([[1.0, 0.0]]), chunks=(1, -1)), [0])
    with pytest.raises(DegenerateDataError, match="both classes"):   # one entry: 1 class
        sd.bayes_error_plot(single)
    with pytest.raises(ValueError, match="prior_log_odds"):
        sd.bayes_error_plot(single, prior_log_odds=[40.0])
    with pytest.raises(ValueError, match="training_prior"):
        sd.bayes_error_plot(single, training_prior=1.5)
    with pytest.raises(TypeError, match="DaskEntries"):
        sd.bayes_error_plot(one)


# -- the exact score histogram ---------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_score_histogram_equals_the_single_machine_figure(client, dtype):
    one, entries = _data(12, 600, dtype, (150, 0, 100, 350))
    for scale in ("logit", "linear"):
        edges = plotting.ReliabilityDisplay.from_results(sc.smce(one), scale=scale).hist_edges
        got = sd.score_histogram(entries, edges)
        ref = sc.core.binning.histogram_counts(one.score, edges)
        assert got.dtype == np.int64 and np.array_equal(got, ref)
        assert int(got.sum()) == len(one)
        # brute force: each score's bin by comparison with the edges
        clipped = np.clip(one.score.astype(np.float64), edges[0], edges[-1])
        brute = np.bincount(np.minimum(np.searchsorted(edges, clipped, side="right") - 1,
                                       edges.size - 2), minlength=edges.size - 1)
        assert np.array_equal(got, brute)
    with pytest.raises(ValueError, match="edges"):
        sd.score_histogram(entries, [0.5, 0.5])
    with pytest.raises(TypeError, match="DaskEntries"):
        sd.score_histogram(one, edges)


def test_reliability_diagram_hist_counts_draw_the_scores_figure():
    rng = np.random.default_rng(3)
    s = rng.random(3000).round(2)
    y = (rng.random(3000) < s).astype(np.uint8)
    ce = sc.calibration_error(s, y, n_bins=10)
    edges = plotting.ReliabilityDisplay.from_results(ce, scale="logit",
                                                     hist_bins=25).hist_edges
    counts = sc.core.binning.histogram_counts(s, edges)
    steps = []
    for kw in ({"scores": s}, {"hist_counts": [counts]}):
        fig = plotting.reliability_diagram(ce, scale="logit", hist_bins=25, **kw)
        hist = fig.axes[1]
        steps.append([(p.get_data().values.tolist(), p.get_data().edges.tolist())
                      for p in hist.patches])
        assert hist.get_ylabel() == "entries"           # exact: no "approx."
    assert steps[0] == steps[1]
    assert steps[0][0] == (counts.tolist(), edges.tolist())
    approx = plotting.reliability_diagram(ce, scale="logit").axes[1].get_ylabel()
    assert approx == "entries (approx.)"
    with pytest.raises(ValueError, match="not both"):
        plotting.reliability_diagram(ce, scores=s, hist_counts=[counts], hist_bins=25)
    with pytest.raises(ValueError, match="hist_counts\\[0\\] must be 40"):
        plotting.reliability_diagram(ce, hist_counts=[counts])
    with pytest.raises(ValueError, match="2 hist_counts arrays for 1"):
        plotting.reliability_diagram(ce, hist_counts=[counts, counts], hist_bins=25)


# -- the report ------------------------------------------------------------------

def _captured(monkeypatch):
    """The displays of the report's histogram and Bayes error figures, as drawn."""
    seen = {}
    for cls, key in ((plotting.ReliabilityDisplay, "hist"),
                     (plotting.BayesErrorDisplay, "bayes")):
        def spy(self, *args, _draw=cls.plot, _key=key, **kw):
            seen.setdefault(_key, []).append(self)
            return _draw(self, *args, **kw)
        monkeypatch.setattr(cls, "plot", spy)
    return seen


def test_cluster_report_figures_equal_single_machine(client, tmp_path, monkeypatch):
    one_dev, dev = _data(21, 500, np.float32, (200, 50, 0, 250))
    one_test, test = _data(22, 500, np.float32, (100, 100, 0, 300))
    groups = sc.TagGroups.from_counts({t: (7 - t) ** 2 for t in range(5)}, 3, n_tags=5)
    kw = dict(methods=["isotonic"], n_bins=6)
    seen = _captured(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = write_report(tmp_path / "d", test, groups, dev=dev, engine=sd.CLUSTER_REPORT,
                            **kw)
        ref_path = write_report(tmp_path / "one", one_test, groups, dev=one_dev, **kw)
    got_b, ref_b = seen["bayes"]
    assert got_b.labels == ref_b.labels == ["uncalibrated", "TFG isotonic"]
    for g, r in zip(got_b.plots, ref_b.plots):
        assert np.array_equal(g.actual_dcf, r.actual_dcf)
        assert np.array_equal(g.min_dcf, r.min_dcf)
    got_h, ref_h = seen["hist"]
    assert got_h.hist_exact and ref_h.hist_exact
    edges = plotting.ReliabilityDisplay.from_results(got_h.errors, scale="logit").hist_edges
    assert np.array_equal(got_h.hist_edges, edges)
    assert np.array_equal(got_h.hist_counts[0], sc.core.binning.histogram_counts(one_test.score, edges))
    assert all(np.array_equal(g, r) for g, r in zip(got_h.hist_counts, ref_h.hist_counts))
    assert [int(c.sum()) for c in got_h.hist_counts] == [len(one_test)] * 2
    figures = [sorted(os.listdir(os.path.join(os.path.dirname(p), "figures")))
               for p in (path, ref_path)]
    assert figures[0] == figures[1]
    numbers = [json.loads(open(os.path.join(os.path.dirname(p), "numbers.json")).read())
               for p in (path, ref_path)]
    assert_close(numbers[0], numbers[1], 1e-12, 1e-14)
    page = open(path, encoding="utf-8").read()
    assert "approx" not in page and "Not in this report" not in page
    os.makedirs(RENDER, exist_ok=True)   # left to look at
    for name in ("bayes_error.png", "reliability.png"):
        shutil.copy(os.path.join(os.path.dirname(path), "figures", name),
                    os.path.join(RENDER, name))

