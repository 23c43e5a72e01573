#!/usr/bin/env python
"""sparsecal's compiled core against NumPy / scikit-learn baselines.

Timings run in this one process (best-of-k and median, implementations
interleaved round-robin so machine noise hits all of them alike). Peak memory
runs in a fresh subprocess per case: it loads the inputs, resets the kernel's
peak-RSS counter (``/proc/self/clear_refs``), runs the case once and reports
``VmHWM - VmRSS`` (resident bytes beyond the already-loaded input, output
included) and the tracemalloc peak (bytes *allocated* beyond the input,
including capacity that was reserved but never touched).

Cases (targets from issue 12):

a. threshold of a 1,173,709 x 426 float32 CCG-like matrix (5 * 10^8 entries), in
   RAM and memory-mapped (warm page cache), against
   (i) ``np.count_nonzero(chunk >= t)`` over row chunks of its best size (the
       memory-bandwidth floor) [sparsecal <= 1.25x of it, in RAM],
   (ii) the strongest NumPy way: chunked ``flatnonzero`` + ``divmod`` + gather +
       label, chunk size of its own best [sparsecal never slower: >= 1x];
   peak memory beyond input <= 2x the survivors in RAM (17 bytes each: score 4 +
   tag 4 + label 1 + token 8), and <= 256 MiB plus the survivors for the memory
   map, whose speed is within 1.3x of the same input in RAM.
b. sort + statistics of 10 equal-mass bins of 10^8 and 10^6 float32 scores
   (threshold 0: every entry) against ``np.argsort(kind="stable")`` + gather +
   ``np.add.reduceat`` [>= 4x faster; peak memory no more than NumPy's].
c. isotonic fit and predict on 10^7 and 10^8 float64 points against
   ``sklearn.isotonic.IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip")``
   [>= 3x faster each]; scikit-learn at 10^8 runs once, in a subprocess with a
   timeout and an address-space limit.

Every case also times sparsecal with ``n_threads=1`` and ``n_threads=2``.

Usage::

    .venv/bin/python benchmarks/compare_core.py --quick          # ~1 minute
    .venv/bin/python benchmarks/compare_core.py --cases a --busy 1   # other core busy
    nohup .venv/bin/python benchmarks/compare_core.py \\
        --json /tmp/sparsecal_bench/results.json > /tmp/bench.log 2>&1 &

Inputs are generated once (fixed seeds, see ``_data.py``) into ``--workdir``
(default ``/tmp/sparsecal_bench``, about 3.4 GB for the full run) and reused.
"""
import argparse
import gc
import json
import os
import platform
import resource
import subprocess
import sys
import time
import tracemalloc

import numpy as np

# the OpenMP wait policy in force (sparsecal sets none: recorded to show it)
_OMP_WAIT_POLICY_BEFORE = os.environ.get("OMP_WAIT_POLICY", "(unset)")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import _data  # noqa: E402
from _baselines import best_chunk, floor_count, numpy_threshold  # noqa: E402
from _machine import BusyCores, ForeignLoad  # noqa: E402

import sparsecal  # noqa: E402
from sparsecal.core import equal_mass_bins, isotonic_fit, isotonic_predict  # noqa: E402
from sparsecal.core.binning import (argsort_scores, equal_mass_bin_starts,  # noqa: E402
                                    equal_mass_bins_sorted)


T = 0.01                      # the threshold of case a
SURVIVOR_BYTES = 4 + 4 + 1 + 8
FORMAT_VERSION = "v1"         # bump when _data changes, to regenerate inputs

FULL = dict(thr_rows=_data.CCG_ROWS, sort_sizes=(10**8, 10**6),
            iso_sizes=(10**7, 10**8), repeats=5)
QUICK = dict(thr_rows=23_474, sort_sizes=(10**6, 10**5),
             iso_sizes=(10**5, 10**6), repeats=3)


# --------------------------------------------------------------------------- #
# Measurement helpers                                                          #
# --------------------------------------------------------------------------- #

def _proc_status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
                out[key] = int(value.split()[0]) * 1024
    return out


def _reset_peak_rss():
    """Reset VmHWM to the current RSS (Linux >= 4.0); False if not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def bench(fns, repeats, budget_s=120.0):
    """Time each callable of ``fns`` (name -> fn), interleaved round-robin.

    A first call of each is a warm-up (and the correctness run: its result is
    returned); it is counted as a repetition only if it took more than 2 s.
    The number of repetitions is cut so that a case stays near ``budget_s``.
    Besides wall time, the process CPU time of each call is kept (all threads):
    on a shared machine, wall >> CPU / threads means the call waited for a CPU.
    """
    times = {name: [] for name in fns}
    cpu = {name: [] for name in fns}
    results = {}

    def once(name, fn):
        gc.collect()
        c0 = time.process_time()
        t0 = time.perf_counter()
        r = fn()
        return r, time.perf_counter() - t0, time.process_time() - c0

    for name, fn in fns.items():
        results[name], dt, dc = once(name, fn)
        if dt > 2.0:
            times[name].append(dt)
            cpu[name].append(dc)
    total_first = sum(min(v) if v else 0.1 for v in times.values())
    slowest = max(min(v) if v else 0.0 for v in times.values())
    reps = max(1, min(repeats, int(budget_s / max(total_first, 1e-3))))
    if slowest > 2.0:
        reps = max(reps, 3)
    for _ in range(reps):
        for name, fn in fns.items():
            if len(times[name]) >= reps:
                continue
            r, dt, dc = once(name, fn)
            times[name].append(dt)
            cpu[name].append(dc)
            del r
    stats = {name: dict(best=min(v), median=float(np.median(v)), n=len(v),
                        cpu_best=min(cpu[name]), all=[round(x, 5) for x in v])
             for name, v in times.items()}
    return stats, results


def run_mem_subprocess(args, op, extra=(), timeout=None, as_limit=None):
    """Run ``op`` once in a fresh interpreter; its JSON report (or the failure)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--workdir", args.workdir,
           "--_mem", op, *map(str, extra)]
    if args.quick:
        cmd.append("--quick")

    def limit():
        if as_limit:
            resource.setrlimit(resource.RLIMIT_AS, (as_limit, as_limit))

    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return dict(error=f"timed out after {timeout} s")
    for line in p.stdout.splitlines():
        if line.startswith("@@MEM "):
            return json.loads(line[6:])
    tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
    return dict(error=f"exit code {p.returncode}: " + " | ".join(tail))


# --------------------------------------------------------------------------- #
# Inputs (generated once into the work directory)                              #
# --------------------------------------------------------------------------- #

def _paths(workdir, what, size):
    return os.path.join(workdir, f"{what}_{size}_{FORMAT_VERSION}")


def ensure_threshold_input(workdir, rows):
    base = _paths(workdir, "ccg", f"{rows}x{_data.N_TAGS}")
    if not (os.path.exists(base + ".scores.npy") and os.path.exists(base + ".gold.npy")):
        t0 = time.perf_counter()
        gold = _data.write_score_matrix(base + ".scores.tmp.npy", rows)
        np.save(base + ".gold.npy", gold)
        os.replace(base + ".scores.tmp.npy", base + ".scores.npy")
        print(f"  generated {rows} x {_data.N_TAGS} scores in "
              f"{time.perf_counter() - t0:.1f} s -> {base}.scores.npy", flush=True)
    return base + ".scores.npy", base + ".gold.npy"


def ensure_flat_input(workdir, n):
    path = _paths(workdir, "flat", n) + ".npz"
    if not os.path.exists(path):
        x, y = _data.flat_entries(n)
        np.savez(path + ".tmp.npz", x=x, y=y)
        os.replace(path + ".tmp.npz", path)
    return path


def ensure_iso_input(workdir, n):
    path = _paths(workdir, "iso", n) + ".npz"
    if not os.path.exists(path):
        x, y = _data.isotonic_data(n)
        np.savez(path + ".tmp.npz", x=x, y=y)
        os.replace(path + ".tmp.npz", path)
    return path


def load_npz(path):
    with np.load(path) as z:
        return z["x"], z["y"]


# --------------------------------------------------------------------------- #
# The implementations compared                                                 #
# --------------------------------------------------------------------------- #

def sparsecal_threshold(scores, gold, n_threads=None):
    e = sparsecal.threshold(scores, gold, T, n_threads=n_threads)
    return [e.score, e.tag, e.label, e.token]


def numpy_equal_mass(x, y, n_bins=10):
    """Stable argsort, gather, np.add.reduceat over the same rank bins."""
    n = x.shape[0]
    perm = np.argsort(x, kind="stable")
    xs = x[perm]
    ys = y[perm]
    starts = np.arange(n_bins + 1, dtype=np.int64) * n // n_bins
    st = starts[:-1]
    return dict(count=np.diff(starts),
                sum_score=np.add.reduceat(xs, st, dtype=np.float64),
                sum_label=np.add.reduceat(ys, st, dtype=np.int64).astype(np.float64),
                lower=xs[st].astype(np.float64),
                upper=xs[starts[1:] - 1].astype(np.float64))


def sparsecal_equal_mass(x, y, n_threads=None):
    b = equal_mass_bins(x, y, n_bins=10, n_threads=n_threads)
    return dict(count=b.count, sum_score=b.sum_score, sum_label=b.sum_label,
                lower=b.lower, upper=b.upper)


def sparsecal_equal_mass_kernels(x, y, n_threads=None):
    """argsort_scores + the bin-statistics kernel, without input validation."""
    perm, xs = argsort_scores(x, n_threads=n_threads)
    starts = equal_mass_bin_starts(x.shape[0], n_bins=10)
    b = equal_mass_bins_sorted(xs, y, perm, starts)
    return dict(count=b.count, sum_score=b.sum_score, sum_label=b.sum_label,
                lower=b.lower, upper=b.upper)


def sklearn_model():
    from sklearn.isotonic import IsotonicRegression
    return IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")


# --------------------------------------------------------------------------- #
# Memory subprocess (one case, fresh interpreter)                              #
# --------------------------------------------------------------------------- #

def mem_main(args):
    op, rest = args._mem, args.rest
    import sklearn.isotonic  # noqa: F401  (imports before the baseline)
    report = dict(op=op)
    if op.startswith("thr-"):
        impl, mode = op.split("-")[1:]
        scores_path, gold_path = ensure_threshold_input(args.workdir, int(rest[0]))
        gold = np.load(gold_path)
        if mode == "ram":
            scores = np.load(scores_path)
        else:
            # not mapped in beforehand: the file pages the call leaves resident
            # count (the file itself is in the page cache, from earlier runs)
            scores = np.load(scores_path, mmap_mode="r")
        fn = dict(floor=floor_count, numpy=numpy_threshold,
                  sparsecal=sparsecal_threshold)[impl]
        report["input_bytes"] = scores.nbytes + gold.nbytes
        steps = [("run", lambda: fn(scores, gold))]
    elif op.startswith("sort-"):
        impl = op.split("-")[1]
        x, y = load_npz(ensure_flat_input(args.workdir, int(rest[0])))
        fn = dict(numpy=numpy_equal_mass, sparsecal=sparsecal_equal_mass)[impl]
        report["input_bytes"] = x.nbytes + y.nbytes
        steps = [("run", lambda: fn(x, y))]
    elif op.startswith("iso-"):
        impl = op.split("-")[1]
        x, y = load_npz(ensure_iso_input(args.workdir, int(rest[0])))
        report["input_bytes"] = x.nbytes + y.nbytes
        state = {}
        if impl == "sklearn":
            def fit():
                state["m"] = sklearn_model().fit(x, y)

            def predict():
                return state["m"].predict(x)
        else:
            def fit():
                state["k"] = isotonic_fit(x, y)

            def predict():
                return isotonic_predict(x, *state["k"])
        steps = [("fit", fit), ("predict", predict)]
    else:
        raise SystemExit(f"unknown op {op}")
    gc.collect()
    for name, step_fn in steps:
        before = _proc_status()
        exact = _reset_peak_rss()
        tracemalloc.start()
        c0 = time.process_time()
        t0 = time.perf_counter()
        out = step_fn()
        dt = time.perf_counter() - t0
        dc = time.process_time() - c0
        _, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        after = _proc_status()
        base = before["VmRSS"] if exact else before["VmHWM"]
        report[name] = dict(seconds=dt, cpu_seconds=dc, peak_rss_beyond=after["VmHWM"] - base,
                            traced_peak=traced_peak, rss_exact=exact)
        del out
        gc.collect()
    print("@@MEM " + json.dumps(report), flush=True)


# --------------------------------------------------------------------------- #
# Cases                                                                         #
# --------------------------------------------------------------------------- #

ROWS = []        # timing rows of the summary table
MEMROWS = []     # peak-memory rows of the summary table


def mib(b):
    return f"{b / 2**20:,.1f} MiB"


def cpu_ratio(stats, name, ref_name, ratio_kind):
    """The ratio on CPU time, only for two single-threaded implementations
    (where CPU time is immune to waiting for a busy CPU)."""
    single = ("n_threads=2" not in name and "n_threads=2" not in ref_name
              and name != ref_name)
    a, b = stats[name].get("cpu_best"), stats[ref_name].get("cpu_best")
    if not single or not a or not b:
        return None
    return b / a if ratio_kind == "speedup" else a / b


def add_rows(case, stats, ref_name, ratio_kind, target, note=""):
    """ratio_kind: 'speedup' = time(ref) / time(impl); 'slowdown' = time(impl) / time(ref)."""
    ref = stats[ref_name]["best"]
    for name, s in stats.items():
        if name == ref_name:
            r = None
        elif ratio_kind == "speedup":
            r = ref / s["best"]
        else:
            r = s["best"] / ref
        ROWS.append(dict(case=case, impl=name, best=s["best"], median=s["median"],
                         cpu=s.get("cpu_best"), cpu_ratio=cpu_ratio(stats, name, ref_name,
                                                                    ratio_kind),
                         n=s["n"], ratio=r, ratio_kind=ratio_kind, ref=ref_name,
                         target=target if r is not None else None, note=note))


def print_stats(title, stats, foreign):
    print(f"\n== {title}  (other processes used {foreign:.0%} of the CPU meanwhile)")
    for name, s in stats.items():
        print(f"  {name:<50} best {s['best']:8.3f} s   median {s['median']:8.3f} s"
              f"   CPU {s.get('cpu_best', float('nan')):8.3f} s   (n={s['n']})")


def case_threshold(args, cfg, results):
    rows = cfg["thr_rows"]
    scores_path, gold_path = ensure_threshold_input(args.workdir, rows)
    gold = np.load(gold_path)
    # warm the page cache (and time one cold-ish pass for information)
    t0 = time.perf_counter()
    n_survivors = floor_count(np.load(scores_path, mmap_mode="r"))
    print(f"  page-cache warm-up pass over {scores_path}: "
          f"{time.perf_counter() - t0:.2f} s", flush=True)
    n_entries = rows * _data.N_TAGS
    surv_bytes = n_survivors * SURVIVOR_BYTES
    results["threshold"] = dict(rows=rows, n_tags=_data.N_TAGS, entries=n_entries,
                                survivors=int(n_survivors),
                                survivor_fraction=n_survivors / n_entries,
                                survivor_bytes=surv_bytes, modes={})
    print(f"  {rows} x {_data.N_TAGS} = {n_entries:,} entries, {n_survivors:,} "
          f">= {T} ({n_survivors / n_entries:.3%}); survivors = {mib(surv_bytes)}",
          flush=True)
    ram_scores = np.load(scores_path)
    chunk_floor = best_chunk(floor_count, ram_scores)
    chunk_numpy = best_chunk(numpy_threshold, ram_scores, gold)
    print(f"  baselines' best row chunks: floor {chunk_floor >> 20} MiB, "
          f"numpy {chunk_numpy >> 20} MiB", flush=True)
    fl_name = "floor: np.count_nonzero(chunk >= t)"
    np_name = "numpy: flatnonzero + gather + concatenate"
    sc_stats = {}
    # the targets are set at 5e8 entries; a smoke run's milliseconds and
    # megabytes are dominated by fixed costs (thread start, buffers): info only
    full = rows == _data.CCG_ROWS
    for mode in ("ram", "mmap"):
        if mode == "ram":
            def get():
                return ram_scores
        else:
            def get():   # a fresh mapping each call: page-cache hits, new page faults
                return np.load(scores_path, mmap_mode="r")
        fns = {
            fl_name: lambda: floor_count(get(), chunk_bytes=chunk_floor),
            np_name: lambda: numpy_threshold(get(), gold, chunk_bytes=chunk_numpy),
            "sparsecal.threshold n_threads=1": lambda: sparsecal_threshold(get(), gold, 1),
            "sparsecal.threshold n_threads=2": lambda: sparsecal_threshold(get(), gold, 2),
        }
        with ForeignLoad() as fl:
            stats, res = bench(fns, cfg["repeats"], budget_s=90)
        a, b = res[np_name], res["sparsecal.threshold n_threads=2"]
        agree = all(np.array_equal(u, v) for u, v in zip(a, b))
        agree = agree and all(np.array_equal(u, v) for u, v in
                              zip(a, res["sparsecal.threshold n_threads=1"]))
        del res, a, b
        title = f"a. threshold, {'in RAM' if mode == 'ram' else 'memory-mapped, warm page cache'}"
        print_stats(title, stats, fl.share)
        print(f"  outputs identical to NumPy's: {agree}")
        mem = {}
        for impl in ("floor", "numpy", "sparsecal"):
            rep = run_mem_subprocess(args, f"thr-{impl}-{mode}", [rows])
            mem[impl] = rep
            if "error" in rep:
                print(f"  peak memory {impl}: failed: {rep['error']}")
            else:
                r = rep["run"]
                print(f"  peak memory beyond input, {impl:<9}: RSS {mib(r['peak_rss_beyond'])}"
                      f" ({r['peak_rss_beyond'] / surv_bytes:.2f}x survivors), "
                      f"allocated {mib(r['traced_peak'])} "
                      f"({r['traced_peak'] / surv_bytes:.2f}x)", flush=True)
        results["threshold"]["modes"][mode] = dict(stats=stats, agree=agree, mem=mem,
                                                   foreign_cpu=fl.share)
        case = f"a. threshold 5e8 ({mode})" if rows == _data.CCG_ROWS else \
            f"a. threshold {n_entries:.0e} ({mode})"
        # in RAM: at most 2x the survivors; memory-mapped (file pages included,
        # the mapping is not touched beforehand): at most 256 MiB + the survivors
        mem_target = "<= 2x" if mode == "ram" else \
            f"<= {((256 << 20) + surv_bytes) / surv_bytes:.1f}x"
        for impl, rep in mem.items():
            add_mem_row(case, impl, rep, surv_bytes, "survivors",
                        mem_target if impl == "sparsecal" and full else None)
        sub = {k: v for k, v in stats.items() if k != np_name}
        add_rows(case, sub, fl_name, "slowdown",
                 "<= 1.25x" if mode == "ram" and full else "(info)")
        sub = {k: v for k, v in stats.items() if k != fl_name}
        add_rows(case, sub, np_name, "speedup", ">= 1x")
        sc_stats[mode] = {k: v for k, v in stats.items() if k.startswith("sparsecal")}
    # sparsecal on a memory map (warm page cache) against sparsecal in RAM
    for name, st in sc_stats["mmap"].items():
        add_rows("a. threshold: mmap vs in RAM", {"in RAM": sc_stats["ram"][name], name: st},
                 "in RAM", "slowdown", "<= 1.3x" if full else "(info)", note="memory-mapped")
    del ram_scores
    gc.collect()


def case_sort(args, cfg, results):
    results["sort"] = {}
    for n in cfg["sort_sizes"]:
        x, y = load_npz(ensure_flat_input(args.workdir, n))
        fns = {
            "numpy: argsort(stable) + gather + reduceat": lambda: numpy_equal_mass(x, y),
            "sparsecal.equal_mass_bins n_threads=1": lambda: sparsecal_equal_mass(x, y, 1),
            "sparsecal.equal_mass_bins n_threads=2": lambda: sparsecal_equal_mass(x, y, 2),
            "sparsecal kernels only (no validation) n_threads=2":
                lambda: sparsecal_equal_mass_kernels(x, y, 2),
        }
        with ForeignLoad() as fl:
            stats, res = bench(fns, cfg["repeats"], budget_s=150)
        ref = res["numpy: argsort(stable) + gather + reduceat"]
        agree = True
        for name, r in res.items():
            agree &= bool(np.array_equal(ref["count"], r["count"])
                          and np.array_equal(ref["sum_label"], r["sum_label"])
                          and np.array_equal(ref["lower"], r["lower"])
                          and np.array_equal(ref["upper"], r["upper"])
                          and np.allclose(ref["sum_score"], r["sum_score"], rtol=1e-9))
        del res, ref
        print_stats(f"b. sort + 10 equal-mass bins, n = {n:,} float32", stats, fl.share)
        print(f"  statistics agree with NumPy's: {agree}")
        mem = {}
        for impl in ("numpy", "sparsecal"):
            rep = run_mem_subprocess(args, f"sort-{impl}", [n])
            mem[impl] = rep
            if "error" in rep:
                print(f"  peak memory {impl}: failed: {rep['error']}")
            else:
                r = rep["run"]
                print(f"  peak memory beyond input, {impl:<9}: RSS {mib(r['peak_rss_beyond'])}"
                      f" ({r['peak_rss_beyond'] / x.nbytes:.1f}x the scores), "
                      f"allocated {mib(r['traced_peak'])}", flush=True)
        results["sort"][n] = dict(stats=stats, agree=agree, mem=mem, foreign_cpu=fl.share)
        # target (issue 12): sparsecal's peak no higher than NumPy's for the same
        # job, at the full size (10^8)
        np_peak = mem["numpy"].get("run", {}).get("peak_rss_beyond")
        for impl, rep in mem.items():
            target = (f"<= {np_peak / x.nbytes:.2f}x" if impl == "sparsecal" and np_peak
                      and n == max(cfg["sort_sizes"]) and not args.quick else None)
            add_mem_row(f"b. sort+bins {n:.0e}", impl, rep, x.nbytes, "scores", target)
        add_rows(f"b. sort+bins {n:.0e}", stats,
                 "numpy: argsort(stable) + gather + reduceat", "speedup", ">= 4x faster")
        del x, y
        gc.collect()


def case_isotonic(args, cfg, results):
    results["isotonic"] = {}
    n_small, n_large = cfg["iso_sizes"]
    for n in (n_small, n_large):
        x, y = load_npz(ensure_iso_input(args.workdir, n))
        entry = results["isotonic"][n] = dict(n_unique_x=int(np.unique(x).size)
                                              if n <= 10**7 else None)
        knots = {}

        def sc_fit(nt):
            def f():
                knots[nt] = isotonic_fit(x, y, n_threads=nt)
                return knots[nt]
            return f

        sk = {}

        def sk_fit():
            sk["m"] = sklearn_model().fit(x, y)
            return sk["m"]

        in_process_sklearn = n == n_small
        fit_fns = {}
        if in_process_sklearn:
            fit_fns["sklearn IsotonicRegression.fit"] = sk_fit
        fit_fns["sparsecal.isotonic_fit n_threads=1"] = sc_fit(1)
        fit_fns["sparsecal.isotonic_fit n_threads=2"] = sc_fit(2)
        with ForeignLoad() as fl:
            fit_stats, _ = bench(fit_fns, cfg["repeats"], budget_s=150)
        print_stats(f"c. isotonic fit, n = {n:,} float64", fit_stats, fl.share)
        xk, yk = knots[2]
        pred_fns = {}
        if in_process_sklearn:
            pred_fns["sklearn IsotonicRegression.predict"] = lambda: sk["m"].predict(x)
        pred_fns["sparsecal.isotonic_predict n_threads=1"] = \
            lambda: isotonic_predict(x, xk, yk, n_threads=1)
        pred_fns["sparsecal.isotonic_predict n_threads=2"] = \
            lambda: isotonic_predict(x, xk, yk, n_threads=2)
        with ForeignLoad() as fl2:
            pred_stats, pres = bench(pred_fns, cfg["repeats"], budget_s=100)
        print_stats(f"c. isotonic predict, n = {n:,} float64 ({len(xk)} knots)",
                    pred_stats, fl2.share)
        if in_process_sklearn:
            m = sk["m"]
            same_knots = (len(m.X_thresholds_) == len(xk)
                          and np.allclose(m.X_thresholds_, xk, rtol=0, atol=0)
                          and np.allclose(m.y_thresholds_, yk, rtol=0, atol=1e-12))
            diff = float(np.abs(pres["sklearn IsotonicRegression.predict"]
                                - pres["sparsecal.isotonic_predict n_threads=2"]).max())
            print(f"  same knots as sklearn: {same_knots}; max |prediction difference| "
                  f"= {diff:.2e}")
            entry.update(same_knots=same_knots, max_pred_diff=diff)
        del pres
        entry.update(fit=fit_stats, predict=pred_stats, n_knots=len(xk),
                     foreign_cpu=[fl.share, fl2.share])
        sk.clear()
        # memory (and, at the large size, scikit-learn's only run) in subprocesses
        mem = {}
        for impl in ("sklearn", "sparsecal"):
            guarded = impl == "sklearn" and not in_process_sklearn
            if guarded:
                avail = _mem_available()
                as_limit = int(min(args.sklearn_mem_gib * 2**30, 0.8 * avail))
                print(f"  running scikit-learn at n = {n:,} once in a subprocess: "
                      f"timeout {args.sklearn_timeout} s, RLIMIT_AS {mib(as_limit)}",
                      flush=True)
                rep = run_mem_subprocess(args, f"iso-{impl}", [n],
                                         timeout=args.sklearn_timeout, as_limit=as_limit)
                rep["guard"] = dict(timeout_s=args.sklearn_timeout, rlimit_as=as_limit)
            else:
                rep = run_mem_subprocess(args, f"iso-{impl}", [n])
            mem[impl] = rep
            if "error" in rep:
                print(f"  {impl} fit+predict subprocess failed: {rep['error']}")
                continue
            for step in ("fit", "predict"):
                r = rep[step]
                print(f"  peak memory beyond input, {impl:<9} {step:<7}: RSS "
                      f"{mib(r['peak_rss_beyond'])} ({r['peak_rss_beyond'] / x.nbytes:.1f}x x),"
                      f" allocated {mib(r['traced_peak'])}; one run {r['seconds']:.2f} s",
                      flush=True)
        entry["mem"] = mem
        for impl, rep in mem.items():
            add_mem_row(f"c. isotonic {n:.0e}", impl, rep, x.nbytes, "x")
        if not in_process_sklearn:
            rep = mem["sklearn"]
            for step, stats in (("fit", fit_stats), ("predict", pred_stats)):
                if "error" in rep:
                    stats["sklearn (guarded subprocess, 1 run)"] = None
                else:
                    s = rep[step]["seconds"]
                    stats["sklearn (guarded subprocess, 1 run)"] = dict(
                        best=s, median=s, n=1, all=[s], cpu_best=rep[step]["cpu_seconds"])
        for step, stats, target in (("fit", fit_stats, ">= 3x faster"),
                                    ("predict", pred_stats, ">= 3x faster")):
            ref_name = next((k for k in stats if k.startswith("sklearn")), None)
            if ref_name is None or stats[ref_name] is None:
                stats = {k: v for k, v in stats.items() if v is not None}
                note = "sklearn could not run: " + mem["sklearn"].get("error", "?")
                for name, s in stats.items():
                    ROWS.append(dict(case=f"c. isotonic {step} {n:.0e}", impl=name,
                                     best=s["best"], median=s["median"], n=s["n"],
                                     ratio=None, ratio_kind="speedup", ref=None,
                                     target=target, note=note))
            else:
                add_rows(f"c. isotonic {step} {n:.0e}", stats, ref_name, "speedup", target)
        del x, y
        gc.collect()


def _mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 8 << 30


# --------------------------------------------------------------------------- #
# Report                                                                        #
# --------------------------------------------------------------------------- #

def machine_info():
    info = dict(python=platform.python_version(), numpy=np.__version__,
                sparsecal=sparsecal.__version__, platform=platform.platform())
    try:
        import sklearn
        info["sklearn"] = sklearn.__version__
    except ImportError:
        pass
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            if k.strip() in ("Model name", "CPU(s)", "Thread(s) per core", "L1d cache",
                             "L2 cache", "L3 cache", "Hypervisor vendor"):
                info[k.strip()] = v.strip()
    except OSError:
        pass
    info["MemTotal"] = mib(_meminfo("MemTotal"))
    info["OMP_WAIT_POLICY"] = (f"{os.environ.get('OMP_WAIT_POLICY', '(unset)')} "
                               f"(before importing sparsecal: {_OMP_WAIT_POLICY_BEFORE})")
    info["build"] = build_fingerprint()
    info["SPARSECAL_NUM_THREADS"] = os.environ.get("SPARSECAL_NUM_THREADS", "(unset)")
    info["cpus_usable"] = len(os.sched_getaffinity(0))
    return info


def build_fingerprint():
    """Which compiled core was measured: per kernel source of ``sparsecal/core``
    (``_*.pyx`` and ``_*.pxd``) the md5 of the file, and per extension next to it
    its mtime (the tree may change between runs)."""
    import glob
    import hashlib
    import sparsecal.core
    core = os.path.dirname(sparsecal.core.__file__)
    parts = []
    for src in sorted(glob.glob(os.path.join(core, "_*.pyx"))
                      + glob.glob(os.path.join(core, "_*.pxd"))):
        with open(src, "rb") as f:
            digest = hashlib.md5(f.read()).hexdigest()[:12]
        name = os.path.basename(src)
        built = glob.glob(os.path.join(core, os.path.splitext(name)[0] + ".*.so"))
        when = (time.strftime("built %Y-%m-%d %H:%M:%S",
                              time.localtime(os.path.getmtime(built[0])))
                if built else "no extension" if name.endswith(".pyx") else "declarations")
        parts.append(f"{name} md5 {digest} ({when})")
    if not parts:   # an installed wheel ships the extensions, not their sources
        parts = [f"{os.path.basename(so)} (built "
                 f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(os.path.getmtime(so)))})"
                 for so in sorted(glob.glob(os.path.join(core, "_*.so")))]
    return f"{core}: " + "; ".join(parts)


def _meminfo(key):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def verdict(row):
    r, tgt = row["ratio"], row["target"] or ""
    if r is None or not tgt or tgt.startswith("("):
        return ""
    if tgt.startswith("<="):
        return "ok" if r <= float(tgt.split()[1].rstrip("x")) else "MISS"
    return "ok" if r >= float(tgt.split()[1].rstrip("x")) else "MISS"


def print_table():
    print("\n== Summary: time (best of n; ratio 'x of floor' = impl / floor, "
          "'x faster' = baseline / impl)\n")
    print("| case | implementation | best s | median s | CPU s | n | ratio | target | verdict "
          "| ratio on CPU time (1 thread) |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|---:|")
    for row in ROWS:
        if row["ratio"] is None:
            ratio = "(reference)" if row["ref"] else ""
        elif row["ratio_kind"] == "slowdown":
            ratio = f"{row['ratio']:.2f}x of {'floor' if 'floor' in row['ref'] else row['ref']}"
        else:
            ratio = f"{row['ratio']:.2f}x faster"
        note = f" ({row['note']})" if row["note"] else ""
        tgt = row["target"] or ""
        cpu = "" if row.get("cpu") is None else f"{row['cpu']:.3f}"
        cr = "" if row.get("cpu_ratio") is None else f"{row['cpu_ratio']:.2f}x"
        print(f"| {row['case']} | {row['impl']}{note} | {row['best']:.3f} | "
              f"{row['median']:.3f} | {cpu} | {row['n']} | {ratio} | {tgt} | {verdict(row)} "
              f"| {cr} |")
    if MEMROWS:
        print("\n== Summary: peak memory beyond the input (fresh subprocess per case; "
              "RSS = touched pages, allocated = tracemalloc peak)\n")
        print("| case | implementation | peak RSS beyond input | allocated peak | "
              "relative | target | verdict |")
        print("|---|---|---:|---:|---:|---|---|")
        for m in MEMROWS:
            v = ""
            if m["target"]:
                v = "ok" if m["ratio"] <= float(m["target"].split()[1].rstrip("x")) \
                    else "MISS"
            print(f"| {m['case']} | {m['impl']} | {mib(m['rss'])} | {mib(m['traced'])} | "
                  f"{m['ratio']:.2f}x {m['unit']} | {m['target'] or ''} | {v} |")


def add_mem_row(case, impl, rep, unit_bytes, unit, target=None):
    if "error" in rep:
        MEMROWS.append(dict(case=case, impl=f"{impl} (failed: {rep['error']})", rss=0,
                            traced=0, ratio=float("nan"), unit=unit, target=None))
        return
    for step in ("run", "fit", "predict"):
        if step in rep:
            r = rep[step]
            MEMROWS.append(dict(case=case, impl=impl if step == "run" else f"{impl} {step}",
                                rss=r["peak_rss_beyond"], traced=r["traced_peak"],
                                ratio=r["peak_rss_beyond"] / unit_bytes, unit=unit,
                                target=target))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    p.add_argument("--cases", default="a,b,c", help="comma-separated subset of a,b,c")
    p.add_argument("--workdir", default="/tmp/sparsecal_bench")
    p.add_argument("--repeats", type=int, default=None, help="k of best-of-k")
    p.add_argument("--json", default=None, help="write all measurements here")
    p.add_argument("--sklearn-timeout", type=int, default=900,
                   help="seconds for scikit-learn's guarded fit+predict at 10^8")
    p.add_argument("--sklearn-mem-gib", type=float, default=16.0,
                   help="RLIMIT_AS (GiB) for scikit-learn's guarded run")
    p.add_argument("--busy", type=int, default=0,
                   help="keep this many other CPUs busy (spinning processes) meanwhile")
    p.add_argument("--_mem", default=None, help=argparse.SUPPRESS)
    p.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    args = p.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    if args._mem:
        return mem_main(args)
    cfg = dict(QUICK if args.quick else FULL)
    if args.repeats:
        cfg["repeats"] = args.repeats
    info = machine_info()
    print("== Machine: " + ", ".join(f"{k}={v}" for k, v in info.items()))
    print(f"== sparsecal default n_threads: {sparsecal.core.threads.get_n_threads()}; "
          f"load average at start: {os.getloadavg()}", flush=True)
    results = dict(machine=info, config=cfg, started=time.strftime("%Y-%m-%d %H:%M:%S"))
    t0 = time.perf_counter()
    cases = set(args.cases.split(","))
    results["busy"] = args.busy
    with BusyCores(args.busy):
        if "a" in cases:
            case_threshold(args, cfg, results)
        if "b" in cases:
            case_sort(args, cfg, results)
        if "c" in cases:
            case_isotonic(args, cfg, results)
    results["rows"] = ROWS
    results["mem_rows"] = MEMROWS
    results["wall_s"] = time.perf_counter() - t0
    print_table()
    print(f"\nTotal wall time {results['wall_s']:.0f} s; load average at end: "
          f"{os.getloadavg()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=str)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
