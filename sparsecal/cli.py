"""The ``sparsecal`` command line (``python -m sparsecal``)."""
import argparse
import sys
import time

import numpy as np

__all__ = ["main"]


def _fmt_ce(ce):
    if ce is None:
        return "      —"
    if ce.ci_low is None:
        return f"{ce.value:.4f}"
    return f"{ce.value:.4f} [{ce.ci_low:.4f}, {ce.ci_high:.4f}]"


def _demo(args):
    from .entries import threshold
    from .groups import TagGroups
    from .metrics import gmce, smce
    from .synthetic import make_tagger_outputs

    start = time.perf_counter()
    data = make_tagger_outputs(args.tokens, n_tags=426, split_seed=args.seed)
    n_tokens, n_tags = data.scores.shape
    print(f"Synthetic CCG-like tagger: {n_tokens:,} tokens x {n_tags} tags "
          f"({data.scores.size:,} scores), accuracy "
          f"{np.mean(data.scores.argmax(1) == data.gold):.1%}")
    entries = threshold(data.scores, data.gold, args.threshold)
    print(f"Entries with score >= {args.threshold}: {len(entries):,} "
          f"({len(entries) / data.scores.size:.2%} of all scores)")
    groups = TagGroups.from_counts(data.train_counts, args.groups)
    overall = smce(entries, n_bins=args.bins, ci="simulation", seed=args.seed)
    per_group = gmce(entries, groups, n_bins=args.bins, ci="simulation", seed=args.seed)
    print(f"\nSMCE ({args.bins} equal-mass bins, 95% CI by simulation): {_fmt_ce(overall)}\n")
    print("Group  tags  train share        entries   tokens  GMCE [95% CI]")
    for row, ce in zip(groups.summary(entries), per_group):
        print(f"{row['group']:>5}  {row['tag_types']:>4}  "
              f"[{row['train_share_min']:6.2%}, {row['train_share_max']:6.2%}]  "
              f"{row['entries']:>9,}  {row['tokens']:>7,}  {_fmt_ce(ce)}")
    print(f"\n(done in {time.perf_counter() - start:.1f} s)")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(
        prog="sparsecal",
        description="Measure and repair the calibration of taggers with large, sparse "
                    "tagsets.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="evaluate a generated CCG-like tagger "
                                       "(the built-in default job)")
    demo.add_argument("--tokens", type=int, default=50000,
                      help="tokens to generate (default: 50000)")
    demo.add_argument("--threshold", type=float, default=0.01)
    demo.add_argument("--groups", type=int, default=5, help="TFG groups (default: 5)")
    demo.add_argument("--bins", type=int, default=10)
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(func=_demo)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, OSError) as exc:
        print(f"sparsecal: error: {exc}", file=sys.stderr)
        return 1
