"""Benchmark of CRF token marginals (``sparsecal.crf``), run by hand::

    .venv/bin/python benchmarks/bench_crf.py            # full table (~3-5 min)
    .venv/bin/python benchmarks/bench_crf.py --quick    # C=50 and 598, fewer reps
    .venv/bin/python benchmarks/bench_crf.py --lean-only --busy 1   # other core busy
    .venv/bin/python benchmarks/bench_crf.py --stream 1000000   # corpus streaming

For C in {50, 426, 598}, B=32 sentences of N=40 tokens, float32 and float64, it
times ``marginals`` with the lean backend (1 and 2 torch threads), the
log-space backend and, where feasible, torch-struct, and reports:

- tokens/s: lean's best of k rounds (below), the other backends' median over
  repetitions (first call excluded);
- peak memory of one call: the rise of the process's peak RSS over its RSS
  before the call, each configuration in a fresh subprocess (coarse: page
  granular, includes allocator slack);
- the matmul floor: the machine's own time for the matrix products of a
  forward-backward, ``2 (N-1)`` products ``[B, C] @ [C, C]`` with
  ``torch.mm(out=)`` (each ~``B C^2`` multiply-adds), in the dtype and the
  layout of the recursion (``N-1`` by a row-major ``M``, ``N-1`` by its
  transposed view ``M.t()`` as in the backward pass), with 1 and with 2
  threads. It
  is timed in the same process as lean, interleaved with it round-robin
  (floor and lean with 1 thread, then with 2; a 20 ms pause after each 2-thread
  run lets its OpenMP workers stop spinning), so that the machine's noise hits
  both alike. Times are the best of the k rounds, the least disturbed by the
  other jobs of a shared machine; the medians are in ``--json``, the scaling
  table also gives lean's 2-thread speedup from the medians (2-thread times
  vary far more than 1-thread ones), and the verdict the median over the
  rounds of lean's 1-thread efficiency (floor and lean of the same round);
- efficiency per thread: ``t_floor(1) / (k t(k))`` for ``k`` threads, i.e. the
  rate of lean (or of the bare products) with ``k`` threads over ``k`` times
  the single-thread matmul rate. With 1 thread it is lean's share of the floor
  (the target: >= 80% at C=598, float32: the verdict line); with 2 threads it
  says how much of the second core was turned into speed;
- the load average and the share of the machine's CPU time that other
  processes used while lean ran (``--busy 1`` adds a spinning process, to
  measure with the other core busy);
- agreement with the float64 log-space reference (max |difference| of the
  marginals, which are probabilities in [0, 1]).

torch-struct builds ``[B, N-1, C, C]`` edge potentials and log-semiring matrix
products with ``O(C^3)`` work and a ``[B, bin_N/2, C, C, C]`` temporary at the
first level of its parallel scan (``bin_N = 64`` for N=40), kept for autograd:
about 6 GiB at C=50, B=32 in float64. So it is timed on B=8 at C=50 and B=1 at
C=100 (tokens/s is per token), and extrapolated by ``C^3`` to 426 and 598, where
its temporaries alone would need terabytes.
"""
import argparse
import math
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from _machine import BusyCores, ForeignLoad  # noqa: E402

B, N = 32, 40
TARGET_C, TARGET_DTYPE, TARGET = 598, "float32", 0.80


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _maxrss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def worker(C, dtype_name, backend, threads, reps, batch):
    import torch
    from sparsecal import crf

    torch.set_num_threads(threads)
    dtype = getattr(torch, dtype_name)
    g = torch.Generator().manual_seed(C)
    # tagger-like logits and a trained-looking transition matrix, made in place in
    # the target dtype so that the set-up leaves no peak above the baseline
    e = torch.empty(batch, N, C, dtype=dtype).normal_(0, 3, generator=g)
    T = torch.empty(C, C, dtype=dtype).normal_(0, 1, generator=g)
    kw = dict(backend=backend, n_threads=threads)
    out = {"C": C, "dtype": dtype_name, "backend": backend, "threads": threads,
           "B": batch, "N": N}

    # initialise torch / MKL code paths on a tiny problem first, so that the
    # measured call's peak is its own working memory
    crf.marginals(torch.zeros(1, 3, C, dtype=dtype), T, backend="lean", n_threads=threads)
    base = _rss_bytes()
    peak0 = _maxrss_bytes()
    t0 = time.perf_counter()
    m = crf.marginals(e, T, **kw)
    first = time.perf_counter() - t0
    peak1 = _maxrss_bytes()
    out["peak_mib"] = (peak1 - base) / 2**20 if peak1 > peak0 else None
    out["peak_floor_mib"] = (peak0 - base) / 2**20   # set-up's own peak (upper bound)
    if backend == "lean":
        out.update(lean_scaling(e, T, reps))
        out["time_s"] = out["lean"]["1"]
        ref = crf.marginals(e.double(), T.double(), backend="log", n_threads=1)
        diff = (m.double() - ref).abs()
        out["max_abs_diff_vs_log64"] = float(diff.max())
        big = ref >= 1e-6
        out["max_rel_diff_vs_log64"] = float((diff[big] / ref[big]).max())
    else:
        times = [first] if reps == 0 else []
        for _ in range(reps):
            t0 = time.perf_counter()
            crf.marginals(e, T, **kw)
            times.append(time.perf_counter() - t0)
        out["time_s"] = statistics.median(times)
    out["tokens_per_s"] = batch * N / out["time_s"]
    return out


def lean_scaling(e, T, reps):
    """Lean and the matmul floor with 1 and 2 threads, interleaved round-robin:
    best-of-k seconds per batch, ``{"floor": {"1": s, "2": s}, "lean": {...}}``,
    the medians under ``"median"``, and the median over the rounds of lean's
    1-thread efficiency (floor over lean, both timed in the same round)."""
    import torch
    from sparsecal import crf

    batch, _, C = e.shape
    a = torch.rand(batch, C, dtype=e.dtype)
    # the forward's M and the backward's transposed view of it
    M = torch.rand(C, C, dtype=e.dtype)
    Ms = (M, M.t())
    o = torch.empty(batch, C, dtype=e.dtype)

    def floor(k):
        torch.set_num_threads(k)
        t0 = time.perf_counter()
        for op in Ms:
            for _ in range(N - 1):
                torch.mm(a, op, out=o)
        return time.perf_counter() - t0

    def lean(k):
        t0 = time.perf_counter()
        crf.marginals(e, T, backend="lean", n_threads=k)
        return time.perf_counter() - t0

    def timed(name, k):
        dt = fns[name](k)
        torch.set_num_threads(1)
        if k > 1:
            time.sleep(0.02)      # let the OpenMP workers stop spinning (libgomp)
        return dt

    runs = [("floor", 1), ("lean", 1), ("floor", 2), ("lean", 2)]
    fns = {"floor": floor, "lean": lean}
    for run in runs:                                             # warm-up
        timed(*run)
    times = {run: [] for run in runs}
    for _ in range(max(3, reps)):
        for run in runs:
            times[run].append(timed(*run))
    res = {"floor": {}, "lean": {}, "median": {"floor": {}, "lean": {}}}
    for (name, k), ts in times.items():
        res[name][str(k)] = min(ts)
        res["median"][name][str(k)] = statistics.median(ts)
    res["eff_1t_round_median"] = statistics.median(
        f / t for f, t in zip(times["floor", 1], times["lean", 1]))
    return res


def stream_worker(n_tokens, C):
    """Peak memory and speed of ``stream_entries`` over a generated corpus."""
    import numpy as np
    import torch
    from sparsecal import crf

    torch.set_num_threads(1)
    T = torch.empty(C, C).normal_(0, 1, generator=torch.Generator().manual_seed(1))

    def batches():
        g = torch.Generator().manual_seed(2)
        done = 0
        while done < n_tokens:
            L = torch.randint(10, N + 1, (B,), generator=g)
            gold = torch.randint(0, C, (B, N), generator=g)
            # a tagger-like peak at the gold tag (93%) or elsewhere
            e = torch.empty(B, N, C).normal_(0, 2, generator=g)
            top = torch.where(torch.rand(B, N, generator=g) < 0.93, gold,
                              torch.randint(0, C, (B, N), generator=g))
            e.scatter_add_(2, top[..., None], torch.full((B, N, 1), 9.0))
            gold[torch.arange(N)[None] >= L[:, None]] = -1
            done += int(L.sum())
            yield dict(emissions=e, transitions=T, lengths=L, gold=gold)

    crf.stream_entries([next(batches())])                            # warm-up
    base = _rss_bytes()
    peak0 = _maxrss_bytes()
    t0 = time.perf_counter()
    ent = crf.stream_entries(batches)
    dt = time.perf_counter() - t0
    peak1 = _maxrss_bytes()
    entry_bytes = sum(getattr(ent, a).nbytes for a in ("score", "tag", "label", "token"))
    return {"tokens": ent.n_tokens, "C": C, "entries": len(ent), "time_s": dt,
            "tokens_per_s": ent.n_tokens / dt,
            "peak_rise_mib": (peak1 - max(base, peak0)) / 2**20 if peak1 > peak0 else 0.0,
            "rss_before_mib": base / 2**20,
            "entries_mib": entry_bytes / 2**20,
            "dense_mib": ent.n_tokens * C * 4 / 2**20}


def run_config(C, dtype, backend, threads, reps, batch=B):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", str(C), dtype, backend,
           str(threads), str(reps), str(batch)]
    env = dict(os.environ)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"worker {cmd[2:]} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def fmt_mib(row):
    if row.get("peak_mib") is None:
        return f"<= {row['peak_floor_mib']:.1f}"
    return f"{row['peak_mib']:.1f}"


def per_thread(row, name, k):
    """Rate of ``name`` ("lean" or "floor") with ``k`` threads over ``k`` times
    the single-thread matmul floor's."""
    return row["floor"]["1"] / (k * row[name][str(k)])


def run_lean(C, dtype, reps, busy):
    """The lean worker, with ``busy`` other CPUs kept busy, and the machine's
    load meanwhile."""
    with BusyCores(busy), ForeignLoad() as fl:
        load0 = os.getloadavg()[0]
        row = run_config(C, dtype, "lean", 1, reps)
        row["load"] = (load0, os.getloadavg()[0])
    row["foreign_share"] = fl.share
    return row


def print_scaling(lean_rows):
    print()
    print("| C | dtype | floor ms 1t / 2t | floor per-thread eff 2t | lean ms 1t / 2t | "
          "lean eff 1t | lean per-thread eff 2t | lean speedup 2t (medians) | load avg | "
          "others' CPU share |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in lean_rows:
        fl, le, lm = r["floor"], r["lean"], r["median"]["lean"]
        print(f"| {r['C']} | {r['dtype']} | {1e3 * fl['1']:.2f} / {1e3 * fl['2']:.2f} | "
              f"{100 * per_thread(r, 'floor', 2):.0f}% | "
              f"{1e3 * le['1']:.2f} / {1e3 * le['2']:.2f} | "
              f"{100 * per_thread(r, 'lean', 1):.0f}% | "
              f"{100 * per_thread(r, 'lean', 2):.0f}% | {le['1'] / le['2']:.2f}x "
              f"({lm['1'] / lm['2']:.2f}x) | "
              f"{r['load'][0]:.1f}-{r['load'][1]:.1f} | {100 * r['foreign_share']:.0f}% |")


def verdict(lean_rows):
    for r in lean_rows:
        if r["C"] == TARGET_C and r["dtype"] == TARGET_DTYPE:
            eff = per_thread(r, "lean", 1)
            met = "met" if eff >= TARGET else "NOT met"
            return (f"verdict: lean reaches {100 * eff:.0f}% of the single-thread matmul "
                    f"floor at C={TARGET_C} {TARGET_DTYPE} with 1 thread (target >= "
                    f"{100 * TARGET:.0f}%): {met} (median over the rounds "
                    f"{100 * r['eff_1t_round_median']:.0f}%); with 2 threads "
                    f"{100 * per_thread(r, 'lean', 2):.0f}% per thread "
                    f"({r['lean']['1'] / r['lean']['2']:.2f}x the 1-thread speed)")
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="C=50 and 598, fewer reps")
    ap.add_argument("--lean-only", action="store_true",
                    help="only the lean backend and its matmul floor (no log space, "
                         "no torch-struct)")
    ap.add_argument("--busy", type=int, default=0, metavar="N",
                    help="keep N other CPUs busy (spinning processes) during the lean "
                         "runs")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--stream", type=int, metavar="TOKENS",
                    help="only time stream_entries over a generated corpus of about "
                         "TOKENS tokens with C=598 tags (float32)")
    ap.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.stream:
        r = stream_worker(args.stream, 598)
        print(json.dumps(r))
        print(f"stream_entries: {r['tokens']:,} tokens x {r['C']} tags in "
              f"{r['time_s']:.1f} s ({r['tokens_per_s']:,.0f} tokens/s), "
              f"{r['entries']:,} entries ({r['entries_mib']:.1f} MiB); peak RSS rose "
              f"{r['peak_rise_mib']:.1f} MiB over {r['rss_before_mib']:.0f} MiB, vs "
              f"{r['dense_mib']:,.0f} MiB for the dense float32 marginals")
        return
    if args.worker:
        C, dtype, backend, threads, reps, batch = args.worker
        print(json.dumps(worker(int(C), dtype, backend, int(threads), int(reps),
                                int(batch))))
        return

    import torch
    sizes = [50, 598] if args.quick else [50, 426, 598]
    lean_reps = 7 if args.quick else 21
    rows, lean_rows = [], []
    print(f"# CRF token marginals, B={B}, N={N}; torch {torch.__version__}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
          + (f", {args.busy} other CPU(s) kept busy during the lean runs"
             if args.busy else ""), flush=True)
    for C in sizes:
        for dtype in ("float32", "float64"):
            lean_rows.append(run_lean(C, dtype, lean_reps, args.busy))
            rows.append(lean_rows[-1])
            print(rows[-1], flush=True)
            if args.lean_only:
                continue
            rows.append(run_config(C, dtype, "log", 1, 1 if C > 100 else 3))
            print(rows[-1], flush=True)
            if C == 50:
                rows.append(run_config(C, dtype, "torch-struct", 1, 0, batch=8))
                print(rows[-1], flush=True)
    if not args.lean_only:
        # growth of torch-struct's time with C at equal batch size (B=1)
        ts50 = run_config(50, "float64", "torch-struct", 1, 0, batch=1)
        ts100 = run_config(100, "float64", "torch-struct", 1, 0, batch=1)
        print(ts50, ts100, flush=True)

    print()
    print("| C | dtype | backend | threads | tokens/s | ms / batch | peak MiB | "
          "efficiency per thread (vs 1-thread matmul floor) | "
          "vs log f64: max abs / max rel (p >= 1e-6) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        name = r["backend"] + (f" (B={r['B']})" if r["B"] != B else "")
        if r["backend"] != "lean":
            print(f"| {r['C']} | {r['dtype']} | {name} | {r['threads']} | "
                  f"{r['tokens_per_s']:,.0f} | {1e3 * r['time_s']:.1f} | {fmt_mib(r)} | "
                  f"| |")
            continue
        gflops = 2 * r["B"] * r["C"] ** 2 * 2 * (N - 1) / r["floor"]["1"] / 1e9
        diff = f"{r['max_abs_diff_vs_log64']:.1e} / {r['max_rel_diff_vs_log64']:.1e}"
        for k in (1, 2):
            t = r["lean"][str(k)]
            eff = f"{100 * per_thread(r, 'lean', k):.0f}%" + (
                f" ({gflops:.0f} GFLOP/s mm)" if k == 1 else "")
            print(f"| {r['C']} | {r['dtype']} | {name} | {k} | {r['B'] * N / t:,.0f} | "
                  f"{1e3 * t:.1f} | {fmt_mib(r) if k == 1 else ''} | {eff} | "
                  f"{diff if k == 1 else ''} |")
    print_scaling(lean_rows)
    print()
    print(verdict(lean_rows))
    ts = {r["dtype"]: r for r in rows if r["backend"] == "torch-struct"}
    if ts:
        r64 = ts["float64"]
        expo = math.log(ts50["time_s"] / ts100["time_s"] * 1.0) / math.log(50 / 100)
        print()
        print(f"torch-struct measured (float64, one sentence of N={N}): C=50 "
              f"{ts50['time_s']:.2f} s, peak {fmt_mib(ts50)} MiB; C=100 "
              f"{ts100['time_s']:.2f} s, peak {fmt_mib(ts100)} MiB: time grows as "
              f"C^{expo:.1f} (asymptotically C^3).")
        for C in (426, 598):
            lo, hi = sorted(((C / 50) ** expo, (C / 50) ** 3))
            print(f"torch-struct extrapolated to C={C}, B={B} from C=50, B=8 "
                  f"({r64['tokens_per_s']:,.1f} tokens/s): "
                  f"{r64['tokens_per_s'] / hi:.2g} to {r64['tokens_per_s'] / lo:.2g} "
                  f"tokens/s (scaled by C^3 and C^{expo:.1f}), i.e. "
                  f"{B * N / (r64['tokens_per_s'] / lo) / 60:,.0f}-"
                  f"{B * N / (r64['tokens_per_s'] / hi) / 60:,.0f} min per batch; "
                  f"its first scan level alone holds B*32*C^3 float64 values = "
                  f"{B * 32 * C ** 3 * 8 / 2**30:,.0f} GiB (infeasible here)")
    for r in lean_rows:
        item = 4 if r["dtype"] == "float32" else 8
        r["model_mib"] = (2 * r["B"] * N * r["C"] + r["C"] ** 2) * item / 2**20
    print()
    print("lean working memory model: 2 B N C + C^2 values (the alphas in the "
          "output's buffer and the scaled emissions; exp(transitions)): " + ", ".join(
              f"C={r['C']} {r['dtype']}: {r['model_mib']:.1f} MiB" for r in lean_rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "busy": args.busy,
                       "torch_struct_c100_b1": None if args.lean_only else ts100},
                      f, indent=1)


if __name__ == "__main__":
    main()
