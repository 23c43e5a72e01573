#!/usr/bin/env python
"""Thresholding a freshly opened memory map against a count pass over a freshly
opened map of the same file (issue 29), in this process.

Every call opens the ``.npy`` again (``np.load(..., mmap_mode="r")``: the file is
in the page cache, the process has none of its pages mapped), then runs

- ``floor``: ``np.count_nonzero(chunk >= t)`` over row chunks (4 MiB);
- ``threshold``: ``sparsecal.threshold`` (``--n-threads``, default: the CPUs;
  the map read with ``pread`` on Linux);
- ``threshold, 1 thread``: the same on one thread (no OpenMP team to wake: on a
  busy machine a second thread can be descheduled for milliseconds, which the
  team waits for).

The timings include opening the map and dropping it (``munmap``): a count pass
leaves the pages it touched mapped, which the unmapping then tears down.

Interleaved round-robin; best and median wall time, and the median over rounds
of each ratio to the same round's floor. Targets: threshold <= 1.25x the floor
at 100 MB and 1 GB, <= 1.5x at 10 MB.

Usage::

    .venv/bin/python benchmarks/bench_threshold_map.py              # 10 MB, 100 MB, 1 GB
    .venv/bin/python benchmarks/bench_threshold_map.py --sizes 10MB --rounds 200
    options: --workdir DIR (default /tmp/sparsecal_bench)  --n-threads N
"""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _data  # noqa: E402
from _baselines import floor_count  # noqa: E402

from sparsecal import threshold  # noqa: E402

#: file size -> rows of 426 float32 tags
SIZES = {"10MB": 5_868, "100MB": 58_685, "1GB": 586_854}
TARGETS = {"10MB": 1.5, "100MB": 1.25, "1GB": 1.25}


def scores_file(workdir, rows):
    """(path of the scores .npy, gold) of ``rows`` rows, written once."""
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, f"map_{rows}x{_data.N_TAGS}.npy")
    if not os.path.exists(path):
        gold = _data.write_score_matrix(path + ".tmp.npy", rows, seed=0)
        np.save(path + ".gold.npy", gold)
        os.replace(path + ".tmp.npy", path)
    return path, np.load(path + ".gold.npy")


def cases(path, gold, n_threads):
    def fresh():
        return np.load(path, mmap_mode="r")

    return {"floor": lambda: floor_count(fresh(), chunk_bytes=4 << 20),
            "threshold": lambda: threshold(fresh(), gold, 0.01, n_threads=n_threads),
            "threshold, 1 thread": lambda: threshold(fresh(), gold, 0.01, n_threads=1)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    p.add_argument("--rounds", type=int, help="default: 100, 30, 9 by size")
    p.add_argument("--workdir", default="/tmp/sparsecal_bench")
    p.add_argument("--n-threads", type=int, default=None)
    args = p.parse_args()
    print(f"load {os.getloadavg()}; n_threads={args.n_threads or 'default'}")
    for size in args.sizes:
        path, gold = scores_file(args.workdir, SIZES[size])
        runs = cases(path, gold, args.n_threads)
        rounds = args.rounds or {"10MB": 100, "100MB": 30, "1GB": 9}[size]
        times = {name: [] for name in runs}
        for _ in range(rounds):
            for name, fn in runs.items():
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
        t = {k: np.array(v) for k, v in times.items()}
        print(f"\n{size} ({os.path.getsize(path) / 1e6:.0f} MB, {rounds} rounds; load "
              f"{os.getloadavg()[0]:.2f})\n| case | best (ms) | median (ms) | x floor, "
              f"median of rounds | target |\n|---|---:|---:|---:|---|")
        for name in runs:
            ratio = float(np.median(t[name] / t["floor"]))
            target = (f"<= {TARGETS[size]}x: {'ok' if ratio <= TARGETS[size] else 'MISS'}"
                      if name == "threshold" else "")
            print(f"| {name} | {t[name].min() * 1e3:.2f} | {np.median(t[name]) * 1e3:.2f} "
                  f"| {ratio:.2f} | {target} |")


if __name__ == "__main__":
    main()
