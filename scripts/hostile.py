"""Hostile runs of the command line: every case a separate process, under a
4 GiB address-space limit and a time limit, over inputs it must not change.

A case passes when the command exits 0 (an accepted case) or 2 with one line
``sparsecal VERB: error: ...`` naming what it should (a refused case), prints no
traceback, "internal error" or "out of memory", ends in time, and leaves every
input byte for byte as it was. The cases follow the ten classes of
docs/reliability.md, section 9 (issue 30)::

    python scripts/hostile.py            # every case
    python scripts/hostile.py --quick    # one case per class (tests/test_hostile.py)

Exit status 0 when every case passes; each failure is one line on stdout.
"""
import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

#: address space of a case (bytes) and its time (seconds)
MEMORY, SECONDS = 4 << 30, 120


def _inputs(d):
    """The valid inputs every case starts from."""
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(3), size=(8, 5))
    np.save(d / "s.npy", probs.reshape(40, 3))
    np.save(d / "g.npy", rng.integers(0, 3, 40))
    (d / "l.txt").write_text("5\n" * 8)
    (d / "c.json").write_text('{"A": 9, "B": 5, "C": 1}')
    (d / "t.json").write_text('{"A": 0, "B": 1, "C": 2}')
    (d / "t5.json").write_text('{"A": 0, "B": 1, "C": 2, "D": 3, "E": 4}')
    os.mkfifo(d / "fifo")
    np.save(d / "half.npy", np.full((40, 3), 0.54))   # each token sums to 1.62
    (d / "bad.conllu").write_text("01\tI\tI\tPRON\tPRP\t_\t0\troot\t_\t_\n\n")


#: class -> [(argv, expected: 0 or the words of the refusal)]; {d} is the folder
CASES = {
    1: [(["evaluate", "--scores", "{d}/s.npy", "--gold", "{d}/g.npy", "--json", "{d}/s.npy"],
         "is the input --scores"),
        (["evaluate", "--scores", "{d}/s.npy", "--gold", "{d}/g.npy", "--save-entries",
          "{d}/fifo"], "is a FIFO"),
        (["report", "--scores", "{d}/s.npy", "--gold", "{d}/g.npy", "-o", "{d}"],
         "holds the input --scores")],
    2: [(["evaluate", "--scores", "{d}/s.npy", "--gold", "{d}/g.npy", "--bins", "300000000",
          "--binning", "fixed"], "RLIMIT_AS"),
        (["evaluate", "--scores", "{d}/s.npy", "--gold", "{d}/g.npy", "--ci", "bootstrap",
          "--n-resamples", "1000000000000"], "--n-resamples"),
        (["events", "--scores", "{d}/s.npy", "--gold", "{d}/g.npy", "--lengths", "{d}/l.txt",
          "--k", "1000000000"], "--k"),
        (["demo", "--tokens", "1000000000000", "-o", ""], "--tokens")],
    3: [(["evaluate", "--scores", "{d}/s.npy", "--gold", "{d}/g.npy", "--tag-index",
          "{d}/t5.json"], "--tag-index")],
    4: [(["evaluate", "--scores", "{d}/s.npy", "--gold", "{d}/g.npy", "--chunk-rows", "10"],
         "--chunk-rows applies"),
        (["evaluate", "--scores", "{d}/s.npy", "--gold", "{d}/g.npy", "--scheduler", ""],
         "--scheduler needs"),
        (["evaluate", "--scores", "{d}/s.npy", "--gold", "{d}/g.npy", "--bins", "100000"],
         0)],
    6: [(["evaluate", "--scores", "{d}/fifo", "--gold", "{d}/g.npy"], "is a FIFO"),
        (["evaluate", "--scores", "{d}/s.npy", "--gold", "{d}/g.npy", "--tag-index",
          "{d}/fifo"], "is a FIFO")],
    10: [(["evaluate", "--scores", "{d}/s.npy", "--gold", "{d}/bad.conllu", "--tag-index",
           "{d}/t.json"], "bad ID '01'"),
         (["events", "--scores", "{d}/half.npy", "--gold", "{d}/g.npy", "--lengths",
           "{d}/l.txt"], "not 1")],
}


def _digest(d):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(d.iterdir()) if p.is_file()}


def _limit():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run_case(argv, expected, d):
    """None if the case passes, else what went wrong."""
    argv = [a.format(d=d) for a in argv]
    before = _digest(d)
    try:
        out = subprocess.run([sys.executable, "-m", "sparsecal", *argv, "-q"],
                             capture_output=True, text=True, timeout=SECONDS,
                             preexec_fn=_limit, env={**os.environ,
                                                     "SPARSECAL_NUM_THREADS": "1"})
    except subprocess.TimeoutExpired:
        return f"no end in {SECONDS} s"
    err = out.stderr
    if any(w in err for w in ("Traceback", "internal error", "out of memory")):
        return f"crash: {err.strip().splitlines()[-1]}"
    if _digest(d) != before:
        return "an input changed"
    if expected == 0:
        return None if out.returncode == 0 else f"refused: {err.strip()}"
    errors = [line for line in err.splitlines() if ": error: " in line]
    if out.returncode != 2 or len(errors) != 1 or expected not in errors[0]:
        return f"exit {out.returncode}, wanted one error with {expected!r}: {err.strip()!r}"
    return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="the first case of each class")
    args = p.parse_args(argv)
    failures, n = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        _inputs(d)
        for cls, cases in CASES.items():
            for argv_, expected in cases[:1] if args.quick else cases:
                n += 1
                problem = run_case(argv_, expected, d)
                if problem:
                    failures.append(f"class {cls}: sparsecal {' '.join(argv_)}: {problem}")
    print("\n".join(failures) or f"{n} hostile cases: no silent acceptance, crash or loss")
    print(json.dumps({"cases": n, "failures": len(failures)}))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
