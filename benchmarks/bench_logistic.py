#!/usr/bin/env python
"""PlattCalibrator's fit (the shared Newton solver, ``calibration/logistic.py``)
against the L-BFGS fit it replaced, in this process.

The baseline is PlattCalibrator's own fit before it became a case of the shared
solver (commit 2eaba60^): SciPy's L-BFGS-B on the log-odds with gtol 1e-12.
Both are timed interleaved, wall and CPU time; the fitted slope and offset are
compared (target, issue 29: at least as fast as the baseline, values within
1e-8).

Usage::

    .venv/bin/python benchmarks/bench_logistic.py               # n = 1e6, 5 rounds
    .venv/bin/python benchmarks/bench_logistic.py --n 100000 --rounds 9
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _machine import interleaved  # noqa: E402
from sparsecal import PlattCalibrator  # noqa: E402


def lbfgs_platt(x, y, eps=1e-7):
    """(slope, offset) of the L-BFGS Platt fit (no weights, no prior)."""
    from scipy.optimize import minimize
    from scipy.special import expit, log_expit

    p = np.clip(x.astype(np.float64), eps, 1.0 - eps)
    s = np.log(p) - np.log1p(-p)
    weights = np.full(x.shape[0], 1.0 / x.shape[0])
    z = np.where(y.astype(bool), 1.0, -1.0)

    def objective(params):
        a, g = params
        margin = z * (a * s + g)
        r = -weights * z * expit(-margin)
        return -np.sum(weights * log_expit(margin)), np.array([np.sum(r * s), np.sum(r)])

    result = minimize(objective, np.array([1.0, 0.0]), jac=True, method="L-BFGS-B",
                      options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000})
    return tuple(float(v) for v in result.x)


def newton_platt(x, y):
    cal = PlattCalibrator().fit(x, y)
    return cal.slope_, cal.offset_


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    x = rng.random(args.n).astype(np.float32)
    y = (rng.random(args.n) < x ** 1.5).astype(np.uint8)
    print(f"PlattCalibrator fit, n={args.n:,} float32 scores; load {os.getloadavg()}")
    runs = {"L-BFGS (before)": lbfgs_platt, "Newton (now)": newton_platt}
    wall, cpu, fits = interleaved(runs, args.rounds, x, y)
    base = "L-BFGS (before)"
    print("\n| fit | wall best / median (s) | CPU best / median (s) | wall ratio, median of "
          "rounds |\n|---|---|---|---|")
    for name in runs:
        ratio = np.median(np.array(wall[name]) / np.array(wall[base]))
        print(f"| {name} | {min(wall[name]):.3f} / {np.median(wall[name]):.3f} | "
              f"{min(cpu[name]):.3f} / {np.median(cpu[name]):.3f} | {ratio:.2f}x |")
    diff = max(abs(a - b) for a, b in zip(fits[base], fits["Newton (now)"]))
    print(f"\n|slope, offset (Newton) - (L-BFGS)| = {diff:.1e} (target <= 1e-8)")
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
