"""The package's local Dask cluster (sparsecal.distributed.local): the workers of
the command line's ``--dask`` cluster start with the malloc settings of
docs/scale.md, and neither this process's environment nor its Dask
configuration changes."""
import argparse
import os

import dask
import pytest
from distributed import Client
from sparsecal.cli.cluster import _client
from sparsecal.distributed import WORKER_MALLOC, local_cluster, worker_environ


class _Console:
    def __init__(self):
        self.lines = []

    def info(self, line):
        self.lines.append(line)


def _seen(client):
    """Each variable's values in the workers' environment (``os.getenv`` is
    pickled by reference; ``os.environ.get`` would carry this process's
    ``os.environ`` to the workers by value)."""
    return {name: set(client.run(os.getenv, name).values()) for name in WORKER_MALLOC}


@pytest.mark.parametrize("preset", [None, "65536"])
def test_cli_dask_cluster_workers_see_the_malloc_settings(monkeypatch, preset):
    """Also when this process already has Dask's value in its environment (as an
    earlier Dask LocalCluster leaves it; Dask prefers it to its configuration)."""
    if preset is None:
        monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    else:
        monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", preset)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    before_env = {k: os.environ.get(k) for k in WORKER_MALLOC}
    before_cfg = dict(dask.config.get("distributed.nanny.pre-spawn-environ"))
    console = _Console()
    with _client(argparse.Namespace(scheduler=None, dask=True), console) as client:
        seen = _seen(client)
        assert len(client.scheduler_info()["workers"]) >= 1
    assert seen == {"MALLOC_TRIM_THRESHOLD_": {"268435456"},
                    "MALLOC_MMAP_THRESHOLD_": {"268435456"}}
    assert "local Dask cluster" in console.lines[0]
    assert {k: os.environ.get(k) for k in WORKER_MALLOC} == before_env
    assert dict(dask.config.get("distributed.nanny.pre-spawn-environ")) == before_cfg


def test_malloc_false_keeps_dask_setting(monkeypatch):
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    with local_cluster(1, malloc=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        seen = _seen(client)
    # Dask's own default (65536), and no mmap threshold
    assert seen == {"MALLOC_TRIM_THRESHOLD_": {str(worker_environ(False).get(
        "MALLOC_TRIM_THRESHOLD_"))}, "MALLOC_MMAP_THRESHOLD_": {None}}
    assert worker_environ(False).get("MALLOC_TRIM_THRESHOLD_") in (65536, "65536")


def test_worker_environ_keeps_other_settings():
    with dask.config.set({"distributed.nanny.pre-spawn-environ": {"X_SPARSECAL": "1"}}):
        env = worker_environ()
        assert env == {"X_SPARSECAL": "1", **WORKER_MALLOC}
        assert dask.config.get("distributed.nanny.pre-spawn-environ") == {"X_SPARSECAL": "1"}
        assert worker_environ(malloc=False) == {"X_SPARSECAL": "1"}


def test_memory_limit_is_passed():
    with local_cluster(1, memory_limit="300MiB", dashboard_address=None) as cluster, \
            Client(cluster) as client:
        limits = [w["memory_limit"] for w in client.scheduler_info()["workers"].values()]
    assert limits == [300 * 2 ** 20]


class _RecordingEnviron(os._Environ):
    """``os.environ`` that records every write (the same process environment)."""

    def __init__(self, environ):
        super().__init__(environ._data, environ.encodekey, environ.decodekey,
                         environ.encodevalue, environ.decodevalue)
        self.writes = []

    def __setitem__(self, key, value):
        self.writes.append(("set", key, value))
        super().__setitem__(key, value)

    def __delitem__(self, key):
        self.writes.append(("del", key))
        super().__delitem__(key)


@pytest.mark.parametrize("preset", [None, "65536"])
def test_local_cluster_never_writes_this_process_environment(monkeypatch, preset):
    """Not even while the workers start (the nannies' ``pre-spawn-environ``
    lands in their own processes); the workers see the malloc settings, also
    when this process has Dask's value; this process's value is never lost."""
    if preset is None:
        monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    else:
        monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", preset)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    recording = _RecordingEnviron(os.environ)
    monkeypatch.setattr(os, "environ", recording)
    before = dict(os.environ)
    with local_cluster(2, dashboard_address=None) as cluster, Client(cluster) as client:
        during = dict(os.environ)
        seen = _seen(client)
        assert len(client.scheduler_info()["workers"]) == 2
    assert recording.writes == []
    assert dict(os.environ) == during == before
    assert os.environ.get("MALLOC_TRIM_THRESHOLD_") == preset
    assert seen == {"MALLOC_TRIM_THRESHOLD_": {"268435456"},
                    "MALLOC_MMAP_THRESHOLD_": {"268435456"}}


def test_cli_dask_prints_no_dask_logs(capfd, tmp_path):
    """``--dask`` on the command line: the scheduler (in this process) and the
    workers (their own processes, writing to the inherited stderr) log only
    warnings, as Dask's own LocalCluster does: the user sees the command's lines."""
    import numpy as np
    from sparsecal.cli.main import main
    rng = np.random.default_rng(0)
    np.save(tmp_path / "s.npy", rng.dirichlet(np.ones(4), size=200).astype(np.float32))
    np.save(tmp_path / "g.npy", rng.integers(0, 4, 200))
    rc = main(["evaluate", "--scores", str(tmp_path / "s.npy"), "--gold",
               str(tmp_path / "g.npy"), "--dask"])
    out, err = capfd.readouterr()
    assert rc == 0, err
    assert "SMCE" in out and "dashboard:" in out
    assert " - INFO - " not in out + err, err
