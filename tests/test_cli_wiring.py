"""The command line's evaluation, prior, selection and ensemble flags (issue 13):
each flag's output equals the API call it maps onto (one vocabulary: --bin-size ->
``bin_size``, --binning -> ``binning``, --norm -> ``norm``, --debias -> ``debias``,
--level -> ``confidence_level``, --prior -> ``prior`` / ``application_prior``).
Bad flags are in tests/test_cli.py's ERROR_CASES."""
import json
import warnings

import numpy as np
import pytest

import sparsecal as sc
from sparsecal.cli.main import main
from sparsecal.metrics import ConfidenceInterval
from test_cli import N_TAGS, data  # noqa: F401 - the CLI's data files, as a fixture


def run(*argv):
    assert main([str(a) for a in argv]) == 0


def evaluate_json(data, tmp_path, *flags):
    out = tmp_path / "e.json"
    run("evaluate", "--scores", data.p("test.npy"), "--gold", data.p("test_gold.npy"),
        "--train-counts", data.p("counts.json"), "--json", out, "-q", *flags)
    return json.loads(out.read_text())


def api_json(result):
    return json.loads(result.to_json())


@pytest.mark.parametrize("flags, kw", [
    (["--bin-size", "150"], {"bin_size": 150}),
    (["--binning", "fixed", "--bins", "15"], {"binning": "fixed", "n_bins": 15}),
    (["--norm", "1"], {"norm": 1}),
    (["--norm", "max", "--bins", "5"], {"norm": "max", "n_bins": 5}),
    (["--debias", "--bins", "20"], {"debias": True, "n_bins": 20}),
    (["--metrics", "debiased-ce", "smooth-ece", "brier-mcb", "log-loss", "cllr",
      "min-cllr", "calibration-test-p"],
     {"metrics": ["debiased-ce", "smooth-ece", "brier-mcb", "log-loss", "cllr", "min-cllr",
                  "calibration-test-p"]}),
    (["--metrics", "dcf", "min-dcf", "--prior", "0.2", "--bin-size", "300"],
     {"metrics": ["dcf", "min-dcf"], "prior": 0.2, "bin_size": 300}),
], ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_evaluate_flags_equal_the_api(data, tmp_path, flags, kw):
    got = evaluate_json(data, tmp_path, *flags)
    want = sc.evaluate(data.test_entries, data.tfg, ci=None, top_label=True, **kw)
    assert got == api_json(want)


@pytest.mark.parametrize("level_flag", ["--level", "--confidence-level"])
def test_interval_flags_equal_the_api(data, tmp_path, level_flag):
    got = evaluate_json(data, tmp_path, "--debias", "--ci", "score", level_flag, "0.9",
                        "--seed", "3")
    spec = ConfidenceInterval("score", confidence_level=0.9, random_state=3)
    want = sc.evaluate(data.test_entries, data.tfg, ci=spec, top_label=True, debias=True)
    assert got == api_json(want)
    assert got["smce"]["ci_level"] == 0.9 and got["smce"]["ci_method"] == "score"
    plain = evaluate_json(data, tmp_path, "--ci", "bootstrap", level_flag, "0.8",
                          "--n-resamples", "50")
    spec = ConfidenceInterval("bootstrap", confidence_level=0.8, n_resamples=50,
                              random_state=0)
    assert plain == api_json(sc.evaluate(data.test_entries, data.tfg, ci=spec, top_label=True))


def test_compare_flags_equal_the_api(data, tmp_path):
    out = tmp_path / "c.json"
    run("compare", "--scores", data.p("test.npy"), "--gold", data.p("test_gold.npy"),
        "--dev-scores", data.p("dev.npy"), "--dev-gold", data.p("dev_gold.npy"),
        "--train-counts", data.p("counts.json"), "--methods", "gaussian",
        "beta", "--prior", "0.2", "--bin-size", "200", "--norm", "1", "--json", out, "-q")
    want = sc.compare_methods(data.dev_entries, data.test_entries, data.tfg,
                              methods=["gaussian", "beta"],
                              prior=0.2, evaluation={"bin_size": 200, "norm": 1})
    assert json.loads(out.read_text()) == json.loads(json.dumps(want.to_dict()))


def fit_argv(data, out, *flags):
    counts = [] if "scw" in flags else ["--train-counts", data.p("counts.json")]
    return ["fit", "--scores", data.p("dev.npy"), "--gold", data.p("dev_gold.npy"),
            *counts, "-o", out, "-q", *flags]


def applied(data, tmp_path, calibrator):
    out = tmp_path / "applied.npy"
    run("apply", calibrator, "--scores", data.p("test.npy"), "-o", out, "-q")
    return np.load(out)


def test_fit_prior_is_the_application_prior(data, tmp_path):
    run(*fit_argv(data, tmp_path / "cal", "--method", "prior-logistic", "--prior", "0.1"))
    want = sc.GroupedCalibrator(sc.PriorWeightedLogistic(application_prior=0.1), data.tfg)
    want.fit(data.dev_entries)
    model = sc.load_calibrator(tmp_path / "cal")
    assert model.base.application_prior == 0.1
    np.testing.assert_array_equal(applied(data, tmp_path, tmp_path / "cal"),
                                  want.transform_dense(data.test.scores))


def test_fit_ensemble_is_saved_and_applied(data, tmp_path):
    run(*fit_argv(data, tmp_path / "ens", "--grouping", "scw", "--ensemble", "3",
                  "--seed", "2"))
    model = sc.load_calibrator(tmp_path / "ens")
    assert isinstance(model, sc.CrossFittedCalibrator) and len(model.calibrators_) == 3
    scw = sc.TagGroups.scw(N_TAGS)
    want = sc.CrossFittedCalibrator(sc.GroupedCalibrator(sc.IsotonicCalibrator(), scw),
                                    n_folds=3, seed=2).fit(data.dev_entries)
    got = applied(data, tmp_path, tmp_path / "ens")
    np.testing.assert_array_equal(got, want.transform_dense(data.test.scores))
    members = [m.transform_dense(data.test.scores) for m in want.calibrators_]
    np.testing.assert_allclose(got, np.mean(members, axis=0), rtol=1e-6, atol=1e-7)


def test_fit_select_saves_the_best_and_the_table(data, tmp_path):
    table = tmp_path / "sel.json"
    run(*fit_argv(data, tmp_path / "best", "--select", "--methods", "isotonic", "histogram",
                  "--groups-grid", "1", "3", "--bins-grid", "5", "10", "--folds", "3",
                  "--json", table))
    counts = json.loads(open(data.p("counts.json")).read())
    want = sc.select(data.dev_entries, train_counts=counts, methods=["isotonic", "histogram"],
                     n_groups=[1, 3], n_bins=[5, 10], n_folds=3)
    got = json.loads(table.read_text())
    assert got["cv_results"] == json.loads(json.dumps(want.cv_results))
    assert (got["best_params"], got["best_score"], got["metric"]) == (
        want.best_params, want.best_score, "smce")
    np.testing.assert_array_equal(applied(data, tmp_path, tmp_path / "best"),
                                  want.best_calibrator.transform_dense(data.test.scores))


def test_fit_select_places_named_counts_by_the_tag_index(data, tmp_path):
    """--tag-index reaches select (it used to build the groups without it and
    fail: 'training counts are keyed by tag names')."""
    run("fit", "--scores", data.p("dev.npy"), "--gold", data.p("dev_gold.npy"), "--select",
        "--train-counts", data.p("counts_named.json"), "--tag-index", data.p("tag_index.json"),
        "--methods", "isotonic", "--groups-grid", "1", "3", "--folds", "2", "--json",
        tmp_path / "s.json", "-o", tmp_path / "best", "-q")
    index = json.loads(open(data.p("tag_index.json")).read())
    named = json.loads(open(data.p("counts_named.json")).read())
    want = sc.select(data.dev_entries, train_counts=named, tag_index=index,
                     methods=["isotonic"], n_groups=[1, 3], n_folds=2)
    by_column = sc.select(data.dev_entries, train_counts=json.loads(
        open(data.p("counts.json")).read()), methods=["isotonic"], n_groups=[1, 3], n_folds=2)
    got = json.loads((tmp_path / "s.json").read_text())
    assert got["cv_results"] == json.loads(json.dumps(want.cv_results)) == \
        json.loads(json.dumps(by_column.cv_results))


def _compare_json(data, tmp_path, *flags):
    out = tmp_path / "c.json"
    run("compare", "--scores", data.p("test.npy"), "--gold", data.p("test_gold.npy"),
        "--dev-scores", data.p("dev.npy"), "--dev-gold", data.p("dev_gold.npy"),
        "--train-counts", data.p("counts.json"), "--methods", "histogram",
        "--metrics", "calibration-test-p", "--json", out, "-q", *flags)
    return json.loads(out.read_text())


@pytest.mark.parametrize("flags, n_resamples", [([], 99), (["--n-resamples", "19"], 19)])
def test_compare_n_resamples_reaches_the_calibration_test(data, tmp_path, flags,
                                                          n_resamples):
    """compare takes --n-resamples (its --metrics help says so); without it the
    calibration test of its 15 evaluations takes 99 resamples, not 999."""
    got = _compare_json(data, tmp_path, "--seed", "2", *flags)
    want = sc.compare_methods(data.dev_entries, data.test_entries, data.tfg,
                              methods=["histogram"], seed=2, evaluation={
                                  "metrics": ["calibration-test-p"],
                                  "measure_options": {"n_resamples": n_resamples,
                                                      "random_state": 2}})
    assert got == json.loads(json.dumps(want.to_dict()))
    p_values = got["metrics"]["calibration-test-p"]["none"]
    assert min(p_values) >= 1 / (1 + n_resamples)


@pytest.mark.parametrize("grouping", ["tfg", "per-tag"])
def test_fit_group_min_entries_is_the_grouped_calibrators(data, tmp_path, grouping):
    run(*fit_argv(data, tmp_path / "cal", "--grouping", grouping,
                  "--group-min-entries", "150"))
    base, groups = sc.IsotonicCalibrator(), data.tfg
    want = (sc.GroupedCalibrator(base, groups, min_entries=150) if grouping == "tfg" else
            sc.GroupedCalibrator(base, sc.TagGroups.per_tag(N_TAGS), fallback=groups,
                                 min_entries=150))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # groups fit on fewer than 200 entries
        want.fit(data.dev_entries)
    assert sc.load_calibrator(tmp_path / "cal").min_entries == 150
    np.testing.assert_array_equal(applied(data, tmp_path, tmp_path / "cal"),
                                  want.transform_dense(data.test.scores))


def test_min_entries_has_one_meaning(data, tmp_path, capsys):
    """--min-entries is evaluate's per-tag minimum (of --per-tag); fit refuses it,
    naming its own --group-min-entries."""
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in fit_argv(data, tmp_path / "cal", "--grouping", "per-tag",
                                        "--min-entries", "50")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--min-entries is evaluate's per-tag minimum" in err
    assert "--group-min-entries" in err and not (tmp_path / "cal").exists()
    assert main(["evaluate", "--scores", data.p("test.npy"), "--gold",
                 data.p("test_gold.npy"), "--min-entries", "50"]) == 2
    assert "--min-entries applies to --per-tag" in capsys.readouterr().err


@pytest.mark.parametrize("dev, n_resamples", [(True, 99), (False, None)])
def test_report_resamples_the_calibration_test_as_compare_does(data, tmp_path, monkeypatch,
                                                               dev, n_resamples):
    """With dev outputs the report evaluates every method, as compare: 99
    resamples of the calibration test by default; without, the library's."""
    from sparsecal.plotting import report
    calls = []
    monkeypatch.setattr(report, "write_report", lambda *a, **kw: calls.append(kw) or "x")
    dev_flags = ["--dev-scores", data.p("dev.npy"), "--dev-gold", data.p("dev_gold.npy")]
    run("report", "--scores", data.p("test.npy"), "--gold", data.p("test_gold.npy"),
        *(dev_flags if dev else []), "--metrics", "calibration-test-p", "-o",
        tmp_path / "r", "-q")
    options = calls[0]["evaluation"].get("measure_options", {})
    assert options.get("n_resamples") == n_resamples and options["random_state"] == 0
