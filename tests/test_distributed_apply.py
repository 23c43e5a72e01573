"""Apply at scale (sparsecal.distributed.apply): a fitted calibrator applied chunk
by chunk on two worker processes, written to Zarr or ``.npy`` shards, is
bit-identical to ``transform_dense`` on one machine, and the destination appears
only when complete (docs/scale.md, "Apply at scale")."""
import os

import dask.array as da
import numpy as np
import pytest

import sparsecal as sc
from sparsecal import distributed as sd

from _dask_cluster import tagger_scores, two_workers


@pytest.fixture(scope="module", autouse=True)
def client():
    with two_workers() as c:
        yield c


_data = tagger_scores


def _models(x, gold, n_tags):
    entries = sc.threshold(x, gold)
    tfg = sc.TagGroups.from_counts({t: (n_tags - t) ** 2 for t in range(n_tags)}, 2,
                                   n_tags=n_tags)
    iso = sc.GroupedCalibrator(sc.IsotonicCalibrator(), tfg, min_entries=5)
    return [iso.fit(entries),
            sc.GroupedCalibrator(sc.HistogramBinning(n_bins=4), sc.TagGroups.scw(n_tags),
                                 renormalize=True).fit(entries),
            sc.CrossFittedCalibrator(sc.GroupedCalibrator(sc.IsotonicCalibrator(), tfg),
                                     n_folds=3).fit(entries)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fmt", ["zarr", "npy"])
def test_apply_bit_identical_to_transform_dense(tmp_path, dtype, fmt):
    x, gold = _data(1, 300, 6, dtype)
    test, _ = _data(2, 131, 6, dtype)
    for i, model in enumerate(_models(x, gold, 6)):
        ref = model.transform_dense(test)
        for j, sizes in enumerate([(40, 0, 1, 90), (131,), (1,) * 3 + (128,)]):
            out = tmp_path / f"out-{i}-{j}.{fmt}"
            scores = da.from_array(test, chunks=(sizes, (3, 3)))
            assert sd.apply_to_store(model, scores, out, format=fmt) == out
            got = sd.open_store(out)
            assert got.dtype == dtype and got.shape == test.shape
            got = got.compute()
            np.testing.assert_array_equal(got, ref)
            assert not np.array_equal(got, test)      # the model did change scores
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_one_row_and_all_below_threshold(tmp_path):
    x, gold = _data(3, 200, 4, np.float64)
    model = _models(x, gold, 4)[0]
    for test in (x[:1], np.full((5, 4), 0.001)):
        out = tmp_path / f"o{test.shape[0]}"
        sd.apply_to_store(model, da.from_array(test, chunks=(2, 4)), out, format="npy")
        np.testing.assert_array_equal(sd.open_store(out).compute(),
                                      model.transform_dense(test))


@pytest.mark.parametrize("fmt", ["zarr", "npy"])
def test_atomic_nothing_visible_until_complete(tmp_path, fmt):
    x, gold = _data(4, 200, 5, np.float32)
    model = _models(x, gold, 5)[0]
    out = tmp_path / "store"
    sd.apply_to_store(model, da.from_array(x, chunks=(50, 5)), out, format=fmt)
    old = sd.open_store(out).compute()
    bad = x.copy()
    bad[170, 2] = 1.5                   # the last chunk fails on its worker
    with pytest.raises(ValueError, match="1.5|row 20|probabilit|\\[0, 1\\]"):
        sd.apply_to_store(model, da.from_array(bad, chunks=(50, 5)), out, format=fmt)
    np.testing.assert_array_equal(sd.open_store(out).compute(), old)   # old kept whole
    assert sorted(os.listdir(tmp_path)) == ["store"]                   # no temporaries
    fresh = tmp_path / "fresh"
    with pytest.raises(ValueError):
        sd.apply_to_store(model, da.from_array(bad, chunks=(50, 5)), fresh, format=fmt)
    assert not fresh.exists()
    assert bad[170, 2] == 1.5


def test_bad_input_gets_clear_errors(tmp_path):
    x, gold = _data(5, 100, 3, np.float64)
    model = _models(x, gold, 3)[0]
    dx = da.from_array(x, chunks=(30, 3))
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep")
    with pytest.raises(FileExistsError, match="not a store written by apply_to_store"):
        sd.apply_to_store(model, dx, other)
    assert (other / "notes.txt").read_text() == "keep"
    with pytest.raises(ValueError, match="format"):
        sd.apply_to_store(model, dx, tmp_path / "a", format="csv")
    with pytest.raises(TypeError, match="dask.array.Array"):
        sd.apply_to_store(model, x, tmp_path / "a")
    with pytest.raises(TypeError, match="float32 or float64"):
        sd.apply_to_store(model, dx.astype(np.int32), tmp_path / "a")
    with pytest.raises(ValueError, match=r"shape \[n_tokens, 3\]"):
        sd.apply_to_store(model, dx[:, :2], tmp_path / "a")
    with pytest.raises(TypeError, match="GroupedCalibrator or CrossFittedCalibrator"):
        sd.apply_to_store(sc.IsotonicCalibrator(), dx, tmp_path / "a")
    with pytest.raises(ValueError, match="not fitted"):
        sd.apply_to_store(sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(3)),
                          dx, tmp_path / "a")
    with pytest.raises(ValueError, match="not a store"):
        sd.open_store(other)
    assert not (tmp_path / "a").exists()
