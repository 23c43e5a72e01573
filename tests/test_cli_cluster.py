"""``--scheduler ADDRESS`` / ``--dask`` on ``sparsecal evaluate`` and ``sparsecal
apply`` (sparsecal.cli.cluster): the same numbers and the same calibrated matrix
as without a cluster, the dashboard address printed, one error line (exit 2)
for a bad address or an unsupported input."""
import dataclasses
import json

import numpy as np
import pytest
from distributed import LocalCluster

import sparsecal as sc
from sparsecal import distributed as sd
from sparsecal.metrics.measures import MEASURES
from sparsecal.cli import cluster as cluster_cli
from sparsecal.cli.main import main
from sparsecal.datasets import make_tagger_outputs


@pytest.fixture(scope="module")
def scheduler():
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      dashboard_address=None) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli-cluster")
    dev = make_tagger_outputs(1500, n_tags=30, split_seed=1)
    test = make_tagger_outputs(1000, n_tags=30, split_seed=2)
    np.save(d / "test.npy", test.scores)
    np.save(d / "test_gold.npy", test.gold)
    (d / "counts.json").write_text(json.dumps({str(k): v for k, v in
                                               dev.train_counts.items()}))
    groups = sc.TagGroups.from_counts(dev.train_counts, 3, n_tags=30)
    model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups)
    model.fit(sc.threshold(dev.scores, dev.gold)).save(d / "model")
    return d, test, groups, model


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_evaluate_on_scheduler_equals_single_machine(files, scheduler, capsys, tmp_path):
    d, test, groups, _ = files
    args = ["evaluate", "--scores", d / "test.npy", "--gold", d / "test_gold.npy",
            "--train-counts", d / "counts.json", "--groups", 3, "--per-tag",
            "--min-entries", 50]
    rc, out, err = run(capsys, *args, "--scheduler", scheduler, "--chunk-rows", 150,
                       "--json", tmp_path / "d.json")
    assert rc == 0, err
    assert f"Dask scheduler {scheduler}; dashboard:" in out
    got = json.loads((tmp_path / "d.json").read_text())
    ref = sc.evaluate(sc.threshold(test.scores, test.gold), groups, ci=None, per_tag=True,
                      min_entries=50)
    assert got["smce"]["n"] == ref.smce.n
    assert got["smce"]["value"] == pytest.approx(ref.smce.value, rel=1e-12)
    assert [g["value"] for g in got["gmce"]] == pytest.approx(
        [g.value for g in ref.gmce], rel=1e-12)
    assert got["groups"] == ref.groups
    assert got["mce"]["value"] == pytest.approx(ref.mce.value, rel=1e-12)


def test_apply_on_scheduler_and_local_dask(files, scheduler, capsys, tmp_path):
    d, test, _, model = files
    ref = model.transform_dense(test.scores)
    for extra, out in [(["--scheduler", scheduler], tmp_path / "cal.zarr"),
                       (["--dask", "--chunk-rows", 97], tmp_path / "shards")]:
        rc, stdout, err = run(capsys, "apply", d / "model", "--scores", d / "test.npy",
                              "-o", out, *extra)
        assert rc == 0, err
        assert "dashboard:" in stdout and f"wrote {out}" in stdout
        np.testing.assert_array_equal(sd.open_store(out).compute(), ref)


def test_bad_address_and_inputs_one_error_line(files, capsys, tmp_path, monkeypatch):
    d, _, _, _ = files
    monkeypatch.setattr(cluster_cli, "CONNECT_TIMEOUT", 1)   # nothing listens there
    rc, out, err = run(capsys, "evaluate", "--scores", d / "test.npy", "--gold",
                       d / "test_gold.npy", "--scheduler", "tcp://127.0.0.1:9")
    assert rc == 2
    assert err.startswith("sparsecal evaluate: error: --scheduler 'tcp://127.0.0.1:9': "
                          "cannot connect") and err.count("\n") == 1
    np.savez(tmp_path / "s.npz", x=np.zeros((3, 30)))
    rc, out, err = run(capsys, "apply", d / "model", "--scores", tmp_path / "s.npz",
                       "-o", tmp_path / "o", "--scheduler", "tcp://127.0.0.1:9")
    assert rc == 2 and "must be a .npy file or a Zarr store" in err
    # every registry measure has a distributed form; one without is simulated
    monkeypatch.setitem(MEASURES, "smooth-ece", dataclasses.replace(MEASURES["smooth-ece"], mergeable=None))
    for extra, message in [(["--metrics", "ece", "smooth-ece"],
                            "--metrics: measure(s) smooth-ece have no distributed form"),
                           (["--ci", "score"], "--ci score is the interval of the debiased")]:
        rc, out, err = run(capsys, "evaluate", "--scores", d / "test.npy", "--gold",
                           d / "test_gold.npy", "--dask", *extra)
        assert rc == 2 and message in err and err.count("\n") == 1, err
    with pytest.raises(SystemExit):
        main(["evaluate", "--scores", "x.npy", "--dask", "--scheduler", "tcp://a:1"])
    assert not (tmp_path / "o").exists()


def _saved_arrays(path):
    meta, arrays = sc.GroupedCalibrator.load(path).get_state()
    return meta, arrays


@pytest.mark.parametrize("method,grouping", [("histogram", "tfg"), ("isotonic", "per-tag"),
                                             ("platt", "scw"), ("scaling-binning", "tfg")])
def test_fit_on_scheduler_equals_single_machine(files, scheduler, capsys, tmp_path,
                                                method, grouping):
    d, test, _, _ = files
    np.save(d / "dev.npy", test.scores[::-1].copy())
    np.save(d / "dev_gold.npy", test.gold[::-1].copy())
    tfg = [] if grouping == "scw" else ["--train-counts", d / "counts.json", "--groups", 3]
    args = ["fit", "--scores", d / "dev.npy", "--gold", d / "dev_gold.npy", *tfg,
            "--method", method, "--grouping", grouping] + \
        (["--bins", 6] if method == "histogram" else [])
    rc, _, err = run(capsys, *args, "-o", tmp_path / "one")
    assert rc == 0, err
    rc, out, err = run(capsys, *args, "-o", tmp_path / "dask", "--scheduler", scheduler,
                       "--chunk-rows", 170)
    assert rc == 0, err
    assert f"Dask scheduler {scheduler}; dashboard:" in out
    assert "on 1,000 tokens on the cluster; saved to" in out
    (meta_g, arr_g), (meta_r, arr_r) = (_saved_arrays(tmp_path / "dask"),
                                        _saved_arrays(tmp_path / "one"))
    # exact methods: the same saved model, bit for bit; scaling-binning: all but
    # its bin values (summed per distinct score: within 1e-12, docs/scale.md)
    if method != "platt":
        assert meta_g == meta_r and sorted(arr_g) == sorted(arr_r)
        for name in arr_r:
            if method == "scaling-binning" and name.endswith("bin_values_"):
                np.testing.assert_allclose(arr_g[name], arr_r[name], rtol=1e-12, atol=0)
            else:
                np.testing.assert_array_equal(arr_g[name], arr_r[name], err_msg=name)
    got, ref = (sc.GroupedCalibrator.load(tmp_path / p) for p in ("dask", "one"))
    np.testing.assert_allclose(got.transform_dense(test.scores),
                               ref.transform_dense(test.scores), rtol=1e-12 * (
                                   method == "scaling-binning"),
                               atol=0 if method != "platt" else 1e-7)


def _same_numbers(got, ref, path="json"):
    """The same JSON document, floats within 1e-12 relative."""
    assert type(got) is type(ref), path
    if isinstance(ref, dict):
        assert sorted(got) == sorted(ref), path
        for k in ref:
            _same_numbers(got[k], ref[k], f"{path}.{k}")
    elif isinstance(ref, list):
        assert len(got) == len(ref), path
        for i, (a, b) in enumerate(zip(got, ref)):
            _same_numbers(a, b, f"{path}[{i}]")
    elif isinstance(ref, float):
        assert got == pytest.approx(ref, rel=1e-12, abs=1e-300), path
    else:
        assert got == ref, path


@pytest.mark.filterwarnings("ignore:.*bins of fewer than")
@pytest.mark.parametrize("extra", [
    ["--ci", "--level", "0.9", "--n-resamples", 300, "--per-tag", "--min-entries", 50,
     "--metrics", "ece", "brier", "min-dcf", "log-loss-mcb", "--prior", 0.3,
     "--binning", "fixed", "--bins", 12, "--norm", 1],
    ["--ci", "score", "--debias", "--bin-size", 40, "--metrics", "debiased-ce"],
    ["--ci", "bootstrap", "--n-resamples", 60, "--seed", 3, "--per-tag", "--min-entries",
     50, "--metrics", "ece", "calibration-test-p"]],
    ids=["simulation-fixed", "score-debiased", "bootstrap-and-test"])
def test_evaluate_options_on_cluster_equal_single_machine(files, scheduler, capsys,
                                                          tmp_path, extra):
    d, _, _, _ = files
    args = ["evaluate", "--scores", d / "test.npy", "--gold", d / "test_gold.npy",
            "--train-counts", d / "counts.json", "--groups", 3, *extra]
    rc, _, err = run(capsys, *args, "--json", tmp_path / "one.json")
    assert rc == 0, err
    rc, out, err = run(capsys, *args, "--scheduler", scheduler, "--chunk-rows", 130,
                       "--json", tmp_path / "dask.json")
    assert rc == 0, err
    assert "dashboard:" in out
    ref = json.loads((tmp_path / "one.json").read_text())
    got = json.loads((tmp_path / "dask.json").read_text())
    assert got["smce"]["ci_low"] is not None and "top_label_ece" in got
    _same_numbers(got, ref)


def test_save_entries_over_another_file_is_refused(files, scheduler, capsys, tmp_path):
    """--save-entries on a cluster writes a directory of shards
    (tests/test_entry_shards.py); over anything but such a directory it is one
    error line, and the file is left as it was."""
    d = files[0]
    (tmp_path / "e.npz").write_text("mine")
    rc, out, err = run(capsys, "evaluate", "--scores", d / "test.npy", "--gold",
                       d / "test_gold.npy", "--scheduler", scheduler, "--save-entries",
                       tmp_path / "e.npz")
    assert rc == 2 and "not a directory of entry shards" in err and err.count("\n") == 1, err
    assert (tmp_path / "e.npz").read_text() == "mine"


def _dev_files(d):
    dev = make_tagger_outputs(1500, n_tags=30, split_seed=1)
    np.save(d / "dev.npy", dev.scores)
    np.save(d / "dev_gold.npy", dev.gold)
    return ["--dev-scores", d / "dev.npy", "--dev-gold", d / "dev_gold.npy"]


def test_compare_on_scheduler_equals_single_machine(files, scheduler, capsys, tmp_path):
    from test_distributed_compare import assert_close
    d = files[0]
    args = ["compare", "--scores", d / "test.npy", "--gold", d / "test_gold.npy",
            *_dev_files(tmp_path), "--train-counts", d / "counts.json", "--groups", 3,
            "--methods", "isotonic", "histogram", "scaling-binning", "--metrics", "brier"]
    rc, out, err = run(capsys, *args, "--scheduler", scheduler, "--chunk-rows", 333,
                       "--json", tmp_path / "d.json")
    assert rc == 0, err
    assert f"Dask scheduler {scheduler}; dashboard:" in out
    rc, _, err = run(capsys, *args, "--json", tmp_path / "one.json")
    assert rc == 0, err
    got, ref = (json.loads((tmp_path / f).read_text()) for f in ("d.json", "one.json"))
    assert sorted(got["methods"]) == sorted(f"{m}/{g}" for m in ("histogram", "isotonic",
                                                                 "scaling-binning")
                                            for g in ("scw", "tfg"))
    assert_close(got, ref, 1e-12)


def test_report_on_scheduler_equals_single_machine(files, scheduler, capsys, tmp_path):
    from test_distributed_compare import assert_close
    d = files[0]
    args = ["report", "--scores", d / "test.npy", "--gold", d / "test_gold.npy",
            *_dev_files(tmp_path), "--train-counts", d / "counts.json", "--groups", 3,
            "--methods", "isotonic", "--level", 0.9]
    rc, out, err = run(capsys, *args, "--scheduler", scheduler, "-o", tmp_path / "d")
    assert rc == 0, err
    assert f"Dask scheduler {scheduler}; dashboard:" in out
    assert "wrote the report:" in out
    assert "left out" not in err   # every section of the report has a distributed form
    rc, _, err = run(capsys, *args, "-o", tmp_path / "one")
    assert rc == 0, err
    got, ref = (json.loads((tmp_path / r / "numbers.json").read_text())
                for r in ("d", "one"))
    assert got["evaluation"]["smce"]["ci_level"] == 0.9
    assert "smooth-ece" in got["evaluation"]["metrics"]
    assert_close(got, ref, 1e-12, 1e-14)


def test_compare_and_report_refusals_one_error_line(files, capsys, tmp_path, monkeypatch):
    d = files[0]
    test = ["--scores", d / "test.npy", "--gold", d / "test_gold.npy"]
    # every registry measure has a distributed form; one without is simulated
    monkeypatch.setitem(MEASURES, "smooth-ece", dataclasses.replace(MEASURES["smooth-ece"], mergeable=None))
    for argv, message in [
            (["compare", *test, "--dask"], "give --dev-scores and --dev-gold"),
            (["compare", *test, "--dask", "--metrics", "smooth-ece"],
             "--metrics: measure(s) smooth-ece have no distributed form"),
            (["report", *test, "--dask", "--metrics", "smooth-ece", "-o", tmp_path / "r"],
             "--metrics: measure(s) smooth-ece have no distributed form"),
            (["report", "--scores", d / "test.npy", "--scheduler", "tcp://127.0.0.1:9",
              "-o", tmp_path / "r"], "give --scores and --gold")]:
        rc, out, err = run(capsys, *argv)
        assert rc == 2 and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "r").exists()
