#!/usr/bin/env python
"""Coverage of sparsecal's calibration-error intervals on synthetic data.

Setting (Nguyen's thesis, Section 4.3): predictions ``q ~ Beta(a, b)``, labels
``y ~ Bernoulli(t(q))`` with

- calibrated:    ``t(q) = q``;
- miscalibrated: ``t(q) = max(0, q - k)`` for ``q <= 0.5``, ``min(1, q + k)``
  otherwise (the thesis prints ``min(0, ...)``, a typo).

The estimator is ``calibration_error(q, y, n_bins=B)``: CE_2 over ``B`` equal-mass
bins (SMCE's default, ``B = 10``). Its target, the "true CE", is the population
value of the *binned* quantity: the bins are the population B-quantiles of q and

    CE_2^pop = sqrt( sum_i (1/B) * (E[q | bin i] - E[t(q) | bin i])^2 ),

the limit of the estimator as n -> infinity with B fixed (computed by numerical
integration over the Beta quantile function). For the calibrated case it is 0.

For every replicate we draw fresh data, compute the Algorithm-2 interval
(``ConfidenceInterval("simulation")``: 10,000 draws, ``mean +- z sd``) and the
bootstrap percentile interval (``ConfidenceInterval("bootstrap")``: 1,000
replicates that re-bin), both at ``--level`` (default 0.95, z = 1.96), and
record whether each contains CE_2^pop. Prints a markdown table (see
docs/ci_coverage.md for the discussion of the numbers).

    .venv/bin/python benchmarks/coverage_study.py                 # 200 reps, n = 1e3, 1e4, 1e5
    .venv/bin/python benchmarks/coverage_study.py --reps 50 --ns 1000 10000 --jobs 2
    .venv/bin/python benchmarks/coverage_study.py --level 0.9     # 90% intervals
    .venv/bin/python benchmarks/coverage_study.py debiased --reps 2000 --ns 1000 10000 \\
        --out cov.json        # debiased CE_2's score interval and calibration_test over
                              # the suite; resumable (finished cells are kept in --out)
    .venv/bin/python benchmarks/coverage_study.py debiased --table --out cov.json
    .venv/bin/python benchmarks/coverage_study.py membership --ns 1000 10000
        # why Beta(0.2, 0.2), k = 0.1 under-covered without the membership allowance
    .venv/bin/python benchmarks/coverage_study.py tagger --reps 500
        # the report's intervals on whole taggers: SMCE, GMCE per group, per-tag CE
"""
import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy import integrate, stats

import sparsecal as sc
from sparsecal.metrics import ConfidenceInterval


def t_true(q, k):
    """Realistic frequency P(y = 1 | q): identity for k = 0, else the thesis' t(p)."""
    q = np.asarray(q, dtype=np.float64)
    return np.where(q <= 0.5, np.maximum(0.0, q - k), np.minimum(1.0, q + k))


def _gap_of_u(u, a, b, k):
    """q - t(q) at the u-quantile of Beta(a, b)."""
    q = stats.beta.ppf(u, a, b)
    return float(q - t_true(q, k))


def _breaks(a, b, k):
    """Quantile levels where q - t(q) jumps or kinks (q = k, 0.5, 1 - k)."""
    return sorted({float(stats.beta.cdf(v, a, b)) for v in (k, 0.5, 1.0 - k)} - {0.0, 1.0})


def population_binned_ce(a, b, k, n_bins=10, norm=2):
    """CE_p of the population: equal-mass bins at the B-quantiles of q ~ Beta(a, b),
    per-bin gap ``E[q - t(q) | bin]``, equal weights 1/B."""
    if k == 0:
        return 0.0
    gaps = []
    breaks = _breaks(a, b, k)
    for i in range(n_bins):
        lo, hi = i / n_bins, (i + 1) / n_bins
        pts = [p for p in breaks if lo < p < hi]
        val, _ = integrate.quad(_gap_of_u, lo, hi, args=(a, b, k), points=pts or None,
                                limit=200, epsabs=1e-13, epsrel=1e-11)
        gaps.append(abs(val) * n_bins)
    gaps = np.array(gaps)
    if norm == np.inf:
        return float(gaps.max())
    return float(np.mean(gaps ** norm) ** (1.0 / norm))


def analytic_ce(a, b, k):
    """Unbinned CE_2 = sqrt(E[(q - t(q))^2]) (the limit of infinitely many bins)."""
    val, _ = integrate.quad(lambda u: _gap_of_u(u, a, b, k) ** 2, 0.0, 1.0,
                            points=_breaks(a, b, k) or None, limit=200)
    return float(np.sqrt(val))


def draw(n, a, b, k, rng):
    q = rng.beta(a, b, n)
    y = (rng.random(n) < t_true(q, k)).astype(np.uint8)
    return q, y


def one_replicate(args):
    """Intervals of one replicate: (estimate, sim_lo, sim_hi, boot_lo, boot_hi)."""
    n, a, b, k, n_bins, n_sim, n_boot, level, seed = args
    rng = np.random.default_rng(seed)
    q, y = draw(n, a, b, k, rng)
    sim = sc.calibration_error(q, y, n_bins=n_bins, ci=ConfidenceInterval(
        "simulation", confidence_level=level, n_resamples=n_sim, random_state=rng))
    out = [sim.value, sim.ci_low, sim.ci_high]
    if n_boot:
        boot = sc.calibration_error(q, y, n_bins=n_bins, ci=ConfidenceInterval(
            "bootstrap", confidence_level=level, n_resamples=n_boot, random_state=rng))
        out += [boot.ci_low, boot.ci_high]
    else:
        out += [np.nan, np.nan]
    return out


def coverage(n, k, *, a=0.5, b=0.5, n_bins=10, reps=200, n_sim=10000, n_boot=1000,
             level=0.95, seed=0, pool=None, truth="binned"):
    """Run ``reps`` replicates; return the table row as a dict.

    ``truth="binned"`` (default) targets the population value of the binned
    quantity; ``truth="analytic"`` the unbinned sqrt(E[(q - t(q))^2]), to show how
    much the choice matters."""
    truth = (population_binned_ce(a, b, k, n_bins) if truth == "binned"
             else analytic_ce(a, b, k))
    root = np.random.SeedSequence([seed, n, int(round(k * 1000)), n_bins])
    seeds = [int(s.generate_state(1)[0]) for s in root.spawn(reps)]
    jobs = [(n, a, b, k, n_bins, n_sim, n_boot, level, s) for s in seeds]
    rows = np.array(list(pool.map(one_replicate, jobs, chunksize=4) if pool
                         else map(one_replicate, jobs)))
    est, slo, shi, blo, bhi = rows.T
    res = {"n": n, "k": k, "truth": truth, "reps": reps, "level": level,
           "mean_estimate": est.mean(),
           "sim_cover": np.mean((slo <= truth) & (truth <= shi)),
           "sim_above": np.mean(slo > truth),   # interval entirely above the truth
           "sim_width": np.mean(shi - slo)}
    if n_boot:
        res.update(boot_cover=np.mean((blo <= truth) & (truth <= bhi)),
                   boot_above=np.mean(blo > truth), boot_width=np.mean(bhi - blo))
    # Monte-Carlo sd of the estimator across replicates vs Algorithm 2's sd.
    res["est_sd"] = est.std(ddof=1)
    res["sim_sd"] = np.mean((shi - slo) / (2 * ConfidenceInterval(confidence_level=level).z))
    return res


def markdown(results, a, b, n_bins, truth="binned"):
    head = (f"| case | n | true CE_2 ({truth}) | mean estimate | Alg. 2 coverage "
            "| Alg. 2 above | Alg. 2 mean width | bootstrap coverage | bootstrap above "
            "| bootstrap mean width | sd of estimate | Alg. 2 sd |")
    lines = [f"q ~ Beta({a}, {b}), {n_bins} equal-mass bins, "
             f"{100 * results[0]['level']:g}% intervals, "
             f"{results[0]['reps']} replicates per row; 'above' = share of intervals "
             "lying entirely above the truth.", "", head,
             "|" + "---|" * (head.count("|") - 1)]
    for r in results:
        case = "calibrated" if r["k"] == 0 else f"miscalibrated k={r['k']:g}"
        boot = (f"{r['boot_cover']:.1%} | {r['boot_above']:.1%} | {r['boot_width']:.4f}"
                if "boot_cover" in r else "- | - | -")
        lines.append(f"| {case} | {r['n']:,} | {r['truth']:.4f} | {r['mean_estimate']:.4f} | "
                     f"{r['sim_cover']:.1%} | {r['sim_above']:.1%} | {r['sim_width']:.4f} | "
                     f"{boot} | {r['est_sd']:.4f} | {r['sim_sd']:.4f} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--ns", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--ks", type=float, nargs="+", default=[0.0, 0.1],
                    help="miscalibration shifts (0 = calibrated)")
    ap.add_argument("--shape", type=float, nargs=2, default=[0.5, 0.5], metavar=("A", "B"))
    ap.add_argument("--n-bins", type=int, default=10)
    ap.add_argument("--n-sim", type=int, default=10000)
    ap.add_argument("--n-boot", type=int, default=1000, help="0 skips the bootstrap")
    ap.add_argument("--level", type=float, default=0.95,
                    help="confidence level of both intervals (default 0.95)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--truth", choices=["binned", "analytic"], default="binned",
                    help="target: population binned CE_2 (default) or unbinned CE_2")
    args = ap.parse_args(argv)
    a, b = args.shape
    os.environ.setdefault("SPARSECAL_NUM_THREADS", "1")   # one thread per worker
    results = []
    t0 = time.time()
    with ProcessPoolExecutor(args.jobs) as pool:
        for k in args.ks:
            for n in args.ns:
                results.append(coverage(n, k, a=a, b=b, n_bins=args.n_bins, reps=args.reps,
                                        n_sim=args.n_sim, n_boot=args.n_boot,
                                        level=args.level, seed=args.seed, pool=pool,
                                        truth=args.truth))
                print(f"# done k={k} n={n} ({time.time() - t0:.0f} s)", file=sys.stderr)
    print(markdown(results, a, b, args.n_bins, args.truth))
    print(f"\nunbinned analytic CE_2 for k={max(args.ks)}: "
          f"{analytic_ce(a, b, max(args.ks)):.4f}")




# --------------------------------------------------------------------------- #
# Debiased CE_2 (score interval) and the consistency-resampling test           #
# --------------------------------------------------------------------------- #
#: The synthetic suite: (a, b) of q ~ Beta(a, b); (0.2, 0.2) is spiky like a
#: tagger's thresholded scores (mass near 0 and 1).
SUITE = [(2, 5), (1, 1), (5, 2), (0.2, 0.2)]


def one_debiased(args):
    """(covers, interval above the truth, D, width, test p-value or nan) of one replicate."""
    n, a, b, k, n_bins, truth, n_test, seed = args
    rng = np.random.default_rng(seed)
    q, y = draw(n, a, b, k, rng)
    res = sc.calibration_error(q, y, n_bins=n_bins, debias=True, ci="score")
    p = (sc.calibration_test(q, y, n_bins=n_bins, n_resamples=n_test, random_state=rng).p_value
         if n_test else np.nan)
    return (float(res.ci_low <= truth <= res.ci_high), float(res.ci_low > truth),
            res.value ** 2, res.ci_high - res.ci_low, p)


def binomial_ci(hits, reps):
    """Clopper-Pearson 95% interval of a Monte-Carlo proportion."""
    lo = stats.beta.ppf(0.025, hits, reps - hits + 1) if hits else 0.0
    hi = stats.beta.ppf(0.975, hits + 1, reps - hits) if hits < reps else 1.0
    return float(lo), float(hi)


def debiased_cell(a, b, k, n, reps, test_reps, n_test, n_bins=10, seed=0):
    """One cell of the suite: coverage of the score interval over ``reps``
    replicates, rejection rate of the test at 5% over the first ``test_reps``."""
    t0 = time.time()
    truth = population_binned_ce(a, b, k, n_bins)
    root = np.random.SeedSequence([seed, n, int(k * 1000), int(a * 10), int(b * 10)])
    seeds = [int(s.generate_state(1)[0]) for s in root.spawn(max(reps, test_reps))]
    rows = np.array([one_debiased((n, a, b, k, n_bins, truth, n_test if i < test_reps else 0,
                                   s_)) for i, s_ in enumerate(seeds)])
    cover, above = rows[:reps, 0], rows[:reps, 1]
    rej = int(np.sum(rows[:test_reps, 4] <= 0.05))
    return {"a": a, "b": b, "k": k, "n": n, "seed": seed, "n_bins": n_bins, "truth": truth,
            "reps": reps, "cover": int(cover.sum()),
            "cover_ci": binomial_ci(int(cover.sum()), reps),
            "above": int(above.sum()), "mean_d": float(rows[:reps, 2].mean()),
            "mean_width": float(rows[:reps, 3].mean()),
            "test_reps": test_reps, "n_test": n_test, "rejects": rej,
            "rejects_ci": binomial_ci(rej, test_reps) if test_reps else None,
            "seconds": time.time() - t0, "load": os.getloadavg()[0]}


def debiased_table(cells):
    """Markdown table of the cells (one row per cell, in suite order)."""
    lines = ["| q ~ | case | n | true CE_2 (binned) | coverage (reps) [95% CI] | above | "
             "test rejects at 5% (reps) [95% CI] |", "|---|---|---|---|---|---|---|"]
    for c in cells:
        case = "calibrated" if c["k"] == 0 else f"miscalibrated k={c['k']:g}"
        lo, hi = c["cover_ci"]
        rej = "-"
        if c["test_reps"]:
            rlo, rhi = c["rejects_ci"]
            rej = (f"{c['rejects'] / c['test_reps']:.1%} ({c['test_reps']}) "
                   f"[{rlo:.1%}, {rhi:.1%}]")
        lines.append(f"| Beta({c['a']:g}, {c['b']:g}) | {case} | {c['n']:,} | "
                     f"{c['truth']:.4f} | {c['cover'] / c['reps']:.1%} ({c['reps']}) "
                     f"[{lo:.1%}, {hi:.1%}] | {c['above'] / c['reps']:.1%} | {rej} |")
    return "\n".join(lines)


def debiased_main(argv=None):
    ap = argparse.ArgumentParser(description="debiased CE_2 score interval and the "
                                 "calibration test on the synthetic suite; resumable: "
                                 "each finished cell is appended to --out, and cells "
                                 "already there are skipped")
    ap.add_argument("--reps", type=int, default=1000, help="coverage replicates per cell")
    ap.add_argument("--test-reps", type=int, default=2000,
                    help="replicates that also run the test, calibrated cells (size)")
    ap.add_argument("--power-reps", type=int, default=200,
                    help="replicates that also run the test, miscalibrated cells (power)")
    ap.add_argument("--n-test", type=int, default=99, help="resamples of the test")
    ap.add_argument("--ns", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="coverage_debiased.json", help="JSON lines, appended")
    ap.add_argument("--table", action="store_true", help="only print the table of --out")
    args = ap.parse_args(argv)
    os.environ.setdefault("SPARSECAL_NUM_THREADS", "1")
    done = []
    if os.path.exists(args.out):
        with open(args.out) as f:
            done = [json.loads(line) for line in f if line.strip()]
    if not args.table:
        for a, b in SUITE:
            for k in (0.0, 0.1):
                test_reps = args.test_reps if k == 0 else args.power_reps
                for n in args.ns:
                    key = (a, b, k, n, args.seed, args.reps, test_reps, args.n_test)
                    if any((c["a"], c["b"], c["k"], c["n"], c["seed"], c["reps"],
                            c["test_reps"], c["n_test"]) == key for c in done):
                        continue
                    cell = debiased_cell(a, b, k, n, args.reps, test_reps, args.n_test,
                                         seed=args.seed)
                    done.append(cell)
                    with open(args.out, "a") as f:
                        f.write(json.dumps(cell) + "\n")
                    print(debiased_table([cell]).splitlines()[-1],
                          f"({cell['seconds']:.0f} s)", file=sys.stderr, flush=True)
    print(debiased_table(done))


def membership_main(argv=None):
    """Why a cell under-covers: bias of D against θ, its sd against the sd the
    score interval assumes (at the true θ), D over the population's cuts, and
    the coverage of the interval without the membership allowance."""
    from sparsecal.core.binning import BinStats, bin_statistics
    from sparsecal.metrics import debiased
    ap = argparse.ArgumentParser(description=membership_main.__doc__.split("\n")[0])
    ap.add_argument("--shape", type=float, nargs=2, default=[0.2, 0.2], metavar=("A", "B"))
    ap.add_argument("--k", type=float, default=0.1)
    ap.add_argument("--ns", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    (a, b), k, n_bins = args.shape, args.k, 10
    theta = population_binned_ce(a, b, k, n_bins) ** 2
    cuts = stats.beta.ppf(np.arange(1, n_bins) / n_bins, a, b)
    spec = ConfidenceInterval("score")
    allowance = debiased.membership_allowance
    print("| n | mean D | (mean D - θ) / sd(D) | sd(D) | mean model sd | "
          "D over population cuts: mean | coverage without allowance |\n|---|---|---|---|---|---|---|")
    for n in args.ns:
        rng = np.random.default_rng([args.seed, n])
        rows = []
        for _ in range(args.reps):
            q, y = draw(n, a, b, k, rng)
            bins = bin_statistics(q, y, n_bins=n_bins)[0]
            w, t, v = debiased.debiased_terms(bins)
            tp = w * np.maximum(t, 0.0)
            share = tp / tp.sum() if tp.sum() > 0 else w
            model_sd = np.sqrt(4 * (share @ (w * v)) * theta + 2 * np.sum((w * v) ** 2))
            idx = np.searchsorted(cuts, q)
            pop = BinStats(np.bincount(idx, minlength=n_bins), np.bincount(idx, q, n_bins),
                           np.bincount(idx, y, n_bins), np.zeros(n_bins), np.zeros(n_bins))
            wp, tp_, _ = debiased.debiased_terms(pop)
            debiased.membership_allowance = lambda bins_: (0.0, 0.0)
            lo, hi = debiased.score_interval(bins, spec)
            debiased.membership_allowance = allowance
            rows.append([w @ t, model_sd, wp @ tp_, lo ** 2 <= theta <= hi ** 2])
        d, sd, dp, cov = np.array(rows).T
        print(f"| {n:,} | {d.mean():.6f} | {(d.mean() - theta) / d.std():.2f} | {d.std():.6f} | "
              f"{sd.mean():.6f} | {dp.mean():.6f} | {cov.mean():.1%} |")


# --------------------------------------------------------------------------- #
# The report's intervals on whole taggers (issue 26)                           #
# --------------------------------------------------------------------------- #
#: the report's evaluation: debiased CE_2 with its score interval over equal-mass
#: bins of 200 entries (SMCE, GMCE, and per tag with >= 400 entries)
TAGGER_TOKENS, TAGGER_TAGS, TAGGER_GROUPS = 20000, 80, 5


def tagger_split(seed, power, n_tokens=TAGGER_TOKENS, n_tags=TAGGER_TAGS):
    """Thresholded entries of a perfectly calibrated synthetic tagger (gold drawn
    from its scores; ``power=1``) or of its scores raised to ``power`` and
    renormalised (same gold), with each entry's true probability."""
    from sparsecal.datasets import make_tagger_outputs
    data = make_tagger_outputs(n_tokens, n_tags=n_tags, miscalibration=0.0, split_seed=seed)
    p = data.scores.astype(np.float64)
    s = p ** power
    s /= s.sum(1, keepdims=True)
    entries = sc.threshold(s, data.gold)
    return entries, p[entries.token, entries.tag], data.train_counts


def tagger_truth(pool_s, pool_p, fractions):
    """Population binned CE_2 of one set from a large pool of its entries
    (scores ``pool_s`` sorted, true probabilities ``pool_p``): equal-mass bins
    cut at the cumulative ``fractions`` (ending at 1), gap = mean score - mean
    true probability per bin."""
    cuts = np.r_[0, np.round(np.asarray(fractions) * pool_s.shape[0]).astype(int)]
    sums_s, sums_p = np.add.reduceat(pool_s, cuts[:-1]), np.add.reduceat(pool_p, cuts[:-1])
    n = np.diff(cuts)
    return float(np.sqrt(np.sum(n / n.sum() * ((sums_s - sums_p) / n) ** 2)))


def tagger_pool(power, groups, n_splits, seed=10 ** 6):
    """Per tag and per group (and all): the sorted scores and true probabilities
    of ``n_splits`` splits' entries (for the truth of a miscalibrated tagger)."""
    parts = [tagger_split(seed + i, power) for i in range(n_splits)]
    score = np.concatenate([e.score for e, _, _ in parts]).astype(np.float64)
    true = np.concatenate([p for _, p, _ in parts])
    tag = np.concatenate([e.tag for e, _, _ in parts])
    sets = {("all", 0): np.ones(tag.shape[0], bool)}
    sets.update({("group", g): np.isin(tag, groups.members(g)) for g in range(groups.n_groups)})
    sets.update({("tag", t): tag == t for t in range(TAGGER_TAGS)})
    out = {}
    for key, mask in sets.items():
        order = np.argsort(score[mask], kind="stable")
        out[key] = (score[mask][order], true[mask][order])
    return out


def _fractions(n, bin_size=200):
    """Cumulative masses of equal-mass bins of ``bin_size`` of ``n`` entries
    (a short last bin merged): the population's layout of the sample's bins."""
    b = max(n // bin_size, 1)
    return np.r_[np.arange(1, b) * bin_size / n, 1.0]


def one_tagger(args):
    """Per set of one replicate: (kind, truth of the report's CE, value, lo, hi,
    truth of the old CE, its value, lo, hi). The report's: the debiased CE_2
    with its score interval in bins of 200 entries; the old report's: the
    plug-in CE_2 with Algorithm 2's interval, in 10 equal-mass bins (SMCE,
    GMCE) and bins of 200 entries (per tag)."""
    seed, power, groups, pool, level = args
    entries, _, _ = tagger_split(seed, power)
    spec = ConfidenceInterval("score", confidence_level=level)
    res = sc.evaluate(entries, groups, debias=True, ci=spec, per_tag=True, bin_size=200)
    sim = ConfidenceInterval(confidence_level=level, n_resamples=2000, random_state=seed)
    old = sc.evaluate(entries, groups, ci=sim)
    old_tags = sc.mce(entries, ci=sim, debias=False).per_tag
    ten = np.arange(1, 11) / 10
    sets = [("all", res.smce, old.smce, ten, ("all", 0))]
    sets += [("group", c, o, ten, ("group", g))
             for g, (c, o) in enumerate(zip(res.gmce, old.gmce)) if c is not None]
    sets += [("tag", c, old_tags[t], None, ("tag", t)) for t, c in res.mce.per_tag.items()]
    rows = []
    for kind, c, o, old_fractions, key in sets:
        new_fractions = _fractions(c.n)
        truth = 0.0 if pool is None else tagger_truth(*pool[key], new_fractions)
        old_truth = 0.0 if pool is None else (
            truth if old_fractions is None else tagger_truth(*pool[key], old_fractions))
        rows.append((kind, truth, c.value, c.ci_low, c.ci_high,
                     old_truth, o.value, o.ci_low, o.ci_high))
    return rows


def tagger_table(name, rows):
    """Markdown rows of one tagger: per kind of set, the score interval's coverage
    of the truth and whether it holds its estimate; the same for Algorithm 2's
    interval of the plug-in CE_2."""
    lines = []
    for kind, label in (("all", "SMCE"), ("group", "GMCE, 5 TFG groups"),
                        ("tag", "per-tag CE, tags with >= 400 entries")):
        r = np.array([x[1:] for x in rows if x[0] == kind])
        truth, v, lo, hi, otruth, ov, olo, ohi = r.T
        cover = (lo <= truth) & (truth <= hi)
        hits, n = int(cover.sum()), cover.shape[0]
        clo, chi = binomial_ci(hits, n)
        ocover = (olo <= otruth) & (otruth <= ohi)
        outside = int(np.sum((v < lo) | (v > hi)))
        ooutside = int(np.sum((ov < olo) | (ov > ohi)))
        lines.append(f"| {name} | {label} | {n:,} | {truth.mean():.4f} | "
                     f"{hits / n:.1%} [{clo:.1%}, {chi:.1%}] | {np.mean(lo > truth):.1%} | "
                     f"{np.mean(hi < truth):.1%} | {outside} | {ocover.mean():.1%} | "
                     f"{ooutside} ({ooutside / n:.1%}) |")
    return lines


def tagger_main(argv=None):
    ap = argparse.ArgumentParser(description="the report's intervals (debiased CE_2, score "
                                 "interval) on a perfectly calibrated and a sharpened "
                                 "synthetic tagger: coverage of the truth per set")
    ap.add_argument("--reps", type=int, default=500, help="test splits per tagger")
    ap.add_argument("--pool", type=int, default=40,
                    help="splits pooled for the sharpened tagger's truth")
    ap.add_argument("--power", type=float, default=1.3)
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    os.environ.setdefault("SPARSECAL_NUM_THREADS", "1")
    _, _, counts = tagger_split(0, 1.0)
    groups = sc.TagGroups.from_counts(counts, TAGGER_GROUPS, n_tags=TAGGER_TAGS)
    head = ("| tagger | set | intervals | mean truth | coverage [95% CI] | above truth | "
            "below truth | estimate outside its interval | old report (plug-in CE_2, "
            "Alg. 2): coverage | estimate outside |")
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    print(f"# {100 * args.level:g}% intervals, {args.reps} test splits of "
          f"{TAGGER_TOKENS:,} tokens x {TAGGER_TAGS} tags per tagger", flush=True)
    for name, power in (("calibrated", 1.0), (f"sharpened p^{args.power:g}", args.power)):
        t0 = time.time()
        pool = None if power == 1.0 else tagger_pool(power, groups, args.pool)
        rows = [x for i in range(args.reps) for x in one_tagger(
            (args.seed * 10 ** 5 + i, power, groups, pool, args.level))]
        lines += tagger_table(name, rows)
        print(f"# {name}: {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    if sys.argv[1:2] == ["tagger"]:
        import warnings
        warnings.simplefilter("ignore", UserWarning)
        tagger_main(sys.argv[2:])
    elif sys.argv[1:2] == ["debiased"]:
        debiased_main(sys.argv[2:])
    elif sys.argv[1:2] == ["membership"]:
        membership_main(sys.argv[2:])
    else:
        main()
