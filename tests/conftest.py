"""Shared test fixtures."""
import pytest


@pytest.fixture
def one_thread_by_default(monkeypatch):
    """Kernels run single-threaded unless a test passes ``n_threads``: the
    multi-threaded paths are exercised explicitly (results never depend on the
    thread count), and many tiny calls then do not pay for OpenMP fork/join on
    a busy machine. Opt in per module with
    ``pytestmark = pytest.mark.usefixtures("one_thread_by_default")``."""
    monkeypatch.setenv("SPARSECAL_NUM_THREADS", "1")
