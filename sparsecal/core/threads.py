"""Thread count used by the compiled kernels (and the CRF's torch calls).

One rule for every ``n_threads`` argument and the ``SPARSECAL_NUM_THREADS``
environment variable: a positive integer (not a bool, not a float, not a
string), else a ``ValueError`` naming the argument or the variable; a count
above :func:`max_threads` (4 threads per CPU) is clamped to it with a one-time
``RuntimeWarning``, since OpenMP aborts or crashes on asking for millions of
threads and results never depend on the count.
"""
import os
import warnings

from .validation import check_positive_int

__all__ = ["ENV_VAR", "THREADS_PER_CPU", "check_n_threads", "env_n_threads",
           "get_n_threads", "max_threads"]

#: The environment variable that sets the default thread count.
ENV_VAR = "SPARSECAL_NUM_THREADS"

#: Thread counts are capped at this many threads per CPU (:func:`max_threads`).
THREADS_PER_CPU = 4

#: Below this many items a kernel runs on one thread: starting an OpenMP team
#: costs more than the work (tens of milliseconds on a loaded machine).
PARALLEL_MIN_ITEMS = 1 << 18

_warned = False


def _usable_cpus():
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
    return max(os.cpu_count() or 1, affinity, 1)


def max_threads():
    """The largest thread count used: ``THREADS_PER_CPU`` times the CPUs.

    Returns
    -------
    int
        ``4 * max(os.cpu_count(), len(os.sched_getaffinity(0)))``.

    References
    ----------
    docs/architecture.md, "The compiled core": kernels run in parallel with
    OpenMP; more threads than this only add start-up and spin-wait time.

    Examples
    --------
    >>> import os
    >>> from sparsecal.core.threads import max_threads
    >>> max_threads() >= 4 * (os.cpu_count() or 1)
    True
    """
    return THREADS_PER_CPU * _usable_cpus()


def check_n_threads(value, name="n_threads"):
    """A thread count: a positive integer, clamped to :func:`max_threads`.

    Parameters
    ----------
    value : int
        The requested count.
    name : str, default="n_threads"
        The argument (or environment variable) it came from, for messages.

    Returns
    -------
    int
        ``min(value, max_threads())``.

    Raises
    ------
    ValueError
        If ``value`` is not an integer (booleans, floats and strings included)
        or is below 1.

    Warns
    -----
    RuntimeWarning
        Once per process, when ``value`` is clamped.

    References
    ----------
    docs/architecture.md, "The compiled core" (results never depend on the
    thread count).

    Examples
    --------
    >>> from sparsecal.core.threads import check_n_threads
    >>> check_n_threads(1)
    1
    >>> check_n_threads(0)
    Traceback (most recent call last):
    ...
    ValueError: n_threads must be a positive integer, got 0
    """
    global _warned
    value = check_positive_int(value, name)
    cap = max_threads()
    if value > cap:
        if not _warned:
            _warned = True
            warnings.warn(f"{name}={value} is more than {THREADS_PER_CPU} threads per "
                          f"CPU: using {cap} threads (results do not depend on it)",
                          RuntimeWarning, stacklevel=3)
        value = cap
    return value


def env_n_threads():
    """The thread count set by ``SPARSECAL_NUM_THREADS``, or None when it is unset.

    Returns
    -------
    int or None
        Checked and clamped as by :func:`check_n_threads`; None when the
        variable is unset or blank.

    Raises
    ------
    ValueError
        If the variable is set to anything but a positive integer, e.g.
        ``"SPARSECAL_NUM_THREADS must be a positive integer, got 'abc'"``.

    References
    ----------
    docs/architecture.md, "Where each rule lives": the thread count.

    Examples
    --------
    >>> import os
    >>> from sparsecal.core.threads import env_n_threads
    >>> os.environ["SPARSECAL_NUM_THREADS"] = "2"
    >>> env_n_threads()
    2
    >>> os.environ["SPARSECAL_NUM_THREADS"] = "two"
    >>> env_n_threads()
    Traceback (most recent call last):
    ...
    ValueError: SPARSECAL_NUM_THREADS must be a positive integer, got 'two'
    >>> del os.environ["SPARSECAL_NUM_THREADS"]
    """
    env = os.environ.get(ENV_VAR, "").strip()
    if not env:
        return None
    try:
        value = int(env)
    except ValueError:
        value = env   # refused below, quoted as it was given
    return check_n_threads(value, ENV_VAR)


def get_n_threads(n_threads=None, n_items=None):
    """Number of threads for a kernel call over ``n_items`` items.

    Parameters
    ----------
    n_threads : int, optional
        Explicit thread count. ``None`` means one thread for fewer than
        ``PARALLEL_MIN_ITEMS`` items, else the ``SPARSECAL_NUM_THREADS``
        environment variable if set, else the CPUs this process may run on
        (the variable is checked in every case).
    n_items : int, optional
        Size of the kernel's input, for the single-thread cut-off.

    Returns
    -------
    int
        From 1 to :func:`max_threads`. Results of every kernel never depend on it.

    Raises
    ------
    ValueError
        If ``n_threads`` (or ``SPARSECAL_NUM_THREADS``, when it is used) is not
        a positive integer.

    Warns
    -----
    RuntimeWarning
        Once per process, when the count is clamped to :func:`max_threads`.

    References
    ----------
    docs/architecture.md, "The compiled core": kernels run without the GIL, in parallel
    where the work is large enough (OpenMP ``prange``).

    Examples
    --------
    >>> from sparsecal.core.threads import get_n_threads
    >>> get_n_threads(n_items=10)
    1
    >>> get_n_threads(1)
    1
    """
    if n_threads is not None:
        return check_n_threads(n_threads)
    env = env_n_threads()   # checked even when unused, so errors do not depend on sizes
    if n_items is not None and n_items < PARALLEL_MIN_ITEMS:
        return 1
    if env is not None:
        return env
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else os.cpu_count() or 1
