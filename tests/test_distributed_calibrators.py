"""Every registered calibrator but scaling-binning (tests/test_distributed_scaling_binning.py)
fitted per group on
distributed entries (sparsecal.distributed.calibrators) on two worker processes,
against ``GroupedCalibrator.fit`` on one machine: isotonic and histogram binning
bit for bit (state and predictions); Platt, beta, prior-weighted logistic and
Gaussian calibration, fitted on weighted distinct-score rows, to 1e-10 in
predictions (docs/scale.md). Random data with ties, tiny groups, empty chunks and
chunks with every score below the threshold."""
import dask.array as da
import numpy as np
import pytest

import sparsecal as sc
from sparsecal import distributed as sd
from sparsecal.distributed.calibrators import weighted_rows

from _dask_cluster import tagger_scores, two_workers


@pytest.fixture(scope="module", autouse=True)
def client():
    with two_workers() as c:
        yield c


EXACT = [sc.IsotonicCalibrator(), sc.HistogramBinning(n_bins=7),
         sc.HistogramBinning(bin_size=9)]
WEIGHTED = [sc.PlattCalibrator(), sc.BetaCalibration(),
            sc.PriorWeightedLogistic(application_prior=0.3),
            sc.GaussianCalibration(application_prior=0.2)]
CHUNKS = [(150, 0, 37, 1, 0, 112), (1,) * 4 + (296,)]


def _data(dtype):
    x, gold = tagger_scores(11, 300, 8, dtype)
    x[150:187] = dtype(0.001)                # one whole chunk below the threshold
    x[:, 7] = np.where(np.arange(300) % 97 == 3, 0.5, 0.0).astype(dtype)   # tag 7: tiny
    return x, gold


def _groupings():
    tfg = sc.TagGroups.from_counts({t: (9 - t) ** 2 for t in range(8)}, 3, n_tags=8)
    return [dict(groups=tfg, min_entries=1),
            dict(groups=sc.TagGroups.per_tag(8), fallback=tfg, min_entries=20)]


def _same_state(got, ref):
    (meta_g, arr_g), (meta_r, arr_r) = got.get_state(), ref.get_state()
    assert meta_g == meta_r
    assert sorted(arr_g) == sorted(arr_r)
    for name in arr_r:
        assert arr_g[name].dtype == arr_r[name].dtype, name
        np.testing.assert_array_equal(arr_g[name], arr_r[name], err_msg=name)


@pytest.mark.filterwarnings("ignore:.*fewer than")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("base", EXACT, ids=repr)
def test_exact_methods_bit_identical(dtype, base):
    x, gold = _data(dtype)
    test, _ = tagger_scores(12, 90, 8, dtype)
    one = sc.threshold(x, gold)
    for sizes in CHUNKS:
        entries = sd.threshold(da.from_array(x, chunks=(sizes, (4, 4))), gold)
        for kw in _groupings():
            ref = sc.GroupedCalibrator(sc.calibration.clone(base), **kw).fit(one)
            got = sc.GroupedCalibrator(sc.calibration.clone(base), **kw).fit(entries)
            _same_state(got, ref)
            np.testing.assert_array_equal(got.transform_dense(test),
                                          ref.transform_dense(test))


#: prediction tolerance per method. Gaussian calibration is closed form (sums
#: in another order: rounding only); the logistic fits stop where their
#: optimiser does, and on one machine merely reordering the same dev entries
#: moves their predictions by up to 2e-8 (measured on these groups), so the
#: table fit is held to 1e-7, the single-machine fit's own precision.
TOL = {"GaussianCalibration": 1e-12, "PlattCalibrator": 1e-7, "BetaCalibration": 1e-7,
       "PriorWeightedLogistic": 1e-7}
#: count-based fitted state, equal bit for bit
PRIORS = ("dev_prior_", "training_prior_")


@pytest.mark.filterwarnings("ignore:.*fewer than")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("base", WEIGHTED, ids=repr)
def test_weighted_methods_agree_to_rounding(dtype, base):
    x, gold = _data(dtype)
    grid = np.linspace(0.0, 1.0, 101)            # float64: no output rounding
    entries = sd.threshold(da.from_array(x, chunks=(CHUNKS[0], (8,))), gold)
    tol = TOL[type(base).__name__]
    for kw in _groupings():
        ref = sc.GroupedCalibrator(sc.calibration.clone(base), **kw).fit(sc.threshold(x, gold))
        got = sc.GroupedCalibrator(sc.calibration.clone(base), **kw).fit(entries)
        np.testing.assert_array_equal(got.tag_to_calibrator_, ref.tag_to_calibrator_)
        assert got.threshold_ == ref.threshold_
        assert len(got.calibrators_) == len(ref.calibrators_) >= 3
        for a, b in zip(got.calibrators_, ref.calibrators_):
            for name in PRIORS:
                assert getattr(a, name, None) == getattr(b, name, None)
            pred_a, pred_b = a.predict(grid), b.predict(grid)
            np.testing.assert_allclose(pred_a, pred_b, rtol=0, atol=tol)
            assert np.abs(pred_b - grid).max() > 0.1        # a real recalibration
        np.testing.assert_allclose(got.transform(entries).compute().score,
                                   ref.transform(sc.threshold(x, gold)).score,
                                   rtol=0, atol=max(tol, np.finfo(dtype).eps))


@pytest.mark.filterwarnings("ignore:.*fewer than", "ignore:.*cannot fit the dev data")
@pytest.mark.parametrize("n", [1, 2])
def test_tiny_dev_sets(n):
    """One or two dev entries: the same fit, or the same group left unfitted
    (a prior-weighted fit of one label), as one machine."""
    x = np.zeros((3, 2))
    x[:n, 0] = [0.75, 0.25][:n]
    gold = np.array([0, 1, 1])
    entries = sd.threshold(da.from_array(x, chunks=((1, 0, 2), (2,))), gold)
    one = sc.threshold(x, gold)
    grid = np.linspace(0.0, 1.0, 11)
    fitted = 0
    for base in EXACT + WEIGHTED:
        kw = dict(groups=sc.TagGroups.scw(2), min_entries=1)
        ref = sc.GroupedCalibrator(sc.calibration.clone(base), **kw).fit(one)
        got = sc.GroupedCalibrator(sc.calibration.clone(base), **kw).fit(entries)
        np.testing.assert_array_equal(got.tag_to_calibrator_, ref.tag_to_calibrator_)
        assert len(got.calibrators_) == len(ref.calibrators_)
        for a, b in zip(got.calibrators_, ref.calibrators_):
            np.testing.assert_allclose(a.predict(grid), b.predict(grid), rtol=0, atol=1e-10)
            fitted += 1
    assert fitted >= 4


def test_weighted_rows_are_the_entries():
    rng = np.random.default_rng(3)
    scores = np.unique(rng.random(20).round(2))
    counts = rng.integers(1, 5, size=scores.size)
    positives = rng.integers(0, counts + 1)
    x, y, w = weighted_rows(scores, counts, positives, np.float32)
    assert x.dtype == np.float32 and y.dtype == np.uint8 and (w > 0).all()
    # brute force: the rows with their weights are the repeated entries
    rep_x = np.repeat(scores, counts)
    rep_y = np.concatenate([np.r_[np.ones(k), np.zeros(c - k)]
                            for c, k in zip(counts, positives)])
    assert w.sum() == rep_x.size and (w * y).sum() == rep_y.sum()
    for s in scores:
        at = x == np.float32(s)
        assert w[at].sum() == (rep_x == s).sum()
        assert (w * y)[at].sum() == rep_y[rep_x == s].sum()


@pytest.mark.filterwarnings("ignore:.*fewer than")
def test_saved_model_is_applied_on_the_cluster(tmp_path):
    x, gold = _data(np.float64)
    entries = sd.threshold(da.from_array(x, chunks=(CHUNKS[0], (8,))), gold)
    model = sc.GroupedCalibrator(sc.PlattCalibrator(), **_groupings()[1]).fit(entries)
    model.save(tmp_path / "m.npz")
    loaded = sc.GroupedCalibrator.load(tmp_path / "m.npz")
    test, _ = tagger_scores(13, 60, 8, np.float64)
    out = sd.apply_to_store(loaded, da.from_array(test, chunks=(20, 8)),
                            tmp_path / "out.zarr")
    np.testing.assert_array_equal(sd.open_store(out).compute(),
                                  model.transform_dense(test))


def test_refusals_name_the_problem():
    x, gold = _data(np.float64)
    entries = sd.threshold(da.from_array(x, chunks=(100, 8)), gold)
    scw = sc.TagGroups.scw(8)
    class Mine(sc.PlattCalibrator):
        pass
    with pytest.raises(TypeError, match="registered method .* got Mine"):
        sc.GroupedCalibrator(Mine(), scw).fit(entries)
    with pytest.raises(ValueError, match="sample_weight"):
        sc.GroupedCalibrator(sc.PlattCalibrator(), scw).fit(entries, np.ones(3))
    with pytest.raises(TypeError, match="entries must be DaskEntries"):
        sd.fit_grouped(sc.GroupedCalibrator(sc.PlattCalibrator(), scw), sc.threshold(x, gold))
    with pytest.raises(ValueError, match="tags"):
        sc.GroupedCalibrator(sc.PlattCalibrator(), sc.TagGroups.scw(9)).fit(entries)
    with pytest.raises(ValueError, match="n_bins"):
        sc.GroupedCalibrator(sc.HistogramBinning(n_bins=0), scw).fit(entries)
    with pytest.raises(ValueError, match="no dev entries"):
        sc.GroupedCalibrator(sc.PlattCalibrator(), scw).fit(
            sd.threshold(da.from_array(x, chunks=(100, 8)), gold, 1.0))


def test_capabilities_are_read_from_the_registry(monkeypatch):
    """Each way a method may declare (Method.distributed_fit) is implemented,
    weighted where the registry says so; a registered method declaring none is
    refused by name before any pass (weighted or not), never an AttributeError."""
    import dataclasses
    from sparsecal.calibration.registry import DISTRIBUTED_FITS, METHODS
    assert set(sd.calibrators.FITS) == set(DISTRIBUTED_FITS)
    assert set(sd.weights.WEIGHTED_FITS) == {k for k, why in DISTRIBUTED_FITS.items() if why is None}
    with pytest.raises(ValueError, match="method 'toy': unknown distributed_fit 'nope'"):
        dataclasses.replace(METHODS["platt"], name="toy", distributed_fit="nope")
    x, gold = _data(np.float64)
    entries = sd.threshold(da.from_array(x, chunks=(100, 8)), gold)
    scw = sc.TagGroups.scw(8)
    with pytest.raises(ValueError, match="sample_weight is not supported for scaling-binning"):
        sc.GroupedCalibrator(sc.ScalingBinning(), scw).fit(entries, np.ones(len(x)))
    monkeypatch.setitem(METHODS, "beta", dataclasses.replace(METHODS["beta"],
                                                             distributed_fit=None))
    for weights in (None, np.ones(len(x))):
        with pytest.raises(TypeError, match="method 'beta' has no distributed fit"):
            sc.GroupedCalibrator(sc.BetaCalibration(), scw).fit(entries, weights)
