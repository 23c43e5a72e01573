"""Compare the recalibration methods (Kranzlein et al. 2021, Table 1): each of
--methods is fit on the dev outputs with one calibrator for all tags (SCW) and
one per TFG group, and evaluated on the test outputs: SMCE and GMCE per group
before and after, and the further --metrics per method and grouping.
"""
import json

from ..calibration.comparison import compare_methods
from ..calibration.registry import METHODS
from ..io.atomic import atomic_write_text
from . import flags
from .cluster import add_cluster_arguments, cluster_compare, wants_cluster
from .inputs import check_same_tags, entries_from_args, groups_from_args


def add_arguments(p):
    flags.add_common(p, "seeded methods and the resampling --metrics")
    flags.add_inputs(p, "dev-", what="dev scores (to fit on)")
    flags.add_binning(p)
    flags.add_metrics(p)
    flags.add_prior(p)
    flags.add_resamples(p, "resamples", str(flags.COMPARE_RESAMPLES))
    flags.add_methods(p, "the methods to compare (default: all)", default=list(METHODS))
    flags.add_output(p, "--json", help="write the numbers as JSON here")
    add_cluster_arguments(p)


def run(args, console):
    binning = flags.binning_from_args(args)
    measure_prior, prior = flags.priors(args, args.methods)
    evaluation = dict(binning, metrics=args.metrics, prior=measure_prior,
                      **flags.resampling_options(args, flags.COMPARE_RESAMPLES))
    options = dict(methods=args.methods, n_bins=args.bins or 10, seed=args.seed,
                   prior=prior, evaluation=evaluation)
    if wants_cluster(args):
        result = cluster_compare(args, console, options)
    else:
        dev = entries_from_args(args, console, prefix="dev-")
        test = entries_from_args(args, console)
        check_same_tags(dev.n_tags, test.n_tags)
        groups = groups_from_args(args, dev.n_tags, console)
        with console.step("comparing") as progress:
            result = compare_methods(dev, test, groups, progress=progress, **options)
    console.info(result.to_markdown())
    if args.json:
        atomic_write_text(args.json, json.dumps(result.to_dict(), indent=2) + "\n")
        console.info(f"\nwrote {args.json}")
    return 0
