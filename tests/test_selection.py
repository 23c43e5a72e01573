"""select (method, G, bins by stratified K-fold on dev) against cross-fitting by
hand, and CrossFittedCalibrator against averaging K manually fitted calibrators,
with save/load."""
import warnings

import numpy as np
import pytest

import sparsecal as sc
from sparsecal.calibration.folds import stratified_token_folds
from sparsecal.datasets import make_tagger_outputs


@pytest.fixture(scope="module")
def data():
    dev, test = (make_tagger_outputs(3000, n_tags=60, split_seed=s, tagger_seed=2)
                 for s in (1, 2))
    return dict(dev=sc.threshold(dev.scores, dev.gold), test=sc.threshold(test.scores, test.gold),
                test_scores=test.scores, counts=dev.train_counts)


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # small groups of small data
        yield


def by_hand(dev, counts, method, g, bins, fold, metric_groups):
    groups = sc.TagGroups.scw(60) if g == 1 else sc.TagGroups.from_counts(counts, g, n_tags=60)
    out = dev.score.copy()
    for k in np.unique(fold):
        held = fold == k
        base = sc.calibration.make_calibrator(method, n_bins=bins or 10)
        model = sc.GroupedCalibrator(base, groups).fit(dev.take(~held))
        out[held] = model.transform(dev.take(held)).score
    cal = dev.with_scores(out)
    return sc.smce(cal).value, [c.value for c in sc.gmce(cal, metric_groups) if c]


def test_select_scores_every_candidate_as_by_hand(data):
    dev, counts = data["dev"], data["counts"]
    res = sc.select(dev, train_counts=counts, methods=["histogram", "platt"],
                    n_groups=[1, 3], n_bins=[5, 20], n_folds=4, seed=3)
    r = res.cv_results
    assert list(zip(r["method"], r["n_groups"], r["n_bins"])) == [
        ("histogram", 1, 5), ("histogram", 1, 20), ("histogram", 3, 5), ("histogram", 3, 20),
        ("platt", 1, None), ("platt", 3, None)]
    tfg3 = sc.TagGroups.from_counts(counts, 3, n_tags=60)
    fold = stratified_token_folds(dev, tfg3, 4, 3)
    for i, (m, g, b) in enumerate(zip(r["method"], r["n_groups"], r["n_bins"])):
        assert r["score"][i] == pytest.approx(by_hand(dev, counts, m, g, b, fold, tfg3)[0],
                                              rel=1e-12)
    best = int(np.argmin(r["score"]))
    assert res.best_index == best and res.best_score == r["score"][best]
    assert sorted(r["rank"]) == list(range(1, 7)) and r["rank"][best] == 1
    assert res.best_params == {"method": r["method"][best], "n_groups": r["n_groups"][best],
                               "n_bins": r["n_bins"][best]}
    m, g, b = (res.best_params[k] for k in ("method", "n_groups", "n_bins"))
    groups = sc.TagGroups.scw(60) if g == 1 else sc.TagGroups.from_counts(counts, g, n_tags=60)
    refit = sc.GroupedCalibrator(sc.calibration.make_calibrator(m, n_bins=b or 10),
                                 groups).fit(dev)
    np.testing.assert_array_equal(res.best_calibrator.transform(data["test"]).score,
                                  refit.transform(data["test"]).score)
    assert "| 1 |" in res.to_markdown()


def test_select_gmce_metric(data):
    dev, counts = data["dev"], data["counts"]
    res = sc.select(dev, train_counts=counts, methods=["isotonic"], n_groups=[1, 2],
                    n_folds=2, metric="gmce")
    tfg2 = sc.TagGroups.from_counts(counts, 2, n_tags=60)
    fold = stratified_token_folds(dev, tfg2, 2, 0)
    for i, g in enumerate(res.cv_results["n_groups"]):
        gm = by_hand(dev, counts, "isotonic", g, None, fold, tfg2)[1]
        assert res.cv_results["score"][i] == pytest.approx(np.sqrt(np.mean(np.square(gm))),
                                                           rel=1e-12)


def test_select_errors(data):
    dev = data["dev"]
    with pytest.raises(ValueError, match="needs train_counts"):
        sc.select(dev, methods=["isotonic"], n_groups=[1, 5])
    with pytest.raises(ValueError, match="metric"):
        sc.select(dev, methods=["isotonic"], n_groups=[1], metric="ece")
    with pytest.raises(ValueError, match="unknown method"):
        sc.select(dev, methods=["nope"], n_groups=[1])
    with pytest.raises(ValueError, match="n_bins"):
        sc.select(dev, methods=["histogram"], n_groups=[1], n_bins=[0])
    with pytest.raises(ValueError, match="at least one"):
        sc.select(dev, methods=[], n_groups=[1])
    with pytest.raises(ValueError, match="n_folds"):
        sc.select(dev, methods=["isotonic"], n_groups=[1], n_folds=1)
    with pytest.raises(TypeError, match="dev_entries"):
        sc.select(dev.score, methods=["isotonic"], n_groups=[1])


# ------------------------------------------------------------------ ensemble --

@pytest.mark.parametrize("method", ["isotonic", "histogram", "scaling-binning"])
def test_ensemble_is_the_average_of_k_fold_calibrators(data, method):
    dev, test, counts = data["dev"], data["test"], data["counts"]
    tfg = sc.TagGroups.from_counts(counts, 3, n_tags=60)
    setup = sc.GroupedCalibrator(sc.calibration.make_calibrator(method), tfg)
    model = sc.CrossFittedCalibrator(setup, n_folds=4, seed=5).fit(dev)
    fold = stratified_token_folds(dev, tfg, 4, 5)
    manual = [sc.GroupedCalibrator(sc.calibration.make_calibrator(method), tfg)
              .fit(dev.take(fold != k)) for k in range(4)]
    expected = np.mean([m.transform(test).score.astype(np.float64) for m in manual], axis=0)
    out = model.transform(test)
    assert len(model.calibrators_) == 4 and out.score.dtype == test.score.dtype
    np.testing.assert_allclose(out.score, expected, rtol=1e-6)
    dense = model.transform_dense(data["test_scores"])
    np.testing.assert_array_equal(dense[test.token, test.tag], out.score)
    below = data["test_scores"] < dev.threshold
    np.testing.assert_array_equal(dense[below], data["test_scores"][below])
    assert not hasattr(setup, "calibrators_")


def test_ensemble_save_load_round_trip(data, tmp_path):
    tfg = sc.TagGroups.from_counts(data["counts"], 3, n_tags=60)
    model = sc.CrossFittedCalibrator(sc.GroupedCalibrator(sc.HistogramBinning(n_bins=7), tfg),
                                     n_folds=3, seed=2).fit(data["dev"])
    model.save(tmp_path / "ens")
    back = sc.CrossFittedCalibrator.load(tmp_path / "ens")
    assert (back.n_folds, back.seed, back.threshold_) == (3, 2, model.threshold_)
    np.testing.assert_array_equal(back.transform(data["test"]).score,
                                  model.transform(data["test"]).score)
    with pytest.raises(ValueError, match="not a sparsecal.GroupedCalibrator file"):
        sc.GroupedCalibrator.load(tmp_path / "ens")


def test_ensemble_api_and_errors(data):
    setup = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(60))
    model = sc.CrossFittedCalibrator(setup, n_folds=3)
    assert model.get_params(deep=False) == {"calibrator": setup, "n_folds": 3, "seed": 0}
    assert sc.calibration.clone(model).calibrator is not setup
    with pytest.raises(sc.calibration.NotFittedError):
        model.transform(data["test"])
    with pytest.raises(TypeError, match="calibrator must be a GroupedCalibrator"):
        sc.CrossFittedCalibrator(sc.IsotonicCalibrator()).fit(data["dev"])
    with pytest.raises(ValueError, match="n_folds"):
        sc.CrossFittedCalibrator(setup, n_folds=1).fit(data["dev"])
    with pytest.raises(ValueError, match="seed"):
        sc.CrossFittedCalibrator(setup, seed=-1).fit(data["dev"])
    with pytest.raises(ValueError, match="tokens"):
        d = data["dev"]
        model.fit(sc.Entries(d.score, d.tag, d.label, n_tags=60))
