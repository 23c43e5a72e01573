#!/usr/bin/env python
"""Every method fitted per TFG group on a local Dask cluster against
``GroupedCalibrator.fit`` on one machine, and the distributed ``evaluate`` with
intervals and measures against ``sparsecal.evaluate`` (issue 15, items 1-2;
docs/scale.md).

Data: ``make_tagger_outputs(--tokens, n_tags=--tags)`` dev and test splits,
thresholded at 0.01; dev as ``DaskEntries`` persisted in worker memory on
``LocalCluster(n_workers=--workers, threads_per_worker=1)``. Reported per method:
wall time of each fit, their ratio (the machine is shared: only ratios from the
same run mean anything), and the largest difference of the two models' outputs on
the test entries (0 means bit-identical). Then ``evaluate`` (simulation
intervals, ``per_tag``, top-label ECE, every distributed measure) both ways, and
the largest relative difference of its numbers.

Usage::

    .venv/bin/python benchmarks/bench_dask_calibrators.py --tokens 100000
    options: --tags N  --workers N  --chunk-rows R  --methods NAME ...  --no-evaluate
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE)]   # this checkout's sparsecal

import sparsecal as sc  # noqa: E402
from sparsecal import distributed as sd  # noqa: E402
from sparsecal.calibration.registry import METHODS  # noqa: E402
from sparsecal.datasets import make_tagger_outputs  # noqa: E402


def _timed(func):
    t0 = time.perf_counter()
    out = func()
    return out, time.perf_counter() - t0


def _numbers(result):
    """Every float of an evaluation's dict, in a fixed order."""
    out = []

    def walk(x):
        if isinstance(x, dict):
            for k in sorted(x):
                walk(x[k])
        elif isinstance(x, list):
            for v in x:
                walk(v)
        elif isinstance(x, float):
            out.append(x)
    walk(result.to_dict())
    return np.array(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokens", type=int, default=100000)
    p.add_argument("--tags", type=int, default=50)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--chunk-rows", type=int, default=16384)
    p.add_argument("--methods", nargs="*", choices=list(METHODS),
                   help="only these methods (default: every registered method)")
    p.add_argument("--no-evaluate", action="store_true", help="skip the evaluate row")
    args = p.parse_args()
    import dask.array as da
    from distributed import Client, LocalCluster

    dev = make_tagger_outputs(args.tokens, n_tags=args.tags, split_seed=1)
    test = make_tagger_outputs(args.tokens, n_tags=args.tags, split_seed=2)
    groups = sc.TagGroups.from_counts(dev.train_counts, 5, n_tags=args.tags)
    one_dev, one_test = sc.threshold(dev.scores, dev.gold), sc.threshold(test.scores, test.gold)
    warnings.simplefilter("ignore")
    with LocalCluster(n_workers=args.workers, threads_per_worker=1,
                      dashboard_address=None) as cluster, Client(cluster):
        chunks = (args.chunk_rows, args.tags)
        entries = sd.threshold(da.from_array(dev.scores, chunks=chunks), dev.gold).persist()
        test_entries = sd.threshold(da.from_array(test.scores, chunks=chunks),
                                    test.gold).persist()
        print(f"dev entries {len(one_dev):,}, test entries {len(one_test):,}, "
              f"{args.workers} workers; load average {os.getloadavg()[0]:.1f}")
        print("| method | single (s) | dask (s) | ratio | max abs output difference |")
        print("|---|---|---|---|---|")
        for name, method in METHODS.items():
            if args.methods and name not in args.methods:
                continue
            ref, t_one = _timed(lambda: sc.GroupedCalibrator(method.build(prior=0.2),
                                                             groups).fit(one_dev))
            got, t_dask = _timed(lambda: sc.GroupedCalibrator(method.build(prior=0.2),
                                                              groups).fit(entries))
            diff = np.abs(got.transform(one_test).score.astype(np.float64)
                          - ref.transform(one_test).score).max()
            print(f"| {name} | {t_one:.2f} | {t_dask:.2f} | {t_dask / t_one:.1f} | "
                  f"{diff:.1e} |")
        if args.no_evaluate:
            return
        kw = dict(ci="simulation", per_tag=True, top_label=True, prior=0.3,
                  metrics=list(sd.DISTRIBUTED_MEASURES))
        ref, t_one = _timed(lambda: sc.evaluate(one_test, groups, **kw))
        got, t_dask = _timed(lambda: sd.evaluate(test_entries, groups, **kw))
        a, b = _numbers(got), _numbers(ref)
        rel = np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))
        print(f"| evaluate (simulation CI, per tag, top label, {len(kw['metrics'])} measures)"
              f" | {t_one:.2f} | {t_dask:.2f} | {t_dask / t_one:.1f} | max rel {rel:.1e} |")
        print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
