"""Measure a tagger's calibration: SMCE over every thresholded (token, tag) entry
and GMCE per tag-frequency group (Kranzlein et al. 2021), with confidence
intervals (--ci), per-tag MCE (--per-tag), top-label ECE and further --metrics.
Reads a score matrix and gold tags, or saved --entries; without --train-counts
all tags form one group (SCW).
"""
from ..metrics import evaluate
from . import flags
from .cluster import add_cluster_arguments, cluster_evaluate, wants_cluster
from .inputs import entries_from_args, groups_from_args


def add_arguments(p):
    flags.add_common(p, "the intervals and the resampling --metrics")
    flags.add_ci(p)
    flags.add_binning(p)
    p.add_argument("--per-tag", action="store_true", help="also per-tag CE and MCE")
    p.add_argument("--min-entries", type=int, help="--per-tag: entries a tag needs for its "
                                                   "own CE (default: 400, two bins of 200)")
    flags.add_metrics(p)
    flags.add_prior(p, methods=False)
    flags.add_output(p, "--json", help="write the numbers as JSON here")
    flags.add_output(p, "--save-entries", help="also save the thresholded entries (.npz; on a "
                                            "cluster: a directory of .npz shards)")
    add_cluster_arguments(p)


def run(args, console):
    ci = flags.ci_from_args(args)   # every flag checked before a file is read
    binning = flags.binning_from_args(args)
    prior, _ = flags.priors(args)
    resampling = flags.resampling_options(args)
    if args.min_entries is not None and not args.per_tag:
        raise ValueError("--min-entries applies to --per-tag")
    options = dict(binning, n_bins=args.bins, ci=ci, per_tag=args.per_tag,
                   min_entries=args.min_entries, top_label=True, metrics=args.metrics,
                   prior=prior, **resampling)
    if wants_cluster(args):
        return cluster_evaluate(args, console, options)
    entries = entries_from_args(args, console)
    groups = groups_from_args(args, entries.n_tags, console)
    with console.step("evaluating") as progress:
        result = evaluate(entries, groups, progress=progress, **options)
    console.info(result.to_markdown())
    if args.json:
        result.to_json(args.json)
        console.info(f"\nwrote {args.json}")
    if args.save_entries:
        from ..io.arrays import save_entries
        with console.step("writing"):
            save_entries(args.save_entries, entries)
        console.info(f"wrote {args.save_entries}")
    return 0
