"""Fit a recalibration model on dev outputs and save it for 'sparsecal apply': one
calibrator of --method per tag group (--grouping: all tags, TFG groups, or per
tag with its TFG group as fallback), optionally an --ensemble of K cross-fitted
set-ups; with --select, the method, TFG groups and bins are chosen by stratified
K-fold on dev (sparsecal.select) and the best is refit on all of dev.
"""
import json

from ..calibration.grouped import GroupedCalibrator
from ..calibration.registry import METHODS, check_bins_methods, get_method
from ..calibration.selection import METRICS, select
from ..core.groups import TagGroups
from ..core.jsonfile import read_json
from ..core.validation import TAG_BYTES, check_positive_int, check_size
from ..io.atomic import atomic_write_text
from . import flags
from .cluster import add_cluster_arguments, cluster_fit, cluster_select, wants_cluster
from .inputs import entries_from_args, groups_from_args

#: the flags of --select, refused without it
SELECT_FLAGS = ("methods", "groups_grid", "bins_grid", "folds", "select_metric", "json")


def add_arguments(p):
    flags.add_common(p, "seeded methods and of the folds of --ensemble and --select")
    p.add_argument("--method", choices=sorted(METHODS), help="the method (default: isotonic)")
    p.add_argument("--grouping", choices=["scw", "tfg", "per-tag"],
                   help="one calibrator for all tags, per TFG group, or per tag with its "
                        "TFG group's as fallback (default: tfg)")
    flags.add_group_min_entries(p, "dev entries a group (per-tag: a tag) needs for its own "
                                   "calibrator, else its fallback's or none")
    flags.add_prior(p, measures=False)
    p.add_argument("--ensemble", type=int, metavar="K",
                   help="save the average of K calibrators, each fit on K-1 of K stratified "
                        "token folds (CrossFittedCalibrator)")
    p.add_argument("--select", action="store_true",
                   help="choose method, TFG groups and bins by stratified K-fold on these "
                        "dev outputs (sparsecal.select), then save the best refit on all")
    flags.add_methods(p, "--select: the methods to try (default: all)")
    p.add_argument("--groups-grid", nargs="+", type=int, metavar="G",
                   help="--select: numbers of TFG groups to try (default: 1 and --groups)")
    p.add_argument("--bins-grid", nargs="+", type=int, metavar="B",
                   help="--select: bin counts to try for binning methods (default: --bins)")
    p.add_argument("--folds", type=int, help="--select: K (default: 5)")
    p.add_argument("--select-metric", choices=METRICS,
                   help=f"--select: the score of the out-of-fold outputs (default: "
                        f"{METRICS[0]})")
    flags.add_output(p, "--json", help="--select: write the score table as JSON here")
    flags.add_output(p, "-o", "--output", required=True, help="directory to save it in")
    add_cluster_arguments(p)


def run(args, console):
    if args.select:
        return _select(args, console)
    for name in SELECT_FLAGS:
        if getattr(args, name) is not None:
            raise ValueError(f"--{name.replace('_', '-')} applies to fit --select only")
    args.method = args.method or "isotonic"
    args.grouping = args.grouping or "tfg"
    _, prior = flags.priors(args, [args.method])
    check_bins_methods([args.method], args.bins, "--bins")
    if args.ensemble is not None and args.ensemble < 2:
        raise ValueError(f"--ensemble must be at least 2 folds, got {args.ensemble}")
    if args.min_entries is not None:
        check_positive_int(args.min_entries, "--group-min-entries")
    if args.grouping != "scw" and not args.train_counts:
        raise ValueError(f"--grouping {args.grouping} needs --train-counts")
    if args.grouping == "scw" and args.train_counts:
        raise ValueError("--train-counts applies to --grouping tfg or per-tag (TFG groups), "
                         "not scw (one calibrator for all tags)")
    method = get_method(args.method)
    if wants_cluster(args):
        model, n_tokens = cluster_fit(
            args, console, lambda n_tags: _model(args, method, n_tags, prior, console),
            lambda model, entries, step: _fit(args, console, model, entries, step))
        fitted_on = f"{n_tokens:,} tokens on the cluster"
    else:
        entries = entries_from_args(args, console)
        model = _model(args, method, entries.n_tags, prior, console)
        model = _fit(args, console, model, entries, "fitting")
        fitted_on = f"{len(entries):,} entries"
    model.save(args.output)
    what = (f"a cross-fitted ensemble of {len(model.calibrators_)} {method.display_name} "
            "set-ups" if args.ensemble is not None else
            f"{len(model.calibrators_)} {method.display_name} calibrator(s)")
    console.info(f"fitted {what} ({args.grouping}) on {fitted_on}; saved to {args.output}")
    return 0


def _model(args, method, n_tags, prior, console):
    """The unfitted GroupedCalibrator of --method, --grouping, --group-min-entries."""
    base = method.build(args.bins or 10, args.seed, prior)
    kw = {} if args.min_entries is None else {"min_entries": args.min_entries}
    if args.grouping == "scw":
        return GroupedCalibrator(base, TagGroups.scw(n_tags), **kw)
    tfg = groups_from_args(args, n_tags, console)
    if args.grouping == "tfg":
        return GroupedCalibrator(base, tfg, **kw)
    return GroupedCalibrator(base, TagGroups.per_tag(n_tags), fallback=tfg, **kw)


def _fit(args, console, model, entries, step):
    """``model`` fit on ``entries``; with --ensemble K, K cross-fitted copies."""
    if args.ensemble is not None:
        if entries.n_tokens is not None and args.ensemble > entries.n_tokens:
            raise ValueError(f"--ensemble {args.ensemble} is more than the "
                             f"{entries.n_tokens:,} dev tokens to deal into folds")
        from ..calibration.ensemble import CrossFittedCalibrator
        model = CrossFittedCalibrator(model, n_folds=args.ensemble, seed=args.seed)
        with console.step(step):
            return model.fit(entries)
    with console.step(step) as progress:
        return model.fit(entries, progress=progress)


def _select(args, console):
    """fit --select: the best set-up refit on dev, saved, and the score table."""
    for flag, value in (("--method", args.method), ("--grouping", args.grouping),
                        ("--ensemble", args.ensemble),
                        ("--group-min-entries", args.min_entries)):
        if value is not None:
            raise ValueError(f"{flag} does not apply with --select (it chooses the method "
                             "and groups: --methods, --groups-grid, --bins-grid)")
    methods = args.methods or list(METHODS)
    _, prior = flags.priors(args, methods)
    check_positive_int(args.groups, "--groups")
    groups_grid = [check_size(g, "--groups-grid", TAG_BYTES)
                   for g in args.groups_grid or sorted({1, args.groups})]
    n_bins = [check_positive_int(b, "--bins-grid") for b in args.bins_grid or [args.bins or 10]]
    if max(groups_grid) > 1 and not args.train_counts:
        raise ValueError(f"--groups-grid {max(groups_grid)} needs --train-counts (TFG groups)")
    counts = read_json(args.train_counts, "train counts") if args.train_counts else None

    def run_select(entries):
        with console.step("selecting"):
            return select(entries, train_counts=counts, tag_index=args.tag_index,
                          methods=methods, n_groups=groups_grid, n_bins=n_bins,
                          n_folds=5 if args.folds is None else args.folds,
                          metric=args.select_metric or METRICS[0], seed=args.seed,
                          prior=prior)

    if wants_cluster(args):
        result, n_tokens = cluster_select(args, console, run_select)
        fitted_on = f"{n_tokens:,} tokens on the cluster"
    else:
        entries = entries_from_args(args, console)
        result = run_select(entries)
        fitted_on = f"{len(entries):,} entries"
    result.best_calibrator.save(args.output)
    console.info(result.to_markdown())
    best = result.best_params
    console.info(f"\nbest: {METHODS[best['method']].display_name}, {best['n_groups']} "
                 f"group(s), bins {best['n_bins'] or '—'}; refit on {fitted_on} "
                 f"and saved to {args.output}")
    if args.json:
        table = {"metric": result.metric, "best_params": best,
                 "best_score": result.best_score, "cv_results": result.cv_results}
        atomic_write_text(args.json, json.dumps(table, indent=2) + "\n")
        console.info(f"wrote {args.json}")
    return 0
