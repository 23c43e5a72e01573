"""Thread count used by the compiled kernels (and the CRF's torch calls).

One rule for every ``n_threads`` argument and the ``SPARSECAL_NUM_THREADS``
environment variable: a positive integer (not a bool, float or string), else a
``ValueError`` naming the argument or the variable; a count above
:func:`max_threads` (4 threads per CPU) is clamped to it with a one-time
``RuntimeWarning``. Results never depend on the count.
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
    """The largest thread count used: ``THREADS_PER_CPU`` times the usable CPUs."""
    return THREADS_PER_CPU * _usable_cpus()


def check_n_threads(value, name="n_threads"):
    """``value`` if it is a positive integer, clamped to :func:`max_threads`."""
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
    """The checked thread count of ``SPARSECAL_NUM_THREADS``, or None when it is unset
    or blank.
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
    """Threads for a kernel call over ``n_items`` items.

    ``n_threads`` if given; else one thread below ``PARALLEL_MIN_ITEMS`` items,
    else ``SPARSECAL_NUM_THREADS`` if set (it is checked in every case), else the
    CPUs this process may run on.
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
