"""The local Dask cluster of the package (``sparsecal ... --dask``, the
benchmarks): worker processes started with the memory settings the per-chunk
NumPy work needs (docs/scale.md, "Benchmark" and "Memory, faults and the
command line").

Dask's nanny starts each worker with ``MALLOC_TRIM_THRESHOLD_=65536``
(``distributed.nanny.pre-spawn-environ``), which fixes glibc's mmap threshold
at 128 KiB: every large NumPy temporary is then a fresh map whose pages fault
in, and the per-chunk work ran about 4 times slower in a worker than in the
client. :func:`local_cluster` starts its workers with both thresholds at
256 MiB instead, through Dask's configuration for that cluster only: the
calling process's environment and Dask configuration are left as they were.
"""
import contextlib
import os

from ._dask import require_dask

__all__ = ["WORKER_MALLOC", "local_cluster", "worker_environ"]

#: worker environment: glibc keeps up to this much freed memory and maps only
#: larger blocks (instead of Dask's ``MALLOC_TRIM_THRESHOLD_=65536``)
WORKER_MALLOC = {"MALLOC_TRIM_THRESHOLD_": 1 << 28, "MALLOC_MMAP_THRESHOLD_": 1 << 28}


def worker_environ(malloc=True):
    """The environment Dask's nanny sets before it starts a worker process.

    Parameters
    ----------
    malloc : bool, default=True
        Add :data:`WORKER_MALLOC` to Dask's configured
        ``distributed.nanny.pre-spawn-environ``; False keeps Dask's.

    Returns
    -------
    dict
        A new dict (Dask's configuration is not modified).

    Examples
    --------
    >>> worker_environ()["MALLOC_TRIM_THRESHOLD_"]
    268435456
    >>> worker_environ(malloc=False).get("MALLOC_MMAP_THRESHOLD_") is None
    True
    """
    dask = require_dask()
    import distributed  # noqa: F401  (its configuration defaults)
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ"))
    return {**environ, **WORKER_MALLOC} if malloc else environ


@contextlib.contextmanager
def local_cluster(n_workers=None, *, memory_limit="auto", malloc=True, **kwargs):
    """A ``distributed.LocalCluster`` of single-threaded worker processes
    whose nannies start them with :func:`worker_environ` (a context manager).

    The setting is passed through ``dask.config.set`` around the cluster's
    construction only: each nanny keeps it (a worker it restarts gets it
    too). Dask's nanny reads each such variable from the environment of the
    process that hosts it (here, this one) in preference to its
    configuration, and writes them there before it spawns a worker: so the
    malloc settings are put in this process's environment while the cluster
    starts, and this process's own values are put back once the workers are
    up and again when the cluster closes; neither ``os.environ`` of this
    process nor its Dask configuration changes.

    Parameters
    ----------
    n_workers : int, optional
        Worker processes (Dask's default: one per core).
    memory_limit : str, float or int, default="auto"
        Per worker, as ``LocalCluster`` takes it.
    malloc : bool, default=True
        False starts the workers with Dask's own malloc settings.
    **kwargs
        More ``LocalCluster`` options (e.g. ``dashboard_address=None``).

    Returns
    -------
    context manager of distributed.LocalCluster
        ``with local_cluster() as cluster``: started; closed when the block
        ends.

    Raises
    ------
    ImportError
        Without the dask extra (``pip install "sparsecal[dask]"``).

    References
    ----------
    docs/scale.md, "Benchmark" (the measured effect of the worker malloc
    settings) and "Memory, faults and the command line" (a user's own cluster).

    Examples
    --------
    >>> import os
    >>> from distributed import Client
    >>> from sparsecal.distributed import local_cluster
    >>> before = os.environ.get("MALLOC_TRIM_THRESHOLD_")
    >>> with local_cluster(1, dashboard_address=None) as cluster, Client(cluster) as c:
    ...     seen = c.run(os.getenv, "MALLOC_TRIM_THRESHOLD_")
    >>> list(seen.values()), os.environ.get("MALLOC_TRIM_THRESHOLD_") == before
    (['268435456'], True)
    """
    dask = require_dask()
    from distributed import LocalCluster
    environ = worker_environ(malloc)
    saved = {name: os.environ.get(name) for name in environ}
    try:
        if malloc:   # Dask prefers a value already in this process's environment
            os.environ.update({name: str(environ[name]) for name in WORKER_MALLOC})
        with dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
            cluster = LocalCluster(n_workers=n_workers, processes=True,
                                   threads_per_worker=1, memory_limit=memory_limit,
                                   **kwargs)
        _restore(saved)
        with cluster:
            yield cluster
    finally:
        _restore(saved)


def _restore(saved):
    """Put back this process's environment variables ``saved`` (None: unset)."""
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
