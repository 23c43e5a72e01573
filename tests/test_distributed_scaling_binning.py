"""Scaling-binning per group fitted on distributed entries
(sparsecal.distributed.scaling_binning) on two worker processes, against
``GroupedCalibrator.fit`` on one machine: the same split (by position in each
group, docs/recalibration.md), the isotonic knots and bin boundaries bit for bit,
bin values and predictions within 1e-12 relative (docs/scale.md), the same bits
under every chunking. Random data with ties, tiny groups, empty chunks, one-row
chunks and a chunk with every score below the threshold."""
import dask.array as da
import numpy as np
import pytest

import sparsecal as sc
from sparsecal import distributed as sd
from sparsecal.calibration.scaling_binning import second_half, split_key
from sparsecal.distributed.scaling_binning import fit_halves

from _dask_cluster import tagger_scores, two_workers


@pytest.fixture(scope="module", autouse=True)
def client():
    with two_workers() as c:
        yield c


CHUNKS = [(300,), (150, 0, 37, 1, 0, 112), (1,) * 4 + (296,)]


def _data(dtype):
    x, gold = tagger_scores(21, 300, 8, dtype)
    x[150:187] = dtype(0.001)                # one whole chunk below the threshold
    x[:, 7] = np.where(np.arange(300) % 97 == 3, 0.5, 0.0).astype(dtype)   # tag 7: 3 entries
    return x, gold


def _groupings():
    tfg = sc.TagGroups.from_counts({t: (9 - t) ** 2 for t in range(8)}, 3, n_tags=8)
    return [dict(groups=tfg, min_entries=1),
            dict(groups=sc.TagGroups.per_tag(8), min_entries=2),
            dict(groups=sc.TagGroups.per_tag(8), fallback=tfg, min_entries=40)]


def _close(got, ref):
    """Knots and boundaries bit for bit; bin values within 1e-12 relative."""
    assert got.tag_to_calibrator_.tolist() == ref.tag_to_calibrator_.tolist()
    assert len(got.calibrators_) == len(ref.calibrators_)
    for a, b in zip(got.calibrators_, ref.calibrators_):
        for name in ("x_knots_", "y_knots_", "boundaries_"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        np.testing.assert_allclose(a.bin_values_, b.bin_values_, rtol=1e-12, atol=0)


@pytest.mark.filterwarnings("ignore:.*fewer than")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("base", [sc.ScalingBinning(n_bins=4, seed=3),
                                  sc.ScalingBinning(n_bins=50, seed=0)], ids=repr)
def test_same_fit_as_one_machine_under_every_chunking(dtype, base):
    x, gold = _data(dtype)
    test, _ = tagger_scores(22, 90, 8, dtype)
    one = sc.threshold(x, gold)
    for kw in _groupings():
        ref = sc.GroupedCalibrator(sc.calibration.clone(base), **kw).fit(one)
        states = []
        for sizes in CHUNKS:
            entries = sd.threshold(da.from_array(x, chunks=(sizes, (4, 4))), gold)
            got = sc.GroupedCalibrator(sc.calibration.clone(base), **kw).fit(entries)
            _close(got, ref)
            np.testing.assert_allclose(got.transform_dense(test), ref.transform_dense(test),
                                       rtol=1e-12 if dtype == np.float64 else 1e-6, atol=0)
            states.append(got.get_state())
        for meta, arrays in states[1:]:   # every chunking: the same bits
            assert meta == states[0][0]
            for name in arrays:
                np.testing.assert_array_equal(arrays[name], states[0][1][name])


def test_split_follows_position_in_group():
    """A planted change of the split is caught: with another seed the
    distributed fit follows the single-machine fit of that seed, not of 0."""
    x, gold = _data(np.float64)
    one = sc.threshold(x, gold)
    entries = sd.threshold(da.from_array(x, chunks=(60, 8)), gold)
    scw = sc.TagGroups.scw(8)
    fits = {s: sc.GroupedCalibrator(sc.ScalingBinning(seed=s), scw).fit(one)
            for s in (0, 1)}
    got = sc.GroupedCalibrator(sc.ScalingBinning(seed=1), scw).fit(entries)
    _close(got, fits[1])
    assert not np.array_equal(fits[0].calibrators_[0].x_knots_,
                              fits[1].calibrators_[0].x_knots_)
    # the first half's knots are the isotonic fit of the entries whose position
    # (entry order) the split sends to the first half
    first = ~second_half(np.arange(len(one)), split_key(1))
    iso = sc.IsotonicCalibrator().fit(one.score[first], one.label[first])
    np.testing.assert_array_equal(got.calibrators_[0].x_knots_, iso.x_knots_)


@pytest.mark.parametrize("n", [2, 3, 4, 9])
def test_tiny_groups(n):
    rng = np.random.default_rng(n)
    x = rng.choice([0.25, 0.5, 0.75], size=(n, 1))
    gold = rng.integers(-1, 1, size=n)
    one = sc.threshold(x, gold)
    for sizes in [(n,), (1,) * n]:
        entries = sd.threshold(da.from_array(x, chunks=(sizes, 1)), gold)
        for seed in range(4):
            kw = dict(groups=sc.TagGroups.scw(1), min_entries=1)
            ref = sc.GroupedCalibrator(sc.ScalingBinning(n_bins=3, seed=seed), **kw).fit(one)
            got = sc.GroupedCalibrator(sc.ScalingBinning(n_bins=3, seed=seed), **kw).fit(
                entries)
            _close(got, ref)


def test_fit_halves_against_single_machine_bins():
    """The table form of the bins on one machine: ties in the scaled scores,
    unequal counts; against ``ScalingBinning.fit`` on the same halves."""
    rng = np.random.default_rng(5)
    for n in (2, 3, 10, 257, 2000):
        x = rng.choice(np.linspace(0, 1, 11), size=n)
        y = (rng.random(n) < x).astype(np.uint8)
        for n_bins in (1, 3, 10, 400):
            ref = sc.ScalingBinning(n_bins=n_bins, seed=n).fit(x, y)
            side = second_half(np.arange(n), split_key(n))
            halves = []
            for keep in (~side, side):
                v, counts = np.unique(x[keep], return_counts=True)
                pos = np.array([y[keep][x[keep] == u].sum() for u in v])
                halves.append((v, counts, pos))
            got = fit_halves(ref, *halves)
            for name in ("x_knots_", "y_knots_", "boundaries_"):
                np.testing.assert_array_equal(getattr(got, name), getattr(ref, name))
            np.testing.assert_allclose(got.bin_values_, ref.bin_values_, rtol=1e-12)


def test_saved_and_applied_on_the_cluster(tmp_path):
    x, gold = _data(np.float64)
    entries = sd.threshold(da.from_array(x, chunks=(70, 8)), gold)
    model = sc.GroupedCalibrator(sc.ScalingBinning(n_bins=5), sc.TagGroups.scw(8)).fit(entries)
    model.save(tmp_path / "m.npz")
    loaded = sc.GroupedCalibrator.load(tmp_path / "m.npz")
    test, _ = tagger_scores(23, 60, 8, np.float64)
    np.testing.assert_array_equal(loaded.transform_dense(test), model.transform_dense(test))


def test_errors():
    x, gold = _data(np.float64)
    entries = sd.threshold(da.from_array(x, chunks=(100, 8)), gold)
    scw = sc.TagGroups.scw(8)
    with pytest.raises(ValueError, match="sample_weight"):
        sc.GroupedCalibrator(sc.ScalingBinning(), scw).fit(entries, np.ones(3))
    with pytest.raises(ValueError, match="n_bins"):
        sc.GroupedCalibrator(sc.ScalingBinning(n_bins=0), scw).fit(entries)
    with pytest.raises(ValueError, match="no dev entries"):
        sc.GroupedCalibrator(sc.ScalingBinning(), scw).fit(
            sd.threshold(da.from_array(x, chunks=(100, 8)), gold, 1.0))
    one_entry = sd.threshold(da.from_array(np.array([[0.6]]), chunks=(1, 1)), [0])
    with pytest.raises(ValueError, match="at least 2"):
        sc.GroupedCalibrator(sc.ScalingBinning(), sc.TagGroups.scw(1),
                             min_entries=1).fit(one_entry)


def test_generator_seed_as_one_machine():
    """A Generator seed: each group's clone draws the same key on one machine
    (clone deep-copies it) and on the cluster."""
    x, gold = _data(np.float64)
    one = sc.threshold(x, gold)
    entries = sd.threshold(da.from_array(x, chunks=(90, 8)), gold)
    tfg = sc.TagGroups.from_counts({t: (9 - t) ** 2 for t in range(8)}, 3, n_tags=8)
    ref = sc.GroupedCalibrator(sc.ScalingBinning(seed=np.random.default_rng(4)), tfg,
                               min_entries=1).fit(one)
    got = sc.GroupedCalibrator(sc.ScalingBinning(seed=np.random.default_rng(4)), tfg,
                               min_entries=1).fit(entries)
    _close(got, ref)
