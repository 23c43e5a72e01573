"""PyTorch for :mod:`sparsecal.crf`: the optional import, thread control, tensors.

``import sparsecal`` never imports torch. Every CRF module takes ``torch`` from
here, so that a missing torch fails with one message naming the extra to install.
"""
import warnings
from contextlib import contextmanager

import numpy as np

from .._extras import require
from ..core.threads import check_n_threads, env_n_threads
from ..core.validation import as_array

torch = require("torch", "torch", "sparsecal.crf")

__all__ = ["torch", "resolve_threads", "torch_threads", "to_tensor"]


def resolve_threads(n_threads):
    """Torch intra-op threads for a CRF call: ``None`` means ``SPARSECAL_NUM_THREADS``
    or 1 (a second thread helps only on an idle core and large C, and costs up to
    100x otherwise); others are checked (a positive integer) and capped.
    """
    if n_threads is None:
        return env_n_threads() or 1
    return check_n_threads(n_threads)


@contextmanager
def torch_threads(n_threads):
    """Run the block with :func:`resolve_threads` torch threads, then restore the
    previous setting (``torch.set_num_threads`` is process-wide)."""
    n = resolve_threads(n_threads)
    old = torch.get_num_threads()
    if n == old:
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
    arr = as_array(x, name)
    if arr.dtype == object:
        raise TypeError(f"{name} must be a numeric array, got dtype object")
    if any(s < 0 for s in arr.strides):
        arr = np.ascontiguousarray(arr)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*not writable.*")
        return torch.from_numpy(arr)
