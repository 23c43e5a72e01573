"""Reproduce the structure of Kranzlein, Liu & Schneider 2021, Table 1.

Rows: no recalibration, then every method (scaling-binning, isotonic, histogram
binning, Platt) fit on dev with one group (SCW) and with 5 TFG groups; columns:
SMCE over all entries and GMCE of the most and least frequent groups, each with
its relative change; bottom rows: entries, tag types, training share, tokens.

On the built-in synthetic CCG-like tagger (default), or on your tagger's files:

    python scripts/table1.py --tokens 55371
    python scripts/table1.py --dev-scores dev.npy --dev-gold dev_gold.npy \\
        --scores test.npy --gold test_gold.npy --train-counts counts.json [--tag-index idx.json]

The same table comes from ``sparsecal compare``; this script adds the synthetic
data and a JSON dump of every number.
"""
import argparse
import json
import sys
import time

import sparsecal as sc
from sparsecal.calibration.comparison import compare_methods
from sparsecal.io.arrays import load_gold, load_scores
from sparsecal.datasets.synthetic import make_tagger_outputs


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", type=int, default=55371,
                   help="synthetic tokens per split (default: CCGbank test size)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--groups", type=int, default=5)
    p.add_argument("--bins", type=int, default=10)
    p.add_argument("--threshold", type=float, default=0.01)
    p.add_argument("--ci", choices=["simulation", "bootstrap"], default=None)
    p.add_argument("--all-groups", action="store_true", help="show every group")
    p.add_argument("--json", help="write every number here")
    user = p.add_argument_group("your tagger's outputs (instead of synthetic data)")
    for name in ("dev-scores", "dev-gold", "scores", "gold", "train-counts", "tag-index"):
        user.add_argument(f"--{name}")
    return p.parse_args(argv)


def load(args):
    """Dev entries, test entries, TFG groups and a description of the data."""
    if args.scores:
        missing = [n for n in ("dev_scores", "dev_gold", "gold", "train_counts")
                   if not getattr(args, n)]
        if missing:
            raise ValueError(f"with --scores also give --{missing[0].replace('_', '-')}")
        dev_s, test_s = load_scores(args.dev_scores), load_scores(args.scores)
        dev_g = load_gold(args.dev_gold, tag_index=args.tag_index)
        test_g = load_gold(args.gold, tag_index=args.tag_index)
        groups = sc.TagGroups.from_counts(args.train_counts, args.groups,
                                          n_tags=test_s.shape[1], tag_index=args.tag_index)
        what = f"dev {args.dev_scores}, test {args.scores}"
    else:
        dev = make_tagger_outputs(args.tokens, split_seed=2 * args.seed + 1,
                                  tagger_seed=args.seed)
        test = make_tagger_outputs(args.tokens, split_seed=2 * args.seed + 2,
                                   tagger_seed=args.seed)
        dev_s, dev_g, test_s, test_g = dev.scores, dev.gold, test.scores, test.gold
        groups = sc.TagGroups.from_counts(test.train_counts, args.groups)
        what = (f"synthetic CCG-like tagger, {args.tokens:,} dev and test tokens, "
                f"seed {args.seed}")
    return (sc.threshold(dev_s, dev_g, args.threshold),
            sc.threshold(test_s, test_g, args.threshold), groups, what)


def main(argv=None):
    args = parse_args(argv)
    start = time.perf_counter()
    try:
        dev, test, groups, what = load(args)
        result = compare_methods(dev, test, groups, n_bins=args.bins, ci=args.ci,
                                 seed=args.seed)
    except (OSError, ValueError) as exc:
        print(f"table1: {exc}", file=sys.stderr)
        return 1
    print(result.to_markdown(all_groups=args.all_groups))
    print(f"\nData: {what}; {len(dev):,} dev entries; threshold {args.threshold}, "
          f"{args.bins} equal-mass bins; relative change = (after - before) / before.")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result.to_dict(), f, indent=2)
    print(f"({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
