"""Outputs survive SIGKILL and full disks (docs/reliability.md, section 7).

``fit``, ``apply`` and ``report`` run as real processes over an output that
already exists and are killed with SIGKILL at seeded random moments of their
run; after every kill the output must be, byte for byte, the complete old one or
the complete new one. Under a small ``RLIMIT_FSIZE`` (a file-size limit: writes
fail with EFBIG, as on a full disk) the command must fail with one line naming
the output, leave the old output whole and no temporary behind.

``SPARSECAL_KILL_TRIALS`` (default 6 per command) sets the number of kills.
"""
import hashlib
import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sparsecal.datasets.synthetic import make_tagger_outputs

TRIALS = int(os.environ.get("SPARSECAL_KILL_TRIALS", "6"))
ROOT = Path(__file__).resolve().parents[1]

if sys.platform == "win32":   # pragma: no cover
    pytest.skip("SIGKILL and RLIMIT_FSIZE are POSIX", allow_module_level=True)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("kill-inputs")
    data = make_tagger_outputs(3000, n_tags=60, split_seed=1)
    np.save(d / "s.npy", data.scores)
    np.save(d / "g.npy", data.gold)
    (d / "c.json").write_text(json.dumps({str(k): v for k, v in data.train_counts.items()}))
    return d


def _digest(path):
    """{relative name: sha256} of a file or of every file under a directory."""
    path = Path(path)
    if path.is_file():
        return {"": hashlib.sha256(path.read_bytes()).hexdigest()}
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def _commands(d, out):
    """verb -> (argv writing the OLD output, argv writing a different NEW one)."""
    common = ["--scores", str(d / "s.npy"), "--gold", str(d / "g.npy"),
              "--train-counts", str(d / "c.json"), "-q"]
    fit = lambda method: ["fit", *common, "--method", method, "-o", str(out)]   # noqa: E731
    report = lambda title: ["report", *common, "--dev-scores", str(d / "s.npy"),   # noqa: E731
                            "--dev-gold", str(d / "g.npy"), "--methods", "isotonic",
                            "--n-resamples", "100", "--title", title, "-o", str(out)]
    return {"fit": (fit("histogram"), fit("isotonic")),
            "report": (report("old"), report("new"))}


def _run(argv, **kw):
    return subprocess.run([sys.executable, "-m", "sparsecal", *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, **kw)


def _kill_at(argv, delay):
    proc = subprocess.Popen([sys.executable, "-m", "sparsecal", *argv], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)


def _apply_commands(d, tmp_path):
    """apply of two different calibrators: (old argv, new argv)."""
    cals = []
    for method in ("histogram", "isotonic"):
        cal = tmp_path / f"cal-{method}"
        assert _run(_commands(d, cal)["fit"][method == "isotonic"]).returncode == 0
        cals.append(cal)
    out = tmp_path / "out" / "calibrated.npy"
    return [["apply", str(cal), "--scores", str(d / "s.npy"), "-o", str(out), "-q"]
            for cal in cals], out


def _old_and_new(verb, inputs, tmp_path):
    """(argv writing the old output, argv writing the new one, output path)."""
    if verb == "apply":
        (old_argv, new_argv), out = _apply_commands(inputs, tmp_path)
    else:
        out = tmp_path / "out" / verb
        old_argv, new_argv = _commands(inputs, out)[verb]
    out.parent.mkdir(exist_ok=True)
    return old_argv, new_argv, out


@pytest.mark.parametrize("verb", ["fit", "apply", "report"])
def test_sigkill_at_any_moment_leaves_the_old_or_the_new_output(inputs, tmp_path, verb):
    old_argv, new_argv, out = _old_and_new(verb, inputs, tmp_path)
    for argv in (new_argv, old_argv):   # the new output's digest, then the old in place
        start = time.monotonic()
        assert _run(argv).returncode == 0
        duration = time.monotonic() - start
        if argv is new_argv:
            new = _digest(out)
    old = _digest(out)
    assert old != new
    rng = random.Random(f"kill-{verb}")
    outcomes = set()
    for _ in range(TRIALS):
        _kill_at(new_argv, rng.uniform(0.0, duration))
        now = _digest(out)
        assert now in (old, new), f"{verb}: the output is neither the old nor the new one"
        outcomes.add("new" if now == new else "old")
        if now == new:   # put the old one back for the next kill
            assert _run(old_argv).returncode == 0
    # a later run cleans what the killed ones left (their pids are gone)
    assert _run(new_argv).returncode == 0 and _digest(out) == new
    assert sorted(p.name for p in out.parent.iterdir()) == [out.name]


@pytest.mark.parametrize("verb", ["fit", "apply", "report"])
def test_file_size_limit_fails_cleanly_naming_the_output(inputs, tmp_path, verb):
    old_argv, new_argv, out = _old_and_new(verb, inputs, tmp_path)
    assert _run(old_argv).returncode == 0
    old = _digest(out)
    limit = 4096   # bytes per file: every output here has a larger file

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = _run(new_argv, preexec_fn=small_files)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith(f"sparsecal {verb}: error: cannot write ")
    assert str(out) in lines[0] and "File too large" in lines[0], lines[0]
    assert _digest(out) == old
    assert sorted(p.name for p in out.parent.iterdir()) == [out.name]


def test_the_same_report_twice_is_the_same_bytes(inputs, tmp_path):
    """Figures carry no date and fixed SVG ids, so a report is reproducible and
    the kill test can tell old from new by content."""
    argv = _commands(inputs, tmp_path / "r1")["report"][1]
    assert _run(argv).returncode == 0
    assert _run([a if a != str(tmp_path / "r1") else str(tmp_path / "r2")
                 for a in argv]).returncode == 0
    assert _digest(tmp_path / "r1") == _digest(tmp_path / "r2")
