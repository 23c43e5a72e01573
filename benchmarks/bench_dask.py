#!/usr/bin/env python
"""The issue-12 workload on a local Dask cluster against the single-machine path on
the same cores (issue 15, item 8; docs/scale.md, "Benchmark").

Workload (``compare_pipeline.py``, ``_data.py``; seeds 0 and 1): a dev and a test
CCG-like float32 score matrix of ``--rows`` x 426, written as ``.npy`` files.
Steps: threshold both at 0.01; SMCE and 5-group GMCE on test (TFG groups from
dev's gold counts); one isotonic calibrator per group fitted on dev and applied to
test entries; SMCE and GMCE after.

- ``single``: the public single-machine API, ``n_threads=--workers``, on memory
  maps of the files (started alongside the cluster: one run of each path per
  round, the rounds interleaved, so that both see the same machine).
- ``dask``: ``sparsecal.distributed`` on ``LocalCluster(n_workers=--workers,
  threads_per_worker=1)``; each worker reads its row chunks of the scores and
  of the gold tags from the files (``sparsecal.cli.cluster.dask_scores``);
  entries persisted in worker memory. The cluster is started and the package
  imported on the workers (and ``dask.array`` on the client) before the timings:
  start-up is not part of the workload, as for the single-machine path. The
  workers start with ``MALLOC_TRIM_THRESHOLD_`` and ``MALLOC_MMAP_THRESHOLD_`` at
  256 MiB (``sparsecal.distributed.local_cluster``): Dask's default trim threshold
  (64 KiB) fixes glibc's mmap threshold at 128 KiB, so every large NumPy
  temporary is a fresh map whose pages fault in, and the per-chunk NumPy work ran
  about 4 times slower than in the client process (docs/scale.md, "Benchmark");
  ``--dask-malloc`` keeps Dask's default.

Reported per step: wall time, the 1-minute load average when the step ended (the
machine is shared: read timings with it), entries per second per worker, the
bytes sent between workers (Dask's ``transfer_outgoing_bytes_total`` summed over
workers), the client's round trips (the times it waited for the cluster: a
gather or ``distributed.wait``), and from Dask's task stream the tasks run and the
workers' busy seconds per kind of task (compute, and transfers). The results of
the two paths are checked equal (counts identical, values within 1e-12 relative).

Also reported: the median time of an empty round trip on the same cluster (one
task per worker that returns its index, and their merge, through
``distributed.reduce.tree_merge`` as the workload's rounds), and the cluster
path's floor: the single path's time plus one empty round trip per round trip
the cluster path made (its time if the workers computed as fast as the single
path and Dask cost nothing else).

Usage::

    .venv/bin/python benchmarks/bench_dask.py --rows 100000     # 4.3e7 entries per split
    .venv/bin/python benchmarks/bench_dask.py --rows 1173709 --repeat 3   # the 5e8 size
    options: --workers N  --chunk-rows R (default 262144)  --repeat N  --dask-malloc
             --workdir DIR  --json FILE
"""
import argparse
import contextlib
import json
import os
import sys
import tempfile
import time

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]   # _data, and this checkout's sparsecal
from _data import N_TAGS, write_score_matrix  # noqa: E402

import sparsecal as sc  # noqa: E402
from sparsecal import distributed as sd  # noqa: E402
from sparsecal.cli.cluster import _read_rows, dask_scores  # noqa: E402


class Steps:
    """Wall time, load average, worker-to-worker bytes and round trips of each step."""

    def __init__(self, client=None):
        self.client, self.rows = client, []

    def _sent(self):
        if self.client is None:
            return 0
        return sum(self.client.run(
            lambda dask_worker: dask_worker.transfer_outgoing_bytes_total).values())

    def _cpu(self):
        """CPU seconds of this process (with the scheduler of a local cluster)
        and of the worker processes."""
        workers = 0 if self.client is None else sum(self.client.run(time.process_time).values())
        return np.array([time.process_time(), workers])

    def run(self, name, n_entries, func):
        before, cpu, t0 = self._sent(), self._cpu(), time.perf_counter()
        trips = 0 if self.client is None else self.client.waits
        with self._task_stream() as stream:
            result = func()
        wall = time.perf_counter() - t0
        trips = 0 if self.client is None else self.client.waits - trips
        client_cpu, worker_cpu = self._cpu() - cpu
        self.rows.append({"step": name, "seconds": round(wall, 3),
                          "cpu_seconds": round(client_cpu + worker_cpu, 3),
                          "cpu_seconds_workers": round(worker_cpu, 3),
                          "load_1min": round(os.getloadavg()[0], 2),
                          "entries": int(n_entries),
                          "bytes_between_workers": self._sent() - before,
                          "round_trips": trips,
                          **_task_summary(stream)})
        return result

    def _task_stream(self):
        if self.client is None:
            return contextlib.nullcontext()
        from distributed import get_task_stream
        return get_task_stream(self.client)


def _task_summary(stream):
    """Tasks run and the workers' busy seconds per kind of task (compute and
    transfer), from Dask's task stream."""
    if stream is None:
        return {}
    from dask.utils import key_split
    busy = {}
    for task in stream.data:
        for ss in task["startstops"]:
            kind = key_split(task["key"]) if ss["action"] == "compute" else ss["action"]
            busy[kind] = busy.get(kind, 0.0) + ss["stop"] - ss["start"]
    return {"tasks": len(stream.data),
            "worker_seconds": {k: round(v, 3) for k, v in sorted(busy.items())}}


def single(dev_path, test_path, dev_gold, test_gold, workers):
    dev_m, test_m = (np.load(p, mmap_mode="r") for p in (dev_path, test_path))
    s = Steps()
    dev = s.run("threshold dev", 0, lambda: sc.threshold(dev_m, dev_gold, n_threads=workers))
    test = s.run("threshold test", 0, lambda: sc.threshold(test_m, test_gold,
                                                           n_threads=workers))
    groups = sc.TagGroups.from_gold(dev_gold[dev_gold >= 0], 5, n_tags=N_TAGS)
    before = s.run("SMCE+GMCE test", len(test), lambda: sc.smce_and_gmce(test, groups))
    model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups)
    s.run("isotonic fit dev", len(dev), lambda: model.fit(dev))
    after = s.run("apply+SMCE+GMCE", len(test),
                  lambda: sc.smce_and_gmce(model.transform(test), groups))
    return s.rows, groups, (before, after), (len(dev), len(test))


def _dask_gold(path, scores):
    """The gold tags saved beside ``path``, read by the workers in the row
    chunks of ``scores``."""
    import dask
    import dask.array as da
    read = dask.delayed(_read_rows, pure=True)
    bounds = np.cumsum((0,) + scores.chunks[0])
    return da.concatenate([da.from_delayed(read(path, int(a), int(b)), (int(b - a),), np.int64)
                           for a, b in zip(bounds[:-1], bounds[1:])])


def _gold_path(path):
    return path[:-len(".npy")] + "_gold.npy"


def _persisted(path, chunk_rows):
    """Entries thresholded on the workers and kept there (waits for them); the
    gold tags are read from the file :func:`main` wrote beside ``path``."""
    from distributed import futures_of, wait
    scores = dask_scores(path, chunk_rows)
    entries = sd.threshold(scores, _dask_gold(_gold_path(path), scores)).persist()
    wait(futures_of(entries.blocks))
    return entries


def _noop(block, index, round_):
    return index


def round_trip(client, repeat=30):
    """Median seconds of a computation that does nothing: one task per worker
    and their merge, through ``tree_merge`` as each round of the workload."""
    from sparsecal.distributed.reduce import tree_merge
    blocks = client.scatter(list(range(len(client.scheduler_info()["workers"]))))
    seconds = []
    for r in range(repeat + 5):   # the first 5 warm up
        t0 = time.perf_counter()
        tree_merge(_noop, sum, blocks, r)
        seconds.append(time.perf_counter() - t0)
    return float(np.median(seconds[5:]))


def _warm():
    """Import what the tasks run (on a worker)."""
    import sparsecal.distributed.equal_mass  # noqa: F401
    import sparsecal.distributed.isotonic  # noqa: F401


def _count_waits(client):
    """Count in ``client.waits`` the times the client waits for the cluster
    (a gather, or ``distributed.wait``): its round trips."""
    client.waits, sync = 0, client.sync

    def counted(func, *args, **kwargs):
        client.waits += func.__name__ in ("_gather", "_wait")
        return sync(func, *args, **kwargs)
    client.sync = counted


@contextlib.contextmanager
def cluster_client(workers, dask_malloc=False):
    """A client of a started local cluster whose workers imported the package;
    it counts its round trips (``client.waits``)."""
    import dask.array  # noqa: F401  (as the single path's imports: before the timings)
    from distributed import Client
    with sd.local_cluster(workers, malloc=not dask_malloc,
                          dashboard_address=None) as cluster, Client(cluster) as client:
        client.run(_warm)
        _count_waits(client)
        print("worker malloc settings:", client.run(
            lambda: {k: os.environ.get(k) for k in sd.WORKER_MALLOC}))
        yield client


def _distributed_steps(client, dev_path, test_path, groups, chunk_rows):
    s = Steps(client)
    dev = s.run("threshold dev", 0, lambda: _persisted(dev_path, chunk_rows))
    test = s.run("threshold test", 0, lambda: _persisted(test_path, chunk_rows))
    before = s.run("SMCE+GMCE test", 0, lambda: sd.smce_and_gmce(test, groups))
    model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups)
    s.run("isotonic fit dev", 0, lambda: model.fit(dev))
    after = s.run("apply+SMCE+GMCE", 0,
                  lambda: sd.smce_and_gmce(model.transform(test), groups))
    return s.rows, (before, after)


def _best(runs):
    """Per step, the row of the fastest of the repeated runs, with the least
    CPU time of any of them."""
    best = []
    for rows in zip(*runs):
        row = dict(min(rows, key=lambda r: r["seconds"]))
        for field in ("cpu_seconds", "cpu_seconds_workers"):
            row[field] = min(r[field] for r in rows)
        best.append(row)
    return best


def check_equal(a, b):
    for x, y in zip([a[0]] + a[1], [b[0]] + b[1]):
        assert (x is None) == (y is None)
        if x is not None:
            assert x.n == y.n and (x.bins.count == y.bins.count).all()
            assert abs(x.value - y.value) <= 1e-12 * abs(y.value), (x.value, y.value)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chunk-rows", type=int, default=262_144)
    ap.add_argument("--repeat", type=int, default=1,
                    help="run each path this many times; report each step's best")
    ap.add_argument("--dask-malloc", action="store_true",
                    help="keep Dask's worker malloc settings (MALLOC_TRIM_THRESHOLD_=65536)")
    ap.add_argument("--workdir")
    ap.add_argument("--json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.workdir) as d:
        paths = [os.path.join(d, f"{n}.npy") for n in ("dev", "test")]
        golds = [write_score_matrix(p, args.rows, seed=i) for i, p in enumerate(paths)]
        for p, gold in zip(paths, golds):   # set-up, as the score files: not timed
            np.save(_gold_path(p), gold)
        singles, dists = [], []
        with cluster_client(args.workers, args.dask_malloc) as client:
            latency = round_trip(client)
            for _ in range(args.repeat):   # the two paths interleaved: the same load
                singles.append(single(*paths, *golds, args.workers))
                groups = singles[-1][1]
                dists.append(_distributed_steps(client, *paths, groups, args.chunk_rows))
        one, (_, groups, res_one, sizes) = _best([r[0] for r in singles]), singles[-1]
        for r in one[:2]:
            r["entries"] = sizes[0] if "dev" in r["step"] else sizes[1]
        dist, res_dist = _best([r[0] for r in dists]), dists[-1][1]
        for r, o in zip(dist, one):
            r["entries"] = o["entries"]
        rounds = [sum(r["seconds"] for r in b[0]) / sum(r["seconds"] for r in a[0])
                  for a, b in zip(singles, dists)]
    for pair in zip(res_dist, res_one):
        check_equal(*pair)
    total, cpu = ({k: sum(r[field] for r in rows) for k, rows in (("single", one),
                                                                   ("dask", dist))}
                  for field in ("seconds", "cpu_seconds"))
    # the cluster's least time: the single path's work, plus an empty round trip
    # for each time the cluster path's client waited
    trips = sum(r["round_trips"] for r in dist)
    floor = total["single"] + trips * latency
    report = {"rows": args.rows, "workers": args.workers, "chunk_rows": args.chunk_rows,
              "repeat": args.repeat, "dask_malloc": args.dask_malloc, "entries_dev_test": sizes, "single": one, "dask": dist,
              "total_seconds": total, "total_cpu_seconds": cpu,
              "ratio_dask_over_single": round(total["dask"] / total["single"], 3),
              "ratio_per_round": [round(r, 3) for r in rounds],
              "cpu_ratio_dask_over_single": round(cpu["dask"] / cpu["single"], 3),
              "round_trip_seconds": round(latency, 4),
              "floor_seconds": round(floor, 3),
              "ratio_floor_over_single": round(floor / total["single"], 3),
              "results_equal": True}
    dense = args.rows * N_TAGS
    for name in ("single", "dask"):
        print(f"\n{name}:")
        for r in report[name]:
            # thresholding reads the dense matrix; the other steps the entries
            n = dense if r["step"].startswith("threshold") else r["entries"]
            rate = n / r["seconds"] / args.workers if r["seconds"] else 0
            unit = "dense values" if r["step"].startswith("threshold") else "entries"
            print(f"  {r['step']:<16} {r['seconds']:8.2f} s  cpu {r['cpu_seconds']:6.2f} s "
                  f"(workers {r['cpu_seconds_workers']:5.2f} s)  "
                  f"load {r['load_1min']:5.2f}  "
                  f"{rate / 1e6:8.2f} M {unit}/s/worker  "
                  f"{r['bytes_between_workers']:>12,} B between workers")
            if "tasks" in r:
                print(f"    {r['round_trips']} round trips, {r['tasks']} tasks; "
                      f"worker seconds: {r['worker_seconds']}")
    print(f"\ntotal: single {total['single']:.2f} s, dask {total['dask']:.2f} s "
          f"(ratio {report['ratio_dask_over_single']}); CPU: single {cpu['single']:.2f} s, "
          f"dask {cpu['dask']:.2f} s (ratio {report['cpu_ratio_dask_over_single']}); "
          f"wall ratio per round (interleaved) {report['ratio_per_round']}; results equal")
    print(f"floor of the cluster path: single {total['single']:.2f} s + {trips} round trips "
          f"x {latency * 1e3:.1f} ms (median empty round trip) = {floor:.2f} s "
          f"(ratio {report['ratio_floor_over_single']})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
