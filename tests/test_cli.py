"""Tests of the ``sparsecal`` command line (``sparsecal.cli``).

Most commands run in-process through ``sparsecal.cli.main.main([...])`` (output via
capsys); a representative handful run as real processes (``python -m sparsecal``
and the installed console script) to check exit codes, stderr and atomic output
under SIGKILL. Every expected number is recomputed with the library API on the
same files. ``report`` and ``demo`` (which render figures, the slow part) are
tested in test_report.py.
"""
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from sparsecal import GroupedCalibrator, TagGroups, evaluate, threshold
import sparsecal as sc
from sparsecal.cli.main import main
from sparsecal.calibration.comparison import compare_methods
from sparsecal.calibration.registry import METHODS
from sparsecal.io.arrays import load_entries
from sparsecal.datasets.synthetic import make_tagger_outputs

N_TAGS = 426
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------- fixtures -- #

@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Small dev/test splits of the synthetic tagger as files, plus counts,
    a tag index and the same gold tags as .txt (indices and tag strings)."""
    d = tmp_path_factory.mktemp("cli-data")
    dev = make_tagger_outputs(2000, split_seed=1)
    test = make_tagger_outputs(1500, split_seed=2)
    np.save(d / "dev.npy", dev.scores)
    np.save(d / "dev_gold.npy", dev.gold)
    np.save(d / "test.npy", test.scores)
    np.save(d / "test_gold.npy", test.gold)
    counts = {str(k): v for k, v in dev.train_counts.items()}
    (d / "counts.json").write_text(json.dumps(counts))
    names = [f"T{i}/X" for i in range(N_TAGS)]
    (d / "tag_index.json").write_text(json.dumps({n: i for i, n in enumerate(names)}))
    (d / "counts_named.json").write_text(
        json.dumps({names[int(k)]: v for k, v in counts.items()}))
    (d / "test_gold_tags.txt").write_text("".join(names[g] + "\n" for g in test.gold))
    (d / "test_gold_idx.txt").write_text("".join(f"{g}\n" for g in test.gold))
    return SimpleNamespace(
        dir=d, dev=dev, test=test, p=lambda name: str(d / name),
        dev_entries=threshold(dev.scores, dev.gold),
        test_entries=threshold(test.scores, test.gold),
        tfg=TagGroups.from_counts(counts, 5, n_tags=N_TAGS))


def run(capsys, *argv):
    """``main(argv)`` in-process: (exit code, stdout, stderr)."""
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def run_process(*argv, exe=None, timeout=120):
    """The command in a new process that imports the package under test (the
    console script too: this checkout first on its path, if it holds one)."""
    cmd = ([exe] if exe else [sys.executable, "-m", "sparsecal"]) + [str(a) for a in argv]
    path = os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=path))


def table_rows(text):
    """Cells of every markdown table row (not header separators)."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def group_rows(text):
    return [r for r in table_rows(text) if r[0].isdigit()]


def umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def tmp_leftovers(directory):
    """Temporaries of atomic output (``.<target>.tmp-<pid>-<token>``)."""
    return sorted(p.name for p in Path(directory).iterdir() if ".tmp-" in p.name)


# --------------------------------------------------------------- evaluate -- #

def test_evaluate_prints_smce_and_a_row_per_group(data, capsys):
    rc, out, err = run(capsys, "evaluate", "--scores", data.p("test.npy"), "--gold",
                       data.p("test_gold.npy"), "--train-counts", data.p("counts.json"))
    assert rc == 0, err
    expected = evaluate(data.test_entries, data.tfg, ci=None, top_label=True)
    assert f"**SMCE** {expected.smce.value:.4f} over {len(data.test_entries):,} entries" in out
    rows = group_rows(out)
    assert [r[0] for r in rows] == ["1", "2", "3", "4", "5"]
    for row, summary, ce in zip(rows, expected.groups, expected.gmce):
        assert row[1] == str(summary["tag_types"])
        assert row[3] == f"{summary['entries']:,}"
        assert row[-1] == f"{ce.value:.4f}"
    # without --ci nothing claims an interval (issue 25)
    assert out.splitlines()[0].endswith(", no CI") and "CI]" not in out
    assert table_rows(out)[0][-1] == "GMCE"
    assert "no --train-counts" not in out
    assert "**MCE**" not in out
    assert err == ""   # no progress: stderr is not a terminal here (test_cli_progress.py)


def test_evaluate_quiet_prints_nothing(data, capsys):
    rc, out, err = run(capsys, "evaluate", "--scores", data.p("test.npy"), "--gold",
                       data.p("test_gold.npy"), "-q")
    assert rc == 0
    assert out == "" and err == ""


def test_evaluate_json_equals_the_api(data, capsys, tmp_path):
    out_json = tmp_path / "eval.json"
    rc, out, err = run(capsys, "evaluate", "--scores", data.p("test.npy"), "--gold",
                       data.p("test_gold.npy"), "--train-counts", data.p("counts.json"),
                       "--bins", 15, "--seed", 3, "--json", out_json)
    assert rc == 0, err
    assert f"wrote {out_json}" in out
    expected = evaluate(data.test_entries, data.tfg, n_bins=15, ci=None, top_label=True)
    written = json.loads(out_json.read_text())
    assert written == json.loads(expected.to_json())
    assert written["smce"]["value"] == expected.smce.value
    assert written["settings"]["n_bins"] == 15
    assert [g["value"] for g in written["gmce"]] == [c.value for c in expected.gmce]
    assert tmp_leftovers(tmp_path) == []


def test_evaluate_metrics_equal_the_api(data, capsys, tmp_path):
    out_json = tmp_path / "eval.json"
    rc, out, err = run(capsys, "evaluate", "--scores", data.p("test.npy"), "--gold",
                       data.p("test_gold.npy"), "--train-counts", data.p("counts.json"),
                       "--metrics", "ece", "brier", "--json", out_json)
    assert rc == 0, err
    expected = evaluate(data.test_entries, data.tfg, ci=None, top_label=True,
                        metrics=["ece", "brier"])
    written = json.loads(out_json.read_text())
    assert written["metrics"] == json.loads(expected.to_json())["metrics"]
    assert list(written["metrics"]) == ["ece", "brier"]
    assert "| ECE | " in out and "| Brier | " in out


def test_evaluate_ci_adds_intervals(data, capsys, tmp_path):
    out_json = tmp_path / "ci.json"
    rc, out, err = run(capsys, "evaluate", "--scores", data.p("test.npy"), "--gold",
                       data.p("test_gold.npy"), "--train-counts", data.p("counts.json"),
                       "--ci", "--json", out_json)
    assert rc == 0, err
    assert "95% CI: simulation" in out
    assert re.search(r"\*\*SMCE\*\* \d\.\d{4} \[\d\.\d{4}, \d\.\d{4}\]", out)
    for row in group_rows(out):
        assert re.fullmatch(r"\d\.\d{4} \[\d\.\d{4}, \d\.\d{4}\]", row[-1]), row
    written = json.loads(out_json.read_text())
    expected = evaluate(data.test_entries, data.tfg, ci="simulation", top_label=True)
    assert written == json.loads(expected.to_json())
    smce = written["smce"]
    assert smce["ci_low"] is not None and smce["ci_low"] <= smce["value"] <= smce["ci_high"]


def test_evaluate_interval_flags_are_the_api_specification(data, capsys, tmp_path):
    """--ci METHOD, --confidence-level, --n-resamples and --seed build the same
    ConfidenceInterval as the API (one specification, issue 10)."""
    out_json = tmp_path / "ci90.json"
    rc, out, err = run(capsys, "evaluate", "--scores", data.p("test.npy"), "--gold",
                       data.p("test_gold.npy"), "--train-counts", data.p("counts.json"),
                       "--ci", "bootstrap", "--confidence-level", 0.9, "--n-resamples", 200,
                       "--seed", 4, "--json", out_json)
    assert rc == 0, err
    assert "90% CI: bootstrap" in out
    spec = sc.ConfidenceInterval("bootstrap", confidence_level=0.9, n_resamples=200,
                                 random_state=4)
    expected = evaluate(data.test_entries, data.tfg, ci=spec, top_label=True)
    assert json.loads(out_json.read_text()) == json.loads(expected.to_json())
    # checked before any file is read: the scores file is absent
    rc, out, err = run(capsys, "evaluate", "--scores", tmp_path / "absent.npy", "--gold",
                       data.p("test_gold.npy"), "--ci", "--confidence-level", 1.5)
    assert rc == 2 and "--confidence-level" in err and "absent" not in err


def test_evaluate_per_tag_adds_mce(data, capsys, tmp_path):
    out_json = tmp_path / "mce.json"
    rc, out, err = run(capsys, "evaluate", "--scores", data.p("test.npy"), "--gold",
                       data.p("test_gold.npy"), "--per-tag", "--min-entries", "100",
                       "--json", out_json)
    assert rc == 0, err
    # the debiased per-tag CE (MCE's default): a bin of 100-199 entries is no
    # warning, the bins' noise being subtracted
    assert "fewer than 200 entries" not in err
    expected = evaluate(data.test_entries, TagGroups.scw(N_TAGS), ci=None, per_tag=True,
                        min_entries=100, top_label=True)
    assert f"**MCE** (debiased, per tag, >= 100 entries): {expected.mce.value:.4f}" in out
    written = json.loads(out_json.read_text())
    assert written["mce"]["value"] == expected.mce.value
    assert set(written["mce"]["per_tag"]) == {str(t) for t in expected.mce.per_tag}


def test_evaluate_without_train_counts_is_scw_with_a_note(data, capsys):
    rc, out, err = run(capsys, "evaluate", "--scores", data.p("test.npy"), "--gold",
                       data.p("test_gold.npy"))
    assert rc == 0, err
    assert "(no --train-counts: evaluating all tags as one group, SCW)" in out
    rows = group_rows(out)
    assert len(rows) == 1 and rows[0][1] == str(N_TAGS)
    assert "Train share" not in out


def _without_wrote(text):
    return "\n".join(line for line in text.splitlines() if not line.startswith("wrote"))


def test_save_entries_then_entries_gives_identical_output(data, capsys, tmp_path,
                                                           monkeypatch):
    saved = tmp_path / "entries.npz"
    common = ["--train-counts", data.p("counts.json"), "--ci", "--per-tag",
              "--min-entries", "100"]
    rc, first, err = run(capsys, "evaluate", "--scores", data.p("test.npy"), "--gold",
                         data.p("test_gold.npy"), "--save-entries", saved, *common)
    assert rc == 0, err
    assert saved.is_file() and f"wrote {saved}" in first
    def no_threshold(*args, **kwargs):
        raise AssertionError("nothing is thresholded the second time")

    monkeypatch.setattr("sparsecal.cli.inputs.threshold", no_threshold)
    rc, second, err = run(capsys, "evaluate", "--entries", saved, *common)
    assert rc == 0, err
    assert _without_wrote(second) == _without_wrote(first)
    loaded = load_entries(saved)
    np.testing.assert_array_equal(loaded.score, data.test_entries.score)
    np.testing.assert_array_equal(loaded.token, data.test_entries.token)


@pytest.mark.parametrize("gold_file", ["test_gold_tags.txt", "test_gold_idx.txt"])
def test_text_gold_equals_npy_gold(data, capsys, gold_file):
    common = ["--scores", data.p("test.npy"), "--ci"]
    rc, from_npy, err = run(capsys, "evaluate", "--gold", data.p("test_gold.npy"),
                            "--train-counts", data.p("counts.json"), *common)
    assert rc == 0, err
    extra = ["--tag-index", data.p("tag_index.json")] if "tags" in gold_file else []
    counts = "counts_named.json" if extra else "counts.json"
    rc, from_txt, err = run(capsys, "evaluate", "--gold", data.p(gold_file),
                            "--train-counts", data.p(counts), *extra, *common)
    assert rc == 0, err
    assert from_txt == from_npy


@pytest.mark.parametrize("fmt", ["conllu", "conll"])
def test_corpus_gold_equals_npy_gold(data, capsys, tmp_path, fmt):
    names = [f"T{i}/X" for i in range(N_TAGS)]
    if fmt == "conllu":   # two sentences, comments and a multiword token between
        body = [f"{i + 1}\tw\tw\tX\t{names[g]}\t_\t0\troot\t_\t_"
                for i, g in enumerate(data.test.gold)]
        text = "# s1\n" + "\n".join(body[:700]) + "\n\n# s2\n1-2\tmw\t_\t_\t_\t_\t_\t_\t_\t_\n" \
            + "\n".join(body[700:]) + "\n\n"
        extra = ["--gold-column", "xpos"]
    else:
        text = "-DOCSTART- O\n\n" + "".join(f"w NN {names[g]}\n" for g in data.test.gold)
        extra = ["--gold-format", "conll"]
    (tmp_path / "gold.txt").write_text(text)
    gold = tmp_path / ("gold.conllu" if fmt == "conllu" else "gold.txt")
    if fmt == "conllu":
        (tmp_path / "gold.txt").rename(gold)
    common = ["--scores", data.p("test.npy"), "--train-counts", data.p("counts_named.json"),
              "--tag-index", data.p("tag_index.json")]
    rc, from_npy, err = run(capsys, "evaluate", "--gold", data.p("test_gold.npy"), *common)
    assert rc == 0, err
    rc, from_corpus, err = run(capsys, "evaluate", "--gold", gold, *extra, *common)
    assert rc == 0, err
    assert from_corpus == from_npy


def test_tag_strings_in_gold_need_the_tag_index(data, capsys):
    rc, out, err = run(capsys, "evaluate", "--scores", data.p("test.npy"), "--gold",
                       data.p("test_gold_tags.txt"))
    assert rc == 2
    assert "test_gold_tags.txt" in err and "line 1" in err and "not a tag index" in err


# ---------------------------------------------------------------- fit/apply -- #

def _expected_model(method, grouping, data):
    base = METHODS[method].build(10, 0)
    if grouping == "scw":
        return GroupedCalibrator(base, TagGroups.scw(N_TAGS))
    if grouping == "tfg":
        return GroupedCalibrator(base, data.tfg)
    return GroupedCalibrator(base, TagGroups.per_tag(N_TAGS), fallback=data.tfg)


@pytest.mark.parametrize("grouping", ["scw", "tfg", "per-tag"])
@pytest.mark.parametrize("method", sorted(METHODS))
def test_fit_then_apply(data, capsys, tmp_path, method, grouping):
    cal_dir = tmp_path / "cal"
    rc, out, err = run(capsys, "fit", "--method", method, "--grouping", grouping,
                       "--scores", data.p("dev.npy"), "--gold", data.p("dev_gold.npy"),
                       *([] if grouping == "scw" else ["--train-counts", data.p("counts.json")]),
                       "-o", cal_dir)
    assert rc == 0, err
    assert (cal_dir / "calibrator.json").is_file() and (cal_dir / "arrays.npz").is_file()
    assert f"({grouping})" in out and str(cal_dir) in out
    model = GroupedCalibrator.load(cal_dir)
    assert model.groups.kind == grouping
    assert model.threshold_ == 0.01
    expected_model = _expected_model(method, grouping, data).fit(data.dev_entries)
    assert f"fitted {len(expected_model.calibrators_)} {METHODS[method].display_name}" in out
    assert [type(c) for c in model.calibrators_] == \
        [type(c) for c in expected_model.calibrators_]

    out_npy = tmp_path / "calibrated.npy"
    rc, out, err = run(capsys, "apply", cal_dir, "--scores", data.p("test.npy"),
                       "-o", out_npy)
    assert rc == 0, err
    assert f"wrote {out_npy}" in out
    written = np.load(out_npy)
    assert written.dtype == np.float32 and written.shape == data.test.scores.shape
    np.testing.assert_array_equal(written, model.transform_dense(data.test.scores))
    np.testing.assert_array_equal(written,
                                  expected_model.transform_dense(data.test.scores))
    assert not np.array_equal(written, data.test.scores)   # something was calibrated
    assert tmp_leftovers(tmp_path) == []


@pytest.fixture(scope="module")
def calibrator(data, tmp_path_factory):
    cal_dir = tmp_path_factory.mktemp("fitted") / "isotonic-tfg"
    assert main(["fit", "--scores", data.p("dev.npy"), "--gold", data.p("dev_gold.npy"),
                 "--train-counts", data.p("counts.json"), "-o", str(cal_dir), "-q"]) == 0
    return cal_dir


def test_apply_streams_a_memmap_and_leaves_the_input_alone(data, capsys, tmp_path,
                                                           calibrator):
    src = tmp_path / "scores.npy"
    mm = np.lib.format.open_memmap(src, mode="w+", dtype=np.float64,
                                   shape=data.test.scores.shape)
    mm[:] = data.test.scores
    mm.flush()
    del mm
    before = src.read_bytes()
    out_npy = tmp_path / "out.npy"
    rc, out, err = run(capsys, "apply", calibrator, "--scores", src, "-o", out_npy)
    assert rc == 0, err
    assert err == ""
    assert src.read_bytes() == before
    written = np.load(out_npy, mmap_mode="r")
    assert written.dtype == np.float64   # the dtype of the input is kept
    expected = GroupedCalibrator.load(calibrator).transform_dense(
        np.load(src, mmap_mode="r"))
    np.testing.assert_array_equal(written, expected)
    # Output files get ordinary permissions (not mkstemp's private 0o600).
    assert out_npy.stat().st_mode & 0o777 == 0o666 & ~umask()


def test_apply_reads_npz_scores_too(data, capsys, tmp_path, calibrator):
    np.savez(tmp_path / "scores.npz", scores=data.test.scores)
    rc, out, err = run(capsys, "apply", calibrator, "--scores", tmp_path / "scores.npz",
                       "-o", tmp_path / "out.npy")
    assert rc == 0, err
    np.testing.assert_array_equal(
        np.load(tmp_path / "out.npy"),
        GroupedCalibrator.load(calibrator).transform_dense(data.test.scores))


def test_apply_output_must_be_npy(data, capsys, tmp_path, calibrator):
    rc, out, err = run(capsys, "apply", calibrator, "--scores", data.p("test.npy"),
                       "-o", tmp_path / "out.txt")
    assert rc == 2
    assert "out.txt" in err and "must be a .npy file" in err
    assert list(tmp_path.iterdir()) == []


def test_apply_tag_count_mismatch(data, capsys, tmp_path, calibrator):
    np.save(tmp_path / "narrow.npy", data.test.scores[:, :100])
    rc, out, err = run(capsys, "apply", calibrator, "--scores", tmp_path / "narrow.npy",
                       "-o", tmp_path / "out.npy")
    assert rc == 2
    assert "narrow.npy" in err and "100 tags" in err and f"fit for {N_TAGS}" in err
    assert not (tmp_path / "out.npy").exists()


def test_apply_into_a_missing_directory(data, capsys, tmp_path, calibrator):
    rc, out, err = run(capsys, "apply", calibrator, "--scores", data.p("test.npy"),
                       "-o", tmp_path / "nowhere" / "out.npy")
    assert rc == 2
    assert "out.npy" in err and "does not exist" in err


def _chunked(monkeypatch, after_first_chunk):
    """Make apply calibrate 100 rows at a time and call ``after_first_chunk``
    once the first chunk has been written."""
    original = GroupedCalibrator.transform_file

    def transform_file(self, scores_path, out_path, *, chunk_rows=None, progress=None):
        def hook(done, total):
            if done == 100:
                after_first_chunk()
        return original(self, scores_path, out_path, chunk_rows=100, progress=hook)

    monkeypatch.setattr(GroupedCalibrator, "transform_file", transform_file)


@pytest.mark.parametrize("exc, message, code", [
    (OSError("No space left on device (simulated)"), "No space left on device", 2),
    (KeyboardInterrupt(), "interrupted", 130),
    (MemoryError(), "out of memory", 2),
    (ZeroDivisionError("planted bug"), "internal error (ZeroDivisionError: planted bug)", 2)])
def test_apply_failing_midway_leaves_no_file(data, capsys, tmp_path, calibrator,
                                             monkeypatch, exc, message, code):
    def fail():
        raise exc
    _chunked(monkeypatch, fail)
    out_npy = tmp_path / "out.npy"
    rc, out, err = run(capsys, "apply", calibrator, "--scores", data.p("test.npy"),
                       "-o", out_npy)
    assert rc == code
    assert message in err and "Traceback" not in err
    assert not out_npy.exists()
    assert list(tmp_path.iterdir()) == []   # the temporary file was removed


def _apply_nan_at_row_1234(capsys, tmp_path, data, calibrator, monkeypatch):
    scores = data.test.scores.copy()
    scores[1234, 5] = np.nan
    np.save(tmp_path / "nan.npy", scores)
    _chunked(monkeypatch, lambda: None)
    out_npy = tmp_path / "out" / "calibrated.npy"
    out_npy.parent.mkdir()
    rc, out, err = run(capsys, "apply", calibrator, "--scores", tmp_path / "nan.npy",
                       "-o", out_npy)
    return rc, err, out_npy


def test_apply_bad_values_midway_leave_no_file(data, capsys, tmp_path, calibrator,
                                               monkeypatch):
    rc, err, out_npy = _apply_nan_at_row_1234(capsys, tmp_path, data, calibrator,
                                              monkeypatch)
    assert rc == 2
    assert "nan.npy" in err and "is NaN" in err and "Traceback" not in err
    assert list(out_npy.parent.iterdir()) == []   # no output, no temporary file


def test_apply_bad_value_message_names_the_row_in_the_file(data, capsys, tmp_path,
                                                           calibrator, monkeypatch):
    rc, err, out_npy = _apply_nan_at_row_1234(capsys, tmp_path, data, calibrator,
                                              monkeypatch)
    assert "scores[1234, 5]" in err


_SLOW_APPLY = textwrap.dedent("""
    import sys, time
    from sparsecal.calibration.grouped import GroupedCalibrator
    from sparsecal.cli.main import main

    original = GroupedCalibrator.transform_file

    def transform_file(self, scores_path, out_path, *, chunk_rows=None, progress=None):
        def hook(done, total):
            print("chunk", done, flush=True)
            time.sleep(120)   # the test kills us here, after the first chunk
        return original(self, scores_path, out_path, chunk_rows=100, progress=hook)

    GroupedCalibrator.transform_file = transform_file
    sys.exit(main(sys.argv[1:]))
""")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_apply_killed_midway_leaves_no_output(data, tmp_path, calibrator):
    big = np.concatenate([data.test.scores, data.dev.scores])   # 3,500 rows
    np.save(tmp_path / "big.npy", big)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out_npy = out_dir / "calibrated.npy"
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_APPLY, "apply", str(calibrator),
                             "--scores", str(tmp_path / "big.npy"), "-o", str(out_npy),
                             "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        line = proc.stdout.readline()   # blocks until the first chunk is written
        assert line.startswith("chunk 100"), (line, proc.stderr.read())
        assert tmp_leftovers(out_dir), "the temporary file should exist by now"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    assert not out_npy.exists()
    # SIGKILL gives no chance to clean up, so the partial temporary file is left
    # behind (.calibrated.npy.tmp-<pid>-*.npy beside the target); the target
    # itself never appears half-written. The next write to the same target
    # removes it (its writer is gone); a normal exception removes it at once.
    leftovers = tmp_leftovers(out_dir)
    assert len(leftovers) == 1 and leftovers[0].startswith(".calibrated.npy.tmp-")
    assert main(["apply", str(calibrator), "--scores", str(tmp_path / "big.npy"), "-o",
                 str(out_npy), "-q"]) == 0
    assert tmp_leftovers(out_dir) == [] and np.load(out_npy).shape == big.shape


# ---------------------------------------------------------------- compare -- #

@pytest.fixture(scope="module")
def compared(data, tmp_path_factory):
    out_json = tmp_path_factory.mktemp("compare") / "compare.json"
    argv = ["compare", "--dev-scores", data.p("dev.npy"), "--dev-gold", data.p("dev_gold.npy"),
            "--scores", data.p("test.npy"), "--gold", data.p("test_gold.npy"),
            "--train-counts", data.p("counts.json"), "--json", str(out_json)]
    return argv, out_json


def test_compare_table_has_every_method_and_grouping(data, capsys, compared):
    argv, out_json = compared
    rc, out, err = run(capsys, *argv)
    assert rc == 0, err
    rows = table_rows(out)
    body = [r for r in rows[1:] if r[0] not in ("Entries", "Tag types", "Tag freq in train",
                                                "Tokens")]
    assert body[0][:2] == ["None", ""]
    expected = [[METHODS[m].display_name, n] for m in METHODS for n in ("1", "5")]
    assert [r[:2] for r in body[1:]] == expected
    assert rows[0] == ["Recalibration", "Groups", "All (SMCE)", "Group 1 (GMCE)",
                       "Group 5 (GMCE)"]
    written = json.loads(out_json.read_text())
    result = compare_methods(data.dev_entries, data.test_entries, data.tfg)
    assert written == json.loads(json.dumps(result.to_dict()))
    # The printed cells are the JSON numbers.
    for row in body[1:]:
        method = next(m for m in METHODS if METHODS[m].display_name == row[0])
        key = f"{method}/{'scw' if row[1] == '1' else 'tfg'}"
        vals = written["methods"][key]
        assert row[2].startswith(f"{vals[0]:.4f} (")
        assert row[4].startswith(f"{vals[5]:.4f} (")


def test_compare_methods_subset(data, capsys, tmp_path):
    out_json = tmp_path / "c.json"
    rc, out, err = run(capsys, "compare", "--dev-scores", data.p("dev.npy"), "--dev-gold",
                       data.p("dev_gold.npy"), "--scores", data.p("test.npy"), "--gold",
                       data.p("test_gold.npy"), "--train-counts", data.p("counts.json"),
                       "--methods", "platt", "histogram", "--bins", 8, "--json", out_json)
    assert rc == 0, err
    names = {r[0] for r in table_rows(out)}
    assert {"Platt Scaling", "Histogram Binning"} <= names
    assert not names & {"Isotonic Regression", "Scaling Binning"}
    written = json.loads(out_json.read_text())
    result = compare_methods(data.dev_entries, data.test_entries, data.tfg,
                             methods=["platt", "histogram"], n_bins=8)
    assert written == json.loads(json.dumps(result.to_dict()))
    assert list(written["methods"]) == ["platt/scw", "platt/tfg", "histogram/scw",
                                        "histogram/tfg"]


def test_compare_from_saved_entries(data, capsys, tmp_path):
    for split in ("dev", "test"):
        assert main(["evaluate", "--scores", data.p(f"{split}.npy"), "--gold",
                     data.p(f"{split}_gold.npy"), "--save-entries",
                     str(tmp_path / f"{split}.npz"), "-q"]) == 0
    rc, out, err = run(capsys, "compare", "--dev-entries", tmp_path / "dev.npz",
                       "--entries", tmp_path / "test.npz", "--methods", "isotonic")
    assert rc == 0, err
    assert "(no --train-counts" in out
    result = compare_methods(data.dev_entries, data.test_entries, TagGroups.scw(N_TAGS),
                             methods=["isotonic"])
    assert result.to_markdown() in out


def test_compare_needs_both_splits(data, capsys):
    rc, out, err = run(capsys, "compare", "--scores", data.p("test.npy"), "--gold",
                       data.p("test_gold.npy"))
    assert rc == 2
    assert "--dev-scores" in err


# ----------------------------------------------------------------- groups -- #

def test_groups_on_the_real_ccg_counts(capsys):
    ccg = SHARED_DATA / "ccg"
    if not (ccg / "training_tag_frequencies.json").is_file():
        pytest.skip(f"real CCG counts not found at {ccg} (shared data folder absent)")
    rc, out, err = run(capsys, "groups", "--train-counts",
                       ccg / "training_tag_frequencies.json", "--tag-index",
                       ccg / "tag_indexes.json", "--n-tags", 426)
    assert rc == 0, err
    rows = group_rows(out)
    assert [r[0] for r in rows] == ["1", "2", "3", "4", "5"]
    # Kranzlein et al. 2021, Table 1: group 1 is the single tag N at 22.2%.
    assert rows[0][1:] == ["1", "206,312", "[22.2%, 22.2%]", "N"]
    assert rows[4][3].endswith(", 0.4%]")   # group 5: each at most 0.4%
    assert sum(int(r[1]) for r in rows) == 426
    assert sum(int(r[2].replace(",", "")) for r in rows) == 927497


def test_groups_on_a_small_json(capsys, tmp_path):
    counts = {"NN": 50, "DT": 30, "JJ": 10, "RB": 6, "UH": 4, "FW": 0}
    (tmp_path / "c.json").write_text(json.dumps(counts))
    (tmp_path / "i.json").write_text(json.dumps({t: i for i, t in enumerate(counts)}))
    rc, out, err = run(capsys, "groups", "--train-counts", tmp_path / "c.json",
                       "--tag-index", tmp_path / "i.json", "--groups", 3)
    assert rc == 0, err
    # Quota 100 / 3: NN (50) fills group 1; DT + JJ reach 90 >= 50 + 33.3;
    # the rest, and FW never seen in training, go to the last group.
    assert group_rows(out) == [["1", "1", "50", "[50.0%, 50.0%]", "NN"],
                               ["2", "2", "40", "[10.0%, 30.0%]", "DT, JJ"],
                               ["3", "3", "10", "[0.0%, 6.0%]", "RB, UH, FW"]]
    assert table_rows(out)[0] == ["Group", "Tag types", "Train tokens", "Train share",
                                  "Most frequent tags"]


# ----------------------------------------------------------- error paths -- #

@pytest.fixture(scope="module")
def bad(data, tmp_path_factory):
    """Broken input files, by name."""
    d = tmp_path_factory.mktemp("bad")
    s = data.test.scores
    np.save(d / "vector.npy", s[0])
    np.save(d / "ints.npy", (s * 100).astype(np.int32))
    nan = s.copy()
    nan[7, 3] = np.nan
    np.save(d / "nan.npy", nan)
    big = s.copy()
    big[11, 4] = 1.5
    np.save(d / "big.npy", big)
    gold = data.test.gold.astype(np.int64)
    oob = gold.copy()
    oob[42] = 999
    np.save(d / "gold_oob.npy", oob)
    np.save(d / "gold_short.npy", gold[:-5])
    np.save(d / "gold_float.npy", gold.astype(np.float64))
    lines = [f"T{g}/X" for g in gold]
    lines[3] = "NOT-A-TAG"
    (d / "gold_unknown.txt").write_text("\n".join(lines) + "\n")
    idx = [str(g) for g in gold]
    idx[9] = "seven"
    (d / "gold_word.txt").write_text("\n".join(idx) + "\n")
    (d / "counts_bad.json").write_text('{"0": 5,')
    (d / "gold_unknown.conllu").write_text("".join(
        f"1\tw\tw\t{t}\t_\t_\t0\troot\t_\t_\n\n" for t in lines))
    (d / "gold.conll").write_text("".join(f"w {t}\n" for t in lines[4:]))
    (d / "counts_unknown.json").write_text(json.dumps({"T0/X": 5, "NOPE": 2}))
    (d / "counts_negative.json").write_text(json.dumps({"0": 5, "1": -2}))
    (d / "scores.csv").write_text("0.5,0.5\n")
    np.savez(d / "two.npz", a=s, b=s)
    (d / "corrupt.npy").write_bytes(b"\x93NUMPY\x01\x00garbage")
    (d / "corrupt.npz").write_bytes(b"PK\x03\x04garbage")
    np.savez(d / "foreign.npz", x=np.arange(3))
    np.savez(d / "really_npz.npz", s=s)
    os.replace(d / "really_npz.npz", d / "really_npz.npy")
    np.savez(d / "empty.npz")
    with open(d / "huge_shape.npy", "wb") as f:   # declares 4 TB, holds nothing
        np.lib.format.write_array_header_1_0(
            f, {"descr": "<f4", "fortran_order": False, "shape": (10 ** 6, 10 ** 6)})
    (d / "scores_dir.npy").mkdir()
    (d / "index_dup.json").write_text(json.dumps({"T0/X": 0, "T1/X": 0}))
    (d / "counts_null.json").write_text("null")
    (d / "counts_deep.json").write_text("[" * 100000 + "]" * 100000)
    (d / "counts_nan.json").write_text('{"0": NaN}')
    (d / "counts_twice.json").write_text('{"0": 5, "0": 7}')
    (d / "counts_bool.json").write_text('{"0": 5, "1": true}')
    (d / "counts_float.json").write_text('{"0": 5, "1": 2.5}')
    (d / "counts_huge.json").write_text('{"0": 5, "1": 100000000000000000000}')
    (d / "crfsuite.json").write_text(json.dumps([[{"A": 0.9, "B": 0.1}, {"A": 0.2, "B": 0.8}]]))
    (d / "crfsuite_gold_long.json").write_text(json.dumps([["A", "B", "A"]]))
    return SimpleNamespace(p=lambda name: str(d / name), dir=d)


def _evaluate(data, scores=None, gold=None, extra=()):
    """``evaluate`` argv on the good test files, with one of them swapped."""
    return ["evaluate", "--scores", scores or data.p("test.npy"),
            "--gold", gold or data.p("test_gold.npy"), *extra]


ERROR_CASES = {
    # name: (argv builder, file named, problem)
    "missing scores": (lambda d, b: _evaluate(d, scores=b("missing.npy")),
                       "missing.npy", "does not exist"),
    "1-D scores": (lambda d, b: _evaluate(d, scores=b("vector.npy")),
                   "vector.npy", "2-D"),
    "int scores": (lambda d, b: _evaluate(d, scores=b("ints.npy")),
                   "ints.npy", "float32 or float64, got int32"),
    "NaN in scores": (lambda d, b: _evaluate(d, scores=b("nan.npy")),
                      "nan.npy", "scores[7, 3]"),
    "score above 1": (lambda d, b: _evaluate(d, scores=b("big.npy")),
                      "big.npy", "outside [0, 1]"),
    "gold out of range": (lambda d, b: _evaluate(d, gold=b("gold_oob.npy")),
                          "gold_oob.npy", "999"),
    "gold length mismatch": (lambda d, b: _evaluate(d, gold=b("gold_short.npy")),
                             "gold_short.npy", "1495 tokens"),
    "float gold": (lambda d, b: _evaluate(d, gold=b("gold_float.npy")),
                   "gold_float.npy", "integer"),
    "unknown tag in txt gold": (
        lambda d, b: _evaluate(d, gold=b("gold_unknown.txt"),
                               extra=["--tag-index", d.p("tag_index.json")]),
        "gold_unknown.txt", "line 4: unknown tag 'NOT-A-TAG'"),
    "non-integer txt gold": (lambda d, b: _evaluate(d, gold=b("gold_word.txt")),
                             "gold_word.txt", "line 10: 'seven' is not a tag index"),
    "unknown tag in CoNLL-U gold": (
        lambda d, b: _evaluate(d, gold=b("gold_unknown.conllu"),
                               extra=["--tag-index", d.p("tag_index.json")]),
        "gold_unknown.conllu", "line 7: unknown tag 'NOT-A-TAG'"),
    "CoNLL-U gold without a tag index": (
        lambda d, b: _evaluate(d, gold=b("gold_unknown.conllu")),
        "gold_unknown.conllu", "holds tag strings: pass a tag index"),
    "CoNLL gold column out of range": (
        lambda d, b: _evaluate(d, gold=b("gold.conll"), extra=[
            "--tag-index", d.p("tag_index.json"), "--gold-column", "5"]),
        "gold.conll", "column 5 is out of range"),
    "CoNLL gold column not a number": (
        lambda d, b: _evaluate(d, gold=b("gold.conll"), extra=[
            "--tag-index", d.p("tag_index.json"), "--gold-column", "upos"]),
        "gold.conll", "the column of a CoNLL file is a number, got 'upos'"),
    "missing gold": (lambda d, b: _evaluate(d, gold=b("missing.txt")),
                     "missing.txt", "does not exist"),
    "bad JSON counts": (
        lambda d, b: _evaluate(d, extra=["--train-counts", b("counts_bad.json")]),
        "counts_bad.json", "not valid JSON"),
    "counts with an unknown tag": (
        lambda d, b: _evaluate(d, extra=["--train-counts", b("counts_unknown.json"),
                                         "--tag-index", d.p("tag_index.json")]),
        "counts_unknown.json", "unknown tag 'NOPE'"),
    "negative counts": (
        lambda d, b: _evaluate(d, extra=["--train-counts", b("counts_negative.json")]),
        "counts_negative.json", "non-negative"),
    "missing counts": (
        lambda d, b: _evaluate(d, extra=["--train-counts", b("nope.json")]),
        "nope.json", "does not exist"),
    "unknown score extension": (lambda d, b: _evaluate(d, scores=b("scores.csv")),
                                "scores.csv", "unknown score file type '.csv'"),
    "npz with several arrays": (lambda d, b: _evaluate(d, scores=b("two.npz")),
                                "two.npz", "['a', 'b']"),
    "corrupt npy": (lambda d, b: _evaluate(d, scores=b("corrupt.npy")),
                    "corrupt.npy", "cannot read scores"),
    "corrupt npz": (lambda d, b: _evaluate(d, scores=b("corrupt.npz")),
                    "corrupt.npz", "cannot read scores"),
    "foreign entries": (lambda d, b: ["evaluate", "--entries", b("foreign.npz")],
                        "foreign.npz", "not a sparsecal entries file"),
    "npy as entries": (lambda d, b: ["evaluate", "--entries", d.p("test.npy")],
                       "test.npy", "cannot read entries"),
    "missing calibrator": (lambda d, b: ["apply", b("no-calibrator"), "--scores",
                                         d.p("test.npy"), "-o", b("out.npy")],
                           "no-calibrator", "not a saved calibrator"),
    "npz named npy": (lambda d, b: _evaluate(d, scores=b("really_npz.npy")),
                      "really_npz.npy", "is an .npz archive, not an .npy array"),
    "empty npz": (lambda d, b: _evaluate(d, scores=b("empty.npz")),
                  "empty.npz", "holds no arrays"),
    "shape beyond the file": (lambda d, b: _evaluate(d, scores=b("huge_shape.npy")),
                              "huge_shape.npy", "declares shape (1000000, 1000000)"),
    "directory as scores": (lambda d, b: _evaluate(d, scores=b("scores_dir.npy")),
                            "scores_dir.npy", "is a directory, not a file"),
    "tag index with a column twice": (
        lambda d, b: _evaluate(d, gold=d.p("test_gold_tags.txt"),
                               extra=["--tag-index", b("index_dup.json")]),
        "index_dup.json", "tags 'T0/X' and 'T1/X' share column 0"),
    "null counts": (lambda d, b: _evaluate(d, extra=["--train-counts", b("counts_null.json")]),
                    "counts_null.json", "must hold a JSON object, got null"),
    "deeply nested counts": (
        lambda d, b: _evaluate(d, extra=["--train-counts", b("counts_deep.json")]),
        "counts_deep.json", "nested too deeply"),
    "NaN count": (lambda d, b: _evaluate(d, extra=["--train-counts", b("counts_nan.json")]),
                  "counts_nan.json", "non-standard constant NaN"),
    "a count twice": (
        lambda d, b: _evaluate(d, extra=["--train-counts", b("counts_twice.json")]),
        "counts_twice.json", "the key '0' appears twice"),
    "boolean count": (
        lambda d, b: _evaluate(d, extra=["--train-counts", b("counts_bool.json")]),
        "counts_bool.json", "count of tag '1' must be a non-negative integer"),
    "fractional count": (
        lambda d, b: _evaluate(d, extra=["--train-counts", b("counts_float.json")]),
        "counts_float.json", "got 2.5"),
    "count beyond 2**53": (
        lambda d, b: _evaluate(d, extra=["--train-counts", b("counts_huge.json")]),
        "counts_huge.json", "at most 2**53"),
    "threshold NaN": (lambda d, b: _evaluate(d, extra=["--threshold", "nan"]),
                      "--threshold", "nan"),
    "threshold above 1": (lambda d, b: _evaluate(d, extra=["--threshold", "2"]),
                          "--threshold", "2"),
    "confidence level 1.5": (
        lambda d, b: _evaluate(d, extra=["--ci", "--confidence-level", "1.5"]),
        "--confidence-level", "1.5"),
    "zero resamples": (lambda d, b: _evaluate(d, extra=["--ci", "--n-resamples", "0"]),
                       "--n-resamples", "0"),
    "zero groups": (lambda d, b: _evaluate(d, extra=["--train-counts", d.p("counts.json"),
                                                     "--groups", "0"]),
                    "--groups", "positive"),
    "zero bins": (lambda d, b: _evaluate(d, extra=["--bins", "0"]), "--bins",
                  "must be a positive integer, got 0"),
    "zero threads": (lambda d, b: _evaluate(d, extra=["--n-threads", "0"]),
                     "--n-threads", "must be a positive integer, got 0"),
    "tfg fit without counts": (lambda d, b: ["fit", "--scores", d.p("dev.npy"), "--gold",
                                             d.p("dev_gold.npy"), "-o", b("cal")],
                               "--grouping tfg", "--train-counts"),
    "groups: names without index": (lambda d, b: ["groups", "--train-counts",
                                                   d.p("counts_named.json")],
                                    "counts_named.json", "pass --tag-index"),
    "crfsuite gold of another length": (
        lambda d, b: _evaluate(d, scores=b("crfsuite.json"), gold=b("crfsuite_gold_long.json"),
                               extra=["--scores-format", "crfsuite"]),
        "crfsuite_gold_long.json", "sentence 0 has 2 tokens in marginals but 3 gold labels"),
    # the evaluation, prior, selection and ensemble flags (issue 13): each names its flag
    "--bins with --bin-size": (lambda d, b: _evaluate(d, extra=["--bins", "5", "--bin-size",
                                                                "100"]),
                               "--bin-size", "give exactly one of --bins and --bin-size"),
    "--bin-size with fixed bins": (
        lambda d, b: _evaluate(d, extra=["--bin-size", "100", "--binning", "fixed"]),
        "--bin-size", "--bin-size applies to equal-mass binning only"),
    "zero bin size": (lambda d, b: _evaluate(d, extra=["--bin-size", "0"]),
                      "--bin-size", "must be a positive integer, got 0"),
    "--debias with --norm 1": (lambda d, b: _evaluate(d, extra=["--debias", "--norm", "1"]),
                               "--debias", "needs --norm 2, got --norm 1"),
    "--debias with --ci simulation": (lambda d, b: _evaluate(d, extra=["--debias", "--ci"]),
                                      "--debias", "takes --ci score"),
    "--ci score without --debias": (lambda d, b: _evaluate(d, extra=["--ci", "score"]),
                                    "--ci score", "add --debias"),
    "--level 1.5": (lambda d, b: _evaluate(d, extra=["--ci", "--level", "1.5"]),
                    "--level", "1.5"),
    "--metrics dcf without --prior": (lambda d, b: _evaluate(d, extra=["--metrics", "dcf"]),
                                      "--prior", "--metrics dcf needs --prior"),
    "--prior without a measure": (lambda d, b: _evaluate(d, extra=["--prior", "0.3"]),
                                  "--prior", "applies to --metrics dcf, min-dcf"),
    "--prior above 1": (lambda d, b: _evaluate(d, extra=["--metrics", "min-dcf",
                                                         "--prior", "1.5"]),
                        "--prior", "1.5"),
    "fit --prior of a method without one": (
        lambda d, b: _fit(d, b, "--grouping", "scw", "--prior", "0.3"),
        "--prior", "not to isotonic"),
    "fit --bins of a method without bins": (
        lambda d, b: _fit(d, b, "--grouping", "scw", "--bins", "20"),
        "--bins", "not to isotonic"),
    "fit --ensemble 1": (lambda d, b: _fit(d, b, "--grouping", "scw", "--ensemble", "1"),
                         "--ensemble", "at least 2 folds, got 1"),
    "fit --select with --method": (lambda d, b: _fit(d, b, "--select", "--method", "platt"),
                                   "--method", "does not apply with --select"),
    "fit --methods without --select": (lambda d, b: _fit(d, b, "--methods", "platt"),
                                       "--methods", "applies to fit --select only"),
    "fit --select of groups without counts": (
        lambda d, b: _fit(d, b, "--select", "--groups-grid", "1", "3"),
        "--groups-grid", "needs --train-counts"),
    "compare --prior of methods without one": (
        lambda d, b: _compare(d, "--methods", "isotonic", "platt", "--prior", "0.2"),
        "--prior", "not to isotonic, platt"),
    "report --prior without dev outputs or DCF": (
        lambda d, b: ["report", "--scores", d.p("test.npy"), "--gold", d.p("test_gold.npy"),
                      "--prior", "0.3", "-o", b("rep")],
        "--prior", "applies to --metrics dcf, min-dcf and to the methods prior-logistic, "
                   "gaussian (with dev outputs)"),
    "compare --bins with --bin-size": (
        lambda d, b: _compare(d, "--bins", "5", "--bin-size", "50"),
        "--bin-size", "give exactly one of --bins and --bin-size"),
}


def _fit(data, bad, *extra):
    """``fit`` argv on the good dev files, writing into the bad directory."""
    return ["fit", "--scores", data.p("dev.npy"), "--gold", data.p("dev_gold.npy"),
            "-o", bad("cal"), *extra]


def _compare(data, *extra):
    return ["compare", "--scores", data.p("test.npy"), "--gold", data.p("test_gold.npy"),
            "--dev-scores", data.p("dev.npy"), "--dev-gold", data.p("dev_gold.npy"), *extra]


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_error_exits_2_naming_the_file_and_problem(data, bad, capsys, case):
    build, named, problem = ERROR_CASES[case]
    before = _tree_digest(data.dir, bad.dir)
    rc, out, err = run(capsys, *build(data, bad.p))
    assert _tree_digest(data.dir, bad.dir) == before   # inputs unchanged, nothing written
    assert rc == 2, (out, err)
    assert err.splitlines()[-1].startswith(f"sparsecal {build(data, bad.p)[0]}: error: ")
    assert named in err, err
    assert problem in err, err
    assert "Traceback" not in err
    assert err.count("\n") <= 2, err   # one message (after a finished progress bar)


def _tree_digest(*roots):
    """{path: (size, sha256)} of every file under ``roots``."""
    import hashlib
    return {str(p): (p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest())
            for root in roots for p in sorted(Path(root).rglob("*")) if p.is_file()}


def test_debug_shows_the_traceback(data, bad, capsys):
    argv = _evaluate(data, scores=bad.p("empty.npz"))
    with pytest.raises(ValueError, match="holds no arrays"):
        main([*argv, "--debug"])


def test_pt_scores_errors(data, capsys, tmp_path):
    torch = pytest.importorskip("torch")
    (tmp_path / "corrupt.pt").write_bytes(b"not a torch file")
    torch.save({"a": torch.zeros(2)}, tmp_path / "dict.pt")
    for name, problem in [("corrupt.pt", "cannot read scores"),
                          ("dict.pt", "does not hold a tensor")]:
        rc, out, err = run(capsys, "evaluate", "--scores", tmp_path / name, "--gold",
                           data.p("test_gold.npy"))
        assert rc == 2
        assert name in err and problem in err and "Traceback" not in err


@pytest.mark.parametrize("argv, problem", [
    (["fit", "--method", "bogus", "-o", "x"], "invalid choice: 'bogus'"),
    (["evaluate", "--scores", "s.npy", "--metrics", "ece", "nope"],
     "argument --metrics: invalid choice: 'nope'"),
    ([], "required: COMMAND"),
    (["evaluate", "--bins", "ten"], "invalid int value: 'ten'"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["apply", "--scores", "s.npy", "-o", "o.npy"], "required: calibrator"),
])
def test_usage_errors_exit_2(capsys, argv, problem):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "usage: sparsecal" in err and problem in err


# --------------------------------------------------- as real processes -- #

def console_script():
    exe = Path(sys.executable).parent / "sparsecal"
    if not exe.is_file():
        pytest.skip(f"console script not installed next to {sys.executable}")
    return str(exe)


def test_process_missing_scores_file(data, tmp_path):
    proc = run_process("evaluate", "--scores", tmp_path / "absent.npy", "--gold",
                       data.p("test_gold.npy"))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (f"sparsecal evaluate: error: scores file "
                           f"'{tmp_path / 'absent.npy'}' does not exist\n")


def test_process_no_subcommand_exits_2():
    proc = run_process(exe=console_script())
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("usage: sparsecal")
    assert "required: COMMAND" in proc.stderr and "Traceback" not in proc.stderr


def test_process_console_script_evaluates_like_main(data, capsys):
    argv = ["evaluate", "--scores", data.p("test.npy"), "--gold", data.p("test_gold.npy"),
            "--train-counts", data.p("counts.json"), "--ci"]
    proc = run_process(*argv, exe=console_script())
    assert proc.returncode == 0, proc.stderr
    rc, out, err = run(capsys, *argv)
    assert rc == 0
    assert proc.stdout == out
    assert proc.stderr == ""   # progress is drawn on a terminal only


# ------------------------------------------------------------- vocabulary -- #

def test_every_verb_reading_scores_uses_the_same_input_flags():
    """One vocabulary (issue 10): every verb that reads a score matrix takes
    --scores/--key (and --gold/--entries where it needs labels); dev data is the
    same flags with a --dev- prefix."""
    from sparsecal.cli.main import build_parser
    subparsers = next(a for a in build_parser()._actions if a.dest == "command").choices
    flags = {verb: {s for a in p._actions for s in a.option_strings}
             for verb, p in subparsers.items()}
    for verb in ("evaluate", "fit", "compare", "report"):
        assert {"--scores", "--key", "--gold", "--entries", "--n-threads"} <= flags[verb], verb
    for verb in ("compare", "report"):
        assert {"--dev-scores", "--dev-key", "--dev-gold", "--dev-entries"} <= flags[verb]
        assert not {"--test", "--test-gold", "--dev"} & flags[verb]
    assert {"--scores", "--key"} <= flags["apply"]
    for verb in ("evaluate", "report"):   # compare's table shows no intervals
        assert {"--ci", "--confidence-level", "--n-resamples", "--seed"} <= flags[verb], verb


def test_key_names_the_array_of_a_multi_array_npz(data, capsys, tmp_path):
    both = tmp_path / "both.npz"
    np.savez(both, logits=np.zeros((3, N_TAGS), np.float32), probs=data.test.scores)
    rc, out, err = run(capsys, "evaluate", "--scores", both, "--gold",
                       data.p("test_gold.npy"), "--json", tmp_path / "k.json")
    assert rc == 2 and "name one with --key" in err and "both.npz" in err
    rc, out, err = run(capsys, "evaluate", "--scores", both, "--key", "probs", "--gold",
                       data.p("test_gold.npy"), "--json", tmp_path / "k.json")
    assert rc == 0, err
    rc2, out2, _ = run(capsys, "evaluate", "--scores", data.p("test.npy"), "--gold",
                       data.p("test_gold.npy"))
    assert out.split("\nwrote")[0] == out2
    rc, out, err = run(capsys, "evaluate", "--scores", both, "--key", "nope", "--gold",
                       data.p("test_gold.npy"))
    assert rc == 2 and "no array 'nope'" in err


def test_dev_key_and_n_threads_reach_compare(data, capsys, tmp_path):
    dev = tmp_path / "dev.npz"
    np.savez(dev, probs=data.dev.scores, other=data.dev.scores[:5])
    rc, out, err = run(capsys, "compare", "--dev-scores", dev, "--dev-key", "probs",
                       "--dev-gold", data.p("dev_gold.npy"), "--scores", data.p("test.npy"),
                       "--gold", data.p("test_gold.npy"), "--methods", "isotonic",
                       "--n-threads", 2)
    assert rc == 0, err
    result = compare_methods(data.dev_entries, data.test_entries, TagGroups.scw(N_TAGS),
                             methods=["isotonic"])
    assert result.to_markdown() in out
    rc, out, err = run(capsys, "evaluate", "--scores", data.p("test.npy"), "--gold",
                       data.p("test_gold.npy"), "--n-threads", 0)
    assert rc == 2 and "error: --n-threads must be a positive integer, got 0" in err
    assert "test.npy" not in err   # not blamed on the scores file


@pytest.mark.parametrize("value", ["abc", "0", "-2", "1.5"])
def test_bad_thread_variable_named(data, capsys, monkeypatch, value):
    monkeypatch.setenv("SPARSECAL_NUM_THREADS", value)
    rc, out, err = run(capsys, "evaluate", "--scores", data.p("test.npy"), "--gold",
                       data.p("test_gold.npy"))
    assert rc == 2 and "SPARSECAL_NUM_THREADS must be a positive integer, got" in err
    assert "test.npy" not in err



def test_crfsuite_marginals_evaluate_as_their_dense_matrix(data, capsys, tmp_path):
    """--scores-format crfsuite: sklearn-crfsuite's predict_marginals JSON and gold
    label lists give the numbers of the same scores as a dense .npy."""
    scores, gold = data.test.scores[:300].astype(np.float64), data.test.gold[:300]
    names = [f"T{i}/X" for i in range(N_TAGS)]
    cols = np.flatnonzero(scores.max(0) > 0)          # the tags this "model" knows
    sentences = [range(i, min(i + 7, 300)) for i in range(0, 300, 7)]
    marginals = [[{names[c]: float(scores[t, c]) for c in cols} for t in s] for s in sentences]
    y = [[names[gold[t]] for t in s] for s in sentences]
    (tmp_path / "m.json").write_text(json.dumps(marginals))
    (tmp_path / "y.json").write_text(json.dumps(y))
    np.save(tmp_path / "s.npy", scores)
    np.save(tmp_path / "g.npy", gold)
    rc, _, err = run(capsys, "evaluate", "--scores", tmp_path / "m.json", "--gold",
                     tmp_path / "y.json", "--scores-format", "crfsuite", "--tag-index",
                     data.p("tag_index.json"), "--json", tmp_path / "a.json", "--quiet")
    assert rc == 0, err
    rc, _, err = run(capsys, "evaluate", "--scores", tmp_path / "s.npy", "--gold",
                     tmp_path / "g.npy", "--json", tmp_path / "b.json", "--quiet")
    assert rc == 0, err
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("a.json", "b.json"))
    assert a == b
