"""compare_methods on distributed entries (sparsecal.distributed.comparison)
on two worker processes, against the single-machine compare_methods: the same
MethodComparison, numbers within 1e-12 relative where the fits are bit-identical
(isotonic, histogram), within the logistic fits' documented tolerance
(docs/scale.md) for Platt; scaling-binning within 1e-12. Random data
with ties, tiny groups, empty and all-below-threshold chunks."""
import dataclasses
import math
import warnings

import dask.array as da
import numpy as np
import pytest

import sparsecal as sc
from sparsecal import distributed as sd
from sparsecal.metrics.measures import MEASURES

from _dask_cluster import tagger_scores, two_workers


@pytest.fixture(scope="module", autouse=True)
def client():
    with two_workers() as c:
        yield c


GROUPS = sc.TagGroups.from_counts({t: (9 - t) ** 2 for t in range(8)}, 3, n_tags=8)


def _split(seed, n, chunks, dtype):
    x, gold = tagger_scores(seed, n, 8, dtype)
    x[chunks[0]:chunks[0] + chunks[1]] = dtype(0.001)   # a chunk below the threshold
    x[:, 7] = np.where(np.arange(n) % 97 == 3, 0.5, 0.0).astype(dtype)   # tag 7: tiny
    return (sc.threshold(x, gold), sd.threshold(da.from_array(x, chunks=(chunks, -1)), gold))


def _data(dtype=np.float64):
    one_dev, dev = _split(21, 300, (150, 37, 0, 1, 112), dtype)
    one_test, test = _split(22, 200, (90, 20, 0, 90), dtype)
    return one_dev, one_test, dev, test


def assert_close(got, ref, rel, abs_=0.0, where="root"):
    """Equal structure, equal non-floats, floats within ``rel`` relative (+ ``abs_``)."""
    if isinstance(ref, dict):
        assert sorted(got) == sorted(ref), where
        for k in ref:
            assert_close(got[k], ref[k], rel, abs_, f"{where}/{k}")
    elif isinstance(ref, (list, tuple)):
        assert len(got) == len(ref), where
        for i, (g, r) in enumerate(zip(got, ref)):
            assert_close(g, r, rel, abs_, f"{where}[{i}]")
    elif isinstance(ref, float) and not isinstance(ref, bool):
        assert isinstance(got, float), where
        if math.isnan(ref) or math.isinf(ref):
            assert got == ref or (math.isnan(got) and math.isnan(ref)), where
        else:
            assert abs(got - ref) <= rel * abs(ref) + abs_, (where, got, ref)
    else:
        assert got == ref, where


def _intervals(result):
    """(value, low, high) of SMCE and every GMCE of an EvaluationResult."""
    return [(c.value, c.ci_low, c.ci_high) for c in [result.smce] + list(result.gmce)
            if c is not None]


@pytest.mark.parametrize("dtype,method", [(np.float32, "simulation"),
                                          (np.float64, "simulation"),
                                          (np.float64, "bootstrap")])
def test_exact_methods_equal_single_machine(dtype, method):
    one_dev, one_test, dev, test = _data(dtype)
    ci = sc.ConfidenceInterval(method, confidence_level=0.9, random_state=3,
                               n_resamples=200)
    kw = dict(methods=["isotonic", "histogram"], n_bins=7, ci=ci,
              evaluation=dict(metrics=["brier", "ece"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # tiny groups: fewer-than warnings, both paths
        got = sd.compare_methods(dev, test, GROUPS, **kw)
        ref = sc.compare_methods(one_dev, one_test, GROUPS, **kw)
    assert type(got) is type(ref)
    assert got.test_tokens == ref.test_tokens == int(np.unique(one_test.token).size)
    assert list(got.after) == list(ref.after)
    assert_close(got.to_dict(), ref.to_dict(), 1e-12)
    for key in ref.after:
        assert_close(_intervals(got.after[key]), _intervals(ref.after[key]), 1e-12)
        assert got.after[key].groups == ref.after[key].groups
        (meta_g, arr_g), (meta_r, arr_r) = (m.get_state() for m in
                                            (got.models[key], ref.models[key]))
        assert meta_g == meta_r
        for name in arr_r:
            np.testing.assert_array_equal(arr_g[name], arr_r[name], err_msg=name)
    assert_close(_intervals(got.before), _intervals(ref.before), 1e-12)
    assert got.to_markdown() == ref.to_markdown()


def test_a_method_without_a_distributed_fit_is_skipped(monkeypatch):
    """A method registered without a distributed fit is skipped with one warning
    (every registered method has one today: simulated)."""
    from sparsecal.calibration.registry import METHODS
    from sparsecal.distributed import comparison
    monkeypatch.setitem(METHODS, "platt", dataclasses.replace(METHODS["platt"],
                                                              distributed_fit=None))
    with pytest.warns(UserWarning, match="no distributed fit.*: platt$"):
        assert comparison.distributed_methods(["isotonic", "platt"]) == ["isotonic"]
    with pytest.raises(TypeError, match="method 'platt' has no distributed fit"):
        sd.calibrators.distributed_method(sc.PlattCalibrator())


def test_platt_tolerance_and_scaling_binning():
    one_dev, one_test, dev, test = _data()
    kw = dict(methods=["platt", "scaling-binning"], groupings=("tfg",))
    got = sd.compare_methods(dev, test, GROUPS, **kw)
    ref = sc.compare_methods(one_dev, one_test, GROUPS, **kw)
    assert list(got.after) == [("platt", "tfg"), ("scaling-binning", "tfg")]
    # predictions within 1e-7 (docs/scale.md): CE moves by as much
    assert_close(got.to_dict(), ref.to_dict(), 1e-12, 1e-6)
    changed = [abs(a - b) for a, b in zip(got.values(got.after["platt", "tfg"]),
                                          got.values(got.before)) if a is not None]
    assert max(changed) > 1e-3   # Platt changed the numbers the tolerance compares


def test_tiny_test_set_and_progress():
    x = np.array([[0.6, 0.4], [0.6, 0.4], [0.3, 0.7]])
    dev = sd.threshold(da.from_array(x, chunks=(2, -1)), np.array([0, 1, 1]))
    test = sd.threshold(da.from_array(x[:1], chunks=(1, -1)), np.array([0]))
    groups = sc.TagGroups([0, 1], 2)
    calls = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = sd.compare_methods(dev, test, groups, methods=["isotonic"], n_bins=2,
                                 progress=lambda d, t: calls.append((d, t)))
        ref = sc.compare_methods(sc.threshold(x, np.array([0, 1, 1])),
                                 sc.threshold(x[:1], np.array([0])), groups,
                                 methods=["isotonic"], n_bins=2)
    assert calls == [(0, 3), (1, 3), (2, 3), (3, 3)]
    assert got.test_tokens == 1
    assert_close(got.to_dict(), ref.to_dict(), 1e-12)


def test_refusals():
    one_dev, one_test, dev, test = _data()
    with pytest.raises(TypeError, match="DaskEntries"):
        sd.compare_methods(one_dev, test, GROUPS, methods=["isotonic"])
    with pytest.raises(ValueError, match="unknown grouping 'x'"):
        sd.compare_methods(dev, test, GROUPS, methods=["isotonic"], groupings=["x"])
    with pytest.raises(ValueError, match="unknown method|nope"):
        sd.compare_methods(dev, test, GROUPS, methods=["nope"])
    # every registry measure has a distributed form; one without (simulated) is refused
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(MEASURES, "calibration-test-p", dataclasses.replace(MEASURES["calibration-test-p"], mergeable=None))
        with pytest.raises(ValueError, match="calibration-test-p"):
            sd.compare_methods(dev, test, GROUPS, methods=["isotonic"],
                               evaluation=dict(metrics=["calibration-test-p"]))
