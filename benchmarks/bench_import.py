"""Import time of ``sparsecal``, measured with ``python -X importtime`` in fresh
interpreters (best of ``--repeat``), run by hand::

    .venv/bin/python benchmarks/bench_import.py            # prints a table
    .venv/bin/python benchmarks/bench_import.py --json out.json

Three cases: ``import sparsecal`` (the package: names load on first use), the
workflow names a script uses (``threshold``, ``TagGroups``, ``smce``, ``gmce``,
``evaluate``, ``GroupedCalibrator``, ``IsotonicCalibrator``), and ``import numpy``
alone as the floor every case pays. Target (issue 10): ``import sparsecal`` at
most 0.25 s, and neither case imports scipy.optimize, matplotlib or torch.
"""
import argparse
import json
import re
import subprocess
import sys

CASES = {
    "numpy (floor)": "import numpy",
    "import sparsecal": "import sparsecal",
    "workflow names": ("from sparsecal import (threshold, TagGroups, smce, gmce, evaluate, "
                       "GroupedCalibrator, IsotonicCalibrator)"),
}
HEAVY = ("scipy.optimize", "matplotlib", "torch", "sklearn")
TARGET_S = 0.25


def _run(code):
    """(total import seconds, heavy modules imported) of one fresh interpreter."""
    probe = (f"{code}\nimport sys\n"
             f"print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", probe],
                         capture_output=True, text=True, check=True)
    total = 0
    for line in out.stderr.splitlines():
        m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", line)
        if m and not m.group(2).startswith(" "):   # top-level imports only
            total += int(m.group(1))
    return total / 1e6, json.loads(out.stdout.strip().replace("'", '"'))


def measure(repeat=7):
    """{case: {"seconds": best of repeat, "heavy": modules}} for every case."""
    results = {}
    for name, code in CASES.items():
        runs = [_run(code) for _ in range(repeat)]
        results[name] = {"seconds": min(t for t, _ in runs), "heavy": runs[0][1]}
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    results = measure(args.repeat)
    print(f"{'case':<20} {'seconds':>8}  heavy modules")
    for name, r in results.items():
        print(f"{name:<20} {r['seconds']:8.3f}  {', '.join(r['heavy']) or '-'}")
    ok = results["import sparsecal"]["seconds"] <= TARGET_S and not any(
        r["heavy"] for n, r in results.items() if n != "numpy (floor)")
    print(f"target: import sparsecal <= {TARGET_S} s, no {', '.join(HEAVY)}: "
          f"{'ok' if ok else 'MISS'}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
