"""Stock betacal (its LogisticRegression at scikit-learn's default tol=1e-4)
against sparsecal's BetaCalibration: the gradient of betacal's objective at its
solution, the largest prediction difference, and which objective is lower.

Usage: python scripts/betacal_stock.py [n_seeds]   (tests/test_betacal_stock.py
runs a bounded form of it)
"""
import sys
import warnings

import numpy as np


def make_data(seed, n):
    """Rounded scores (ties), labels of both classes (not separable for n >= 4)."""
    rng = np.random.default_rng(seed)
    s = np.round(rng.beta(0.7, 1.5, n), int(rng.integers(1, 4)))
    y = (rng.random(n) < np.clip(s, 0.05, 0.95) ** rng.uniform(0.5, 2.5)).astype(np.uint8)
    y[:2] = [0, 1][:n]
    return s, y


def features(s):
    """betacal's features (ln s, -ln(1 - s)), clipped at float64 epsilon."""
    eps = np.finfo(np.float64).eps
    s = np.clip(s, eps, 1 - eps)
    return np.column_stack([np.log(s), -np.log1p(-s)])


def objective(a, b, c, s, y):
    """betacal's objective per point: mean log loss (its ridge, 1/C = 1e-11, aside)."""
    x = features(s)
    eta = a * x[:, 0] + b * x[:, 1] + c
    return float(np.mean(np.logaddexp(0, np.where(y == 1, -eta, eta))))


def stock(s, y):
    """Stock betacal's (a, b, c), its final LogisticRegression's n_iter_, the
    largest gradient component of its mean log loss at its solution (over the
    columns that LogisticRegression fitted) and the largest component of the
    Newton step from there, H^-1 g: how far its parameters are from the optimum
    (inf where H is singular: separable data, no finite optimum)."""
    import betacal
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cal = betacal.BetaCalibration("abm").fit(s, y)
    a, b, _ = cal.calibrator_.map_
    lr = cal.calibrator_.lr_
    c = float(lr.intercept_[0])
    x = features(s)
    cols = [j for j, v in ((0, a), (1, b)) if v != 0] if lr.coef_.shape[1] < 2 else [0, 1]
    eta = a * x[:, 0] + b * x[:, 1] + c
    r = 1 / (1 + np.exp(-eta)) - y
    design = np.column_stack([x[:, cols], np.ones(len(s))])
    grad = design.T @ r / len(s)
    p = 1 / (1 + np.exp(-eta))
    hess = (design * (p * (1 - p))[:, None]).T @ design / len(s)
    try:
        step = float(np.abs(np.linalg.solve(hess, grad)).max())
    except np.linalg.LinAlgError:
        step = np.inf
    if not np.isfinite(step) or np.linalg.cond(hess) > 1e12:
        step = np.inf
    return (a, b, c), int(lr.n_iter_[0]), float(np.abs(grad).max()), step, cal


def compare(seed, n):
    from sparsecal import BetaCalibration
    s, y = make_data(seed, n)
    (a, b, c), n_iter, grad, step, ref = stock(s, y)
    ours = BetaCalibration().fit(s, y)
    q = np.concatenate([np.linspace(0, 1, 1001), s[:1000]])
    diff = float(np.abs(ours.predict(q) - ref.predict(q)).max())
    return {"seed": seed, "n": n, "n_iter": n_iter, "grad": grad, "step": step,
            "diff": diff,
            "ours": objective(ours.a_, ours.b_, ours.c_, s, y),
            "theirs": objective(a, b, c, s, y)}


def main(n_seeds=5):
    print("| n | seed | n_iter | max |grad| | max |Newton step| | max |Δp| | "
          "objective ours − stock |")
    print("|---|---|---|---|---|---|---|")
    for n in (2, 3, 10, 100, 1000, 10000, 100000):
        for seed in range(n_seeds):
            r = compare(seed, n)
            print(f"| {n} | {seed} | {r['n_iter']} | {r['grad']:.1e} | {r['step']:.1e} | "
                  f"{r['diff']:.1e} | "
                  f"{r['ours'] - r['theirs']:+.1e} |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
