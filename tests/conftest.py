"""Shared test fixtures, the worker count of ``pytest -n auto`` and the check
that a run leaves no new file in the repository root."""
import atexit
import os
import shutil
import tempfile

import pytest

# Idle OpenMP threads sleep instead of spinning (read when the runtime loads, in
# this process and in the CLI, Dask and example processes it starts): with
# parallel test workers on few CPUs, spinning threads take the CPUs from the
# other workers' tests (3-4x the CPU time of test_sort.py and test_invariance.py).
# Only idle waits change: every kernel runs as it would.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# Hypothesis keeps no example database and writes its caches into a temporary
# folder, not a .hypothesis folder in the checkout: the property tests are seeded
# by their settings, not by past runs.
try:
    from hypothesis import settings as _hypothesis_settings
    from hypothesis.configuration import set_hypothesis_home_dir
except ImportError:   # the property tests skip, naming the missing package
    pass
else:
    _HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="sparsecal-hypothesis-")
    atexit.register(shutil.rmtree, _HYPOTHESIS_HOME, ignore_errors=True)
    set_hypothesis_home_dir(_HYPOTHESIS_HOME)
    _hypothesis_settings.register_profile("sparsecal", database=None)
    _hypothesis_settings.load_profile("sparsecal")

_ROOT_BEFORE = pytest.StashKey[frozenset]()


@pytest.fixture
def one_thread_by_default(monkeypatch):
    """Kernels run single-threaded unless a test passes ``n_threads``: the
    multi-threaded paths are exercised explicitly (results never depend on the
    thread count), and many tiny calls then do not pay for OpenMP fork/join on
    a busy machine. Opt in per module with
    ``pytestmark = pytest.mark.usefixtures("one_thread_by_default")``."""
    monkeypatch.setenv("SPARSECAL_NUM_THREADS", "1")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (scripts/test.sh): one worker per CPU this process may use
    (its affinity mask, not the machine's count); ``PYTEST_XDIST_AUTO_NUM_WORKERS``
    still overrides it (pytest-xdist's own rule)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or not hasattr(os, "sched_getaffinity"):
        return None
    return len(os.sched_getaffinity(0))


def _root_entries(config):
    """The names in the repository root, less pytest's own cache folder."""
    try:
        cache = (config.rootpath / config.getini("cache_dir")).resolve()
    except ValueError:   # -p no:cacheprovider: no cache folder
        cache = None
    return frozenset(p.name for p in config.rootpath.iterdir() if p.resolve() != cache)


def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):   # the run itself, not an xdist worker
        session.config.stash[_ROOT_BEFORE] = _root_entries(session.config)


def pytest_sessionfinish(session):
    """A test writes into its ``tmp_path``, never into the checkout: a file or
    folder that appeared in the repository root during the run fails it."""
    before = session.config.stash.get(_ROOT_BEFORE, None)
    if before is None:
        return
    new = sorted(_root_entries(session.config) - before)
    if new:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        reporter.write("\n")   # after the progress line, also under xdist
        reporter.write_sep("=", "files left in the repository root", red=True)
        reporter.write_line(f"this run wrote {', '.join(new)} into {session.config.rootpath} "
                            "(a test or example must write into a temporary directory)")
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
