"""A synthetic tagger: measure, recalibrate per tag-frequency group, plot.

The synthetic CCG-like tagger of ``sparsecal.datasets`` (426 Zipfian tags; its
scores are overconfident on frequent tags and underconfident on rare ones, the
pattern Kranzlein, Liu & Schneider 2021 observe, Section 3.3) on a dev and a test
split. The script thresholds both splits into entries, measures SMCE and GMCE per
TFG group (5 groups from the training counts) with Algorithm-2 95% intervals
(Nguyen & O'Connor 2015), recalibrates with TFG isotonic regression fit on dev,
runs every method of the paper's Table 1 with SCW and TFG, and draws the figures
of the HTML report: the pooled calibration curve, one per group, and the
calibration error per method and group.

Usage::

    python examples/synthetic.py --tokens 20000 --out synthetic_out
"""
import argparse
import os

import sparsecal as sc
from sparsecal.datasets import make_tagger_outputs
from _figures import save_figures


def run(n_tokens, out_dir, *, n_groups=5, seed=0):
    """Evaluate, recalibrate and compare on two synthetic splits; save figures."""
    os.makedirs(out_dir, exist_ok=True)
    dev = make_tagger_outputs(n_tokens, split_seed=1)
    test = make_tagger_outputs(n_tokens, split_seed=2)
    dev_e = sc.threshold(dev.scores, dev.gold)
    test_e = sc.threshold(test.scores, test.gold)
    groups = sc.TagGroups.from_counts(test.train_counts, n_groups,
                                      n_tags=test.scores.shape[1])
    ci = sc.ConfidenceInterval(random_state=seed)
    before = sc.evaluate(test_e, groups, ci=ci)
    calibrator = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups).fit(dev_e)
    after = sc.evaluate(calibrator.transform(test_e), groups, ci=ci)
    print(f"{len(test_e):,} test entries (threshold 0.01) of {n_tokens:,} tokens\n")
    print(sc.compare(before, after).to_markdown("uncalibrated", "TFG isotonic"))
    table = sc.compare_methods(dev_e, test_e, groups, seed=seed)
    print("\nEvery method x {SCW, TFG} (Kranzlein et al. 2021, Table 1 layout):\n")
    print(table.to_markdown(all_groups=True))

    save_figures(out_dir, before, after, table)
    return before, after


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=20_000, help="tokens per split")
    parser.add_argument("--out", default="synthetic_out")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    run(args.tokens, args.out, seed=args.seed)


if __name__ == "__main__":
    main()
