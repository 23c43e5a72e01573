"""The package's local Dask cluster, its workers started with glibc's malloc
thresholds at 256 MiB, not Dask's (docs/scale.md, "Memory, faults ...")."""
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
        Add :data:`WORKER_MALLOC` to Dask's ``distributed.nanny.pre-spawn-environ``.

    Returns
    -------
    dict
        A new dict (Dask's configuration is not modified).

    Examples
    --------
    >>> worker_environ()["MALLOC_TRIM_THRESHOLD_"]
    268435456
    """
    dask = require_dask()
    import distributed  # noqa: F401  (its configuration defaults)
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ"))
    return {**environ, **WORKER_MALLOC} if malloc else environ


@contextlib.contextmanager
def local_cluster(n_workers=None, *, memory_limit="auto", malloc=True, **kwargs):
    """A local cluster of one-thread worker processes with :func:`worker_environ`.

    Parameters
    ----------
    n_workers : int, optional
        Worker processes (Dask's default: one per core; at most 4 per CPU).
    memory_limit : str, float or int, default="auto"
        Per worker.
    malloc : bool, default=True
        False starts the workers with Dask's own malloc settings.
    **kwargs
        Scheduler options (e.g. ``dashboard_address=None``).

    Returns
    -------
    context manager of distributed.SpecCluster

    Examples
    --------
    >>> import os
    >>> from distributed import Client
    >>> with local_cluster(1, dashboard_address=None) as cluster, Client(cluster) as c:
    ...     list(c.run(os.getenv, "MALLOC_TRIM_THRESHOLD_").values())
    ['268435456']
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
    """Dask's ``SubprocessWorker`` whose process starts with the environment ``env``."""
    from distributed.deploy.subprocess import SubprocessWorker

    class EnvWorker(SubprocessWorker):
        async def _start(self):
            spec = json.dumps({"cls": self.worker_class, "opts": self.worker_kwargs})
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "dask", "spec", self.scheduler, "--spec", spec,
                env=env)

    return EnvWorker
