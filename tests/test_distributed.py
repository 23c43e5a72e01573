"""The distributed path (sparsecal.distributed, docs/scale.md) on a local
cluster of two worker processes, compared bit for bit with the single-machine
path: thresholding, equal-mass bins (counts, label sums, score ranges
bit-identical; score sums exact), SMCE/GMCE/CE (within 1e-12 relative,
repeated runs and other chunkings bit-identical) and grouped isotonic fits (same
knots). Random data with ties, tiny groups, empty chunks and chunks with every
score below the threshold. dask and distributed are the ``dask`` extra, which
the test run installs: without them this module fails (no skip)."""
import math
import sys

import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster

import sparsecal as sc
from sparsecal import distributed as sd
from sparsecal.core.binning import argsort_scores, equal_mass_bin_starts


@pytest.fixture(scope="module", autouse=True)
def client():
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


def _data(seed, n_tokens, n_tags, dtype, decimals=2):
    """Scores with many ties (rounded), gold with -1s, some rows below 0.01."""
    rng = np.random.default_rng(seed)
    x = rng.dirichlet(np.full(n_tags, 0.3), size=n_tokens).round(decimals).astype(dtype)
    x[rng.random(n_tokens) < 0.1] = dtype(0.005)     # every score below the threshold
    gold = rng.integers(-1, n_tags, size=n_tokens)
    return x, gold


def _chunked(x, sizes):
    """A dask array of ``x`` with row chunks ``sizes`` (zeros: empty chunks)."""
    assert sum(sizes) == x.shape[0]
    return da.from_array(x, chunks=(tuple(sizes), (x.shape[1],)))


def _assert_same_bins(got, ref):
    for field in ("count", "sum_label", "lower", "upper"):
        np.testing.assert_array_equal(getattr(got, field), getattr(ref, field),
                                      err_msg=field)
    np.testing.assert_allclose(got.sum_score, ref.sum_score, rtol=1e-14, atol=0)


def _assert_same_ce(got, ref):
    assert type(got) is type(ref)
    assert got.n == ref.n and got.norm == ref.norm
    _assert_same_bins(got.bins, ref.bins)
    assert abs(got.value - ref.value) <= 1e-12 * abs(ref.value)


CHUNKS = [(40, 0, 13, 1, 0, 66), (120,), (1,) * 5 + (115,)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("missing_gold", ["negatives", "drop"])
def test_threshold_equals_single_machine(dtype, missing_gold):
    x, gold = _data(1, 120, 7, dtype)
    x[40:53] = dtype(0.001)                       # one whole chunk below the threshold
    one = sc.threshold(x, gold, 0.01, missing_gold=missing_gold)
    for sizes in CHUNKS:
        entries = sd.threshold(_chunked(x, sizes), gold, 0.01, missing_gold=missing_gold)
        got = entries.compute()
        for field in ("score", "tag", "label", "token"):
            a, b = getattr(got, field), getattr(one, field)
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b, err_msg=field)
        assert (got.n_tags, got.n_tokens, got.threshold) == (7, 120, 0.01)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_smce_bins_bit_identical_and_chunking_free(dtype):
    x, gold = _data(2, 400, 9, dtype)
    one = sc.smce(sc.threshold(x, gold), n_bins=13)
    results = []
    for sizes in [(150, 0, 50, 200), (400,), (1, 1, 398)]:
        entries = sd.threshold(_chunked(x, sizes), da.from_array(gold, chunks=37))
        results.append(sd.smce(entries, n_bins=13))
        _assert_same_ce(results[-1], one)
    # exact sums: the same bits whatever the chunking, and on a repeated run
    again = sd.smce(sd.threshold(_chunked(x, (150, 0, 50, 200)), gold), n_bins=13)
    for r in results[1:] + [again]:
        assert r.value == results[0].value
        np.testing.assert_array_equal(r.bins.sum_score, results[0].bins.sum_score)


def test_bin_score_sums_are_exact():
    """Each bin's score sum is the exact sum correctly rounded (math.fsum)."""
    rng = np.random.default_rng(3)
    q = (rng.random(3000) * 0.99 + 0.01).astype(np.float32)
    q[::3] = q[1::3][: q[::3].size]                 # ties
    y = (rng.random(3000) < q).astype(np.uint8)
    got = sd.calibration_error(da.from_array(q, chunks=411), y, n_bins=7).bins
    perm, sorted_q = argsort_scores(q)
    starts = equal_mass_bin_starts(q.size, n_bins=7)
    exact = [math.fsum(sorted_q[a:b].astype(float)) for a, b in zip(starts[:-1], starts[1:])]
    np.testing.assert_array_equal(got.sum_score, exact)
    np.testing.assert_array_equal(got.sum_label, [y[perm[a:b]].sum() for a, b
                                                  in zip(starts[:-1], starts[1:])])


@pytest.mark.parametrize("n, bins, norm", [
    (1, {"n_bins": 10}, 2), (2, {"n_bins": 10}, 1), (2, {"bin_size": 4}, np.inf),
    (3, {"n_bins": 2}, 2), (10, {"bin_size": 4}, 1), (257, {"n_bins": 10}, np.inf)])
def test_calibration_error_tiny_and_small(n, bins, norm):
    rng = np.random.default_rng(n)
    q = rng.choice([0.0, 0.25, 0.5, 1.0, 0.3], size=n)      # heavy ties, 0 and 1
    y = (rng.random(n) < 0.5).astype(np.uint8)
    ref = sc.calibration_error(q, y, norm=norm, **bins)
    got = sd.calibration_error(da.from_array(q, chunks=max(1, n // 3)), y, norm=norm, **bins)
    _assert_same_ce(got, ref)


def test_all_scores_tied_across_chunks():
    q = np.full(50, 0.5, dtype=np.float32)
    y = (np.arange(50) % 3 == 0).astype(np.uint8)
    ref = sc.calibration_error(q, y, n_bins=6)
    _assert_same_ce(sd.calibration_error(da.from_array(q, chunks=7), y, n_bins=6), ref)
    # ranks decide: the label sums differ between bins of equal scores
    assert len(set(ref.bins.sum_label.tolist())) > 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gmce_tiny_and_empty_groups(dtype):
    x, gold = _data(4, 300, 8, dtype, decimals=3)
    x[:, 7] = 0.0                                  # tag 7 never above the threshold
    x[:, 6] = np.where(np.arange(300) < 2, 0.5, 0.0).astype(dtype)   # 2 entries
    # group 0: tags 0-4; group 1: tag 5; group 2: tag 6 (2 entries); group 3: tag 7 (none)
    groups = sc.TagGroups([0, 0, 0, 0, 0, 1, 2, 3], 4)
    one_entries = sc.threshold(x, gold)
    ref = sc.gmce(one_entries, groups, n_bins=5)
    entries = sd.threshold(_chunked(x, (100, 0, 1, 199)), gold)
    got = sd.gmce(entries, groups, n_bins=5)
    assert got[3] is None and ref[3] is None
    assert got[2].n == 2
    for g, r in zip(got[:3], ref[:3]):
        _assert_same_ce(g, r)
    pooled, per_group = sd.smce_and_gmce(entries, groups, n_bins=5)
    _assert_same_ce(pooled, sc.smce(one_entries, n_bins=5))
    assert [p is None for p in per_group] == [False, False, False, True]


def _same_model(got, ref):
    assert len(got.calibrators_) == len(ref.calibrators_)
    np.testing.assert_array_equal(got.tag_to_calibrator_, ref.tag_to_calibrator_)
    assert got.threshold_ == ref.threshold_
    for a, b in zip(got.calibrators_, ref.calibrators_):
        np.testing.assert_array_equal(a.x_knots_, b.x_knots_)
        np.testing.assert_array_equal(a.y_knots_, b.y_knots_)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grouped_isotonic_fit_bit_identical(dtype):
    x, gold = _data(5, 500, 10, dtype)
    x[:, 9] = np.where(np.arange(500) == 7, 0.5, 0.0).astype(dtype)   # tag 9: 1 entry
    train = {t: c for t, c in enumerate(np.arange(10, 0, -1) ** 2)}
    tfg = sc.TagGroups.from_counts(train, 3, n_tags=10)
    per_tag = sc.TagGroups.per_tag(10)
    one_entries = sc.threshold(x, gold)
    entries = sd.threshold(_chunked(x, (250, 0, 3, 247)), gold).persist()
    for kw in [dict(groups=tfg), dict(groups=sc.TagGroups.scw(10)),
               dict(groups=per_tag, fallback=tfg, min_entries=5)]:
        ref = sc.GroupedCalibrator(sc.IsotonicCalibrator(), **kw).fit(one_entries)
        got = sc.GroupedCalibrator(sc.IsotonicCalibrator(), **kw).fit(entries)
        _same_model(got, ref)
        calibrated = got.transform(entries)
        assert isinstance(calibrated, sd.DaskEntries)
        np.testing.assert_array_equal(calibrated.compute().score,
                                      ref.transform(one_entries).score)


def test_grouped_fit_warns_like_single_machine():
    x, gold = _data(6, 200, 5, np.float64)
    groups = sc.TagGroups([0, 0, 0, 1, 1], 2)
    entries = sd.threshold(_chunked(x, (100, 100)), gold)
    with pytest.warns(UserWarning, match=r"2 tags \(2 of them with dev entries\)"):
        model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups,
                                     min_entries=int((x[:, 3:] >= 0.01).sum()) + 1)
        model.fit(entries)
    assert (model.tag_to_calibrator_ == [0, 0, 0, -1, -1]).all()


def test_bad_input_gets_clear_errors():
    x, gold = _data(7, 20, 3, np.float64)
    dx = _chunked(x, (20,))
    with pytest.raises(TypeError, match="scores must be a dask.array.Array"):
        sd.threshold(x, gold)
    with pytest.raises(TypeError, match="float32 or float64"):
        sd.threshold(dx.astype(np.int64), gold)
    with pytest.raises(ValueError, match="gold has shape"):
        sd.threshold(dx, gold[:-1])
    with pytest.raises(ValueError, match="threshold"):
        sd.threshold(dx, gold, 1.5)
    entries = sd.threshold(dx, gold)
    with pytest.raises(TypeError, match="DaskEntries"):
        sd.smce(sc.threshold(x, gold))
    with pytest.raises(ValueError, match="n_bins"):
        sd.smce(entries, n_bins=0)
    with pytest.raises(ValueError, match="no points"):
        sd.smce(sd.threshold(dx, gold, 1.0))
    model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(3))
    with pytest.raises(ValueError, match="sample_weight"):
        model.fit(entries, np.ones(5))
    with pytest.raises(ValueError, match="n_tags|tags"):
        sd.gmce(entries, sc.TagGroups.scw(4))
    bad = x.copy()
    bad[13, 1] = 1.5
    with pytest.raises(ValueError, match="row 13|13"):
        sd.smce(sd.threshold(_chunked(bad, (10, 10)), gold))
    assert (x <= 1).all() and bad[13, 1] == 1.5            # inputs unchanged


def test_missing_extra_names_the_install(monkeypatch):
    from sparsecal.distributed._dask import require_dask
    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(ImportError,
                       match=r'sparsecal.distributed needs dask: pip install "sparsecal\[dask\]"'):
        require_dask()
