#!/usr/bin/env python
"""The single-machine bootstrap interval against the entry-index draws it replaced.

``calibration_error(x, y, ci=ConfidenceInterval("bootstrap"))`` draws each
replicate from the distinct-score table (``metrics/resampling.py``; the same
numbers on a cluster). Before (commit 4deebc4^), a replicate drew ``n`` entry
indices from one shared stream and re-binned the sorted points with
``replicated_bin_sums`` (now in ``tests/_resampling_reference.py``): that loop is the baseline here, run in this process,
interleaved with the current code (same sort, same bins, same replicates count).

Target (issue 29): at n = 1e5 distinct scores, no slower than the entry-index
draws. The baseline is single-threaded NumPy; the table draws run in the
compiled core on every thread, so both the wall and the CPU time are compared
(on a loaded machine the CPU time varies far less).

Usage::

    .venv/bin/python benchmarks/bench_bootstrap.py                # n = 1e5, 1000 replicates
    .venv/bin/python benchmarks/bench_bootstrap.py --n 1000000 --resamples 200 --rounds 3
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "tests")]
from _machine import interleaved  # noqa: E402
from _resampling_reference import replicated_bin_sums  # noqa: E402   (the replaced code)
from sparsecal.core.binning import bin_statistics  # noqa: E402
from sparsecal.metrics import ConfidenceInterval, calibration_error  # noqa: E402
from sparsecal.metrics.ce import ce_of_gaps  # noqa: E402


def index_draws(x, y, spec):
    """The interval as computed before the table draws (entry indices, one stream)."""
    bins, x, y, (perm, sorted_x) = bin_statistics(x, y)
    starts = np.concatenate(([0], np.cumsum(bins.count)))
    rng = np.random.default_rng(spec.random_state)
    n = x.shape[0]
    sx, sy = sorted_x.astype(np.float64), y[perm].astype(np.float64)
    count = np.diff(starts).astype(np.float64)
    weights = count / count.sum()
    values = np.empty(spec.n_resamples)
    for s in range(spec.n_resamples):
        w = np.bincount(rng.integers(0, n, n), minlength=n)
        sum_score, sum_label = replicated_bin_sums(w, starts, sx, sy)
        values[s] = ce_of_gaps(weights, np.abs(sum_score - sum_label) / count, 2.0)
    lo, hi = np.percentile(values, spec.percentiles)
    return float(lo), float(hi)


def table_draws(x, y, spec):
    ce = calibration_error(x, y, ci=spec)
    return ce.ci_low, ce.ci_high


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--ties", action="store_true", help="scores rounded to 3 decimals")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    x = rng.random(args.n)
    if args.ties:
        x = np.round(x, 3)
    y = (rng.random(args.n) < x ** 1.3).astype(np.uint8)
    spec = ConfidenceInterval("bootstrap", n_resamples=args.resamples)
    print(f"n={args.n:,} ({np.unique(x).size:,} distinct scores), {args.resamples} "
          f"replicates; load {os.getloadavg()}")
    runs = {"entry-index draws (before)": index_draws, "table draws (now)": table_draws}
    wall, cpu, ends = interleaved(runs, args.rounds, x, y, spec)
    base = "entry-index draws (before)"
    print("\n| draws | wall best / median (s) | CPU median (s) | wall / CPU ratio to before "
          "(medians of rounds) | interval |\n|---|---|---|---|---|")
    for name in runs:
        wall_ratio = np.median(np.array(wall[name]) / np.array(wall[base]))
        cpu_ratio = np.median(np.array(cpu[name]) / np.array(cpu[base]))
        print(f"| {name} | {min(wall[name]):.3f} / {np.median(wall[name]):.3f} | "
              f"{np.median(cpu[name]):.3f} | {wall_ratio:.2f}x / {cpu_ratio:.2f}x | "
              f"({ends[name][0]:.5f}, {ends[name][1]:.5f}) |")
    print(f"\nload after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
