"""Cross-fitting on distributed entries (sparsecal.distributed.folds) on two
worker processes, against one machine: the stratified token folds entry by
entry, the members of CrossFittedCalibrator (isotonic and histogram bit for
bit, Platt within float rounding), select's score table (1e-12 relative for
the exact methods, 1e-6 for Platt's weighted fit) and choice, and the CLI's ``fit --ensemble K`` and ``fit --select`` with
``--scheduler``. Random data with ties, tiny groups, empty chunks, one-row
chunks and a chunk with every score below the threshold."""
import json

import dask
import dask.array as da
import numpy as np
import pytest

import sparsecal as sc
from sparsecal import distributed as sd
from sparsecal.calibration.folds import stratified_token_folds
from sparsecal.cli.main import main

from _dask_cluster import tagger_scores, two_workers

N_TAGS = 9
GROUPS = sc.TagGroups([0, 0, 1, 1, 1, 2, 2, 3, 4], 5)   # groups 3, 4: 1-2 entries
CHUNKS = [(240,), (100, 0, 37, 1, 0, 102), (1,) * 3 + (237,)]


@pytest.fixture(scope="module")
def client():
    with two_workers() as c:
        yield c


def _data(dtype, seed=31, n=240):
    x, gold = tagger_scores(seed, n, N_TAGS, dtype)
    x[:, 7:] = dtype(0.0)
    x[0, 7] = x[1, 8] = dtype(0.5)          # tiny groups
    gold[0], gold[1] = 7, 8
    x[100:137] = dtype(0.001)                # one whole chunk below the threshold
    return x, gold


def _dask(x, gold, sizes):
    return sd.threshold(da.from_array(x, chunks=(sizes, (N_TAGS,))), gold)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_folds_equal_entry_by_entry(client, dtype):
    x, gold = _data(dtype)
    one = sc.threshold(x, gold)
    for sizes in CHUNKS:
        for persist in (False, True):
            entries = _dask(x, gold, sizes)
            entries = entries.persist() if persist else entries
            for n_folds, seed in [(2, 0), (3, 7), (5, 2 ** 33)]:
                ref = stratified_token_folds(one, GROUPS, n_folds, seed)
                folds, per_fold = sd.token_folds(entries, GROUPS, n_folds, seed)
                got = np.concatenate(dask.compute(*folds))
                np.testing.assert_array_equal(got, ref)
                np.testing.assert_array_equal(per_fold, np.bincount(ref, minlength=n_folds))


def test_tiny_inputs_and_errors(client):
    for n in (1, 2):
        x, gold = tagger_scores(n, n, 3, np.float64)
        x[0] = [0.5, 0.3, 0.2]
        gold[0] = 0
        ref = stratified_token_folds(sc.threshold(x, gold), sc.TagGroups.scw(3), 2, 1)
        folds, _ = sd.token_folds(sd.threshold(da.from_array(x, chunks=(1, 3)), gold),
                                  sc.TagGroups.scw(3), 2, 1)
        np.testing.assert_array_equal(np.concatenate(dask.compute(*folds)), ref)
    entries = _dask(*_data(np.float64), (240,))
    with pytest.raises(ValueError, match="n_folds must be at least 2, got 1"):
        sd.token_folds(entries, GROUPS, 1)
    with pytest.raises(ValueError, match="seed"):
        sd.token_folds(entries, GROUPS, 3, -1)
    with pytest.raises(ValueError, match="rows"):
        sd.token_folds(sd.from_arrays(da.from_array(np.array([0.2, 0.9]), chunks=1), [0, 1]),
                       sc.TagGroups.scw(1), 2)
    with pytest.raises(TypeError, match="DaskEntries"):
        sd.token_folds(sc.threshold(*_data(np.float64)), GROUPS, 2)


def _state_equal(got, ref):
    (meta_g, arr_g), (meta_r, arr_r) = got.get_state(), ref.get_state()
    assert meta_g == meta_r and sorted(arr_g) == sorted(arr_r)
    for name in arr_r:
        np.testing.assert_array_equal(arr_g[name], arr_r[name], err_msg=name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ensemble_members_equal_one_machine(client, dtype):
    x, gold = _data(dtype)
    one = sc.threshold(x, gold)
    test, _ = tagger_scores(32, 60, N_TAGS, dtype)
    for base in (sc.IsotonicCalibrator(), sc.HistogramBinning(n_bins=4)):
        setup = sc.GroupedCalibrator(base, GROUPS, min_entries=1)
        ref = sc.CrossFittedCalibrator(setup, n_folds=3, seed=5).fit(one)
        for sizes in CHUNKS[1:]:
            got = sc.CrossFittedCalibrator(setup, n_folds=3, seed=5).fit(_dask(x, gold, sizes))
            assert len(got.calibrators_) == 3
            _state_equal(got, ref)
            np.testing.assert_array_equal(got.transform_dense(test), ref.transform_dense(test))
    # Platt: weighted distinct-score rows, predictions within float rounding
    setup = sc.GroupedCalibrator(sc.PlattCalibrator(), GROUPS, min_entries=1)
    ref = sc.CrossFittedCalibrator(setup, n_folds=2, seed=1).fit(one)
    got = sc.CrossFittedCalibrator(setup, n_folds=2, seed=1).fit(_dask(x, gold, CHUNKS[1]))
    np.testing.assert_allclose(got.transform_dense(test), ref.transform_dense(test),
                               rtol=0, atol=1e-6)
    # a planted change (another seed) is caught
    other = sc.CrossFittedCalibrator(sc.GroupedCalibrator(sc.IsotonicCalibrator(), GROUPS,
                                                          min_entries=1), n_folds=3, seed=6)
    other.fit(_dask(x, gold, CHUNKS[1]))
    ref = sc.CrossFittedCalibrator(sc.GroupedCalibrator(sc.IsotonicCalibrator(), GROUPS,
                                                        min_entries=1), n_folds=3, seed=5)
    with pytest.raises(AssertionError):
        _state_equal(other, ref.fit(one))


COUNTS = {t: (10 - t) ** 2 for t in range(N_TAGS)}


@pytest.mark.filterwarnings("ignore:.*fewer than")
@pytest.mark.parametrize("metric", ["smce", "gmce"])
def test_select_table_and_choice_equal_one_machine(client, metric):
    x, gold = _data(np.float64, seed=33, n=400)
    kw = dict(train_counts=COUNTS, methods=["isotonic", "histogram", "platt"],
              n_groups=[1, 3], n_bins=[4, 8], n_folds=3, metric=metric, seed=2)
    ref = sc.select(sc.threshold(x, gold), **kw)
    got = sc.select(_dask(x, gold, (150, 0, 1, 249)), **kw)
    for key in ("method", "n_groups", "n_bins", "rank"):
        assert got.cv_results[key] == ref.cv_results[key], key
    exact = np.array(ref.cv_results["method"]) != "platt"
    got_s, ref_s = np.array(got.cv_results["score"]), np.array(ref.cv_results["score"])
    np.testing.assert_allclose(got_s[exact], ref_s[exact], rtol=1e-12, atol=0)
    # Platt: fitted on weighted distinct-score rows (docs/scale.md)
    np.testing.assert_allclose(got_s[~exact], ref_s[~exact], rtol=1e-6, atol=0)
    assert got.best_params == ref.best_params and got.best_index == ref.best_index
    assert got.to_markdown() == ref.to_markdown()
    if ref.best_params["method"] != "platt":
        _state_equal(got.best_calibrator, ref.best_calibrator)


def _run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli-folds")
    x, gold = _data(np.float32, seed=34, n=300)
    np.save(d / "dev.npy", x)
    np.save(d / "dev_gold.npy", gold)
    (d / "counts.json").write_text(json.dumps({str(k): v for k, v in COUNTS.items()}))
    return d


def test_cli_ensemble_on_scheduler_equals_one_machine(client, files, capsys, tmp_path):
    d = files
    args = ["fit", "--scores", d / "dev.npy", "--gold", d / "dev_gold.npy",
            "--train-counts", d / "counts.json", "--groups", 3, "--ensemble", 3,
            "--seed", 4]
    rc, out_one, err = _run(capsys, *args, "-o", tmp_path / "one")
    assert rc == 0, err
    rc, out, err = _run(capsys, *args, "-o", tmp_path / "dask", "--scheduler",
                        client.scheduler.address, "--chunk-rows", 70)
    assert rc == 0, err
    assert "cross-fitted ensemble of 3 Isotonic" in out and "tokens on the cluster" in out
    got, ref = (sc.CrossFittedCalibrator.load(tmp_path / p) for p in ("dask", "one"))
    _state_equal(got, ref)


@pytest.mark.filterwarnings("ignore:.*fewer than")
def test_cli_select_on_scheduler_equals_one_machine(client, files, capsys, tmp_path):
    d = files
    args = ["fit", "--select", "--scores", d / "dev.npy", "--gold", d / "dev_gold.npy",
            "--train-counts", d / "counts.json", "--methods", "isotonic", "histogram",
            "--groups-grid", 1, 3, "--bins-grid", 5, "--folds", 3]
    rc, out_one, err = _run(capsys, *args, "-o", tmp_path / "one", "--json",
                            tmp_path / "one.json")
    assert rc == 0, err
    rc, out, err = _run(capsys, *args, "-o", tmp_path / "dask", "--json",
                        tmp_path / "dask.json", "--scheduler", client.scheduler.address,
                        "--chunk-rows", 70)
    assert rc == 0, err
    table = out_one[:out_one.index("\nbest:")]
    assert table.strip() and table in out
    got, ref = (json.loads((tmp_path / f"{p}.json").read_text()) for p in ("dask", "one"))
    assert got["best_params"] == ref["best_params"]
    np.testing.assert_allclose(got["cv_results"]["score"], ref["cv_results"]["score"],
                               rtol=1e-12, atol=0)
    _state_equal(*(sc.GroupedCalibrator.load(tmp_path / p) for p in ("dask", "one")))
