"""Write an HTML report of a tagger's calibration (with PNG and SVG figures and
the numbers as JSON): the evaluation of the test outputs with intervals,
reliability diagrams per group and per-tag CE; with dev outputs, also every
method of --methods fit on dev and compared on test, and the figures after
isotonic recalibration by TFG group.
"""
from ..calibration.registry import METHODS
from ..plotting import report as page   # (tests replace page.write_report)
from . import flags
from .cluster import add_cluster_arguments, cluster_report, wants_cluster
from .inputs import check_same_tags, entries_from_args, groups_from_args


def add_arguments(p):
    flags.add_common(p, "the intervals, seeded methods and the resampling --metrics")
    flags.add_inputs(p, "dev-", what="dev scores (optional: enables recalibration)")
    flags.add_ci(p, default="score, of the debiased CE_2 (simulation with --norm 1 or max)",
                 measures_default=f"{flags.COMPARE_RESAMPLES} with dev outputs, else "
                                  "{library}")
    flags.add_binning(p)
    flags.add_metrics(p)
    flags.add_prior(p)
    flags.add_methods(p, "with dev outputs: the methods to compare (default: all)",
                      default=list(METHODS))
    p.add_argument("--title", default="Calibration report",
                   help="the page's title (default: Calibration report)")
    flags.add_output(p, "-o", "--output", required=True, help="report directory")
    add_cluster_arguments(p)


def run(args, console):
    if args.ci is None:   # the report always shows intervals, by default the debiased CE_2's
        if args.norm == 2:
            args.ci, args.debias = "score", True
        else:
            args.ci = "simulation"
    ci = flags.ci_from_args(args)   # every flag checked before a file is read
    binning = flags.binning_from_args(args)
    with_dev = bool(args.dev_scores or args.dev_entries)
    measure_prior, method_prior = flags.priors(args, args.methods, fitted=with_dev)
    resampling = flags.resampling_options(args, flags.COMPARE_RESAMPLES if with_dev else None)
    options = dict(methods=args.methods, n_bins=args.bins, ci=ci, seed=args.seed,
                   title=args.title, prior=measure_prior or method_prior,
                   evaluation=dict(binning, metrics=args.metrics, **resampling))
    if wants_cluster(args):
        path = cluster_report(args, console, options)
        console.info(f"wrote the report: {path}")
        return 0
    test = entries_from_args(args, console)
    dev = None
    if with_dev:
        dev = entries_from_args(args, console, prefix="dev-")
        check_same_tags(dev.n_tags, test.n_tags)
    groups = groups_from_args(args, test.n_tags, console)
    with console.step("report") as progress:
        path = page.write_report(args.output, test, groups, dev=dev, progress=progress,
                            **options)
    console.info(f"wrote the report: {path}")
    return 0
