"""Agreement and timings of issue 13's measures on large inputs, run by hand::

    .venv/bin/python benchmarks/bench_measures.py              # 1e4, 1e5, 1e6 points
    .venv/bin/python benchmarks/bench_measures.py --sizes 10000

For each size: smECE against ``relplot.smECE`` (the difference and both times;
the unit tests check the same on up to 2e5 points), and the times of the CORP
decompositions, minDCF, Cllr and minCllr. Then classwise ECE of a synthetic
tagger (dense scores). One run each, best of ``--repeat``; a busy machine
gives larger times.
"""
import argparse
import time

import numpy as np

import sparsecal as sc


def _best(func, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - t0)
    return out, min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10**4, 10**5, 10**6])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    import relplot
    rng = np.random.default_rng(0)
    print("n | smECE | relplot | |diff| | ours s | relplot s | brier_corp s | "
          "log_loss_corp s | min_dcf s | cllr s | min_cllr s")
    for n in args.sizes:
        f = rng.random(n)
        y = (rng.random(n) < f ** 2).astype(np.uint8)
        ours, t_ours = _best(lambda: sc.smooth_ece(f, y).value, args.repeat)
        ref, t_ref = _best(lambda: relplot.smECE(f, y), args.repeat)
        row = [_best(lambda g=g: g(f, y), args.repeat)[1]
               for g in (sc.brier_corp, sc.log_loss_corp,
                         lambda a, b: sc.min_dcf(a, b, prior=0.5),
                         sc.cllr, sc.min_cllr)]
        print(f"{n:,} | {ours:.6f} | {ref:.6f} | {abs(ours - ref):.1e} | {t_ours:.3f} | "
              f"{t_ref:.3f} | " + " | ".join(f"{t:.3f}" for t in row))
    from sparsecal.datasets import make_tagger_outputs
    data = make_tagger_outputs(50000)
    c, t = _best(lambda: sc.classwise_ece(data.scores, data.gold), args.repeat)
    print(f"classwise_ece of {data.scores.shape} dense scores: {c.value:.5f} in {t:.2f} s")


if __name__ == "__main__":
    main()
