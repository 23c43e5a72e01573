"""Per-token ``sample_weight`` on distributed entries (sparsecal.distributed.weights)
on two worker processes, against ``GroupedCalibrator.fit(Entries,
sample_weight=w[entries.token])`` on one machine: random data with ties, tiny
groups, empty chunks and a chunk with every score below the threshold; weights
with zeros. Tolerances (docs/scale.md, "weights"): integer-valued weights (exact
float sums) give the single-machine states bit for bit for isotonic and
histogram; real weights: isotonic knots' x and histogram boundaries bit for bit,
values within 1e-12 relative; the logistic fits within 1e-7 and Gaussian within
1e-12 in predictions."""
import dask.array as da
import numpy as np
import pytest

import sparsecal as sc
from sparsecal import distributed as sd

from _dask_cluster import tagger_scores, two_workers

pytestmark = pytest.mark.filterwarnings("ignore:.*fewer than", "ignore:.*no fallback")


@pytest.fixture(scope="module", autouse=True)
def client():
    with two_workers() as c:
        yield c


EXACT = [sc.IsotonicCalibrator(), sc.HistogramBinning(n_bins=7),
         sc.HistogramBinning(bin_size=9)]
LOGISTIC = [sc.PlattCalibrator(), sc.BetaCalibration(),
            sc.PriorWeightedLogistic(application_prior=0.3)]
GAUSSIAN = sc.GaussianCalibration(application_prior=0.2)
CHUNKS = [(150, 0, 37, 1, 0, 112), (1,) * 4 + (296,)]
GRID = np.linspace(0.0, 1.0, 2001)


def _data(dtype):
    x, gold = tagger_scores(11, 300, 8, dtype)
    x[150:187] = dtype(0.001)                # one whole chunk below the threshold
    x[:, 7] = np.where(np.arange(300) % 97 == 3, 0.5, 0.0).astype(dtype)   # tag 7: tiny
    return x, gold


def _weights(kind):
    rng = np.random.default_rng(5)
    zeros = rng.random(300) < 0.2
    w = rng.integers(1, 4, 300).astype(np.float64) if kind == "int" else rng.random(300)
    return np.where(zeros, 0.0, w)


def _groupings():
    tfg = sc.TagGroups.from_counts({t: (9 - t) ** 2 for t in range(8)}, 3, n_tags=8)
    return [dict(groups=tfg, min_entries=1),
            dict(groups=sc.TagGroups.per_tag(8), fallback=tfg, min_entries=20)]


def _fits(base, dtype, kind, chunks=CHUNKS[0], grouping=0):
    x, gold = _data(dtype)
    w = _weights(kind)
    one = sc.threshold(x, gold)
    ref = sc.GroupedCalibrator(base, **_groupings()[grouping]).fit(
        one, sample_weight=w[one.token])
    entries = sd.threshold(da.from_array(x, chunks=(chunks, 8)), gold)
    got = sc.GroupedCalibrator(base, **_groupings()[grouping]).fit(
        entries, sample_weight=da.from_array(w, chunks=50))
    np.testing.assert_array_equal(got.tag_to_calibrator_, ref.tag_to_calibrator_)
    assert len(got.calibrators_) == len(ref.calibrators_) > 1
    return got, ref, one


def _arrays(model):
    return [model.get_state()[1][k] for k in sorted(model.get_state()[1])]


@pytest.mark.parametrize("grouping", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("base", EXACT, ids=repr)
def test_exact_methods_integer_weights_bit_identical(base, dtype, grouping):
    got, ref, _ = _fits(base, dtype, "int", grouping=grouping)
    for a, b in zip(_arrays(got), _arrays(ref)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("base", EXACT, ids=repr)
def test_exact_methods_real_weights(base, dtype):
    got, ref, one = _fits(base, dtype, "real", grouping=1)
    for a, b in zip(got.calibrators_, ref.calibrators_):
        xs = ("x_knots_", "y_knots_") if hasattr(b, "x_knots_") else ("boundaries_",
                                                                       "bin_rates_")
        np.testing.assert_array_equal(getattr(a, xs[0]), getattr(b, xs[0]))
        np.testing.assert_allclose(getattr(a, xs[1]), getattr(b, xs[1]), rtol=1e-12, atol=0)
    np.testing.assert_allclose(got.transform(one).score, ref.transform(one).score,
                               rtol=1e-12 if dtype == np.float64 else 1e-6, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("base", LOGISTIC + [GAUSSIAN], ids=repr)
def test_weighted_methods_within_tolerance(base, dtype):
    tol = 1e-12 if base is GAUSSIAN and dtype == np.float64 else 1e-7
    got, ref, _ = _fits(base, dtype, "real", grouping=1)
    grid = GRID.astype(dtype)
    for a, b in zip(got.calibrators_, ref.calibrators_):
        np.testing.assert_allclose(a.predict(grid), b.predict(grid), rtol=0,
                                   atol=max(tol, float(np.finfo(dtype).eps)))


def test_histogram_cuts_in_runs_of_ties():
    """Few distinct scores (heavy ties), weights that put cuts at a run's first
    entry and inside runs: the single-machine boundaries bit for bit."""
    rng = np.random.default_rng(3)
    x = rng.dirichlet(np.full(4, 0.5), size=200).round(1)
    gold = rng.integers(0, 4, 200)
    one = sc.threshold(x, gold)
    scw = sc.TagGroups.scw(4)
    entries = sd.threshold(da.from_array(x, chunks=(37, 4)), gold)
    seen = set()
    for seed in range(6):
        w = np.random.default_rng(seed).integers(0, 5, 200).astype(np.float64)
        for base in (sc.HistogramBinning(n_bins=13), sc.HistogramBinning(bin_size=11)):
            ref = sc.GroupedCalibrator(base, scw, min_entries=1).fit(
                one, sample_weight=w[one.token])
            got = sc.GroupedCalibrator(base, scw, min_entries=1).fit(entries, sample_weight=w)
            (a,), (b,) = got.calibrators_, ref.calibrators_
            np.testing.assert_array_equal(a.boundaries_, b.boundaries_)
            np.testing.assert_array_equal(a.bin_rates_, b.bin_rates_)
            distinct = np.unique(one.score)
            seen.update(np.isin(b.boundaries_, distinct).tolist())
    assert seen == {True, False}   # cuts inside runs and between runs both occurred


def test_repeated_runs_and_chunkings():
    x, gold = _data(np.float64)
    w = _weights("real")
    base = sc.PlattCalibrator()
    fits = [sc.GroupedCalibrator(base, **_groupings()[0]).fit(
        sd.threshold(da.from_array(x, chunks=(c, 8)), gold), sample_weight=w)
        for c in (CHUNKS[0], CHUNKS[0], CHUNKS[1])]
    for a, b in zip(_arrays(fits[0]), _arrays(fits[1])):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(fits[0].calibrators_, fits[2].calibrators_):
        np.testing.assert_allclose(a.predict(GRID), b.predict(GRID), rtol=0, atol=1e-7)
    iso = [sc.GroupedCalibrator(sc.IsotonicCalibrator(), **_groupings()[1]).fit(
        sd.threshold(da.from_array(x, chunks=(c, 8)), gold), sample_weight=w)
        for c in CHUNKS]
    for a, b in zip(iso[0].calibrators_, iso[1].calibrators_):
        np.testing.assert_array_equal(a.x_knots_, b.x_knots_)
        np.testing.assert_allclose(a.y_knots_, b.y_knots_, rtol=1e-12, atol=0)


@pytest.mark.parametrize("base", EXACT + [sc.PlattCalibrator()], ids=repr)
def test_unit_weights_equal_the_unweighted_fit(base):
    x, gold = _data(np.float32)
    entries = sd.threshold(da.from_array(x, chunks=(CHUNKS[0], 8)), gold)
    got = sc.GroupedCalibrator(base, **_groupings()[1]).fit(entries,
                                                            sample_weight=np.ones(300))
    ref = sc.GroupedCalibrator(base, **_groupings()[1]).fit(entries)
    for a, b in zip(got.calibrators_, ref.calibrators_):
        if base in EXACT:
            state_a, state_b = a.get_state()[1], b.get_state()[1]
            for k in state_b:
                np.testing.assert_array_equal(state_a[k], state_b[k])
        else:
            np.testing.assert_allclose(a.predict(GRID), b.predict(GRID), rtol=0, atol=1e-7)


def test_refusals_name_sample_weight():
    x, gold = _data(np.float64)
    entries = sd.threshold(da.from_array(x, chunks=(100, 8)), gold)
    scw = sc.TagGroups.scw(8)
    model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), scw)
    w = np.ones(300)
    with pytest.raises(ValueError, match=r"sample_weight has shape \(299,\), expected "
                                         r"\(300,\): one weight per token"):
        model.fit(entries, sample_weight=w[1:])
    with pytest.raises(TypeError, match="sample_weight must hold real numbers"):
        model.fit(entries, sample_weight=w.astype(str))
    for bad in (-1.0, np.nan, np.inf):
        v = w.copy()
        v[250] = bad
        with pytest.raises(ValueError, match="sample_weight must be finite and non-negative"):
            model.fit(entries, sample_weight=da.from_array(v, chunks=60))
    with pytest.raises(ValueError, match="sample_weight is zero on every dev entry of "
                                         ".*group 0"):
        model.fit(entries, sample_weight=np.zeros(300))
    with pytest.raises(ValueError, match="sample_weight is not supported for "
                                         "scaling-binning .* positional split"):
        sc.GroupedCalibrator(sc.ScalingBinning(), scw).fit(entries, sample_weight=w)
    with pytest.raises(ValueError, match="sample_weight is per token"):
        one_tag = sd.from_arrays(da.from_array(np.array([0.2, 0.7]), chunks=1),
                                 da.from_array(np.array([0, 1]), chunks=1))
        sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(1)).fit(
            one_tag, sample_weight=[1.0, 1.0])
    assert not hasattr(model, "calibrators_")


def test_weights_of_one_token_and_inputs_unchanged():
    x = np.array([[0.6, 0.4]])
    entries = sd.threshold(da.from_array(x, chunks=(1, 2)), [0])
    w = np.array([2.5])
    model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(2),
                                 min_entries=1).fit(entries, sample_weight=w)
    (cal,) = model.calibrators_
    np.testing.assert_array_equal(cal.x_knots_, [0.4, 0.6])
    np.testing.assert_array_equal(cal.y_knots_, [0.0, 1.0])
    np.testing.assert_array_equal(w, [2.5])
