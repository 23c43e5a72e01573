"""Thread count used by the compiled kernels."""
import os

__all__ = ["get_n_threads"]


#: Below this many items a kernel runs on one thread: starting an OpenMP team
#: costs more than the work (tens of milliseconds on a loaded machine).
PARALLEL_MIN_ITEMS = 1 << 18


def get_n_threads(n_threads=None, n_items=None):
    """Number of threads for a kernel call over ``n_items`` items.

    Parameters
    ----------
    n_threads : int, optional
        Explicit thread count. ``None`` means one thread for fewer than
        ``PARALLEL_MIN_ITEMS`` items, else the ``SPARSECAL_NUM_THREADS``
        environment variable if set, else the CPUs this process may run on.
    n_items : int, optional
        Size of the kernel's input, for the single-thread cut-off.

    Returns
    -------
    int
        At least 1. Results of every kernel never depend on it.

    Raises
    ------
    ValueError
        If the resulting thread count is below 1.

    References
    ----------
    docs/architecture.md, "The compiled core": kernels run without the GIL, in parallel
    where the work is large enough (OpenMP ``prange``).

    Examples
    --------
    >>> from sparsecal.core.threads import get_n_threads
    >>> get_n_threads(n_items=10)
    1
    >>> get_n_threads(4)
    4
    """
    if n_threads is None and n_items is not None and n_items < PARALLEL_MIN_ITEMS:
        return 1
    if n_threads is None:
        env = os.environ.get("SPARSECAL_NUM_THREADS")
        if env:
            n_threads = int(env)
        elif hasattr(os, "sched_getaffinity"):
            n_threads = len(os.sched_getaffinity(0))
        else:
            n_threads = os.cpu_count() or 1
    n_threads = int(n_threads)
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads}")
    return n_threads
