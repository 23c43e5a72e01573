"""Progress of long steps (issue 12, item 5): the library's ``progress=`` hooks
(``sparsecal/core/progress.py``) and the command's progress lines on stderr
(``sparsecal/cli/_progress.py``): drawn on a terminal only, never on a pipe or
with ``--quiet``, and finished at 100%; and the evaluate verb's lean imports.
Timings are in ``benchmarks/bench_cli.py``."""
import io
import json
import os
import pty
import re
import select
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import sparsecal as sc
from sparsecal.cli import main
from sparsecal.cli._progress import ProgressLine
from sparsecal.cli.main import build_parser
from sparsecal.datasets.synthetic import make_tagger_outputs
from sparsecal.metrics import gmce
from sparsecal.plotting.report import write_report

ROOT = Path(__file__).resolve().parents[1]
N_TAGS = 60
HEAVY = ("scipy.optimize", "matplotlib", "torch", "sklearn")


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self):
        return True


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("progress-data")
    dev = make_tagger_outputs(1500, n_tags=N_TAGS, split_seed=1)
    test = make_tagger_outputs(1200, n_tags=N_TAGS, split_seed=2)
    for name, split in (("dev", dev), ("test", test)):
        np.save(d / f"{name}.npy", split.scores)
        np.save(d / f"{name}_gold.npy", split.gold)
    (d / "counts.json").write_text(json.dumps({str(k): v for k, v in
                                               dev.train_counts.items()}))
    dev_entries = sc.threshold(dev.scores, dev.gold)
    test_entries = sc.threshold(test.scores, test.gold)
    groups = sc.TagGroups.from_counts(dev.train_counts, 4, n_tags=N_TAGS)
    return dev, test, dev_entries, test_entries, groups, d


def recorder():
    calls = []
    return calls, lambda done, total: calls.append((done, total))


def assert_counts_up(calls, total):
    """``done`` never decreases and ends at ``total``, which never changes."""
    assert calls, "progress was never called"
    assert {t for _, t in calls} == {total}
    done = [d for d, _ in calls]
    assert done == sorted(done) and 0 <= done[0] and done[-1] == total


# ------------------------------------------------------------ the library -- #

def test_evaluate_reports_each_calibration_error_and_gives_the_same_result(data):
    _, _, _, test, groups, _ = data
    calls, progress = recorder()
    kw = dict(ci="simulation", per_tag=True, min_entries=20, top_label=True)
    with_progress = sc.evaluate(test, groups, progress=progress, **kw)
    assert_counts_up(calls, 1 + groups.n_groups + 2)
    assert with_progress.to_dict() == sc.evaluate(test, groups, **kw).to_dict()


def test_gmce_reports_each_group(data):
    _, _, _, test, groups, _ = data
    calls, progress = recorder()
    values = [c.value for c in gmce(test, groups, progress=progress)]
    assert_counts_up(calls, groups.n_groups)
    assert values == [c.value for c in gmce(test, groups)]


@pytest.mark.parametrize("per_tag", [False, True])
def test_fit_reports_each_group_and_fallback_group(data, per_tag):
    _, _, dev, _, groups, _ = data
    calls, progress = recorder()

    def model():
        if per_tag:   # tags with < 50 dev entries use their TFG group's calibrator
            return sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.per_tag(N_TAGS),
                                        fallback=groups, min_entries=50)
        return sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups)

    with warnings.catch_warnings():   # (whether some tags are left unchanged)
        warnings.simplefilter("ignore")
        fitted = model().fit(dev, progress=progress)
        plain = model().fit(dev)
    assert_counts_up(calls, N_TAGS + groups.n_groups if per_tag else groups.n_groups)
    meta, arrays = fitted.get_state()
    plain_meta, plain_arrays = plain.get_state()
    assert meta == plain_meta
    assert arrays.keys() == plain_arrays.keys()
    for key in arrays:
        np.testing.assert_array_equal(arrays[key], plain_arrays[key])


def test_fit_counts_an_unused_fallback_as_done(data):
    _, _, dev, _, groups, _ = data
    calls, progress = recorder()
    sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups, fallback=sc.TagGroups.scw(N_TAGS)
                         ).fit(dev, progress=progress)
    assert_counts_up(calls, groups.n_groups + 1)


def test_compare_methods_reports_each_fit_and_gives_the_same_result(data):
    _, _, dev, test, groups, _ = data
    calls, progress = recorder()
    methods = ["isotonic", "histogram"]
    result = sc.compare_methods(dev, test, groups, methods=methods, progress=progress)
    assert_counts_up(calls, 1 + 2 * len(methods))
    assert result.to_dict() == sc.compare_methods(dev, test, groups, methods=methods).to_dict()


def test_write_report_reports_steps_and_figures(data, tmp_path):
    _, _, dev, test, groups, _ = data
    calls, progress = recorder()
    kw = dict(dev=dev, methods=["isotonic"], ci="simulation")
    write_report(tmp_path / "a", test, groups, progress=progress, **kw)
    write_report(tmp_path / "b", test, groups, **kw)
    figures = len(list((tmp_path / "a" / "figures").glob("*.png")))
    # the evaluation, compare_methods' 1 + 2 fits, the evaluation after, figures;
    # with per-tag CE, the calibration tests of the tags before and after
    tag_tests = 2 * (tmp_path / "a" / "figures" / "per_tag.png").exists()
    assert_counts_up(calls, 1 + 3 + 1 + figures + tag_tests)
    assert (tmp_path / "a" / "numbers.json").read_text() == \
        (tmp_path / "b" / "numbers.json").read_text()


def test_transform_dense_reports_rows(data):
    _, test, dev, _, groups, _ = data
    model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups).fit(dev)
    calls, progress = recorder()
    out = model.transform_dense(test.scores, chunk_rows=500, progress=progress)
    assert_counts_up(calls, test.scores.shape[0])
    np.testing.assert_array_equal(out, model.transform_dense(test.scores))


def test_a_progress_that_is_not_callable_is_refused_before_any_work(data, tmp_path):
    dev_split, _, dev, test, groups, _ = data
    model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups)
    calls = [lambda: sc.threshold(dev_split.scores, dev_split.gold, progress=1),
             lambda: sc.evaluate(test, groups, progress=1),
             lambda: gmce(test, groups, progress=1),
             lambda: model.fit(dev, progress=1),
             lambda: sc.compare_methods(dev, test, groups, progress=1),
             lambda: write_report(tmp_path / "r", test, groups, progress=1)]
    for call in calls:
        with pytest.raises(TypeError, match="progress must be None or a callable"):
            call()
    assert not (tmp_path / "r").exists()


# ------------------------------------------------------ the progress line -- #

def _drawn(stream, text):
    """Wait (up to 30 s, a safety net) until the line's thread has drawn ``text``."""
    deadline = time.monotonic() + 30
    while text not in stream.getvalue():
        assert time.monotonic() < deadline, stream.getvalue()
        time.sleep(0.01)


@pytest.fixture
def terminal(monkeypatch):
    """Call it to put stderr on a terminal (in the test: pytest sets stderr for
    each phase); lines appear at once and redraw every 0.01 s."""
    def attach():
        stream = Terminal()
        monkeypatch.setattr(sys, "stderr", stream)
        return stream

    monkeypatch.setattr(ProgressLine, "delay", 0.0)
    monkeypatch.setattr(ProgressLine, "interval", 0.01)
    return attach


def test_line_draws_a_bar_up_to_100_percent_and_ends_it(terminal):
    terminal = terminal()
    with ProgressLine("sorting") as progress:
        progress(5, 10)
        _drawn(terminal, " 50.0%")
        progress(10, 10)
    text = terminal.getvalue()
    assert text.startswith("\rsorting") and text.endswith("\n")
    last = text.rstrip("\n").split("\r")[-1]
    assert last.startswith("sorting") and "[" + "#" * 30 + "] 100.0%" in last
    assert text.count("\n") == 1


def test_line_without_a_fraction_is_a_spinner_with_the_elapsed_time(terminal):
    terminal = terminal()
    with ProgressLine("reading"):
        _drawn(terminal, " s")
    last = terminal.getvalue().rstrip("\n").split("\r")[-1]
    assert last.startswith("reading") and " done " in last and "%" not in last


def test_line_after_an_error_shows_how_far_it_came(terminal):
    terminal = terminal()
    with pytest.raises(KeyboardInterrupt):
        with ProgressLine("fitting") as progress:
            progress(1, 4)
            raise KeyboardInterrupt
    assert " 25.0%" in terminal.getvalue() and terminal.getvalue().endswith("\n")


def test_fast_steps_print_nothing(terminal, monkeypatch):
    terminal = terminal()
    monkeypatch.setattr(ProgressLine, "delay", 60.0)
    with ProgressLine("evaluating") as progress:
        progress(1, 1)
    assert terminal.getvalue() == ""


@pytest.mark.parametrize("stream,enabled", [(io.StringIO(), True), (Terminal(), False)],
                         ids=["pipe", "quiet"])
def test_nothing_is_drawn_on_a_pipe_or_when_disabled(stream, enabled, monkeypatch):
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(ProgressLine, "delay", 0.0)
    with ProgressLine("thresholding", enabled=enabled) as progress:
        assert progress is None
    assert stream.getvalue() == ""


def test_text_written_during_a_step_goes_above_the_line(terminal):
    terminal = terminal()
    with ProgressLine("fitting") as line:
        line(1, 2)
        _drawn(terminal, " 50.0%")
        line.write("a warning")
        line(2, 2)
    text = terminal.getvalue()
    blank = re.search("\r( +)\ra warning\n", text)   # the line drawn before, blanked
    assert blank and len(blank.group(1)) == len(text.split("\ra warning")[0].split("\r")[-2])
    assert text.endswith("\n")
    assert text.rstrip("\n").split("\r")[-1].startswith("fitting")


# ---------------------------------------------------------- the command -- #

def _files(data):
    d = data[-1]
    return {"scores": d / "test.npy", "gold": d / "test_gold.npy",
            "dev-scores": d / "dev.npy", "dev-gold": d / "dev_gold.npy",
            "train-counts": d / "counts.json"}


def _flags(data, *names):
    files = _files(data)
    return [x for name in names for x in (f"--{name}", str(files[name]))]


def _lines(text):
    """The last drawing of each progress line."""
    return [line.split("\r")[-1] for line in text.split("\n") if line]


def _label(line):
    return line[:16].rstrip()   # labels are padded to 16 characters


@pytest.mark.parametrize("verb,steps", [
    ("evaluate", ["reading", "thresholding", "evaluating"]),
    ("compare", ["reading dev", "thresholding dev", "reading", "thresholding",
                 "comparing"]),
    ("fit", ["reading", "thresholding", "fitting"]),
])
def test_every_step_of_a_verb_finishes_its_line_on_a_terminal(data, terminal, capsys,
                                                              tmp_path, verb, steps):
    terminal = terminal()
    argv = [verb] + _flags(data, "scores", "gold", "train-counts")
    if verb == "compare":
        argv += _flags(data, "dev-scores", "dev-gold") + ["--methods", "isotonic"]
    if verb == "fit":
        argv += ["-o", str(tmp_path / "model")]
    assert main(argv) == 0, terminal.getvalue()
    lines = _lines(terminal.getvalue())
    assert [_label(line) for line in lines] == steps
    for line in lines:
        assert "100.0%" in line or " done " in line, line
    assert "\r" not in capsys.readouterr().out   # stdout: the table only


def test_apply_and_report_finish_their_lines_on_a_terminal(data, terminal, tmp_path):
    terminal = terminal()
    model = str(tmp_path / "model")
    assert main(["fit", "-q", "-o", model] + _flags(data, "scores", "gold", "train-counts")
                ) == 0
    assert main(["apply", model, "--scores", str(_files(data)["scores"]), "-o",
                 str(tmp_path / "calibrated.npy")]) == 0
    assert main(["report", "-o", str(tmp_path / "report"), "--methods", "isotonic"]
                + _flags(data, "scores", "gold", "train-counts", "dev-scores", "dev-gold")
                ) == 0
    lines = _lines(terminal.getvalue())
    assert [_label(line) for line in lines] == [
        "reading", "calibrating",   # apply
        "reading", "thresholding", "reading dev", "thresholding dev", "report"]
    for line in lines:
        assert "100.0%" in line or " done " in line, line


def test_demo_finishes_every_line_on_a_terminal(terminal, tmp_path):
    terminal = terminal()
    assert main(["demo", "--tokens", "1500", "-o", "", "-q"]) == 0
    assert terminal.getvalue() == ""
    assert main(["demo", "--tokens", "1500", "-o", ""]) == 0
    lines = _lines(terminal.getvalue())
    assert [_label(line) for line in lines] == [
        "generating", "thresholding dev", "thresholding", "evaluating", "comparing"]


_RUN = ("import sys\nfrom sparsecal.cli._progress import ProgressLine\n"
        "ProgressLine.delay = 0.0\nfrom sparsecal.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n")


def _child_env():
    """This checkout (if it holds the package) first on a new process's path."""
    path = os.pathsep.join([str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    return dict(os.environ, PYTHONPATH=path)


def _on_a_terminal(*argv):
    """Run the command with stderr on a pseudo-terminal: (exit code, stdout,
    what the terminal received)."""
    master, slave = pty.openpty()
    with subprocess.Popen([sys.executable, "-c", _RUN, *argv], stdout=subprocess.PIPE,
                          stderr=slave, env=_child_env(), cwd=ROOT) as proc:
        os.close(slave)
        received = b""
        while select.select([master], [], [], 60)[0]:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:   # EIO: the command closed the terminal
                break
            if not chunk:
                break
            received += chunk
        out = proc.communicate(timeout=60)[0].decode()
    os.close(master)
    return proc.returncode, out, received.decode().replace("\r\n", "\n")


def test_a_real_terminal_gets_the_lines_a_pipe_and_quiet_get_nothing(data):
    argv = ["evaluate"] + _flags(data, "scores", "gold", "train-counts")
    rc, out, received = _on_a_terminal(*argv)
    assert rc == 0, received
    assert "**SMCE**" in out and "\r" not in out
    lines = _lines(received)
    assert [_label(line) for line in lines] == ["reading", "thresholding", "evaluating"]
    assert all("100.0%" in line for line in lines[1:]) and received.endswith("\n")
    piped = subprocess.run([sys.executable, "-c", _RUN, *argv], capture_output=True,
                           text=True, cwd=ROOT, env=_child_env())
    assert piped.returncode == 0 and piped.stderr == "" and piped.stdout == out
    rc, out, received = _on_a_terminal(*argv, "-q")
    assert rc == 0 and out == "" and received == ""


# ------------------------------------------------------- the command's cost -- #

def test_evaluate_imports_no_optimizer_plots_torch_sklearn_or_calibrator(data):
    """The evaluate verb's path, in the style of tests/test_import.py."""
    argv = ["evaluate", "--ci"] + _flags(data, "scores", "gold", "train-counts")
    unused = HEAVY + ("sparsecal.calibration",)
    code = ("import sys\nfrom sparsecal.cli import main\n"
            f"assert main({argv!r}) == 0\n"
            f"print(sorted(m for m in {unused!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, env=_child_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def _arguments(parser):
    return [(a.option_strings, a.dest, a.default, a.choices, a.required, a.nargs)
            for a in parser._actions]


def test_the_parser_of_one_verb_is_that_verb_of_the_whole_parser():
    """main builds only the verb it runs; the verb must not notice."""
    def verbs(parser):
        return next(a for a in parser._actions if a.dest == "command").choices

    whole = verbs(build_parser())
    assert list(whole) == ["evaluate", "fit", "apply", "compare", "report", "groups", "demo",
                           "events"]
    for name, parser in whole.items():
        alone = verbs(build_parser(name))
        assert list(alone) == [name]
        assert _arguments(alone[name]) == _arguments(parser), name
        assert alone[name].format_help() == parser.format_help()
