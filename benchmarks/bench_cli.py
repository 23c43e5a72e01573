#!/usr/bin/env python
"""The command line's own cost: ``sparsecal evaluate`` as a new process against
the same library calls in this already-warm process, run by hand::

    .venv/bin/python benchmarks/bench_cli.py              # 10^5 and 5 * 10^8 entries
    .venv/bin/python benchmarks/bench_cli.py --quick      # 10^5 and 5 * 10^7 entries
    options: --repeats K  --workdir DIR  --json FILE

Per size, interleaved round-robin, best of ``--repeats``:

- ``python -m sparsecal evaluate --scores S --gold G --train-counts C`` and the
  console script ``sparsecal`` beside this interpreter, each a new process with
  stdout to /dev/null and stderr a pipe (so no progress is drawn);
- ``library``: what the command does with the files, in this process (warm:
  modules imported, files in the page cache): ``load_scores``, ``load_gold``,
  ``threshold``, the TFG groups from the counts file, ``evaluate`` (no
  interval, with top-label ECE, as the command's defaults);
- ``python -c "import numpy"``: the floor any NumPy command pays, and
  ``python -m sparsecal --help``, which imports no verb (information).

The overhead is the command's time minus the library's; target (issue 12):
at most 0.15 s of wall time at every size. CPU time (user + system, of the
child process or of this one's threads) is shown beside it: on a machine that
others share it moves less than the wall time (every process also spends
~0.08 s of CPU on other cores as NumPy's OpenBLAS starts its threads).

Inputs (``_data.py``, seed 0) are written once into ``--workdir`` (default
``/tmp/sparsecal_bench``) as ``.npy`` files, which the command and the library
both read memory-mapped; the training counts are the gold tags' counts. The
child processes import sparsecal from this tree (``PYTHONPATH``) and may write
bytecode caches (as an installed package has them): one untimed run of each
command comes first.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)
import _data  # noqa: E402

import sparsecal  # noqa: E402
from sparsecal import TagGroups, evaluate, threshold  # noqa: E402
from sparsecal.core.jsonfile import read_json  # noqa: E402
from sparsecal.io import load_gold, load_scores  # noqa: E402

TARGET_S = 0.15
#: cases timed for information, with no overhead
INFORMATION = ("library", "import numpy (floor)", "sparsecal --help")
#: size name -> rows of 426 tags (235 x 426 = 100,110 entries)
SIZES = {"1e5": 235, "5e7": _data.CCG_ROWS // 10, "5e8": _data.CCG_ROWS}
N_GROUPS = 5
T = 0.01


def inputs(workdir, rows):
    """(scores .npy, gold .npy, counts .json) of ``rows`` rows, written once."""
    os.makedirs(workdir, exist_ok=True)
    base = os.path.join(workdir, f"ccg_{rows}x{_data.N_TAGS}_seed0")
    if not os.path.exists(base + ".scores.npy"):
        gold = _data.write_score_matrix(base + ".tmp.npy", rows, seed=0)
        np.save(base + ".gold.npy", gold)
        os.replace(base + ".tmp.npy", base + ".scores.npy")
    if not os.path.exists(base + ".counts.json"):
        counts = np.bincount(np.load(base + ".gold.npy"), minlength=_data.N_TAGS)
        with open(base + ".counts.tmp", "w", encoding="utf-8") as f:
            json.dump({str(t): int(c) for t, c in enumerate(counts)}, f)
        os.replace(base + ".counts.tmp", base + ".counts.json")
    return base + ".scores.npy", base + ".gold.npy", base + ".counts.json"


def library(scores_path, gold_path, counts_path):
    """The library calls of ``sparsecal evaluate`` on these files."""
    scores = load_scores(scores_path)
    gold = load_gold(gold_path)
    entries = threshold(scores, gold, T)
    groups = TagGroups.from_counts(read_json(counts_path, "train counts"), N_GROUPS,
                                   n_tags=entries.n_tags)
    return evaluate(entries, groups, ci=None, top_label=True)


def child_env():
    """This tree first on the path; bytecode caches allowed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def commands(scores_path, gold_path, counts_path):
    """name -> argv of each process timed."""
    args = ["evaluate", "--scores", scores_path, "--gold", gold_path,
            "--train-counts", counts_path]
    script = os.path.join(os.path.dirname(sys.executable), "sparsecal")
    out = {"python -m sparsecal": [sys.executable, "-m", "sparsecal", *args]}
    if os.path.exists(script):
        out["console script"] = [script, *args]
    out["import numpy (floor)"] = [sys.executable, "-c", "import numpy"]
    out["sparsecal --help"] = [sys.executable, "-m", "sparsecal", "--help"]
    return out


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(argv, env):
    """(wall, CPU) seconds of one process (in this tree: the working directory
    comes first on the path of ``-m`` and ``-c``)."""
    t0, c0 = time.perf_counter(), _children_cpu()
    subprocess.run(argv, env=env, check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)
    return time.perf_counter() - t0, _children_cpu() - c0


def measure(sizes, workdir, repeats):
    """{size: {case: (best wall, best CPU) seconds}}, every case interleaved
    round-robin."""
    env = child_env()
    probe = [sys.executable, "-c", "import sparsecal; print(sparsecal.__file__)"]
    where = subprocess.run(probe, env=env, cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.strip()
    if where != sparsecal.__file__:
        raise SystemExit(f"the child processes import {where}, this one "
                         f"{sparsecal.__file__}")
    cases = {}
    for size in sizes:
        files = inputs(workdir, SIZES[size])
        cases[size] = {name: (lambda argv=argv: run(argv, env))
                       for name, argv in commands(*files).items()}
        cases[size]["library"] = lambda files=files: _time(library, *files)
        for fn in cases[size].values():   # warm-up: page cache, bytecode, first calls
            fn()
    best = {size: {name: (float("inf"),) * 2 for name in c} for size, c in cases.items()}
    for _ in range(repeats):
        for size, c in cases.items():
            for name, fn in c.items():
                best[size][name] = tuple(float(min(b, t)) for b, t in
                                         zip(best[size][name], fn()))
    return best


def _time(fn, *args):
    t0, c0 = time.perf_counter(), time.process_time()
    fn(*args)
    return time.perf_counter() - t0, time.process_time() - c0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="10^5 and 5 * 10^7 entries, 3 repeats")
    parser.add_argument("--repeats", type=int, help="best of this many (default: 7; "
                                                    "3 with --quick)")
    parser.add_argument("--workdir", default="/tmp/sparsecal_bench")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    sizes = ["1e5", "5e7"] if args.quick else ["1e5", "5e8"]
    repeats = args.repeats or (3 if args.quick else 7)
    load_before = os.getloadavg()
    best = measure(sizes, args.workdir, repeats)
    load_after = os.getloadavg()
    print(f"sparsecal {sparsecal.__version__} from {os.path.dirname(sparsecal.__file__)}; "
          f"{os.cpu_count()} CPUs; load average {load_before[0]:.2f} before, "
          f"{load_after[0]:.2f} after; best of {repeats}")
    print(f"{'entries':>8} {'case':<22} {'wall s':>8} {'CPU s':>7} {'overhead':>9} "
          f"{'(CPU)':>7}  target <= {TARGET_S} s")
    ok = True
    results = {}
    for size, times in best.items():
        lib, lib_cpu = times["library"]
        results[size] = {"rows": SIZES[size], "seconds": times, "overhead": {}}
        for name, (t, cpu) in times.items():
            line = f"{size:>8} {name:<22} {t:8.3f} {cpu:7.3f}"
            if name not in INFORMATION:
                over = t - lib
                results[size]["overhead"][name] = (over, cpu - lib_cpu)
                ok = ok and over <= TARGET_S
                line += (f" {over:9.3f} {cpu - lib_cpu:7.3f}  "
                         f"{'ok' if over <= TARGET_S else 'MISS'}")
            print(line)
    print(f"overhead of sparsecal evaluate <= {TARGET_S} s at every size: "
          f"{'ok' if ok else 'MISS'}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"load_average": [load_before, load_after], "repeats": repeats,
                       "results": results, "ok": ok}, f, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
