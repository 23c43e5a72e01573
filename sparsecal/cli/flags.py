"""The flags several verbs share, defined once, and their checks.

Each check turns flags into the library call's keyword arguments, or raises one
error naming the flag. :func:`with_flags` writes the library's argument names
(``tag_index``) as the flags that set them (``--tag-index``) in every error and
warning the command prints.
"""
import argparse
import os
import re

#: API argument -> the dest of the flag that sets it, where the two differ
API_NAMES = {"n_bins": "bins", "n_groups": "groups", "n_folds": "folds",
             "random_state": "seed", "application_prior": "prior", "n_tokens": "tokens"}

#: ``--n-resamples`` of the measures that resample, where every method is
#: evaluated (compare; report with dev outputs): 15 evaluations of 999 took
#: minutes; 99 resamples resolve p-values down to 0.01
COMPARE_RESAMPLES = 99


# ------------------------------------------------------------ definitions -- #

def add_input(p, *names, **kwargs):
    """An argument naming a file or directory the verb reads (:func:`check_paths`
    keeps every output off it)."""
    p.add_argument(*names, **kwargs).reads = True


def add_output(p, *names, **kwargs):
    """An argument naming a file or directory the verb writes (:func:`check_paths`)."""
    p.add_argument(*names, **kwargs).writes = True


def add_inputs(p, prefix="", what="scores", required=False, gold=True):
    """``--{prefix}scores`` and ``--{prefix}key``; with ``gold``, also
    ``--{prefix}gold``, ``--{prefix}entries`` and ``--{prefix}scores-format``."""
    add_input(p, f"--{prefix}scores", required=required,
              help=f"{what}: matrix [n_tokens, n_tags] (.npy: memory-mapped; .npz/.pt)")
    p.add_argument(f"--{prefix}key", help=f"array name in a multi-array --{prefix}scores "
                                          "file (.npz / .pt dict)")
    if not gold:
        return
    add_input(p, f"--{prefix}gold", help="gold tags (.npy; .txt: one index or tag per "
                                      "line; .conllu; CoNLL columns)")
    if not prefix:
        add_gold_format(p)
    add_input(p, f"--{prefix}entries", help=f"thresholded entries (.npz from "
                                         f"--save-entries, or its directory of shards "
                                         f"from a cluster) instead of --{prefix}scores/"
                                         f"--{prefix}gold")
    p.add_argument(f"--{prefix}scores-format", choices=["dense", "crfsuite"],
                   help=f"crfsuite: --{prefix}scores is JSON of sklearn-crfsuite's "
                        f"predict_marginals(X) and --{prefix}gold JSON of its labels y "
                        "(columns: --tag-index, else the model's labels; default: dense)")


def add_gold_format(p):
    """``--gold-format`` and ``--gold-column``, of every gold file."""
    p.add_argument("--gold-format", choices=["npy", "txt", "conllu", "conll"],
                   help="format of every --*gold file (default: from the extension; "
                        "conll: CoNLL-2003-style whitespace columns)")
    p.add_argument("--gold-column", help="the gold tag column: a CoNLL-U field (upos, xpos, "
                                         "feats, deprel, ...; default upos) or a CoNLL "
                                         "column number (default -1, the last)")


def add_common(p, seeded):
    """The flags of the verbs that read scores and gold and group tags;
    ``seeded``: what --seed seeds in this verb."""
    add_inputs(p)
    add_input(p, "--tag-index", help="JSON {tag: column}, for tag strings in gold or "
                                  "train counts")
    add_input(p, "--train-counts", help="JSON {tag: training count} for TFG groups")
    p.add_argument("--groups", type=int, help="TFG groups, with --train-counts (default: 5)")
    p.add_argument("--threshold", type=float, help="keep scores >= this (default: 0.01)")
    add_bins_and_seed(p, seeded)
    add_threads(p)


def add_bins_and_seed(p, seeded):
    p.add_argument("--bins", type=int, help="bins (default: 10)")
    p.add_argument("--seed", type=int, default=0,
                   help=f"random state of {seeded} (default: 0)")


def add_threads(p):
    p.add_argument("--n-threads", type=int, help="threads for the compiled kernels "
                                                 "(default: SPARSECAL_NUM_THREADS, else all "
                                                 "CPUs; results never depend on it)")


def add_ci(p, default=None, measures_default=None):
    """The interval flags; ``default``: the interval without --ci."""
    from ..metrics.intervals import DEFAULT_RESAMPLES
    p.add_argument("--ci", nargs="?", const="simulation",
                   choices=["simulation", "bootstrap", "score"],
                   help="confidence intervals: simulation (Nguyen & O'Connor Algorithm 2; "
                        "the default when --ci is given alone), bootstrap, or score (of "
                        "the debiased CE, with --debias)"
                        + (f"; default: {default}" if default else "; default: none"))
    p.add_argument("--level", "--confidence-level", dest="confidence_level", type=float,
                   help="confidence level of the intervals (default: 0.95; "
                        "--confidence-level is its old name)")
    add_resamples(p, f"simulation samples of --ci (default: {DEFAULT_RESAMPLES['simulation']}) "
                     f"or bootstrap replicates (default: {DEFAULT_RESAMPLES['bootstrap']}), "
                     "and resamples", measures_default)


def add_resamples(p, what, default=None):
    """``--n-resamples``: ``what``, of the measures that resample (``default``:
    the library's, written ``{library}``)."""
    import inspect

    from ..metrics.measures import MEASURES
    takers = [m for m in MEASURES.values() if "n_resamples" in m.options]
    library = "/".join(sorted({str(inspect.signature(m.function).parameters["n_resamples"]
                                   .default) for m in takers}))
    p.add_argument("--n-resamples", type=int, help=f"{what} of --metrics "
                   f"{', '.join(m.name for m in takers)} (default: "
                   + (default or "{library}").format(library=library) + ")")


def add_binning(p):
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


def add_metrics(p):
    """``--metrics``, of every verb that prints measures."""
    from ..metrics.measures import MEASURES
    p.add_argument("--metrics", nargs="+", choices=sorted(MEASURES), default=[],
                   metavar="NAME", help="further measures, over all entries and per group "
                   "(compare, report: also after each recalibration), with the binning "
                   "flags, --prior, --n-resamples and --seed where they apply: "
                   + ", ".join(sorted(MEASURES)))


def add_prior(p, measures=True, methods=True):
    """``--prior``: of the measures and of the methods that take one (names from
    the registries)."""
    takers = []
    if measures:
        from ..metrics.measures import MEASURES
        takers.append("--metrics " + ", ".join(m.name for m in MEASURES.values()
                                               if "prior" in m.options))
    if methods:
        from ..calibration.registry import METHODS
        takers.append("the methods " + ", ".join(m.name for m in METHODS.values()
                                                 if m.uses_prior))
    p.add_argument("--prior", type=float,
                   help="the application prior, in (0, 1), of " + " and of ".join(takers))


def add_methods(p, what, default=None):
    """``--methods``: registered method names."""
    from ..calibration.registry import METHODS
    p.add_argument("--methods", nargs="+", choices=list(METHODS), default=default,
                   metavar="METHOD", help=f"{what}: {', '.join(METHODS)}")


def add_group_min_entries(p, what):
    """``--group-min-entries`` (GroupedCalibrator's ``min_entries``); the
    evaluation's ``--min-entries`` refused, naming it."""
    p.add_argument("--group-min-entries", dest="min_entries", type=int, metavar="N",
                   help=f"{what} (GroupedCalibrator's min_entries; default: 200)")
    p.add_argument("--min-entries", action=_Refused, help=argparse.SUPPRESS,
                   message="--min-entries is evaluate's per-tag minimum (with --per-tag); "
                           "the dev entries a group needs for its own calibrator are "
                           "--group-min-entries here")


class _Refused(argparse.Action):
    """A flag of another meaning in this verb: a usage error saying which."""

    def __init__(self, option_strings, dest, message, **kwargs):
        super().__init__(option_strings, argparse.SUPPRESS, default=argparse.SUPPRESS,
                         **kwargs)
        self.message = message

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(self.message)


# ---------------------------------------------------------------- checks -- #

def check_paths(parser, args, argv=()):
    """Every output of ``parser``'s arguments in ``args`` checked before any work
    (:func:`sparsecal.io.atomic.check_output`): none is an input, holds one, is
    another output or lies inside one, or is a device or FIFO."""
    from ..io.atomic import check_output
    typed = _flags(parser, argv)
    given = [(typed[a.dest], getattr(args, a.dest, None), hasattr(a, "writes"))
             for a in parser._actions if hasattr(a, "reads") or hasattr(a, "writes")]
    given = [(flag, os.fspath(path), writes) for flag, path, writes in given if path]
    for i, (flag, path, writes) in enumerate(given):
        if writes:
            check_output(path, flag, [(f"the {'output' if w else 'input'} {f}", p)
                                      for j, (f, p, w) in enumerate(given) if j != i])


#: dest -> (what it needs, in words; the flags that give it): in a verb with
#: those flags, a flag given without any of them would be ignored, and is refused
_NEEDS = {
    "chunk_rows": ("--scheduler or --dask", ("scheduler", "dask")),
    "groups": ("--train-counts (TFG groups)", ("train_counts",)),
    "threshold": ("scores to threshold (not --entries)", ("scores", "dev_scores")),
    "gold_format": ("a gold file", ("gold", "dev_gold")),
    "gold_column": ("a gold file", ("gold", "dev_gold")),
    "key": ("--scores", ("scores",)),
    "dev_key": ("--dev-scores", ("dev_scores",)),
    "scores_format": ("--scores", ("scores",)),
    "dev_scores_format": ("--dev-scores", ("dev_scores",)),
}
#: the defaults of the flags of :data:`_NEEDS`, set where they apply
_DEFAULTS = {"groups": 5, "threshold": 0.01, "scores_format": "dense",
             "dev_scores_format": "dense"}


def check_applies(parser, args, argv=()):
    """Refuse a flag of :data:`_NEEDS` given without what it needs (nothing
    would take it), naming both; then set the defaults of those not given."""
    typed = _flags(parser, argv)
    dests = {a.dest for a in parser._actions}
    for dest, (needs, by) in _NEEDS.items():
        if dest not in dests or dests.isdisjoint(by):
            continue
        if getattr(args, dest) is not None and not any(getattr(args, d, None) for d in by):
            raise ValueError(f"{typed[dest]} applies with {needs} only")
        if getattr(args, dest) is None and dest in _DEFAULTS:
            setattr(args, dest, _DEFAULTS[dest])


def check_threads(args):
    """``SPARSECAL_NUM_THREADS`` and ``--n-threads``, checked before any work."""
    from ..core.threads import check_n_threads, env_n_threads
    env_n_threads()
    if getattr(args, "n_threads", None) is not None:
        check_n_threads(args.n_threads, "--n-threads")


def ci_from_args(args):
    """The interval of --ci, --level, --n-resamples and --seed (None without --ci)."""
    if getattr(args, "debias", False) and args.ci not in (None, "score"):
        raise ValueError(f"--debias takes --ci score (the interval of the debiased CE) or "
                         f"no --ci, got --ci {args.ci}")
    if args.ci == "score" and not getattr(args, "debias", False):
        raise ValueError("--ci score is the interval of the debiased CE: add --debias")
    if not args.ci:
        if args.confidence_level is not None:
            raise ValueError("--level applies to --ci: give --ci too")
        return None
    from ..metrics import ConfidenceInterval
    level = 0.95 if args.confidence_level is None else args.confidence_level
    return ConfidenceInterval(args.ci, confidence_level=level, n_resamples=args.n_resamples,
                              random_state=args.seed)


def binning_from_args(args):
    """The keywords of --bin-size, --binning, --norm and --debias (as
    :func:`sparsecal.evaluate` takes them), checked with --bins by the library
    before any file is read."""
    from ..metrics import calibration_error
    if args.debias and args.norm != 2:   # (the library's message is Python: norm=2)
        raise ValueError(f"--debias is the debiased CE_2: it needs --norm 2, got --norm "
                         f"{args.norm}")
    calibration_error([0.5], [0], n_bins=args.bins, bin_size=args.bin_size,
                      binning=args.binning, norm=args.norm, debias=args.debias)
    return {"bin_size": args.bin_size, "binning": args.binning, "norm": args.norm,
            "debias": args.debias}


def priors(args, methods=None, fitted=True):
    """``--prior`` as (the ``--metrics``' prior, the prior of ``methods``), each
    None where nothing takes it; the registries say what takes one.

    ``methods``: the methods this run fits (None: the verb has none);
    ``fitted=False``: it fits them only with dev outputs, which it lacks.
    """
    from ..metrics.measures import MEASURES, get_measure
    takers = [m for m in getattr(args, "metrics", ()) if "prior" in get_measure(m).options]
    if takers and args.prior is None:
        raise ValueError(f"--metrics {takers[0]} needs --prior (the application prior)")
    if args.prior is None:
        return None, None
    from ..core.validation import check_prior
    prior = check_prior(args.prior, "--prior")
    if methods is not None:
        from ..calibration.registry import METHODS
        method_takers = [m.name for m in METHODS.values() if m.uses_prior]
        if fitted and set(methods) & set(method_takers):
            return (prior if takers else None), prior
    if takers:
        return prior, None
    targets = []
    if hasattr(args, "metrics"):
        targets.append("--metrics " + ", ".join(m.name for m in MEASURES.values()
                                                if "prior" in m.options))
    if methods is not None:
        targets.append("the methods " + ", ".join(method_takers)
                       + ("" if fitted else " (with dev outputs)"))
    raise ValueError("--prior applies to " + " and to ".join(targets)
                     + (f", not to {', '.join(methods)}" if methods and fitted else ""))


def resampling_options(args, default=None):
    """``measure_options`` of :func:`sparsecal.evaluate` from --n-resamples and
    --seed: for the measures that resample (``default`` resamples where
    --n-resamples is not given); --n-resamples that nothing takes is refused."""
    from ..metrics.measures import check_options, get_measure
    measures = [get_measure(m) for m in args.metrics]
    n_resamples = getattr(args, "n_resamples", None)
    check_options(measures, {"n_resamples": n_resamples},
                  used=("n_resamples",) if getattr(args, "ci", None) else (),
                  names={"n_resamples": "--n-resamples"},
                  others={"n_resamples": "--ci"} if hasattr(args, "ci") else None)
    if n_resamples is None:
        n_resamples = default
    options = {o: v for o, v in (("n_resamples", n_resamples), ("random_state", args.seed))
               if v is not None and any(o in m.options for m in measures)}
    return {"measure_options": options} if options else {}


# ----------------------------------------------------------- translation -- #

def _flags(parser, argv=()):
    """dest -> the flag of ``parser`` that sets it (the spelling in ``argv``, if
    typed there; a positional argument: its name)."""
    typed = {a.partition("=")[0] for a in argv if a.startswith("-")}
    flags = {}
    for action in parser._actions:
        if action.help is argparse.SUPPRESS:
            continue
        options = [o for o in action.option_strings if o in typed] or \
            [o for o in action.option_strings if o.startswith("--")] or [action.dest]
        flags[action.dest] = options[0]
    return flags


def flag_names(parser, argv=()):
    """API argument name -> the flag of ``parser`` that sets it (the spelling in
    ``argv``, if typed there): the names with an underscore, which no sentence
    uses as a word (:func:`with_flags` writes them as flags)."""
    if parser is None:
        return {}
    flags = {dest: flag for dest, flag in _flags(parser, argv).items()
             if flag.startswith("-")}
    for name, dest in API_NAMES.items():
        if dest in flags:
            flags.setdefault(name, flags[dest])
    return {name: flag for name, flag in flags.items() if "_" in name}


_QUOTED = re.compile(r"""(?<!\w)('[^']*'|"[^"]*")(?!\w)""")


def with_flags(text, names):
    """``text`` with each API argument name of ``names`` ({name: flag}) written
    as its flag, outside quoted values (file names, tags).

    Examples
    --------
    >>> with_flags("keyed by tag names ('tag_index'): pass tag_index", {"tag_index": "--tag-index"})
    "keyed by tag names ('tag_index'): pass --tag-index"
    """
    if not names:
        return text
    word = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, sorted(names, key=len,
                                                                       reverse=True)))
                      + r")(?![\w-]|\.\w)")
    parts = _QUOTED.split(text)
    return "".join(part if i % 2 else word.sub(lambda m: names[m.group(1)], part)
                   for i, part in enumerate(parts))
