"""The forecaster (Jagannatha & Yu 2020, Section 2.5): gradient-boosted trees over
event features, walked from plain arrays; checked against scikit-learn's own
``predict_proba``, on planted miscalibration, and through save / load."""
import json
import os
import sys

import numpy as np
import pytest

import sparsecal as sc
from sparsecal.calibration import Forecaster, NotFittedError, clone
from sparsecal.io.calibrators import StateError

sklearn = pytest.importorskip("sklearn", reason="the forecaster is fitted by scikit-learn")
from sklearn.ensemble import HistGradientBoostingClassifier  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread_by_default")


def _events(rng, n):
    """Event features with ties (rounded means, integer ranks and types) and
    labels drawn from a known probability: rank 2 halves the confidence, type 1
    adds 0.1."""
    mean = np.round(rng.random(n), 2)
    rank = rng.integers(1, 3, n)
    type_ = rng.integers(0, 3, n)
    truth = np.clip(mean / rank + 0.1 * (type_ == 1), 0, 1)
    return {"mean": mean, "rank": rank, "type": type_}, rng.random(n) < truth, truth


def _sklearn_reference(features, labels, test, **params):
    """scikit-learn's probabilities, the one-hot columns of ``type`` built here."""
    def matrix(f, codes):
        onehot = (np.asarray(f["type"])[:, None] == codes[None]).astype(float)
        return np.column_stack([np.asarray(f["mean"], float), np.asarray(f["rank"], float),
                                onehot])
    codes = np.unique(features["type"])
    model = HistGradientBoostingClassifier(early_stopping=False, random_state=0, **params)
    with threadpool_limits(1, user_api="openmp"):
        model.fit(matrix(features, codes), labels)
    return model.predict_proba(matrix(test, codes))[:, 1]


@pytest.mark.parametrize("n", [2, 7, 1000])
def test_predictions_equal_sklearn_predict_proba(n):
    rng = np.random.default_rng(n)
    features, labels, _ = _events(rng, n)
    labels[:2] = [True, False]                 # both classes, also for n = 2
    test, _, _ = _events(rng, 500)
    test["type"][:5] = 7                       # a code never seen in fit: all zeros
    params = dict(max_iter=30, learning_rate=0.2, max_leaf_nodes=7, min_samples_leaf=1)
    f = Forecaster(**params).fit(features, labels)
    expected = _sklearn_reference(features, labels, test, **params)
    np.testing.assert_allclose(f.predict(test), expected, rtol=0, atol=1e-12)
    assert f.columns_ == ("mean", "rank") + tuple(f"type={c}" for c in np.unique(features["type"]))


def test_learns_a_planted_miscalibration():
    """Correctness depends on rank and type, not only on the confidence: the
    forecaster recovers the true probabilities; calibrating the confidence alone
    (isotonic, J&Y's baselines) cannot."""
    rng = np.random.default_rng(0)
    features, labels, _ = _events(rng, 8000)
    test, test_labels, truth = _events(rng, 8000)
    f = Forecaster(max_iter=40, learning_rate=0.2).fit(features, labels)
    p = f.predict(test)
    assert np.abs(p - truth).mean() < 0.04
    # the value where rank 2 halves a confidence of 0.8, type 0
    point = {"mean": [0.8, 0.8], "rank": [1, 2], "type": [0, 0]}
    np.testing.assert_allclose(f.predict(point), [0.8, 0.4], atol=0.06)
    iso = sc.IsotonicCalibrator().fit(features["mean"], labels).predict(test["mean"])
    assert np.abs(iso - truth).mean() > 0.1
    ece = [sc.calibration_error(q, test_labels, norm=1, binning="fixed", n_bins=20).value
           for q in (p, iso, test["mean"])]
    assert ece[0] < 0.04 and ece[2] > 0.08


def test_deterministic_clone_and_dtype():
    rng = np.random.default_rng(3)
    features, labels, _ = _events(rng, 1000)
    features["mean"] = features["mean"].astype(np.float32)
    f1 = Forecaster(max_iter=20).fit(features, labels)
    f2 = clone(f1).fit(features, labels)
    for name, a in f1.trees_.arrays().items():
        np.testing.assert_array_equal(a, getattr(f2.trees_, name))
    one, two = (Forecaster(max_iter=3, n_threads=t).fit(features, labels) for t in (1, 2))
    np.testing.assert_array_equal(one.predict(features), two.predict(features))
    f64 = Forecaster(max_iter=20).fit({**features, "mean": features["mean"].astype(float)},
                                       labels)
    np.testing.assert_array_equal(f64.predict(features), f1.predict(features))
    assert clone(f1).get_params() == f1.get_params()
    assert Forecaster().set_params(max_iter=3).max_iter == 3
    with pytest.raises(NotFittedError, match="not fitted"):
        Forecaster().predict(features)


def test_save_load_round_trip_and_tampering(tmp_path):
    rng = np.random.default_rng(4)
    features, labels, _ = _events(rng, 800)
    f = Forecaster(max_iter=10, categorical=("type", "rank")).fit(features, labels)
    path = tmp_path / "f"
    f.save(path)
    g = Forecaster.load(path)
    np.testing.assert_array_equal(g.predict(features), f.predict(features))
    assert g.get_params() == f.get_params() and g.columns_ == f.columns_

    def tampered(edit_json=None, edit_arrays=None):
        out = tmp_path / f"t{len(os.listdir(tmp_path))}"
        meta = json.loads((path / "calibrator.json").read_text())
        arrays = dict(np.load(path / "arrays.npz"))
        if edit_json:
            edit_json(meta)
        if edit_arrays:
            edit_arrays(arrays)
        out.mkdir()
        (out / "calibrator.json").write_text(json.dumps(meta))
        np.savez(out / "arrays.npz", **arrays)
        return out

    def set_left(a):
        a["left"] = a["left"].copy()
        a["left"][0] = 0

    cases = [
        (tampered(edit_arrays=set_left), r"left\[0\] = 0 must be a later node"),
        (tampered(edit_arrays=lambda a: a.__setitem__("feature", a["feature"] + 99)),
         r"feature\[0\] = \d+ must lie in \[0, 6\)"),
        (tampered(edit_arrays=lambda a: a.__setitem__("threshold", a["threshold"] * np.nan)),
         r"threshold\[0\] = nan is NaN"),
        (tampered(edit_arrays=lambda a: a.__setitem__("extra", np.zeros(1))),
         "extra is not an array of a Forecaster"),
        (tampered(edit_arrays=lambda a: a.pop("value")), "value is missing"),
        (tampered(edit_json=lambda m: m["params"].__setitem__("max_iter", 0)),
         "params.max_iter must be a positive integer"),
        (tampered(edit_json=lambda m: m["categories"].pop("rank")), "categories.rank is missing"),
        (tampered(edit_json=lambda m: m.__setitem__("feature_names", ["rank", "mean"])),
         "feature_names must be a non-empty sorted list"),
        (tampered(edit_json=lambda m: m.__setitem__("format", "x")), "not a sparsecal.Forecaster"),
    ]
    for bad, message in cases:
        with pytest.raises(StateError, match=message):
            Forecaster.load(bad)


def test_bad_input_is_named_and_inputs_are_unchanged(monkeypatch):
    rng = np.random.default_rng(5)
    features, labels, _ = _events(rng, 200)
    copies = {k: v.copy() for k, v in features.items()}
    f = Forecaster(max_iter=5).fit(features, labels)
    f.predict(features)
    for k in features:
        np.testing.assert_array_equal(features[k], copies[k])
    cases = [
        ([features["mean"]], TypeError, "features must be a mapping"),
        ({}, ValueError, "features is empty"),
        ({**features, "rank": features["rank"][:-1]}, ValueError,
         r"features\['rank'\] has 199 values, expected 200"),
        ({**features, "mean": np.where(np.arange(200) == 3, np.nan, 0.5)}, ValueError,
         r"features\['mean'\]\[3\] = nan is not finite"),
        ({**features, "type": features["type"] + 0.5}, ValueError,
         r"features\['type'\] is categorical"),
        ({**features, "name": ["a"] * 200}, TypeError, "must hold real numbers"),
    ]
    for bad, exc, message in cases:
        with pytest.raises(exc, match=message):
            Forecaster(max_iter=5).fit(bad, labels)
    with pytest.raises(ValueError, match="labels are all 1"):
        Forecaster().fit(features, np.ones(200))
    with pytest.raises(ValueError, match="columns of fit"):
        f.predict({"mean": features["mean"]})
    for params, message in [({"max_leaf_nodes": 1}, "max_leaf_nodes must be at least 2"),
                            ({"learning_rate": -1.0}, "learning_rate"),
                            ({"l2_regularization": -1}, "l2_regularization must be"),
                            ({"categorical": "type"}, "categorical must be a tuple")]:
        with pytest.raises(ValueError, match=message):
            Forecaster(**params).fit(features, labels)
    monkeypatch.setitem(sys.modules, "sklearn.ensemble", None)
    with pytest.raises(ImportError, match=r'pip install "sparsecal\[sklearn\]"'):
        Forecaster().fit(features, labels)
    np.testing.assert_array_equal(f.predict(features), f.predict(features))   # no sklearn
