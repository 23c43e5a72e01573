"""More measures on a cluster (sparsecal.distributed.measures) on two worker
processes, against the single-machine path: fixed-width bins (counts, label sums,
score ranges bit for bit; score sums against math.fsum), CE with every binning
and norm, Algorithm 2 and score intervals (ends within 1e-12 relative), top-label
ECE, the Brier score (against its formula) and the CORP decompositions,
evaluate(ci=..., metrics=..., top_label=True, per_tag=True), and the refusals.
Random data with ties (also on bin edges), tiny sets, empty chunks and chunks with
every score below the threshold."""
import dataclasses
import math

import dask.array as da
import numpy as np
import pytest

import sparsecal as sc
from sparsecal import distributed as sd
from sparsecal.metrics.measures import MEASURES
from sparsecal.core.binning import fixed_width_bins
from sparsecal.metrics import ConfidenceInterval

from _dask_cluster import tagger_scores, two_workers


@pytest.fixture(scope="module", autouse=True)
def client():
    with two_workers() as c:
        yield c


REL = 1e-12
CHUNKS = [(60, 0, 41, 1, 0, 98), (200,)]
#: a planted change (95% -> 90%) must move the interval ends
CI = ConfidenceInterval(confidence_level=0.9, n_resamples=400, random_state=3)


def _data(dtype, seed=1):
    x, gold = tagger_scores(seed, 200, 6, dtype)
    x[:, :2] = x[:, :2].round(1)               # many scores on fixed-width edges
    x[60:101] = dtype(0.001)                    # a whole chunk below the threshold
    return x, gold


def _groups():
    return sc.TagGroups.from_counts({t: (7 - t) ** 2 for t in range(6)}, 3, n_tags=6)


def _entries(x, gold, sizes):
    return sd.threshold(da.from_array(x, chunks=(sizes, (3, 3))), gold)


def _close(a, b, name=""):
    """Within 1e-12 relative; a CORP term (MCB, DSC: a difference of two mean
    scores, so its relative rounding grows as it shrinks) within 1e-14 absolute."""
    corp = name.endswith(("-mcb", "-dsc"))
    assert a == pytest.approx(b, rel=0 if corp else REL, abs=1e-14 if corp else 1e-300), \
        (name, a, b)


def _same_ce(got, ref, same_bins=True):
    assert type(got) is type(ref) and got.n == ref.n and got.norm == ref.norm
    _close(got.value, ref.value)
    assert (got.ci_low is None) == (ref.ci_low is None) and got.ci == ref.ci
    if ref.ci_low is not None:
        _close(got.ci_low, ref.ci_low)
        _close(got.ci_high, ref.ci_high)
    if same_bins:
        for f in ("count", "sum_label", "lower", "upper"):
            np.testing.assert_array_equal(getattr(got.bins, f), getattr(ref.bins, f),
                                          err_msg=f)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fixed_width_bins_bit_identical(dtype):
    x, gold = _data(dtype)
    one = sc.threshold(x, gold)
    groups = _groups()
    tag_to_group = np.asarray(groups.tag_to_group, dtype=np.int64)
    for sizes in CHUNKS:
        entries = _entries(x, gold, sizes)
        got = sd.fixed_width_bin_stats(entries, tag_to_group, 3, n_bins=150)
        for g, bins in enumerate(got):
            at = tag_to_group[one.tag] == g
            ref = fixed_width_bins(one.score[at], one.label[at], n_bins=150)
            for f in ("count", "sum_label", "lower", "upper", "edges"):
                np.testing.assert_array_equal(getattr(bins, f), getattr(ref, f), err_msg=f)
            assert (bins.count == 0).any()                 # 2-decimal scores: empty bins
            s = one.score[at].astype(np.float64)           # brute force: [i/B, (i+1)/B)
            idx = np.minimum(np.searchsorted(ref.edges, s, side="right") - 1, 149)
            exact = [math.fsum(s[idx == b]) for b in range(150)]
            np.testing.assert_array_equal(bins.sum_score, exact)   # exact sums
        (pooled,) = sd.fixed_width_bin_stats(entries, n_bins=3)
        assert pooled.count.tolist() == fixed_width_bins(one.score, one.label,
                                                         n_bins=3).count.tolist()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [dict(), dict(bin_size=17, norm=1),
                                dict(binning="fixed", n_bins=15, norm="max"),
                                dict(binning="fixed", norm=1)], ids=str)
def test_binned_errors_with_simulation_interval(dtype, kw):
    x, gold = _data(dtype, seed=2)
    groups = _groups()
    ref_smce, ref_gmce = sc.smce_and_gmce(sc.threshold(x, gold), groups, ci=CI, **kw)
    for sizes in CHUNKS:
        smce, gmce = sd.binned_errors(_entries(x, gold, sizes), groups, ci=CI, **kw)
        _same_ce(smce, ref_smce)
        assert len(gmce) == 3
        for a, b in zip(gmce, ref_gmce):
            _same_ce(a, b)


def test_interval_follows_its_level():
    """The level is used: 95% is wider than 90%, each equal to one machine's."""
    x, gold = _data(np.float64, seed=2)
    entries = _entries(x, gold, CHUNKS[0])
    ends = {}
    for level in (0.9, 0.95):
        spec = ConfidenceInterval(confidence_level=level, n_resamples=400, random_state=3)
        got, _ = sd.binned_errors(entries, ci=spec)
        _same_ce(got, sc.smce(sc.threshold(x, gold), ci=spec))
        ends[level] = got.ci_high - got.ci_low
    assert ends[0.95] > ends[0.9] * 1.1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_debiased_ce_and_score_interval(dtype):
    x, gold = _data(dtype, seed=3)
    groups = _groups()
    for kw in [dict(), dict(bin_size=25)]:
        ref = sc.smce_and_gmce(sc.threshold(x, gold), groups, ci="score", debias=True, **kw)
        got = sd.binned_errors(_entries(x, gold, CHUNKS[0]), groups, ci="score",
                               debias=True, **kw)
        _same_ce(got[0], ref[0])
        for a, b in zip(got[1], ref[1]):
            _same_ce(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_top_label_ece(dtype):
    x, gold = _data(dtype, seed=4)
    one = sc.threshold(x, gold)
    for sizes in CHUNKS + [(1,) * 5 + (195,)]:
        entries = _entries(x, gold, sizes)
        for kw in [dict(), dict(n_bins=9, norm=2, ci=CI)]:
            _same_ce(sd.top_label_ece(entries, **kw), sc.top_label_ece(one, **kw))


def test_measures_against_evaluate_and_the_formula():
    x, gold = _data(np.float64, seed=5)
    one = sc.threshold(x, gold)
    groups = _groups()
    names = list(MEASURES)
    entries = _entries(x, gold, CHUNKS[0])
    for kw in [dict(n_bins=6), dict(bin_size=30), dict(binning="fixed", n_bins=12)]:
        got = sd.measures_by_group(entries, groups, names, prior=0.3, **kw)
        ref = sc.evaluate(one, groups, ci=None, metrics=names, prior=0.3, **kw).metrics
        assert sorted(got) == sorted(ref)
        for name in names:
            _close(got[name]["pooled"], ref[name]["pooled"], name)
            for a, b in zip(got[name]["groups"], ref[name]["groups"]):
                _close(a, b, name)
    # CORP adds up: score = MCB - DSC + UNC, per set
    got = sd.measures_by_group(entries, groups, ["log-loss", "log-loss-mcb", "log-loss-dsc",
                                                 "log-loss-unc"])
    for i in range(4):
        s, mcb, dsc, unc = ([got[n]["pooled"]] + got[n]["groups"] for n in got)
        assert s[i] == pytest.approx(mcb[i] - dsc[i] + unc[i], rel=1e-12)
        assert mcb[i] >= -1e-15 and dsc[i] >= -1e-15
    # the Brier score is its formula, mean (s - y)^2, over every set
    brier = sd.measures_by_group(entries, groups, ["brier"])["brier"]
    _close(brier["pooled"], math.fsum((one.score - one.label) ** 2) / len(one))
    at = groups.tag_to_group[one.tag] == 2
    _close(brier["groups"][2],
           math.fsum((one.score[at] - one.label[at]) ** 2) / at.sum())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_application_measures(dtype):
    """DCF and minDCF (values, thresholds, error rates) bit for bit; Cllr and
    minCllr within 1e-12; probabilities 0 and 1 (infinite LLRs) included."""
    x, gold = _data(dtype, seed=7)
    x[:4, 0], x[4:8, 1] = 1.0, 0.0
    one = sc.threshold(x, gold)
    groups = _groups()
    names = ["dcf", "min-dcf", "cllr", "min-cllr"]
    for prior in (0.1, 0.6):
        got = sd.measures_by_group(_entries(x, gold, CHUNKS[0]), groups, names, prior=prior)
        ref = sc.evaluate(one, groups, ci=None, metrics=names, prior=prior).metrics
        for name in names:
            a = [got[name]["pooled"]] + got[name]["groups"]
            b = [ref[name]["pooled"]] + ref[name]["groups"]
            if name.endswith("dcf"):
                assert a == b, name
            else:
                for u, v in zip(a, b):
                    _close(u, v, name)
    # the table of all entries, brute force
    scores, inv, counts = np.unique(one.score.astype(np.float64), return_inverse=True,
                                    return_counts=True)
    positives = np.bincount(inv, weights=one.label).astype(np.int64)
    got = sd.application_from_table(scores, counts, positives, "min-dcf", 0.2)
    assert got == sc.min_dcf(one.score, one.label, prior=0.2)
    with pytest.raises(ValueError, match="labels must hold both classes"):
        sd.application_from_table(scores, counts, np.zeros_like(counts), "cllr")


@pytest.mark.filterwarnings("ignore:.*bins of fewer than")
def test_evaluate_with_every_option():
    x, gold = _data(np.float32, seed=6)
    one = sc.threshold(x, gold)
    groups = _groups()
    entries = _entries(x, gold, CHUNKS[0]).persist()
    for kw in [dict(ci=CI, per_tag=True, min_entries=30, top_label=True,
                    metrics=["ece", "brier", "brier-mcb"]),
               dict(ci="score", debias=True, bin_size=20, top_label=True),
               dict(ci=None, binning="fixed", n_bins=8, norm=1, metrics="max-ce")]:
        got = sd.evaluate(entries, groups, **kw)
        ref = sc.evaluate(one, groups, **kw)
        assert got.settings == ref.settings
        assert got.groups == ref.groups
        _same_ce(got.smce, ref.smce)
        for a, b in zip(got.gmce, ref.gmce):
            _same_ce(a, b)
        if kw.get("top_label"):
            _same_ce(got.top_label_ece, ref.top_label_ece)
        if kw.get("per_tag"):
            assert sorted(got.mce.per_tag) == sorted(ref.mce.per_tag)
            _close(got.mce.value, ref.mce.value)
            for t, ce in ref.mce.per_tag.items():
                _same_ce(got.mce.per_tag[t], ce)
        assert sorted(got.metrics) == sorted(ref.metrics)
        for name, m in ref.metrics.items():
            _close(got.metrics[name]["pooled"], m["pooled"], name)
        rows = sc.compare(ref, got).rows
        assert all(abs(r["change"]) <= 1e-12 for r in rows)


@pytest.mark.parametrize("n", [1, 2])
def test_tiny_sets(n):
    x = np.zeros((4, 3))
    x[:n, 1] = [0.3, 0.3][:n]                    # tied, on a fixed-width edge
    gold = np.array([1, 0, 2, 2])
    one = sc.threshold(x, gold)
    entries = sd.threshold(da.from_array(x, chunks=((1, 0, 3), (3,))), gold)
    for kw in [dict(binning="fixed", ci=CI), dict(ci=CI, n_bins=3)]:
        got, ref = sd.binned_errors(entries, **kw), sc.smce_and_gmce(
            one, sc.TagGroups.scw(3), **kw)
        _same_ce(got[0], ref[0])
    _same_ce(sd.top_label_ece(entries, ci=CI), sc.top_label_ece(one, ci=CI))


def test_refusals_name_the_problem(monkeypatch):
    x, gold = _data(np.float64)
    entries = _entries(x, gold, CHUNKS[1])
    with pytest.raises(ValueError, match="'score' is the interval of the debiased CE"):
        sd.binned_errors(entries, ci="score")
    # every measure of the registry has a distributed form today; one without
    # (simulated: a registry entry declaring no mergeable form) is refused
    monkeypatch.setitem(MEASURES, "smooth-ece", dataclasses.replace(MEASURES["smooth-ece"], mergeable=None))
    with pytest.raises(ValueError, match=r"measure\(s\) smooth-ece have no distributed form"):
        sd.evaluate(entries, metrics=["ece", "smooth-ece", "calibration-test-p"])
    monkeypatch.undo()
    with pytest.raises(ValueError, match="measure 'min-dcf' needs prior"):
        sd.evaluate(entries, metrics=["min-dcf"])
    with pytest.raises(ValueError, match="unknown measure 'nope'"):
        sd.measures_by_group(entries, _groups(), ["nope"])
    with pytest.raises(ValueError, match="n_bins"):
        sd.fixed_width_bin_stats(entries, n_bins=0)
    with pytest.raises(ValueError, match="binning"):
        sd.binned_errors(entries, binning="quantile")
    with pytest.raises(ValueError, match="no points"):
        sd.top_label_ece(sd.threshold(da.from_array(x / 2, chunks=(50, 6)), gold, 0.9))
    with pytest.raises(TypeError, match="DaskEntries"):
        sd.top_label_ece(sc.threshold(x, gold))


def test_every_registry_measure_has_a_distributed_form():
    """Every measure of the registry declares a mergeable form today (the
    cluster's --metrics and report take every measure), and the distributed
    layer implements every form a measure may declare."""
    from sparsecal.metrics.measures import MERGEABLE_FORMS
    assert not [m.name for m in MEASURES.values() if m.mergeable is None]
    assert set(sd.measures.MERGED) == set(MERGEABLE_FORMS)
    with pytest.raises(ValueError, match="measure 'toy': unknown mergeable form 'nope'"):
        dataclasses.replace(MEASURES["ce"], name="toy", mergeable="nope")
