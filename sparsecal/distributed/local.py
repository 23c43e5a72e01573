"""The local Dask cluster of the package (``sparsecal ... --dask``, the
benchmarks): worker processes started with the memory settings the per-chunk
NumPy work needs (docs/scale.md, "Benchmark" and "Memory, faults and the
command line").

Dask's nanny starts each worker with ``MALLOC_TRIM_THRESHOLD_=65536``
(``distributed.nanny.pre-spawn-environ``), which fixes glibc's mmap threshold
at 128 KiB: every large NumPy temporary is then a fresh map whose pages fault
in, and the per-chunk work ran about 4 times slower in a worker than in the
client. :func:`local_cluster` starts its workers with both thresholds at
256 MiB instead. Dask's nanny writes its ``pre-spawn-environ`` into the
environment of the process hosting it before it spawns a worker (glibc reads
the variables when a process starts), so here each nanny runs in a process of
its own, started with its environment given to it: the calling process's
environment and Dask configuration are never written.
"""
import asyncio
import contextlib
import json
import logging
import os
import sys

from ..core.threads import max_threads
from ..core.validation import check_positive_int
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
    """A local Dask cluster of single-threaded worker processes started with
    :func:`worker_environ` (a context manager).

    The scheduler runs in this process; each worker's nanny runs in a process
    of its own (``python -m dask spec``, Dask's ``SubprocessWorker``) whose
    environment is this process's plus the malloc settings and this process's
    Dask configuration (``DASK_INTERNAL_INHERIT_CONFIG``) with
    ``distributed.nanny.pre-spawn-environ`` set to :func:`worker_environ`. The
    nanny writes that into its own environment before it spawns (and
    restarts) its worker, so the worker starts with it; this process's
    ``os.environ`` and Dask configuration are never written, not even while
    the cluster starts.

    Parameters
    ----------
    n_workers : int, optional
        Worker processes (Dask's default: one per core; at most 4 per CPU).
    memory_limit : str, float or int, default="auto"
        Per worker, as the nanny takes it.
    malloc : bool, default=True
        False starts the workers with Dask's own malloc settings.
    **kwargs
        Scheduler options (e.g. ``dashboard_address=None``).

    Returns
    -------
    context manager of distributed.SpecCluster
        ``with local_cluster() as cluster``: started, its workers connected;
        closed when the block ends.

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
    >>> before = dict(os.environ)
    >>> with local_cluster(1, dashboard_address=None) as cluster, Client(cluster) as c:
    ...     seen = c.run(os.getenv, "MALLOC_TRIM_THRESHOLD_")
    >>> list(seen.values()), dict(os.environ) == before
    (['268435456'], True)
    """
    dask = require_dask()
    from dask.system import CPU_COUNT
    from distributed import Scheduler, SpecCluster
    if n_workers is not None:
        n_workers = check_positive_int(n_workers, "n_workers")
        if n_workers > max_threads():
            raise ValueError(f"n_workers={n_workers} is more than {max_threads()}, four "
                             "worker processes per CPU")
    n_workers = CPU_COUNT if n_workers is None else n_workers
    environ = worker_environ(malloc)
    config = dask.config.merge(dask.config.config, {
        "distributed": {"nanny": {"pre-spawn-environ": environ}}})
    env = {**os.environ, "DASK_INTERNAL_INHERIT_CONFIG": dask.config.serialize(config),
           **({name: str(environ[name]) for name in WORKER_MALLOC} if malloc else {})}
    dashboard = kwargs.pop("dashboard_address", ":8787")
    scheduler = {"cls": Scheduler, "options": {
        "host": "127.0.0.1", "dashboard": dashboard is not None,
        "dashboard_address": dashboard, **kwargs}}
    worker = {"cls": _subprocess_worker(env), "options": {"worker_kwargs": {
        "host": "127.0.0.1", "nthreads": 1, "memory_limit": memory_limit,
        "silence_logs": logging.WARN}}}
    with SpecCluster({i: worker for i in range(n_workers)}, scheduler, worker,
                     name="sparsecal", silence_logs=logging.WARN) as cluster:
        cluster.wait_for_workers(n_workers)
        yield cluster


def _subprocess_worker(env):
    """Dask's ``SubprocessWorker`` whose process (hosting a nanny) starts with
    the environment ``env``."""
    from distributed.deploy.subprocess import SubprocessWorker

    class EnvWorker(SubprocessWorker):
        async def _start(self):
            spec = json.dumps({"cls": self.worker_class, "opts": self.worker_kwargs})
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "dask", "spec", self.scheduler, "--spec", spec,
                env=env)

    return EnvWorker
