"""The set-up scripts and the test run's own rules: scripts/_venv.sh reinstalls
only when what the install depends on changed (a stand-in interpreter records
the pip calls, no pip runs), and a run that leaves a file in the repository root
fails (tests/conftest.py)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture
def checkout(tmp_path):
    """What the set-up reads, in a temporary checkout: scripts/, pyproject.toml,
    setup.py, two kernels with their compiled extensions, and a virtual
    environment whose python only appends its arguments to ``pip.log``."""
    repo = tmp_path / "repo"
    shutil.copytree(SCRIPTS, repo / "scripts")
    core = repo / "sparsecal" / "core"
    core.mkdir(parents=True)
    for name, text in [("pyproject.toml", "[project]\n"), ("setup.py", "setup()\n"),
                       ("sparsecal/core/_a.pyx", "a = 1\n"), ("sparsecal/core/_b.pyx", "b = 1\n"),
                       ("sparsecal/core/_types.pxd", "ctypedef int t\n"),
                       ("sparsecal/core/_simd.h", "#define N 1\n")]:
        (repo / name).write_text(text)
    for kernel in ("_a", "_b"):
        (core / f"{kernel}.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    python = repo / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text('#!/bin/sh\necho "$*" >> "$(dirname "$0")/../../pip.log"\n')
    python.chmod(0o755)
    return repo


def _setup(repo, extras="test"):
    """Source scripts/_venv.sh as test.sh does; the pip calls it made."""
    log = repo / "pip.log"
    log.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("VENV", "SPARSECAL_WHEEL")}
    run = subprocess.run(["bash", "-c", f'source scripts/_venv.sh "{extras}"'], cwd=repo,
                         env={**env, "PYTHON": sys.executable}, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout == run.stderr == ""
    return log.read_text().splitlines() if log.exists() else []


def test_installs_once_then_only_after_a_change(checkout):
    first = _setup(checkout)
    assert first == ["-m pip install --quiet --upgrade pip setuptools",
                     "-m pip install --quiet -e .[test]"]
    assert _setup(checkout) == []                       # unchanged tree: no pip
    os.utime(checkout / "sparsecal/core/_a.pyx", (0, 0))
    assert _setup(checkout) == []                       # a new mtime alone is no change
    for changed in ("sparsecal/core/_a.pyx", "sparsecal/core/_types.pxd",
                    "sparsecal/core/_simd.h", "pyproject.toml", "setup.py"):
        with open(checkout / changed, "a") as f:
            f.write("\n")
        assert _setup(checkout) == first, changed       # rebuilt ...
        assert _setup(checkout) == [], changed          # ... once
    (checkout / "sparsecal/core/_c.pyx").write_text("c = 1\n")
    assert _setup(checkout) == first                    # a new kernel


def test_other_extras_or_a_missing_extension_reinstall(checkout):
    _setup(checkout)
    assert _setup(checkout, "test,torch") == [
        "-m pip install --quiet --upgrade pip setuptools",
        "-m pip install --quiet -e .[test,torch] torch==2.13.0"]
    assert _setup(checkout, "test,torch") == []
    so = checkout / "sparsecal/core/_b.cpython-311-x86_64-linux-gnu.so"
    so.unlink()
    assert len(_setup(checkout, "test,torch")) == 2
    so.write_bytes(b"")
    assert len(_setup(checkout, "test,torch")) == 2     # the stamp was of the unbuilt tree
    assert _setup(checkout, "test,torch") == []


def test_a_file_left_in_the_repository_root_fails_the_run(pytester, monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")   # the inner runs: pytest alone
    pytester.makeconftest((Path(__file__).parent / "conftest.py").read_text())
    pytester.makepyfile(test_writes="""
        def test_in_tmp_path(tmp_path):
            (tmp_path / "fine.txt").write_text("")

        def test_in_the_root():
            open("stray.txt", "w").close()
    """)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*files left in the repository root*",
                                 f"this run wrote stray.txt into {pytester.path} *"])
    (pytester.path / "stray.txt").unlink()
    assert pytester.runpytest("-p", "no:cacheprovider", "-k", "tmp_path").ret == 0
