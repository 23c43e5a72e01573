"""Every calibrator behaves like a scikit-learn estimator (docs/estimators.md).

- ``sklearn.base.clone``, ``get_params`` / ``set_params`` (nested ``base__…``),
  ``check_is_fitted``, ``__sklearn_tags__``, the repr;
- ``sklearn.utils.estimator_checks``: the checks that apply pass, and every check
  that fails is one listed in :data:`NOT_APPLICABLE` with its reason;
- the intent of the checks that cannot run on scikit-learn's generated data
  (unbounded features, multiclass targets) is tested here on calibration data:
  fit returns self, is idempotent, leaves parameters alone, accepts read-only
  memory maps, pickles, and predicts each point independently of the others;
- without scikit-learn installed, the estimators work all the same.
"""
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import sparsecal as sc
from sparsecal.calibration import NotFittedError, clone

sklearn = pytest.importorskip("sklearn", reason="scikit-learn is a test dependency")
from sklearn.base import clone as sk_clone  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402
from sklearn.utils.validation import check_is_fitted  # noqa: E402

BINARY = [sc.HistogramBinning(n_bins=7), sc.IsotonicCalibrator(),
          sc.ScalingBinning(n_bins=5, seed=3), sc.PlattCalibrator(application_prior=0.3),
          sc.BetaCalibration(), sc.BetaCalibration(parameters="am"),
          sc.PriorWeightedLogistic(training_prior=0.3, application_prior=0.1),
          sc.GaussianCalibration(variance="untied")]

_DOMAIN = ("takes one column of probabilities in [0, 1] and 0/1 labels; the check "
           "feeds unbounded features, several columns or multiclass targets (the "
           "intent is tested on calibration data in this file)")
_ENTRIES = "fit takes Entries (tagger output), not a feature matrix X and targets y"
_LOGITS = ("fit(logits, gold) takes a logit matrix and gold tag indices in "
           "[0, n_tags); the check's targets exceed the columns of X")
_OWN_ERROR = ("raises sparsecal.calibration.NotFittedError (the same bases, ValueError "
              "and AttributeError, as scikit-learn's) because scikit-learn is optional")
_SPARSE = "tagger scores are dense (or memory-mapped); sparse input is refused"
_MESSAGE = ("refuses the input with its own message naming the argument, not "
            "scikit-learn's wording")

#: check name -> why it cannot apply, per kind of estimator
NOT_APPLICABLE = {
    "binary": {
        **{name: _DOMAIN for name in (
            "check_all_zero_sample_weights_error", "check_dict_unchanged",
            "check_dont_overwrite_parameters", "check_estimators_dtypes",
            "check_estimators_fit_returns_self", "check_estimators_overwrite_params",
            "check_estimators_pickle", "check_f_contiguous_array_estimator",
            "check_fit2d_1feature", "check_fit2d_1sample", "check_fit2d_predict1d",
            "check_fit_check_is_fitted", "check_fit_idempotent", "check_fit_score_takes_y",
            "check_methods_sample_order_invariance", "check_methods_subset_invariance",
            "check_n_features_in", "check_n_features_in_after_fitting",
            "check_pipeline_consistency", "check_positive_only_tag_during_fit",
            "check_readonly_memmap_input", "check_requires_y_none",
            "check_sample_weights_list", "check_sample_weights_not_an_array",
            "check_sample_weights_not_overwritten", "check_sample_weights_shape",
            "check_sample_weights_pandas_series",
            "check_estimators_nan_inf", "check_estimators_empty_data_messages")},
        "check_sample_weight_equivalence_on_dense_data":
            "fit's arguments are (scores, labels, sample_weight), not (X, y, …)",
        "check_complex_data": _MESSAGE, "check_dtype_object": _MESSAGE,
        "check_estimator_sparse_array": _SPARSE, "check_estimator_sparse_matrix": _SPARSE,
        "check_estimator_sparse_tag": _SPARSE,
        "check_estimators_unfitted": _OWN_ERROR,
    },
    "TemperatureScaling": {
        **{name: _LOGITS for name in (
            "check_estimators_fit_returns_self", "check_estimators_overwrite_params",
            "check_readonly_memmap_input", "check_fit_score_takes_y",
            "check_transformer_data_not_an_array", "check_transformer_general",
            "check_requires_y_none", "check_n_features_in",
            "check_n_features_in_after_fitting", "check_fit2d_1feature",
            "check_fit2d_predict1d", "check_estimators_nan_inf",
            "check_estimators_empty_data_messages")},
        "check_complex_data": _MESSAGE, "check_dtype_object": _MESSAGE,
        "check_estimators_dtypes": "logits must be float32 or float64 (no integer logits)",
        "check_estimator_sparse_array": _SPARSE, "check_estimator_sparse_matrix": _SPARSE,
        "check_estimator_sparse_tag": _SPARSE,
    },
    "GroupedCalibrator": {
        "check_transformer_preserve_dtypes": _ENTRIES,
        **{name: _ENTRIES for name in (
            "check_all_zero_sample_weights_error", "check_complex_data",
            "check_dict_unchanged", "check_dont_overwrite_parameters", "check_dtype_object",
            "check_estimators_dtypes", "check_estimators_empty_data_messages",
            "check_estimators_fit_returns_self", "check_estimators_nan_inf",
            "check_estimators_overwrite_params", "check_estimators_pickle",
            "check_f_contiguous_array_estimator", "check_fit1d", "check_fit2d_1feature",
            "check_fit2d_1sample", "check_fit2d_predict1d", "check_fit_check_is_fitted",
            "check_fit_idempotent", "check_fit_score_takes_y",
            "check_methods_sample_order_invariance", "check_methods_subset_invariance",
            "check_n_features_in", "check_n_features_in_after_fitting",
            "check_pipeline_consistency", "check_positive_only_tag_during_fit",
            "check_readonly_memmap_input", "check_requires_y_none",
            "check_sample_weight_equivalence_on_dense_data", "check_sample_weights_list",
            "check_sample_weights_not_an_array", "check_sample_weights_not_overwritten",
            "check_sample_weights_pandas_series", "check_sample_weights_shape",
            "check_transformer_data_not_an_array", "check_transformer_general")},
    },
}

#: checks that must pass for every estimator: the API contract itself
MUST_PASS = {"check_estimator_cloneable", "check_estimator_repr", "check_get_params_invariance",
             "check_set_params", "check_no_attributes_set_in_init",
             "check_do_not_raise_errors_in_init_or_set_params", "check_valid_tag_types",
             "check_estimator_tags_renamed", "check_mixin_order"}


def _grouped():
    return sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(3))


def _kind(est):
    return "binary" if isinstance(est, sc.calibration.BaseCalibrator) else type(est).__name__


@pytest.mark.parametrize("est", BINARY + [sc.TemperatureScaling(), _grouped()], ids=repr)
def test_sklearn_estimator_checks(est):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(est, on_fail=None, on_skip=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    passed = {r["check_name"] for r in results if r["status"] == "passed"}
    unexpected = failed - set(NOT_APPLICABLE[_kind(est)])
    assert not unexpected, f"checks that should pass failed: {sorted(unexpected)}"
    assert MUST_PASS <= passed, sorted(MUST_PASS - passed)


@pytest.fixture(scope="module")
def calib_data():
    rng = np.random.default_rng(7)
    s = np.round(rng.beta(2, 5, 3000), 3)      # ties
    y = (rng.random(3000) < s ** 1.3).astype(np.uint8)
    return s, y


@pytest.mark.parametrize("est", BINARY, ids=repr)
def test_clone_params_and_fitted_check(est, calib_data):
    s, y = calib_data
    for twin in (sk_clone(est), clone(est)):
        assert type(twin) is type(est) and twin.get_params() == est.get_params()
        assert twin is not est
        with pytest.raises(NotFittedError, match="not fitted"):
            twin.predict(s)
        with pytest.raises(sklearn.exceptions.NotFittedError):
            check_is_fitted(twin)
        assert twin.fit(s, y) is twin
        check_is_fitted(twin)
        assert not sk_clone(twin).__sklearn_is_fitted__()
    assert repr(est).startswith(type(est).__name__ + "(")
    tags = est.__sklearn_tags__()
    assert tags.input_tags.one_d_array and tags.target_tags.required


@pytest.mark.parametrize("est", BINARY, ids=repr)
def test_intent_of_the_generic_checks_on_calibration_data(est, calib_data, tmp_path):
    s, y = calib_data
    params = est.get_params()
    a = clone(est).fit(s, y)
    assert est.get_params() == params                          # parameters untouched
    assert a.get_params() == params
    p = a.predict(s)
    np.testing.assert_array_equal(clone(est).fit(s, y).fit(s, y).predict(s), p)   # idempotent
    np.testing.assert_array_equal(a.predict(s.reshape(-1, 1)), p)                   # (n, 1)
    order = np.random.default_rng(1).permutation(s.size)
    np.testing.assert_array_equal(a.predict(s[order]), p[order])                    # order
    np.testing.assert_array_equal(a.predict(s[:100]), p[:100])                      # subset
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(a)).predict(s), p)      # pickle
    np.save(tmp_path / "s.npy", s)
    ro = np.load(tmp_path / "s.npy", mmap_mode="r")
    before = ro.copy()
    np.testing.assert_array_equal(clone(est).fit(ro, y).predict(ro), p)             # memmap
    np.testing.assert_array_equal(ro, before)
    assert a.predict(s.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("est", BINARY, ids=repr)
def test_sample_weight_as_list_or_pandas_series(est, calib_data):
    """The intent of check_sample_weights_list / _pandas_series on calibration
    data: weights given as a list or a Series are the same weights."""
    s, y = calib_data
    w = np.random.default_rng(2).integers(1, 4, s.size).astype(np.float64)
    p = clone(est).fit(s, y, w).predict(s)
    np.testing.assert_array_equal(clone(est).fit(s, y, list(w)).predict(s), p)
    pd = pytest.importorskip("pandas", reason="the Series case needs pandas")
    np.testing.assert_array_equal(clone(est).fit(s, y, pd.Series(w)).predict(s), p)


def test_grouped_params_are_nested_and_clone_deep(calib_data):
    model = sc.GroupedCalibrator(sc.HistogramBinning(n_bins=4), sc.TagGroups.scw(5),
                                 min_entries=3)
    params = model.get_params()
    assert params["base__n_bins"] == 4 and params["min_entries"] == 3
    model.set_params(base__n_bins=9, min_entries=2)
    assert model.base.n_bins == 9 and model.min_entries == 2
    with pytest.raises(ValueError, match="has no parameter 'nope'"):
        model.set_params(nope=1)
    twin = sk_clone(model)
    assert twin.base is not model.base and twin.base.n_bins == 9
    assert twin.groups is not model.groups
    np.testing.assert_array_equal(twin.groups.tag_to_group, model.groups.tag_to_group)
    with pytest.raises(sklearn.exceptions.NotFittedError):
        check_is_fitted(twin)


def test_temperature_scaling_clones_and_checks_fitted():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(400, 6)) * 3
    gold = rng.integers(0, 6, 400)
    ts = sc.TemperatureScaling(bounds=(0.1, 10.0))
    twin = sk_clone(ts)
    assert twin.get_params() == {"bounds": (0.1, 10.0)}
    with pytest.raises(NotFittedError):
        twin.transform(logits)
    check_is_fitted(twin.fit(logits, gold))
    assert twin.__sklearn_tags__().transformer_tags is not None


def test_estimators_work_without_scikit_learn(tmp_path):
    """scikit-learn stays optional: with its import blocked, clone, fit, predict,
    grouped calibration and save/load all work."""
    code = f"""
import sys
sys.modules["sklearn"] = None          # any import of sklearn now fails
import numpy as np
import sparsecal as sc
rng = np.random.default_rng(0)
scores = rng.dirichlet(np.ones(4), size=300).astype(np.float32)
gold = rng.integers(0, 4, 300)
e = sc.threshold(scores, gold)
model = sc.GroupedCalibrator(sc.HistogramBinning(n_bins=5), sc.TagGroups.scw(4))
twin = sc.calibration.clone(model).fit(e)
twin.save({str(tmp_path / 'm')!r})
back = sc.GroupedCalibrator.load({str(tmp_path / 'm')!r})
assert np.array_equal(back.transform(e).score, twin.transform(e).score)
for est in (sc.IsotonicCalibrator(), sc.PlattCalibrator(), sc.ScalingBinning()):
    sc.calibration.clone(est).fit(e.score, e.label).predict(e.score)
sc.TemperatureScaling().fit(np.log(scores), gold)
print("ok", "sklearn" in sys.modules and sys.modules["sklearn"] is not None)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok False"
