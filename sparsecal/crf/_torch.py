"""PyTorch for :mod:`sparsecal.crf`: the optional import, thread control, tensors.

``import sparsecal`` never imports torch. Every CRF module takes ``torch`` from
here, so that a missing torch fails with one message naming the extra to install.
"""
import numbers
import os
import warnings
from contextlib import contextmanager

import numpy as np

try:
    import torch
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        'sparsecal.crf needs PyTorch; install it with: pip install "sparsecal[torch]" '
        "(torch==2.13.0, torch-struct==0.5)") from exc

__all__ = ["torch", "resolve_threads", "torch_threads", "to_tensor"]


def _cpus():
    """CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # pragma: no cover - platforms without affinity


def resolve_threads(n_threads):
    """Torch intra-op threads for a CRF call.

    ``None`` means ``SPARSECAL_NUM_THREADS`` if set, else 1: the per-position
    products are small (``[B, C] @ [C, C]``) and on a shared 2-core machine one
    thread was 2-8x faster than two (OpenMP threads spin-wait between small ops).
    ``0`` means "leave torch's setting alone". Counts above the CPUs this
    process may run on are clamped to them (torch crashes on absurd counts).

    Raises
    ------
    ValueError
        If ``n_threads`` (or ``SPARSECAL_NUM_THREADS``) is not an integer >= 0
        (booleans and floats included).
    """
    name = "n_threads"
    if n_threads is None:
        env = os.environ.get("SPARSECAL_NUM_THREADS", "").strip()
        if not env:
            return 1
        name = "the environment variable SPARSECAL_NUM_THREADS"
        try:
            n_threads = int(env)
        except ValueError:
            raise ValueError(f"{name} must be an integer >= 0, got {env!r}") from None
    if not isinstance(n_threads, numbers.Integral) or isinstance(n_threads, bool) \
            or n_threads < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {n_threads!r}")
    return min(int(n_threads), _cpus())


@contextmanager
def torch_threads(n_threads):
    """Run the block with :func:`resolve_threads` torch threads, then restore the
    previous setting (``torch.set_num_threads`` is process-wide)."""
    n = resolve_threads(n_threads)
    old = torch.get_num_threads()
    if n == 0 or n == old:
        yield
        return
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def to_tensor(x, name):
    """``x`` as a tensor: tensors as they are, arrays without a copy where possible
    (read-only arrays such as memory maps included: they are never written)."""
    if torch.is_tensor(x):
        return x
    arr = np.asarray(x)
    if arr.dtype == object:
        raise TypeError(f"{name} must be a numeric array, got dtype object")
    if any(s < 0 for s in arr.strides):
        arr = np.ascontiguousarray(arr)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*not writable.*")
        return torch.from_numpy(arr)
