"""The bootstrap interval and the calibration test on a cluster
(sparsecal.distributed.resampling) on two worker processes, against the
single-machine path bit for bit: interval ends of SMCE, every GMCE, the per-tag
CE and the top-label ECE, p-values of the calibration test; equal-mass and
fixed-width bins, float32 and float64, random data with ties, tiny groups,
empty chunks and chunks with every score below the threshold; blocking of the
replicates does not change them; a planted change of level moves the ends."""
import dask.array as da
import numpy as np
import pytest

import sparsecal as sc
from sparsecal import distributed as sd
from sparsecal.distributed import resampling as dr
from sparsecal.metrics import ConfidenceInterval
from sparsecal.metrics.resampling import replicate_errors, replicate_generators

from _dask_cluster import tagger_scores, two_workers


@pytest.fixture(scope="module", autouse=True)
def client():
    with two_workers() as c:
        yield c


CHUNKS = [(60, 0, 41, 1, 0, 98), (200,)]
BOOT = ConfidenceInterval("bootstrap", confidence_level=0.9, n_resamples=150, random_state=3)


def _data(dtype, seed=1):
    x, gold = tagger_scores(seed, 200, 6, dtype)
    x[:, :2] = x[:, :2].round(1)               # ties, also on fixed-width edges
    x[60:101] = dtype(0.001)                    # a whole chunk below the threshold
    return x, gold


def _groups():   # group 2 is tiny
    return sc.TagGroups([0, 0, 1, 1, 1, 2], 3)


def _entries(x, gold, sizes):
    return sd.threshold(da.from_array(x, chunks=(sizes, (3, 3))), gold)


def _same(got, ref):
    assert (got.ci_method, got.ci_level, got.n) == (ref.ci_method, ref.ci_level, ref.n)
    assert (got.ci_low, got.ci_high) == (ref.ci_low, ref.ci_high)   # bit for bit
    assert got.value == pytest.approx(ref.value, rel=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [dict(), dict(bin_size=17, norm=1),
                                dict(binning="fixed", n_bins=15),
                                dict(binning="fixed", norm="max")], ids=str)
def test_bootstrap_bit_identical(dtype, kw):
    x, gold = _data(dtype, seed=2)
    groups = _groups()
    ref_smce, ref_gmce = sc.smce_and_gmce(sc.threshold(x, gold), groups, ci=BOOT, **kw)
    assert ref_smce.ci_low < ref_smce.ci_high
    for sizes in CHUNKS:
        smce, gmce = sd.binned_errors(_entries(x, gold, sizes), groups, ci=BOOT, **kw)
        _same(smce, ref_smce)
        for a, b in zip(gmce, ref_gmce):
            _same(a, b)


def test_level_and_generator_seed():
    x, gold = _data(np.float64, seed=3)
    entries, one = _entries(x, gold, CHUNKS[0]), sc.threshold(x, gold)
    wide = ConfidenceInterval("bootstrap", confidence_level=0.95, n_resamples=150,
                              random_state=3)
    a, b = sd.binned_errors(entries, ci=BOOT)[0], sd.binned_errors(entries, ci=wide)[0]
    _same(b, sc.smce(one, ci=wide))
    assert b.ci_high - b.ci_low > a.ci_high - a.ci_low     # 95% vs 90% moves the ends
    # a Generator: the sets spawn their replicates in the single-machine order
    spec = lambda: ConfidenceInterval("bootstrap", n_resamples=60,   # noqa: E731
                                      random_state=np.random.default_rng(8))
    got, ref = sd.binned_errors(entries, _groups(), ci=spec()), sc.smce_and_gmce(
        one, _groups(), ci=spec())
    _same(got[0], ref[0])
    for g, r in zip(got[1], ref[1]):
        _same(g, r)
    assert got[1][0].ci_low != got[1][1].ci_low


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_evaluate_per_tag_and_top_label(dtype):
    x, gold = _data(dtype, seed=4)
    groups = _groups()
    kw = dict(ci=BOOT, per_tag=True, min_entries=20, top_label=True)
    ref = sc.evaluate(sc.threshold(x, gold), groups, **kw)
    got = sd.evaluate(_entries(x, gold, CHUNKS[0]), groups, **kw)
    _same(got.smce, ref.smce)
    _same(got.top_label_ece, ref.top_label_ece)
    assert sorted(got.mce.per_tag) == sorted(ref.mce.per_tag)
    # the per-tag CEs are debiased, with the score interval from the merged
    # bins (nothing drawn): within 1e-12, as every distributed value
    assert got.mce.value == pytest.approx(ref.mce.value, rel=1e-12, abs=1e-15)
    for t, ce in got.mce.per_tag.items():
        r = ref.mce.per_tag[t]
        assert (ce.ci_method, ce.ci_level, ce.n) == ("score", 0.9, r.n)
        np.testing.assert_allclose([ce.value, ce.ci_low, ce.ci_high],
                                   [r.value, r.ci_low, r.ci_high], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [dict(), dict(binning="fixed", n_bins=8),
                                dict(bin_size=30)], ids=str)
def test_calibration_test_bit_identical(dtype, kw):
    x, gold = _data(dtype, seed=5)
    groups = _groups()
    options = {"n_resamples": 49, "random_state": 6}
    ref = sc.evaluate(sc.threshold(x, gold), groups, ci=None, metrics=["calibration-test-p"],
                      measure_options=options, **kw).metrics["calibration-test-p"]
    for sizes in CHUNKS:
        got = sd.evaluate(_entries(x, gold, sizes), groups, metrics=["calibration-test-p"],
                          measure_options=options, **kw).metrics["calibration-test-p"]
        assert got == ref
    one = sc.threshold(x, gold)
    direct = sc.calibration_test(one.score, one.label, n_resamples=49, random_state=6,
                                 **{k: v for k, v in kw.items()})
    assert ref["pooled"] == direct.p_value


def test_tasks_do_not_change_replicates(monkeypatch):
    """Sets of one and of several tasks, and several sets in one task: each
    replicate is the single machine's, in order."""
    x, gold = _data(np.float64, seed=6)
    entries = _entries(x, gold, CHUNKS[0])
    groups = sc.TagGroups([0, 0, 1, 1, 2, 2], 3)
    tables = dr.set_tables(entries, groups)   # pooled, then each group
    smce, gmce = sd.binned_errors(entries, groups, n_bins=4)
    bins = [ce.bins for ce in [smce, *gmce]]
    jobs = lambda: [(t, b, replicate_generators(2 + s, 50))   # noqa: E731
                    for s, (t, b) in enumerate(zip(tables, bins))]
    ref = [replicate_errors(t, g, starts=np.r_[0, np.cumsum(b.count)]) for t, b, g in jobs()]
    each = dr._work(tables[0], bins[0])
    for work, n_tasks in ((1, 50 * len(tables)), (7 * each, None), (64 * each, None),
                          (1 << 22, 1)):
        monkeypatch.setattr(dr, "TASK_WORK", work)
        plan = dr._plan(jobs())
        ranges = [r for task in plan for r in task]   # every replicate once, in order
        assert [j for j, _, _ in ranges] == sorted(j for j, _, _ in ranges)
        for j in range(len(tables)):
            mine = [(a, b) for i, a, b in ranges if i == j]
            assert mine[0][0] == 0 and mine[-1][1] == 50
            assert all(b == a2 and a < b for (a, b), (a2, _) in zip(mine, mine[1:]))
        assert n_tasks is None or len(plan) == n_tasks
        for got, want in zip(dr.cluster_replicate_errors(jobs()), ref):
            np.testing.assert_array_equal(got, want)
