"""Make the events of interest of a structured tagger (Jagannatha & Yu 2020,
Section 2.4) from its outputs and gold tags: the top-k sequences of a CRF
(--potentials) or of a softmax tagger (--scores with --lengths or CoNLL gold),
or the spans in them (--events spans). Prints their calibration per event type
and writes them as entries (-o). With dev outputs it fits a forecaster (J&Y
Section 2.5; --choose-k picks its k) or a registered --method on the dev
events, or applies a saved --calibrator, and with --rerank re-ranks the events
by calibrated confidence (J&Y Section 4). Either set may come from an events
file that -o wrote. Every input is read and checked before the work.
"""
import json

from ..calibration.registry import METHODS, get_method
from ..core.groups import TagGroups
from ..core.validation import check_gold, check_positive_int, check_unit_interval
from ..io.arrays import load_gold_sentences, load_lengths, load_tag_index
from ..io.atomic import atomic_write_text
from ..io.sentences import load_potentials, pad_sentences
from ..metrics import evaluate
from . import flags
from .inputs import check_same_tags, scores_from_args

#: Forecaster features from events: J&Y's "mean" (the event's probability under
#: the model), "Rank", "ln" (length) and the event type.
CONFIDENCE_FEATURE = "mean"

#: ``--grouping`` of a registered method: fit's scw, tfg and per-tag, the event
#: types being the tags (per-type = per-tag).
GROUPINGS = ("scw", "tfg", "per-type")


def add_arguments(p):
    for prefix, what in (("", "test"), ("dev-", "dev (to fit a calibrator on)")):
        flags.add_input(p, f"--{prefix}potentials", help=f"{what} CRF potentials (.npz: "
                        "emissions [n_sentences, max_len, n_tags], transitions, optional "
                        "start, end, allowed, lengths)")
        flags.add_input(p, f"--{prefix}scores", help=f"{what} per-token softmax scores "
                        f"[n_tokens, n_tags] (.npy, .npz, .pt) with --{prefix}lengths or "
                        "a CoNLL-U / CoNLL gold file")
        p.add_argument(f"--{prefix}key", help=f"array name in a multi-array "
                                              f"--{prefix}scores file")
        flags.add_input(p, f"--{prefix}lengths", help=f"sentence lengths of --{prefix}scores "
                                                   "(.npy, .txt: one per line)")
        flags.add_input(p, f"--{prefix}gold", help="gold tags, one per token (.npy; .txt; "
                                                ".conllu; CoNLL columns)")
        flags.add_input(p, f"--{prefix}samples", help=f"{what} per-token softmax scores of S "
                        "samples (MC-dropout passes, ensemble members) stacked [S, n_tokens, "
                        f"n_tags] (.npy), rows as --{prefix}scores: J&Y's mean, p_low (10th "
                        "percentile), p_high (90th) and std over the samples become "
                        "forecaster features")
        flags.add_input(p, f"--{prefix}events-file", help=f"{what} events saved by -o (.npz: "
                        "entries with the event features), instead of the tagger's outputs")
    flags.add_gold_format(p)
    flags.add_input(p, "--tag-index", help="JSON {tag: column}: the tag names (needed for "
                                        "spans and for tag strings in gold)")
    p.add_argument("--events", choices=["sequences", "spans"],
                   help="the top-k sequences, or the spans in them (default: sequences; "
                        "with --events-file, the file's)")
    p.add_argument("--k", type=int, help="sequences per sentence (default: 1; with "
                                         "--events-file, the file's largest rank)")
    p.add_argument("--scheme", choices=["bio", "bioes", "io"],
                   help="span scheme of the tag names (default: bio; with --events "
                        "sequences it adds span F1 to --rerank)")
    p.add_argument("--normalize", action="store_true",
                   help="spans: score by the length-normalised p^(1/length) (J&Y eq. 6)")
    p.add_argument("--method", help="with dev outputs: forecaster (default) or a "
                                    "registered method, fit on the event probabilities: "
                                    + ", ".join(METHODS))
    p.add_argument("--grouping", choices=GROUPINGS,
                   help="a registered --method: one calibrator over every event type (scw, "
                        "the default), per group of event types by dev event frequency "
                        "(tfg), or per event type with its tfg group's as fallback "
                        "(per-type)")
    p.add_argument("--groups", type=int, help="--grouping tfg, per-type: groups of event "
                                              "types by dev event count (default: 5)")
    flags.add_group_min_entries(p, "--grouping tfg, per-type: dev events a group "
                                   "(per-type: an event type) needs for its own calibrator")
    p.add_argument("--choose-k", type=int, nargs="+", metavar="K",
                   help="forecaster: J&Y's heuristic k among these candidates")
    flags.add_input(p, "--calibrator", help="a saved calibrator to apply (instead of fitting)")
    flags.add_output(p, "--save-calibrator", help="directory to save the fitted calibrator in")
    p.add_argument("--rerank", action="store_true", help="re-rank by calibrated confidence: "
                   "exact match (sequences) or span F1 (spans) before and after")
    p.add_argument("--cutoff", type=float, default=0.5,
                   help="--rerank of spans: keep spans with confidence >= this (default 0.5)")
    flags.add_prior(p)
    flags.add_bins_and_seed(p, "the intervals, the resampling --metrics, the forecaster and "
                                  "seeded methods")
    flags.add_output(p, "-o", "--output", help="write the test events as entries with their "
                                             "features (.npz; --events-file reads it)")
    flags.add_output(p, "--calibrated-output", help="write the calibrated events as -o does "
                                                 "(.npz)")
    flags.add_output(p, "--json", help="write the numbers as JSON here")
    flags.add_ci(p)
    flags.add_binning(p)
    flags.add_metrics(p)
    flags.add_threads(p)


def run(args, console):
    """Every flag and input checked, then the events made, calibrated,
    evaluated, re-ranked, and written (nothing is written before)."""
    ci = flags.ci_from_args(args)
    binning = flags.binning_from_args(args)
    with_dev = bool(args.dev_potentials or args.dev_scores or args.dev_events_file)
    _check_flags(args, with_dev)
    measure_prior, prior = flags.priors(
        args, [args.method] if args.method in METHODS else [], fitted=with_dev)
    evaluation = dict(binning, metrics=args.metrics, prior=measure_prior,
                      **flags.resampling_options(args))
    test = _read(args, console, "")
    dev = _read(args, console, "dev-") if with_dev else None
    tag_names = _tag_names(args, test, dev)
    model = _load_model(args) if args.calibrator else None   # checked before the work
    events, extra = _events(args, console, test, tag_names, args.k, "")
    out = {"events": args.events, "k": args.k, "n_sentences": events.entries.n_tokens,
           "n_events": len(events), "type_names": list(events.type_names)}
    if with_dev:
        dev_k = max([args.k] + list(args.choose_k or []))
        dev_events, dev_extra = _events(args, console, dev, tag_names, dev_k, "dev ")
        _check_same_kind(args, events, dev_events, extra, dev_extra)
        with console.step("fitting"):
            model, choice = _fit(args, dev_events, _event_features(dev_events, dev_extra),
                                 prior)
        if choice is not None:
            out["choice_of_k"] = choice.to_dict()
            console.info(_choice_text(choice))
    confidence = None
    if model is not None:
        with console.step("calibrating"):
            confidence = _confidence(model, events, _event_features(events, extra), args)
    tables = _evaluate(args, console, events, confidence, ci, evaluation)
    out.update({name: json.loads(result.to_json()) for name, result in tables.items()})
    if args.rerank:
        with console.step("re-ranking"):
            out["reranking"] = _rerank(args, events, confidence, test, tag_names)
        console.info(_rerank_text(out["reranking"]))
    _write(args, console, events, extra, confidence, model, out)
    return 0


# ------------------------------------------------------------------ checks -- #

def _check_flags(args, with_dev):
    """Every flag checked before a file is read."""
    _check_inputs(args)
    if not args.events_file:
        args.k = 1 if args.k is None else check_positive_int(args.k, "--k")
        args.events = args.events or "sequences"
    if args.normalize and args.events != "spans":
        raise ValueError("--normalize applies to --events spans only")
    if with_dev and args.calibrator:
        raise ValueError("--calibrator applies a saved calibrator: give it or dev outputs "
                         "(--dev-potentials / --dev-scores / --dev-events-file) to fit one, "
                         "not both")
    if not with_dev:
        for flag, value in (("--method", args.method), ("--choose-k", args.choose_k),
                            ("--grouping", args.grouping), ("--groups", args.groups),
                            ("--group-min-entries", args.min_entries),
                            ("--save-calibrator", args.save_calibrator),
                            ("--dev-gold", args.dev_gold),
                            ("--dev-lengths", args.dev_lengths)):
            if value is not None:
                raise ValueError(f"{flag} needs dev outputs (--dev-potentials, "
                                 "--dev-scores or --dev-events-file)")
    if args.calibrated_output and not (with_dev or args.calibrator):
        raise ValueError("--calibrated-output needs a calibrator (dev outputs or "
                         "--calibrator)")
    args.method = args.method or ("forecaster" if with_dev else None)
    if args.method not in (None, "forecaster") and args.method not in METHODS:
        raise ValueError(f"--method {args.method!r} is unknown: use forecaster or one of "
                         f"{', '.join(sorted(METHODS))}")
    _check_samples(args, with_dev)
    if args.choose_k is not None:
        if args.method != "forecaster":
            raise ValueError(f"--choose-k chooses the k of a forecaster, not of --method "
                             f"{args.method}")
        for k in args.choose_k:
            check_positive_int(k, "--choose-k")
        if len(set(args.choose_k)) != len(args.choose_k):
            raise ValueError(f"--choose-k candidates must differ, got {args.choose_k}")
    _check_grouping(args)
    check_unit_interval(args.cutoff, "--cutoff")


def _check_inputs(args):
    """One source of events per set: a tagger's outputs or an events file, and
    no flag that only the other source takes."""
    if len([x for x in (args.potentials, args.scores, args.events_file) if x]) != 1:
        raise ValueError("give --potentials, --scores or --events-file (one of them)")
    if len([x for x in (args.dev_potentials, args.dev_scores, args.dev_events_file)
            if x]) > 1:
        raise ValueError("give --dev-potentials, --dev-scores or --dev-events-file (one "
                         "of them)")
    for prefix in ("", "dev-"):
        attr = prefix.replace("-", "_")
        if getattr(args, attr + "samples") and not getattr(args, attr + "scores"):
            raise ValueError(f"--{prefix}samples applies to --{prefix}scores: per-token "
                             "softmax samples of the same tagger")
        if not getattr(args, attr + "events_file"):
            continue
        only_outputs = ["gold", "lengths", "key"] + (["k", "normalize", "rerank"]
                                                     if not prefix else [])
        for name in only_outputs:
            if getattr(args, attr + name) not in (None, False):
                raise ValueError(f"--{prefix}{name} applies to a tagger's outputs, not to "
                                 f"--{prefix}events-file (whose events are made already"
                                 + (", without the gold tags re-ranking needs)"
                                    if name == "rerank" else ")"))
def _check_samples(args, with_dev):
    """``--samples`` feed the forecaster, on dev and test alike."""
    if not (args.samples or args.dev_samples):
        return
    if args.method not in (None, "forecaster"):
        raise ValueError(f"--samples and --dev-samples add forecaster features; --method "
                         f"{args.method} calibrates the event probability alone")
    files = args.events_file or args.dev_events_file   # may hold sample features
    if with_dev and not files and bool(args.samples) != bool(args.dev_samples):
        raise ValueError("give --samples and --dev-samples together: the forecaster "
                         "predicts from the features it was fit on")
    if not (with_dev or args.calibrator or args.output):
        raise ValueError("--samples feed a forecaster: give dev outputs to fit one, "
                         "--calibrator, or -o to save them with the events")


def _check_grouping(args):
    """``--grouping``, ``--groups``, ``--group-min-entries``: a registered method's."""
    sizes = [(flag, value) for flag, value in (("--groups", args.groups),
                                               ("--group-min-entries", args.min_entries))
             if value is not None]
    given = [("--grouping", args.grouping)] * (args.grouping is not None) + sizes
    if given and args.method == "forecaster":
        raise ValueError(f"{given[0][0]} groups the calibrators of a registered --method; "
                         "the forecaster takes the event type as a feature instead")
    args.grouping = args.grouping or "scw"
    for flag, value in sizes:
        if args.grouping == "scw":
            raise ValueError(f"{flag} applies to --grouping tfg or per-type, not scw")
        check_positive_int(value, flag)


def _tag_names(args, test, dev):
    """The names of tag columns 0 .. n_tags - 1 from --tag-index (None without
    it), checked against the outputs and, where spans are decoded, --scheme."""
    outputs = [s for s in (dev, test) if s is not None and "n_tags" in s]
    if len(outputs) == 2:
        check_same_tags(dev["n_tags"], test["n_tags"])
    if not outputs:
        return None
    if args.events == "spans" and not args.tag_index:
        raise ValueError("--events spans needs --tag-index (the tag names of the spans)")
    if not args.tag_index:
        return None
    n_tags = outputs[0]["n_tags"]
    index = load_tag_index(args.tag_index)
    if sorted(index.values()) != list(range(n_tags)):
        raise ValueError(f"--tag-index {args.tag_index!r} must name each of the {n_tags} tag "
                         f"columns 0..{n_tags - 1} once (it maps {len(index)} tags to "
                         f"{len(set(index.values()))} columns)")
    names = sorted(index, key=index.get)
    if args.events == "spans" or (args.rerank and args.scheme):
        from ..structured.schemes import parse_tag_names
        scheme = args.scheme or "bio"
        try:
            parse_tag_names(names, scheme)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"--tag-index {args.tag_index!r} with --scheme {scheme}: "
                             f"{exc}") from None
    return names


# ------------------------------------------------------------------ inputs -- #

def _read(args, console, prefix):
    """The test (``prefix`` "") or dev ("dev-") set, read and checked: ``{"events",
    "features"}`` of its events file, or its outputs (:func:`_read_outputs`)."""
    path = getattr(args, prefix.replace("-", "_") + "events_file")
    if not path:
        return _read_outputs(args, console, prefix)
    from ..structured.event_files import load_events
    with console.step("reading" + (" dev" if prefix else "")):
        events, features = load_events(path, features=True)
    kind = "spans" if events.kind == "span" else "sequences"
    if args.events is not None and args.events != kind:
        raise ValueError(f"--{prefix}events-file {path!r} holds {kind}, not --events "
                         f"{args.events}")
    if prefix and args.choose_k and max(args.choose_k) > events.rank.max(initial=1):
        raise ValueError(f"--choose-k {max(args.choose_k)} needs dev events of rank up to "
                         f"{max(args.choose_k)}; {path!r} has ranks up to "
                         f"{events.rank.max(initial=1)}")
    if not prefix:   # the file's kind and k
        args.events, args.k = kind, int(events.rank.max(initial=1))
    return {"events": events, "features": features}


def _events(args, console, source, tag_names, k, which):
    """(the events, their sample features) of a set read by :func:`_read`."""
    if "events" in source:
        return source["events"], source["features"]
    events = _make_events(args, console, source, tag_names, k, which)
    features = {} if source["samples"] is None else \
        _sample_features(args, console, source, events, which)
    return events, features


def _sample_features(args, console, outputs, events, which):
    """J&Y's mean / p10 / p90 (and std) of each event's probability over the
    samples (:func:`~sparsecal.structured.sample_confidence`)."""
    import numpy as np

    from ..structured.ensembles import sample_confidence
    from ..structured.events import softmax_event_probabilities
    samples = outputs["samples"]
    try:
        with console.step(which + "samples") as progress:
            rows = []
            for s in range(samples.shape[0]):   # one pass per sample
                padded = pad_sentences(samples[s], outputs["lengths"])
                rows.append(softmax_event_probabilities(events, padded, args.normalize))
                if progress is not None:
                    progress(s + 1, samples.shape[0])
            return sample_confidence(np.stack(rows)).features()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{outputs['samples_file']!r}: {exc}") from None


def _check_same_kind(args, events, dev_events, features, dev_features):
    """Dev events of the test events' kind, for spans types, and for the
    forecaster sample features."""
    if dev_events.kind != events.kind:
        raise ValueError(f"the dev events are {dev_events.kind}s but the test events are "
                         f"{events.kind}s")
    if events.kind == "span" and dev_events.type_names != events.type_names:
        raise ValueError(f"the dev span types {list(dev_events.type_names)} differ from the "
                         f"test span types {list(events.type_names)}")
    if args.method == "forecaster" and sorted(features) != sorted(dev_features):
        raise ValueError(f"the dev events have the sample features {sorted(dev_features)} "
                         f"but the test events {sorted(features)}: the forecaster predicts "
                         "from the features it was fit on (--samples, --dev-samples)")


def _read_outputs(args, console, prefix):
    """A tagger's outputs and gold as padded sentences: ``{"kind": "crf" or
    "softmax", "arrays": the keyword arguments of the events function,
    "gold": [B, N], "lengths": [B], "n_tags": C, "source": the outputs file,
    "samples", "samples_file"}``."""
    import numpy as np
    attr = prefix.replace("-", "_")
    potentials, scores, gold, lengths_file = (
        getattr(args, attr + name) for name in ("potentials", "scores", "gold", "lengths"))
    if not gold:
        raise ValueError(f"give --{prefix}gold (the gold tags of --{prefix}"
                         f"{'potentials' if potentials else 'scores'})")
    which = f" {prefix[:-1]}" if prefix else ""
    with console.step("reading" + which):
        gold_flat, offsets = load_gold_sentences(
            gold, tag_index=args.tag_index, format=args.gold_format, column=args.gold_column)
        if potentials:
            if lengths_file:
                raise ValueError(f"--{prefix}lengths applies to --{prefix}scores: the "
                                 f"sentence lengths of --{prefix}potentials are its "
                                 "'lengths' array")
            arrays = load_potentials(potentials)
            source, lengths = potentials, arrays.pop("lengths")
            n_tags = arrays["emissions"].shape[2]
        else:
            matrix = scores_from_args(args, prefix)
            source, n_tags = scores, matrix.shape[1]
            if lengths_file:
                lengths, where = load_lengths(lengths_file), f"the lengths in {lengths_file!r}"
            elif offsets is not None:
                lengths, where = np.diff(offsets), f"the sentences of {gold!r}"
            else:
                raise ValueError(f"--{prefix}scores needs the sentences: give "
                                 f"--{prefix}lengths or a CoNLL-U / CoNLL --{prefix}gold")
            if lengths.sum() != matrix.shape[0]:
                raise ValueError(f"{scores!r} has {matrix.shape[0]} rows but {where} "
                                 f"hold {lengths.sum()} tokens")
            arrays = {"scores": pad_sentences(matrix, lengths)}
    samples_file = getattr(args, attr + "samples")
    samples = _read_samples(samples_file, matrix.shape) if samples_file else None
    _check_gold(gold, gold_flat, offsets, lengths, n_tags, source)
    return {"kind": "crf" if potentials else "softmax", "arrays": arrays, "source": source,
            "samples": samples, "samples_file": samples_file,
            "gold": pad_sentences(gold_flat, lengths, fill=-1), "lengths": lengths,
            "n_tags": n_tags}


def _read_samples(path, shape):
    """The stacked samples ``[S, n_tokens, n_tags]`` of a scores matrix ``shape``."""
    from ..io.npyfile import open_npy
    samples = open_npy(path, "samples")
    if samples.ndim != 3 or samples.shape[1:] != shape or samples.shape[0] == 0:
        raise ValueError(f"{path!r} must stack S >= 1 score matrices of the scores' shape "
                         f"{tuple(shape)}: [S, {shape[0]}, {shape[1]}], got {samples.shape}")
    return samples


def _check_gold(path, gold, offsets, lengths, n_tags, source):
    """Gold that lines up with the outputs' sentences and tags; errors name both."""
    import numpy as np
    if gold.shape[0] != lengths.sum():
        raise ValueError(f"{path!r} has {gold.shape[0]} tokens but the sentences of "
                         f"{source!r} hold {lengths.sum()}")
    if offsets is not None and not np.array_equal(np.diff(offsets), lengths):
        i = int(np.flatnonzero(np.diff(offsets) != lengths)[0]) \
            if offsets.shape[0] - 1 == lengths.shape[0] else None
        raise ValueError(f"the sentences of {path!r} differ from those of {source!r}: "
                         + (f"sentence {i} has {np.diff(offsets)[i]} tokens, not "
                            f"{lengths[i]}" if i is not None else
                            f"{offsets.shape[0] - 1} sentences, not {lengths.shape[0]}"))
    try:
        check_gold(gold, gold.shape[0], n_tags)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path!r} with {source!r}: {exc}") from None


def _make_events(args, console, outputs, tag_names, k, which):
    """The events of ``outputs`` (:mod:`sparsecal.structured`); an error names
    the outputs file."""
    from .. import structured as st
    kw = dict(outputs["arrays"], lengths=outputs["lengths"], n_threads=args.n_threads)
    if args.events == "spans":
        kw.update(tag_names=tag_names, scheme=args.scheme or "bio", normalize=args.normalize)
    name = f"{outputs['kind']}_{'span' if args.events == 'spans' else 'sequence'}_events"
    try:
        with console.step(which + "events"):
            return getattr(st, name)(gold=outputs["gold"], k=k, **kw)
    except (TypeError, ValueError) as exc:
        if str(exc).startswith(f"k={k} "):   # too many sequences: the flag that asked
            flag = "--k" if k == args.k else "--choose-k"
            raise ValueError(f"{flag} {k}{str(exc)[len(f'k={k}'):]}") from None
        raise ValueError(f"{outputs['source']!r}: {exc}") from None


# ------------------------------------------------------------- calibration -- #

def _event_features(events, samples):
    """The forecaster's features of ``events``: J&Y's mean, rank, length, type;
    with ``--samples``, the mean, percentiles and std over the samples (the mean
    replacing the event's probability under the model, J&Y Section 2.6)."""
    return {CONFIDENCE_FEATURE: events.entries.score, **events.features, **samples}


def _fit(args, dev_events, features, prior):
    """(the fitted model, the KChoice of --choose-k or None)."""
    if args.method == "forecaster":
        from ..calibration.forecaster import Forecaster
        forecaster = Forecaster(random_state=args.seed, n_threads=args.n_threads)
        labels = dev_events.entries.label
        if args.choose_k:
            from ..calibration.choice_of_k import heuristic_k
            choice = heuristic_k(features, labels, ks=args.choose_k, forecaster=forecaster)
            return choice.forecaster, choice
        return forecaster.fit(features, labels), None
    base = get_method(args.method).build(args.bins or 10, args.seed, prior)
    return _grouped(args, base, dev_events.entries).fit(dev_events.entries), None


def _grouped(args, base, dev):
    """The unfitted GroupedCalibrator of ``--grouping``: the event types are the
    tags of ``sparsecal fit``'s grouping, their dev event counts the training
    counts of TFG (Kranzlein et al. 2021, Section 3.3)."""
    from ..calibration.grouped import GroupedCalibrator
    if args.grouping == "scw":   # one calibrator over every event, however few
        return GroupedCalibrator(base, TagGroups.scw(dev.n_tags), min_entries=1)
    kw = {} if args.min_entries is None else {"min_entries": args.min_entries}
    tfg = TagGroups.from_gold(dev.tag, args.groups or 5, n_tags=dev.n_tags)
    if args.grouping == "tfg":
        return GroupedCalibrator(base, tfg, **kw)
    return GroupedCalibrator(base, TagGroups.per_tag(dev.n_tags), fallback=tfg, **kw)


def _load_model(args):
    """The saved --calibrator: a :class:`Forecaster`, or a grouped / cross-fitted
    calibrator (which takes no --samples features)."""
    from ..calibration.forecaster import FORMAT as FORECASTER, Forecaster
    from ..calibration.loading import load_calibrator
    from ..io.calibrators import ENSEMBLE_FORMAT, FORMAT, load_state
    meta, _ = load_state(args.calibrator, format=(FORMAT, ENSEMBLE_FORMAT, FORECASTER))
    if meta["format"] == FORECASTER:
        return Forecaster.load(args.calibrator)
    if args.samples and not args.output:
        raise ValueError(f"--samples add forecaster features, but --calibrator "
                         f"{args.calibrator} is not a forecaster (it calibrates the event "
                         f"probability alone)")
    return load_calibrator(args.calibrator)


def _confidence(model, events, features, args):
    """The calibrated probability of each event."""
    from ..calibration.forecaster import Forecaster
    if isinstance(model, Forecaster):
        return model.predict(features)
    if model.n_tags != events.entries.n_tags:
        raise ValueError(f"the calibrator was fit for {model.n_tags} event types but these "
                         f"{args.events} have {events.entries.n_tags}")
    return model.transform(events.entries).score


def _choice_text(choice):
    per_k = ", ".join(f"k={k}: {e:.4f}" for k, e in zip(choice.ks, choice.ece))
    return f"heuristic k = {choice.k} (rank-1 ECE per candidate: {per_k})\n"


# ------------------------------------------------------------------ output -- #

def _evaluate(args, console, events, confidence, ci, options):
    """The calibration tables of the events per type, before and after."""
    groups = TagGroups.per_tag(events.entries.n_tags, tag_names=list(events.type_names))
    tables = {"evaluation": events.entries}
    if confidence is not None:
        tables["calibrated_evaluation"] = events.entries.with_scores(confidence)
    results = {}
    for name, entries in tables.items():
        with console.step("evaluating") as progress:
            results[name] = evaluate(entries, groups, n_bins=args.bins, ci=ci,
                                     top_label=True, progress=progress, **options)
        title = "calibrated " if name != "evaluation" else ""
        types = ", ".join(f"{i + 1} = {t}" for i, t in enumerate(events.type_names))
        console.info(f"## {len(events):,} {title}{events.kind} events (k = {args.k}); "
                     f"groups are event types: {types}\n")
        console.info(results[name].to_markdown() + "\n")
    return results


def _rerank(args, events, confidence, test, tag_names):
    """The :class:`~sparsecal.structured.Reranking` of the events as a dict."""
    from ..structured.reranking import rerank_sequences, rerank_spans
    conf = events.entries.score if confidence is None else confidence
    if args.events == "spans":
        r = rerank_spans(events, conf, test["gold"], tag_names, args.scheme or "bio",
                         args.cutoff)
    else:
        spans = args.scheme is not None and tag_names is not None
        r = rerank_sequences(events, conf, test["gold"] if spans else None,
                             tag_names if spans else None, args.scheme or "bio")
    out = r.to_dict()
    for when in ("before", "after"):
        s = getattr(r, f"spans_{when}")
        out[f"spans_{when}"] = None if s is None else s.to_dict()
    return out


def _rerank_text(r):
    lines = [f"re-ranking: {r['n_changed']} changed"]
    if r["exact_match_before"] is not None:
        lines.append(f"exact match {r['exact_match_before']:.4f} -> "
                     f"{r['exact_match_after']:.4f}")
    if r["f1_before"] is not None:
        lines.append(f"span F1 {r['f1_before']:.4f} -> {r['f1_after']:.4f}")
    return "; ".join(lines)


def _write(args, console, events, features, confidence, model, out):
    """Every output, each atomically, after all the work."""
    from ..structured.event_files import save_events
    from ..structured.events import rescored
    with console.step("writing"):
        if args.output:
            save_events(args.output, events, features=features)
        if args.calibrated_output:
            save_events(args.calibrated_output, rescored(events, confidence),
                        features=features)
        if args.save_calibrator:
            model.save(args.save_calibrator)
        if args.json:
            atomic_write_text(args.json, json.dumps(out, indent=2) + "\n")
    for path in (args.output, args.calibrated_output, args.save_calibrator, args.json):
        if path:
            console.info(f"wrote {path}")
