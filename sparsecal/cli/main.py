"""The ``sparsecal`` command line (``python -m sparsecal``).

Exit codes: 0 success; 2 bad input, wrong usage or any failure (one line on
stderr naming the argument or file and the problem; ``--debug`` shows the
traceback instead); 130 interrupted.
"""
import argparse
import atexit
import contextlib
import functools
import gc
import os
import sys
import time
import warnings

from ._progress import ProgressLine
from .cluster import add_cluster_arguments


__all__ = ["main", "build_parser"]


class _Console:
    """Messages on stdout; progress lines and warnings on stderr (--quiet: no
    messages, no progress)."""

    def __init__(self, quiet=False):
        self.quiet = quiet
        self._line = None   # the progress line of the step running now

    def info(self, text=""):
        if not self.quiet:
            print(text)

    @contextlib.contextmanager
    def step(self, label):
        """A step of the command: gives the ``progress`` callback of its
        library call (None where no line is drawn)."""
        self._line = ProgressLine(label, enabled=not self.quiet)
        try:
            with self._line as progress:
                yield progress
        finally:
            self._line = None

    def warn(self, text):
        """``text`` on stderr, above the progress line of a running step."""
        if self._line is not None:
            self._line.write(text)
        else:
            print(text, file=sys.stderr)


# ----------------------------------------------------------------- inputs -- #

def _entries_from_args(args, console, prefix=""):
    """Entries from ``--{prefix}entries``, or from ``--{prefix}scores`` (array
    ``--{prefix}key`` of a multi-array file) and ``--{prefix}gold`` thresholded."""
    import numpy as np

    from ..core.entries import threshold
    from ..io.arrays import load_entries, load_gold, load_scores
    attr = prefix.replace("-", "_")
    scores, gold, entries, key = (getattr(args, attr + name, None)
                                  for name in ("scores", "gold", "entries", "key"))
    which = f" {prefix[:-1]}" if prefix else ""
    if entries:
        from ..io.entry_shards import is_entry_shards, load_entry_shards
        with console.step("reading" + which):   # a file, or a cluster's shards
            return (load_entry_shards if is_entry_shards(entries) else load_entries)(entries)
    if not scores or not gold:
        raise ValueError(f"give --{prefix}scores and --{prefix}gold (or --{prefix}entries)")
    if getattr(args, attr + "scores_format") == "crfsuite":
        with console.step("reading" + which):
            return _crfsuite_entries(scores, gold, args)
    with console.step("reading" + which):
        matrix = load_scores(scores, key=key)
        gold_arr = load_gold(gold, tag_index=getattr(args, "tag_index", None),
                             format=getattr(args, "gold_format", None),
                             column=getattr(args, "gold_column", None))
    if gold_arr.shape[0] != matrix.shape[0]:
        raise ValueError(f"{gold!r} has {gold_arr.shape[0]} tokens but {scores!r} has "
                         f"{matrix.shape[0]} rows")
    if gold_arr.size and (gold_arr.min() < -1 or gold_arr.max() >= matrix.shape[1]):
        # checked here, so that the message names the gold file
        i = int(np.flatnonzero((gold_arr < -1) | (gold_arr >= matrix.shape[1]))[0])
        raise ValueError(f"{gold!r}: gold tag {gold_arr[i]} of token {i} is out of range: "
                         f"{scores!r} has {matrix.shape[1]} tags (columns 0.."
                         f"{matrix.shape[1] - 1}; -1 marks 'no gold tag')")
    try:
        with console.step("thresholding" + which) as progress:
            return threshold(matrix, gold_arr, args.threshold, n_threads=args.n_threads,
                             progress=progress)
    except ValueError as exc:
        raise ValueError(f"{scores!r}: {exc}") from None


def _crfsuite_entries(scores, gold, args):
    """Entries of sklearn-crfsuite's predict_marginals output (JSON) and gold labels
    (JSON lists of label lists); every error names the files."""
    from ..adapters.crfsuite import entries_from_crfsuite
    from ..core.jsonfile import read_json
    from ..io.arrays import load_tag_index
    labels = None
    if getattr(args, "tag_index", None):
        index = load_tag_index(args.tag_index)
        labels = sorted(index, key=index.get)
    marginals = read_json(scores, "crfsuite marginals", kind=list)
    y = read_json(gold, "gold labels", kind=list)
    try:
        return entries_from_crfsuite(marginals, y, labels, threshold=args.threshold)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{scores!r} with {gold!r}: {exc}") from None


def _tfg_groups(train_counts, n_groups, n_tags=None, tag_index=None):
    """TFG groups from a JSON counts file; every error names the file."""
    from ..core.validation import check_positive_int
    from ..core.groups import TagGroups
    from ..core.jsonfile import read_json
    from ..io.arrays import load_tag_index
    check_positive_int(n_groups, "--groups")
    index = load_tag_index(tag_index) if tag_index else None
    counts = read_json(train_counts, "train counts")
    try:
        return TagGroups.from_counts(counts, n_groups, n_tags=n_tags, tag_index=index)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"train counts {train_counts!r}"
                         + (f" (with tag index {tag_index!r})" if tag_index else "")
                         + f": {exc}") from None


def _ci_from_args(args):
    """The interval specification of --ci, --level, --n-resamples, --seed."""
    from ..metrics import ConfidenceInterval
    if getattr(args, "debias", False) and args.ci not in (None, "score"):
        raise ValueError(f"--debias takes --ci score (the interval of the debiased CE) or "
                         f"no --ci, got --ci {args.ci}")
    if args.ci == "score" and not getattr(args, "debias", False):
        raise ValueError("--ci score is the interval of the debiased CE: add --debias")
    if not args.ci:
        if args.confidence_level is not None:
            raise ValueError("--level applies to --ci: give --ci too")
        return None
    try:
        level = 0.95 if args.confidence_level is None else args.confidence_level
        return ConfidenceInterval(args.ci, confidence_level=level,
                                  n_resamples=args.n_resamples, random_state=args.seed)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"--level / --n-resamples: {exc}") from None


def _binning_from_args(args):
    """The evaluation keywords of --bins / --bin-size, --binning, --norm, --debias
    (the names of :func:`sparsecal.evaluate`), checked so that errors name the flags."""
    from ..metrics import calibration_error
    if args.bins is not None and args.bin_size is not None:
        raise ValueError("--bins and --bin-size are mutually exclusive: give one")
    if args.binning == "fixed" and args.bin_size is not None:
        raise ValueError("--bin-size applies to --binning equal-mass only")
    if args.debias and args.norm != 2:
        raise ValueError(f"--debias is the debiased CE_2: it needs --norm 2, got --norm "
                         f"{args.norm}")
    for flag, value in (("--bins", args.bins), ("--bin-size", args.bin_size)):
        if value is not None and (value < 1):
            raise ValueError(f"{flag} must be a positive integer, got {value}")
    calibration_error([0.5], [0], n_bins=args.bins, bin_size=args.bin_size,
                      binning=args.binning, norm=args.norm, debias=args.debias)
    return {"bin_size": args.bin_size, "binning": args.binning, "norm": args.norm,
            "debias": args.debias}


def _methods_take_prior(methods):
    """Whether one of ``methods`` has an application prior (the registry is
    imported only when there are methods: ``evaluate`` imports no calibrator)."""
    if not methods:
        return False
    from ..calibration.registry import get_method
    return any(get_method(m).uses_prior for m in methods)


def _prior_for_measures(args, methods=()):
    """--prior of the measures that need one (--metrics dcf, min-dcf), checked; with
    ``methods`` (report with dev outputs) it may be theirs instead."""
    from ..metrics.measures import get_measure
    takers = [m for m in args.metrics if "prior" in get_measure(m).options]
    if takers and args.prior is None:
        raise ValueError(f"--metrics {takers[0]} needs --prior (the application prior)")
    if args.prior is not None and not takers and not _methods_take_prior(methods):
        raise ValueError("--prior applies to --metrics dcf and min-dcf"
                         + (" and to the methods with an application prior (prior-logistic, "
                            "gaussian)" if methods else " (and, with dev outputs, to the "
                            "methods with an application prior)"))
    return _check_prior(args.prior)


def _resampling_options(args):
    """--n-resamples and --seed of the measures that resample (--metrics
    calibration-test-p), as :func:`sparsecal.evaluate` takes them
    (``measure_options``); --n-resamples
    that neither --ci nor a measure takes is refused
    (:func:`sparsecal.metrics.measures.check_options`)."""
    from ..metrics.measures import check_options, get_measure
    measures = [get_measure(m) for m in args.metrics]
    n_resamples = getattr(args, "n_resamples", None)
    check_options(measures, {"n_resamples": n_resamples},
                  used=("n_resamples",) if getattr(args, "ci", None) else (),
                  names={"n_resamples": "--n-resamples"}, others={"n_resamples": "--ci"})
    takes = [o for o in ("n_resamples", "random_state") if any(o in m.options
                                                              for m in measures)]
    options = {o: v for o, v in (("n_resamples", n_resamples), ("random_state", args.seed))
               if o in takes and v is not None}
    return {"measure_options": options} if options else {}


def _check_prior(prior):
    from ..core.validation import check_prior
    return None if prior is None else check_prior(prior, "--prior")


def _groups_from_args(args, n_tags, console):
    from ..core.groups import TagGroups
    if getattr(args, "train_counts", None):
        return _tfg_groups(args.train_counts, args.groups, n_tags,
                           getattr(args, "tag_index", None))
    console.info("(no --train-counts: evaluating all tags as one group, SCW)")
    index = getattr(args, "tag_index", None)
    return TagGroups.scw(n_tags, tag_names=_index_names(index, n_tags) if index else None)


def _index_names(path, n_tags):
    """The name of each of ``n_tags`` columns from a tag-index file ("" if none)."""
    from ..io.arrays import load_tag_index
    names = [""] * n_tags
    for name, i in load_tag_index(path).items():
        if 0 <= i < n_tags:
            names[i] = name
    return names


# --------------------------------------------------------------- commands -- #

def _cmd_evaluate(args, console):
    from ..metrics import evaluate
    from .cluster import cluster_evaluate, wants_cluster
    ci = _ci_from_args(args)   # checked before any file is read
    binning = _binning_from_args(args)
    prior = _prior_for_measures(args)
    resampling = _resampling_options(args)
    if wants_cluster(args):
        return cluster_evaluate(args, console, _groups_from_args,
                                dict(binning, ci=ci, prior=prior, **resampling))
    entries = _entries_from_args(args, console)
    groups = _groups_from_args(args, entries.n_tags, console)
    with console.step("evaluating") as progress:
        result = evaluate(entries, groups, n_bins=args.bins, ci=ci, per_tag=args.per_tag,
                          min_entries=args.min_entries, top_label=True,
                          metrics=args.metrics, progress=progress, prior=prior,
                          **binning, **resampling)
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


def _cmd_fit(args, console):
    from ..calibration.registry import check_bins_methods, check_prior_methods
    from .cluster import cluster_fit, wants_cluster
    if args.select:
        return _fit_select(args, console)
    _check_not_select(args)
    args.method = args.method or "isotonic"
    args.grouping = args.grouping or "tfg"
    prior = check_prior_methods([args.method], args.prior, "--prior")
    check_bins_methods([args.method], args.bins, "--bins")
    if args.ensemble is not None and (args.ensemble < 2):
        raise ValueError(f"--ensemble must be at least 2 folds, got {args.ensemble}")
    if wants_cluster(args):
        model, method, n_tokens = cluster_fit(
            args, console, lambda n_tags: _grouped_model(args, n_tags, prior, console),
            lambda model, entries, step: _fit_setup(args, console, model, entries, step))
        fitted_on = f"{n_tokens:,} tokens on the cluster"
    else:
        entries = _entries_from_args(args, console)
        model, method = _grouped_model(args, entries.n_tags, prior, console)
        model = _fit_setup(args, console, model, entries, "fitting")
        fitted_on = f"{len(entries):,} entries"
    model.save(args.output)
    what = (f"a cross-fitted ensemble of {len(model.calibrators_)} {method.display_name} "
            "set-ups" if args.ensemble is not None else
            f"{len(model.calibrators_)} {method.display_name} calibrator(s)")
    console.info(f"fitted {what} ({args.grouping}) on {fitted_on}; saved to {args.output}")
    return 0


def _fit_setup(args, console, model, entries, step):
    """``model`` fitted on ``entries`` (Entries or DaskEntries), wrapped in a
    CrossFittedCalibrator with --ensemble K."""
    if args.ensemble is not None:
        from ..calibration.ensemble import CrossFittedCalibrator
        model = CrossFittedCalibrator(model, n_folds=args.ensemble, seed=args.seed)
        with console.step(step):
            return model.fit(entries)
    with console.step(step) as progress:
        return model.fit(entries, progress=progress)


def _grouped_model(args, n_tags, prior, console):
    """The unfitted GroupedCalibrator of ``fit``'s --method/--grouping, and its
    registry Method."""
    from ..calibration.grouped import GroupedCalibrator
    from ..calibration.registry import get_method
    from ..core.groups import TagGroups
    method = get_method(args.method)
    base = method.build(args.bins or 10, args.seed, prior)
    if args.grouping == "scw":
        return GroupedCalibrator(base, TagGroups.scw(n_tags)), method
    if not args.train_counts:
        raise ValueError(f"--grouping {args.grouping} needs --train-counts")
    tfg = _groups_from_args(args, n_tags, console)
    if args.grouping == "tfg":
        return GroupedCalibrator(base, tfg), method
    kw = {} if args.min_entries is None else {"min_entries": args.min_entries}
    return GroupedCalibrator(base, TagGroups.per_tag(n_tags), fallback=tfg, **kw), method


def _check_not_select(args):
    """The flags of --select, refused without it."""
    for flag, value in (("--methods", args.methods), ("--groups-grid", args.groups_grid),
                        ("--bins-grid", args.bins_grid), ("--folds", args.folds),
                        ("--select-metric", args.select_metric), ("--json", args.json)):
        if value is not None:
            raise ValueError(f"{flag} applies to fit --select only")


def _fit_select(args, console):
    """fit --select: method, TFG groups and bins chosen by stratified K-fold on dev
    (:func:`sparsecal.select`); the refit best model and the score table saved."""
    import json

    from ..calibration.registry import METHODS, check_prior_methods
    from ..calibration.selection import select
    from ..core.jsonfile import read_json
    from ..io.atomic import atomic_write_text
    from .cluster import cluster_select, wants_cluster
    for flag, value in (("--method", args.method), ("--grouping", args.grouping),
                        ("--ensemble", args.ensemble), ("--min-entries", args.min_entries)):
        if value is not None:
            raise ValueError(f"{flag} does not apply with --select (it chooses the method "
                             "and groups: --methods, --groups-grid, --bins-grid)")
    methods = args.methods or list(METHODS)
    prior = check_prior_methods(methods, args.prior, "--prior")
    groups_grid = args.groups_grid or sorted({1, args.groups})
    if max(groups_grid) > 1 and not args.train_counts:
        raise ValueError(f"--groups-grid {max(groups_grid)} needs --train-counts (TFG groups)")
    counts = None
    if args.train_counts:
        counts = read_json(args.train_counts, "train counts")

    def run_select(entries):
        with console.step("selecting"):
            return select(entries, train_counts=counts, methods=methods, n_groups=groups_grid,
                          n_bins=args.bins_grid or [args.bins or 10],
                          n_folds=5 if args.folds is None else args.folds,
                          metric=args.select_metric or "smce", seed=args.seed, prior=prior)

    if wants_cluster(args):
        result, n_tokens = cluster_select(args, console, run_select)
        fitted_on = f"{n_tokens:,} tokens on the cluster"
    else:
        entries = _entries_from_args(args, console)
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


def _cmd_apply(args, console):
    import numpy as np

    from ..io.atomic import atomic_path
    from ..calibration.loading import load_calibrator
    from ..io.arrays import load_scores
    from .cluster import cluster_apply, wants_cluster
    if wants_cluster(args):
        return cluster_apply(args, console)
    model = load_calibrator(args.calibrator)
    if not args.output.endswith(".npy"):
        raise ValueError(f"output {args.output!r} must be a .npy file")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise ValueError(f"output {args.output!r}: directory {out_dir!r} does not exist")
    with console.step("reading"):
        scores = load_scores(args.scores, key=args.key)
    if scores.shape[1] != model.n_tags:
        raise ValueError(f"{args.scores!r} has {scores.shape[1]} tags but the calibrator "
                         f"was fit for {model.n_tags}")
    try:
        with console.step("calibrating") as progress:
            if os.path.splitext(args.scores)[1].lower() == ".npy":   # streamed (memory maps)
                model.transform_file(args.scores, args.output, progress=progress)
            else:   # .npz / .pt: already read into memory
                with atomic_path(args.output, suffix=".npy") as tmp:
                    np.save(tmp, model.transform_dense(scores, progress=progress))
    except ValueError as exc:   # e.g. NaN or values outside [0, 1]
        raise ValueError(f"{args.scores!r}: {exc}") from None
    console.info(f"wrote {args.output}")
    return 0


def _cmd_compare(args, console):
    from ..calibration.comparison import compare_methods
    from .cluster import cluster_compare, wants_cluster
    from ..calibration.registry import check_prior_methods
    from ..metrics.measures import get_measure
    binning = _binning_from_args(args)
    if any("prior" in get_measure(m).options for m in args.metrics):
        measure_prior = _prior_for_measures(args, args.methods)
        prior = measure_prior if _methods_take_prior(args.methods) else None
    else:
        measure_prior = None
        prior = check_prior_methods(args.methods, args.prior, "--prior")
    evaluation = dict(binning, metrics=args.metrics, prior=measure_prior,
                      **_resampling_options(args))
    options = dict(methods=args.methods, n_bins=args.bins or 10, seed=args.seed,
                   prior=prior, evaluation=evaluation)
    if wants_cluster(args):
        result = cluster_compare(args, console, _groups_from_args, options)
    else:
        dev = _entries_from_args(args, console, prefix="dev-")
        test = _entries_from_args(args, console)
        if dev.n_tags != test.n_tags:
            raise ValueError(f"dev has {dev.n_tags} tags but test has {test.n_tags}")
        groups = _groups_from_args(args, dev.n_tags, console)
        with console.step("comparing") as progress:
            result = compare_methods(dev, test, groups, progress=progress, **options)
    console.info(result.to_markdown())
    if args.json:
        import json
        from ..io.atomic import atomic_write_text
        atomic_write_text(args.json, json.dumps(result.to_dict(), indent=2) + "\n")
        console.info(f"\nwrote {args.json}")
    return 0


def _cmd_report(args, console):
    from ..plotting.report import write_report
    from .cluster import cluster_report, wants_cluster
    if args.ci is None:   # the report always shows intervals
        args.ci = "score" if args.debias else "simulation"
    ci = _ci_from_args(args)   # checked before any file is read
    binning = _binning_from_args(args)
    with_dev = bool(args.dev_scores or args.dev_entries)
    prior = _prior_for_measures(args, args.methods if with_dev else ())
    resampling = _resampling_options(args)
    options = dict(methods=args.methods, n_bins=args.bins, ci=ci, seed=args.seed,
                   title=args.title, prior=prior,
                   evaluation=dict(binning, metrics=args.metrics, **resampling))
    if wants_cluster(args):
        path = cluster_report(args, console, _groups_from_args, options)
        console.info(f"wrote the report: {path}")
        return 0
    test = _entries_from_args(args, console)
    dev = None
    if args.dev_scores or args.dev_entries:
        dev = _entries_from_args(args, console, prefix="dev-")
        if dev.n_tags != test.n_tags:
            raise ValueError(f"dev has {dev.n_tags} tags but test has {test.n_tags}")
    groups = _groups_from_args(args, test.n_tags, console)
    with console.step("report") as progress:
        path = write_report(args.output, test, groups, dev=dev, progress=progress,
                            **options)
    console.info(f"wrote the report: {path}")
    return 0


def _cmd_groups(args, console):
    import numpy as np

    groups = _tfg_groups(args.train_counts, args.groups, args.n_tags, args.tag_index)
    console.info("| Group | Tag types | Train tokens | Train share | Most frequent tags |")
    console.info("|---|---|---|---|---|")
    for row in groups.summary():
        members = groups.members(row["group"] - 1)
        top = members[np.argsort(-groups.train_counts[members], kind="stable")[:5]]
        names = ", ".join(groups.tag_names[t] if groups.tag_names else str(t) for t in top)
        share = (f"[{row['train_share_min']:.1%}, {row['train_share_max']:.1%}]"
                 if members.size else "—")
        console.info(f"| {row['group']} | {row['tag_types']} | {row['train_count']:,} | "
                     f"{share} | {names}{' …' if members.size > 5 else ''} |")
    return 0


def _cmd_demo(args, console):
    from ..calibration.comparison import compare_methods
    from ..core.entries import threshold
    from ..metrics import ConfidenceInterval, evaluate
    from ..core.groups import TagGroups
    from ..datasets.synthetic import make_tagger_outputs

    start = time.perf_counter()
    with console.step("generating"):
        dev = make_tagger_outputs(args.tokens, split_seed=args.seed + 1)
        test = make_tagger_outputs(args.tokens, split_seed=args.seed + 2)
    n_tokens, n_tags = test.scores.shape
    acc = float((test.scores.argmax(1) == test.gold).mean())
    console.info(f"Synthetic CCG-like tagger (sparsecal.synthetic): dev and test of "
                 f"{n_tokens:,} tokens x {n_tags} tags each, test accuracy {acc:.1%}")
    with console.step("thresholding dev") as progress:
        dev_entries = threshold(dev.scores, dev.gold, args.threshold, progress=progress)
    with console.step("thresholding") as progress:
        test_entries = threshold(test.scores, test.gold, args.threshold, progress=progress)
    console.info(f"Test entries with score >= {args.threshold}: {len(test_entries):,} "
                 f"({len(test_entries) / test.scores.size:.2%} of all scores)\n")
    groups = TagGroups.from_counts(dev.train_counts, args.groups)
    console.info("## Uncalibrated test set\n")
    with console.step("evaluating") as progress:
        before = evaluate(test_entries, groups, n_bins=args.bins, top_label=True,
                          ci=ConfidenceInterval(random_state=args.seed), progress=progress)
    console.info(before.to_markdown())
    console.info("\n## Recalibrated on dev, evaluated on test (Kranzlein et al. Table 1)\n")
    with console.step("comparing") as progress:
        result = compare_methods(dev_entries, test_entries, groups, n_bins=args.bins,
                                 seed=args.seed, progress=progress)
    console.info(result.to_markdown())
    if args.output:
        from ..plotting.report import write_report
        with console.step("report") as progress:
            path = write_report(args.output, test_entries, groups, dev=dev_entries,
                                n_bins=args.bins, seed=args.seed,
                                title="sparsecal demo: a synthetic CCG-like tagger",
                                notes="Generated by sparsecal.synthetic: 426 Zipfian tags, "
                                      "overconfident on frequent and underconfident on "
                                      "rare tags. Recalibrators are fit on a dev split "
                                      "and evaluated on a test split.", progress=progress)
        console.info(f"\nReport with figures: {path}")
    console.info(f"\n(done in {time.perf_counter() - start:.1f} s)")
    return 0


# ----------------------------------------------------------------- parser -- #

def _add_inputs(p, prefix="", what="scores", required=False, gold=True):
    """The input flags, the same in every verb: ``--{prefix}scores``,
    ``--{prefix}key``, ``--{prefix}gold``, ``--{prefix}entries``."""
    p.add_argument(f"--{prefix}scores", required=required,
                   help=f"{what}: matrix [n_tokens, n_tags] (.npy: memory-mapped; .npz/.pt)")
    p.add_argument(f"--{prefix}key", help=f"array name in a multi-array --{prefix}scores "
                                          "file (.npz / .pt dict)")
    if not gold:
        return
    p.add_argument(f"--{prefix}gold", help="gold tags (.npy; .txt: one index or tag "
                                           "per line; .conllu; CoNLL columns)")
    if not prefix:
        p.add_argument("--gold-format", choices=["npy", "txt", "conllu", "conll"],
                       help="format of every --*gold file (default: from the extension; "
                            "conll: CoNLL-2003-style whitespace columns)")
        p.add_argument("--gold-column", help="the gold tag column: a CoNLL-U field (upos, "
                                             "xpos, feats, deprel, ...; default upos) or a "
                                             "CoNLL column number (default -1, the last)")
    p.add_argument(f"--{prefix}entries", help=f"thresholded entries (.npz from "
                                              f"--save-entries, or its directory of shards "
                                              f"from a cluster) instead of --{prefix}scores/"
                                              f"--{prefix}gold")
    p.add_argument(f"--{prefix}scores-format", choices=["dense", "crfsuite"], default="dense",
                   help=f"crfsuite: --{prefix}scores is JSON of sklearn-crfsuite's "
                        f"predict_marginals(X) and --{prefix}gold JSON of its labels y "
                        "(columns: --tag-index, else the model's labels; default: dense)")


def _add_ci(p, default=None):
    """The interval flags, the same in every verb that reports intervals."""
    p.add_argument("--ci", nargs="?", const="simulation", default=default,
                   choices=["simulation", "bootstrap", "score"],
                   help="confidence intervals: simulation (Nguyen & O'Connor Algorithm 2; "
                        "the default when --ci is given alone), bootstrap, or score (of "
                        "the debiased CE, with --debias)"
                        + (f" (default: {default})" if default else ""))
    p.add_argument("--level", "--confidence-level", dest="confidence_level", type=float,
                   help="confidence level of the intervals (default: 0.95; "
                                      "--confidence-level is its old name)")
    p.add_argument("--n-resamples", type=int, help="simulation samples (default: 10000) or "
                                                   "bootstrap replicates (default: 1000)")


def _add_threads(p):
    p.add_argument("--n-threads", type=int, help="threads for the compiled kernels "
                                                 "(default: SPARSECAL_NUM_THREADS, else all "
                                                 "CPUs; results never depend on it)")


def _add_common(p):
    _add_inputs(p)
    p.add_argument("--tag-index", help="JSON {tag: column}, for tag strings in gold or "
                                       "train counts")
    p.add_argument("--train-counts", help="JSON {tag: training count} for TFG groups")
    p.add_argument("--groups", type=int, default=5, help="TFG groups (default: 5)")
    p.add_argument("--threshold", type=float, default=0.01,
                   help="keep scores >= this (default: 0.01)")
    p.add_argument("--bins", type=int, help="bins (default: 10)")
    p.add_argument("--seed", type=int, default=0, help="random state of the intervals and "
                                                       "of seeded methods (default: 0)")
    _add_threads(p)


def _add_binning(p):
    """The evaluation flags, named as :func:`sparsecal.evaluate`'s arguments."""
    p.add_argument("--bin-size", type=int, help="entries per equal-mass bin of SMCE/GMCE, "
                                                "instead of --bins")
    p.add_argument("--binning", choices=["equal-mass", "fixed"], default="equal-mass",
                   help="equal-mass (Nguyen & O'Connor Algorithm 1; default) or fixed-width "
                        "bins")
    p.add_argument("--norm", type=_norm, choices=[1, 2, "max"], default=2,
                   help="p of SMCE/GMCE's CE_p: 2 (the paper's; default), 1 (ECE) or max")
    p.add_argument("--debias", action="store_true",
                   help="SMCE/GMCE as the debiased CE_2 (Kumar et al. 2019); its interval "
                        "is --ci score")


def _norm(text):
    return text if text == "max" else int(text) if text in ("1", "2") else text


def _add_metrics(p, prior=True):
    """--metrics, the same in every verb that prints measures; with ``prior``,
    --prior too (``events`` has its own)."""
    from ..metrics.measures import MEASURES
    p.add_argument("--metrics", nargs="+", choices=sorted(MEASURES), default=[],
                   metavar="NAME", help="further measures, over all entries and per group "
                   "(compare, report: also after each recalibration), with the binning "
                   "flags, --prior, --n-resamples and --seed where they apply: "
                   + ", ".join(sorted(MEASURES)))
    if not prior:
        return
    p.add_argument("--prior", type=float, help="the application prior of --metrics dcf / "
                   "min-dcf and of the methods that take one (prior-logistic, gaussian)")


def _evaluate_args(p):
    _add_common(p)
    _add_ci(p)
    _add_binning(p)
    p.add_argument("--per-tag", action="store_true", help="also per-tag CE / MCE")
    _add_metrics(p)
    p.add_argument("--min-entries", type=int, help="--per-tag: entries a tag needs for "
                                                   "its own CE (default: 400, two bins of 200)")
    p.add_argument("--json", help="write the numbers as JSON here")
    p.add_argument("--save-entries", help="also save the thresholded entries (.npz; on a "
                                          "cluster: a directory of .npz shards)")
    add_cluster_arguments(p)
    p.set_defaults(func=_cmd_evaluate)


def _fit_args(p):
    from ..calibration.registry import METHODS
    _add_common(p)
    p.add_argument("--method", choices=sorted(METHODS),
                   help="the method (default: isotonic)")
    p.add_argument("--grouping", choices=["scw", "tfg", "per-tag"],
                   help="one calibrator for all tags, per TFG group, or per tag (default: "
                        "tfg)")
    p.add_argument("--min-entries", type=int,
                   help="per-tag: dev entries a tag needs, else its TFG group's model "
                        "(default: 200, GroupedCalibrator's)")
    p.add_argument("--prior", type=float, help="application prior of the methods that take "
                                               "one (prior-logistic, gaussian)")
    p.add_argument("--ensemble", type=int, metavar="K",
                   help="save the average of K calibrators, each fit on K-1 of K stratified "
                        "token folds (CrossFittedCalibrator)")
    p.add_argument("--select", action="store_true",
                   help="choose method, TFG groups and bins by stratified K-fold on these "
                        "dev outputs (sparsecal.select), then save the best refit on all")
    p.add_argument("--methods", nargs="+", choices=sorted(METHODS),
                   help="--select: the methods to try (default: all)")
    p.add_argument("--groups-grid", nargs="+", type=int, metavar="G",
                   help="--select: numbers of TFG groups to try (default: 1 and --groups)")
    p.add_argument("--bins-grid", nargs="+", type=int, metavar="B",
                   help="--select: bin counts to try for binning methods (default: --bins)")
    p.add_argument("--folds", type=int, help="--select: K (default: 5)")
    p.add_argument("--select-metric", choices=["smce", "gmce"],
                   help="--select: the score of the out-of-fold outputs (default: smce)")
    p.add_argument("--json", help="--select: write the score table as JSON here")
    p.add_argument("-o", "--output", required=True, help="directory to save it in")
    add_cluster_arguments(p)
    p.set_defaults(func=_cmd_fit)


def _apply_args(p):
    p.add_argument("calibrator", help="directory written by 'sparsecal fit' (a grouped "
                                      "calibrator or an --ensemble)")
    _add_inputs(p, what="scores to calibrate", required=True, gold=False)
    p.add_argument("-o", "--output", required=True, help="calibrated matrix (.npy); "
                   "--scheduler/--dask: a Zarr store (.zarr) or a directory of .npy shards")
    add_cluster_arguments(p)
    p.set_defaults(func=_cmd_apply)


def _compare_args(p):
    from ..calibration.registry import METHODS
    _add_common(p)
    _add_inputs(p, "dev-", what="dev scores (to fit on)")
    _add_binning(p)
    _add_metrics(p)
    p.add_argument("--methods", nargs="+", choices=sorted(METHODS), default=list(METHODS))
    p.add_argument("--json", help="write the numbers as JSON here")
    add_cluster_arguments(p)
    p.set_defaults(func=_cmd_compare)


def _report_args(p):
    from ..calibration.registry import METHODS
    _add_common(p)
    _add_inputs(p, "dev-", what="dev scores (optional: enables recalibration)")
    _add_ci(p)
    _add_binning(p)
    _add_metrics(p)
    p.add_argument("--methods", nargs="+", choices=sorted(METHODS), default=list(METHODS))
    p.add_argument("--title", default="Calibration report")
    p.add_argument("-o", "--output", required=True, help="report directory")
    add_cluster_arguments(p)
    p.set_defaults(func=_cmd_report)


def _groups_args(p):
    p.add_argument("--train-counts", required=True, help="JSON {tag: count}")
    p.add_argument("--tag-index", help="JSON {tag: column}")
    p.add_argument("--n-tags", type=int, help="tag inventory size (default: from the index)")
    p.add_argument("--groups", type=int, default=5)
    p.set_defaults(func=_cmd_groups)


def _demo_args(p):
    p.add_argument("--tokens", type=int, default=50000, help="tokens per split")
    p.add_argument("-o", "--output", default="sparsecal-demo-report",
                   help="report directory (default: sparsecal-demo-report; '' for none)")
    p.add_argument("--threshold", type=float, default=0.01)
    p.add_argument("--groups", type=int, default=5)
    p.add_argument("--bins", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_demo)


def _events_args(p):
    from .events import add_events_arguments
    add_events_arguments(p)
    _add_ci(p)
    _add_binning(p)
    _add_metrics(p, prior=False)
    _add_threads(p)
    p.set_defaults(func=_cmd_events)


def _cmd_events(args, console):
    from ..metrics.measures import get_measure
    from .events import run_events
    takers = [m for m in args.metrics if "prior" in get_measure(m).options]
    if takers and args.prior is None:
        raise ValueError(f"--metrics {takers[0]} needs --prior (the application prior)")
    measures = dict(metrics=args.metrics, prior=_check_prior(args.prior) if takers else None,
                    **_resampling_options(args))
    return run_events(args, console, _ci_from_args(args),
                      dict(_binning_from_args(args), **measures))


#: verb -> (its help, the function adding its arguments)
_VERBS = {
    "evaluate": ("SMCE/GMCE table with confidence intervals", _evaluate_args),
    "fit": ("fit a grouped recalibration model on dev outputs", _fit_args),
    "apply": ("apply a fitted calibrator to a score matrix", _apply_args),
    "compare": ("every method x {SCW, TFG}: the paper's Table 1", _compare_args),
    "report": ("HTML report with tables and figures (+ PNG, SVG, JSON)", _report_args),
    "groups": ("the TFG group summary table", _groups_args),
    "demo": ("the built-in default job on a generated CCG-like tagger", _demo_args),
    "events": ("events of interest (top-k sequences, spans) of a CRF or softmax tagger: "
               "table, forecaster, re-ranking", _events_args),
}


def build_parser(command=None):
    """The parser of the ``sparsecal`` command line.

    Parameters
    ----------
    command : str, optional
        Build this verb's parser alone: all that parsing its command line
        needs (``main`` does so; the seven verbs take a few milliseconds more).

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = argparse.ArgumentParser(
        prog="sparsecal",
        description="Measure and repair the calibration of taggers with large, sparse "
                    "tagsets (Kranzlein et al. 2021; Nguyen & O'Connor 2015).")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-q", "--quiet", action="store_true",
                        help="no messages, no progress: errors and warnings only")
    common.add_argument("--debug", action="store_true",
                        help="on an error, show Python's traceback instead of one line")
    for name, (help_text, add_arguments) in _VERBS.items():
        if command in (None, name):
            add_arguments(sub.add_parser(name, help=help_text, parents=[common]))
    return parser


def _check_threads(args):
    """Check ``SPARSECAL_NUM_THREADS`` and ``--n-threads`` first, so that their
    errors name them (not the scores file being read when they are used)."""
    from ..core.threads import check_n_threads, env_n_threads
    env_n_threads()
    if getattr(args, "n_threads", None) is not None:
        check_n_threads(args.n_threads, "--n-threads")


def main(argv=None):
    """Run one ``sparsecal`` command, as the ``sparsecal`` console script does.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name; None (the console script) reads
        ``sys.argv[1:]`` and, the process being the command, skips the garbage
        collection of the objects left at its exit.

    Returns
    -------
    int
        The exit code: 0 on success; 2 on any error (one line on stderr names the
        argument or file and the problem, never a traceback; ``--debug`` raises
        instead); 130 when interrupted. Wrong usage also exits with code 2,
        through ``argparse`` (``SystemExit``).

    Examples
    --------
    >>> import json
    >>> from sparsecal.cli import main
    >>> with open("counts.json", "w") as f:
    ...     json.dump({"N": 500, "NP": 300, "S/NP": 20, "PP": 2}, f)
    >>> with open("tags.json", "w") as f:
    ...     json.dump({"N": 0, "NP": 1, "S/NP": 2, "PP": 3}, f)
    >>> main(["groups", "--train-counts", "counts.json", "--tag-index", "tags.json",
    ...       "--groups", "2"])
    | Group | Tag types | Train tokens | Train share | Most frequent tags |
    |---|---|---|---|---|
    | 1 | 1 | 500 | [60.8%, 60.8%] | N |
    | 2 | 3 | 322 | [0.2%, 36.5%] | NP, S/NP, PP |
    0
    >>> main(["groups", "--train-counts", "missing.json"])
    2
    """
    if argv is None:   # the program itself: the console script, python -m sparsecal
        # The interpreter's last garbage collection at exit would traverse every
        # object of NumPy and sparsecal (~10 ms) just before the exit frees them:
        # freeze them first (Python never promises to finalize what is left at exit).
        atexit.register(gc.freeze)
        argv = sys.argv[1:]
    args = build_parser(argv[0] if argv and argv[0] in _VERBS else None).parse_args(argv)
    console = _Console(args.quiet)
    with warnings.catch_warnings():
        warnings.showwarning = functools.partial(_show_warning, console, args.command)
        try:
            _check_threads(args)
            return args.func(args, console)
        except KeyboardInterrupt:
            print(f"sparsecal {args.command}: interrupted", file=sys.stderr)
            return 130
        except Exception as exc:   # noqa: BLE001 - the CLI's one place for errors
            if args.debug:
                raise
            print(f"sparsecal {args.command}: error: {_describe(exc)}", file=sys.stderr)
            return 2


def _describe(exc):
    """One line for an exception: the message of an expected error, or what went
    wrong and how to see more for anything else."""
    if isinstance(exc, OSError) and exc.strerror:   # without the "[Errno N]" prefix
        text = exc.strerror + (f": {os.fspath(exc.filename)!r}" if exc.filename else "")
        return " ".join(text.split())
    if isinstance(exc, (ValueError, TypeError, OSError, ImportError)):
        return " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, MemoryError):
        return "out of memory (use fewer tokens per file, or a machine with more memory)"
    return (f"internal error ({type(exc).__name__}: {exc}); please report it with the "
            "output of --debug")


def _show_warning(console, command, message, category, filename, lineno, file=None,
                  line=None):
    console.warn(f"sparsecal {command}: warning: {message}")
