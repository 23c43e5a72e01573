"""One-call evaluation of a tagger's marginal calibration, and comparisons.

``evaluate`` reports what Kranzlein, Liu & Schneider 2021 (Table 1) report per
tagger: SMCE over all thresholded entries, GMCE per tag-frequency group, the group
summary rows; optionally per-tag CE (Kumar et al.'s MCE), top-label ECE and any
measure of :mod:`~sparsecal.metrics.measures` by name, pooled and per group; every
binned CE with a confidence interval (95% by default; Nguyen & O'Connor,
Algorithm 2, or bootstrap; see :class:`~sparsecal.metrics.intervals.ConfidenceInterval`).
``compare`` gives the absolute and relative change between two evaluations, as in
the paper's Table 1 (relative change = (after - before) / before).
"""
import json
import math
import warnings
from dataclasses import dataclass, field

from ..core.groups import TagGroups, check_groups
from ..core.progress import ProgressCounter
from ..core.validation import DegenerateDataError, check_prior
from .intervals import ConfidenceInterval
from ..core.entries import check_entries
from .marginal import check_ce_options, mce, smce_and_gmce
from .measures import check_options, get_measure
from .toplabel import top_label_ece
from ..io.tables import Table
from ..core.dispatch import takes_data

__all__ = ["EvaluationResult", "Comparison", "evaluate", "compare"]


def _ce_dict(ce):
    return None if ce is None else ce.to_dict()


def _num(x, digits=4):
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _ce_cell(d):
    if d is None:
        return "—"
    if d.get("ci_low") is None:
        return _num(d["value"])
    return f"{_num(d['value'])} [{_num(d['ci_low'])}, {_num(d['ci_high'])}]"


def _level(settings):
    """"95%": the interval's level, or the default level when there is none."""
    # (the class attribute is the field's default: no instance, no numpy.random)
    level = settings.get("confidence_level") or ConfidenceInterval.confidence_level
    return f"{100 * level:g}%"


@dataclass(frozen=True)
class EvaluationResult(Table):
    """Calibration of one set of entries; see :func:`evaluate`.

    Attributes
    ----------
    smce : CalibrationError
    gmce : list of CalibrationError or None (one per group, None if empty)
    groups : list of dict
        :meth:`TagGroups.summary` rows (with entries and tokens).
    mce : MarginalCalibrationError or None
    top_label_ece : CalibrationError or None
    metrics : dict
        The measures asked for by name (``evaluate(metrics=...)``): name ->
        ``{"pooled": value, "groups": [value or None per group]}``.
    settings : dict
        threshold, n_bins, bin_size, binning, norm, debias, prior, ci (method
        or None), confidence_level, n_resamples, random_state (None without an
        interval), grouping kind, n_groups.

    Examples
    --------
    >>> from sparsecal import threshold
    >>> from sparsecal.datasets.synthetic import make_tagger_outputs
    >>> data = make_tagger_outputs(2000, n_tags=40, split_seed=1)
    >>> res = evaluate(threshold(data.scores, data.gold, 0.01), ci=None)
    >>> sorted(res.to_dict()), res.settings["ci"]
    (['gmce', 'groups', 'settings', 'smce'], None)
    """

    smce: object
    gmce: list
    groups: list
    mce: object = None
    top_label_ece: object = None
    metrics: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)

    def to_dict(self):
        out = {"settings": dict(self.settings), "smce": _ce_dict(self.smce),
               "gmce": [_ce_dict(c) for c in self.gmce], "groups": self.groups}
        if self.mce is not None:
            out["mce"] = {"value": self.mce.value, "min_entries": self.mce.min_entries,
                          "per_tag": {str(t): c.to_dict() for t, c in self.mce.per_tag.items()},
                          "too_few": {str(t): n for t, n in self.mce.too_few.items()}}
        if self.top_label_ece is not None:
            out["top_label_ece"] = self.top_label_ece.to_dict()
        if self.metrics:
            out["metrics"] = {k: dict(v) for k, v in self.metrics.items()}
        return out

    def _columns(self):
        """The group table: row "all" (SMCE over every entry), then one row per
        group (GMCE); each measure of ``metrics`` as a column."""
        rows, ces = self.groups, [self.smce] + list(self.gmce)
        out = {"group": ["all"] + [r["group"] for r in rows],
               "tag_types": [sum(r["tag_types"] for r in rows)] + [r["tag_types"] for r in rows]}
        if rows and "train_share_min" in rows[0]:
            for key in ("train_share_min", "train_share_max"):
                out[key] = [None] + [r[key] if r["tag_types"] else None for r in rows]
        out["entries"] = [self.smce.n] + [r.get("entries", 0) for r in rows]
        out["tokens"] = [None] + [r.get("tokens", 0) for r in rows]
        for key in ("value", "ci_low", "ci_high"):
            out["ce" if key == "value" else key] = [None if c is None else getattr(c, key)
                                                    for c in ces]
        for name, m in self.metrics.items():
            out[name] = [m["pooled"]] + list(m["groups"])
        return out

    def to_json(self, path=None, indent=2):
        """JSON text of :meth:`to_dict`; written to ``path`` if given."""
        text = json.dumps(self.to_dict(), indent=indent, allow_nan=True)
        if path is not None:
            from ..io.atomic import atomic_write_text
            atomic_write_text(path, text + "\n")
        return text

    def to_markdown(self):
        """SMCE, then one row per group: tags, training share, entries, tokens, GMCE."""
        d = self.to_dict()
        s = d["settings"]
        ci = f"{_level(s)} CI" if s.get("ci") else None   # the headers name what was computed
        lines = [f"Threshold {s.get('threshold')}, {_bins_text(s)}, "
                 + (f"{ci}: {s['ci']}" if ci else "no CI"), "",
                 f"**SMCE** {_ce_cell(d['smce'])} over {d['smce']['n']:,} entries", ""]
        has_share = any("train_share_min" in g for g in d["groups"])
        head = ["Group", "Tag types"] + (["Train share"] if has_share else []) + \
            ["Entries", "Tokens", f"GMCE [{ci}]" if ci else "GMCE"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for g, ce in zip(d["groups"], d["gmce"]):
            row = [str(g["group"]), str(g["tag_types"])]
            if has_share:
                row.append(f"[{g['train_share_min']:.1%}, {g['train_share_max']:.1%}]"
                           if g["tag_types"] else "—")
            row += [f"{g.get('entries', 0):,}", f"{g.get('tokens', 0):,}", _ce_cell(ce)]
            lines.append("| " + " | ".join(row) + " |")
        if "mce" in d:
            lines += ["", f"**MCE** (per tag, >= {d['mce']['min_entries']} entries): "
                          f"{_num(d['mce']['value'])} over {len(d['mce']['per_tag'])} tags; "
                          f"{len(d['mce']['too_few'])} tags had too few entries"]
        if "top_label_ece" in d:
            lines += ["", f"**Top-label ECE** ({d['top_label_ece']['n_bins']} bins): "
                          f"{_ce_cell(d['top_label_ece'])}"]
        if "metrics" in d:
            lines += ["", _metrics_table(d["metrics"], len(d["groups"]))]
        return "\n".join(lines)


def _metrics_table(metrics, n_groups):
    """One row per measure: pooled, then each group."""
    head = ["Measure", "All"] + [f"Group {g + 1}" for g in range(n_groups)]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, v in metrics.items():
        cells = [get_measure(name).display_name, _num(v["pooled"])]
        cells += [_num(x) for x in v["groups"]]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _measures_by_group(measures, entries, groups, options, counter):
    """name -> {"pooled": value, "groups": [value, or None for an empty group]}.

    A measure undefined on a set of entries (:class:`DegenerateDataError`:
    e.g. Cllr of one class) is NaN there, with one warning naming the
    measures, the groups and why. Measures that are parts of one result (the CORP terms of one decomposition)
    share one call of their function per set of entries."""
    perm, offsets = groups.partition(entries)
    results, undefined = {}, {}   # undefined: (measure, reason) -> parts

    def value(m, part, scores, labels):
        kwargs = m.arguments(**options)
        key = (part, m.function_path, tuple(sorted(kwargs.items(), key=str)))
        if key not in results:
            try:
                results[key] = m.function(scores, labels, **kwargs)
            except DegenerateDataError as exc:   # e.g. Cllr of a group of one class
                results[key] = exc
        if isinstance(results[key], DegenerateDataError):
            undefined.setdefault((m.name, str(results[key])), []).append(
                "all" if part == "all" else str(part + 1))
            return math.nan
        return m.value_of(results[key])

    out = {}
    for m in measures:
        per_group = []
        for g in range(groups.n_groups):
            idx = perm[offsets[g]:offsets[g + 1]]
            per_group.append(value(m, g, entries.score[idx], entries.label[idx])
                             if idx.size else None)
        out[m.name] = {"pooled": value(m, "all", entries.score, entries.label),
                       "groups": per_group}
        counter.advance()
    if undefined:
        warnings.warn("measures undefined on some groups' entries are NaN there: "
                      + "; ".join(f"{name} for group(s) {', '.join(parts)} ({reason})"
                                  for (name, reason), parts in undefined.items()),
                      UserWarning, stacklevel=4)
    return out


def _check_measure_options(options):
    """``evaluate``'s ``measure_options`` as a dict of the resampling options."""
    if options is None:
        return {}
    if not isinstance(options, dict) or set(options) - {"n_resamples", "random_state"}:
        raise ValueError("measure_options must be a dict of n_resamples and "
                         f"random_state, got {options!r}")
    return dict(options)


def _missing(x):
    """No value: an empty group (None) or a measure undefined there (NaN)."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def bins_used(n_bins, binning, n):
    """The bin count over ``n`` entries that ``n_bins`` gives: equal-mass bins
    are at most one per entry (None with ``bin_size``)."""
    return n_bins if n_bins is None or binning != "equal-mass" else min(n_bins, n)


def _bins_text(s):
    """"10 equal-mass bins", "bins of 200 entries", "15 fixed-width bins"."""
    if s.get("bin_size") is not None:
        return f"equal-mass bins of {s['bin_size']} entries"
    kind = "fixed-width" if s.get("binning") == "fixed" else "equal-mass"
    return f"{s.get('n_bins')} {kind} bins"


@takes_data
def evaluate(entries, groups=None, *, n_bins=None, ci="simulation", per_tag=False,
             min_entries=None, top_label=False, metrics=(), progress=None,
             bin_size=None, binning="equal-mass", norm=2, debias=False, prior=None,
             measure_options=None):
    """Evaluate marginal calibration of thresholded entries.

    Parameters
    ----------
    entries : Entries
    groups : TagGroups, optional
        Defaults to SCW (one group of all tags).
    n_bins : int, optional
        Bins of SMCE and GMCE (default 10, as Kranzlein et al.; at most one of
        ``n_bins`` and ``bin_size``).
    ci : None, {"simulation", "bootstrap", "score"} or ConfidenceInterval, default="simulation"
        The interval of every CE (SMCE, each GMCE, per-tag CE, top-label ECE);
        a method name uses the defaults (95%, ``random_state=0``). With
        ``debias=True`` it must be None or "score" (the debiased CE's
        interval; then per-tag CE and top-label ECE get no interval).
    per_tag : bool, default=False
        Also compute per-tag CE and MCE over tags with ``min_entries`` entries,
        in bins of :data:`~sparsecal.metrics.marginal.DEFAULT_BIN_SIZE` entries
        (:func:`mce`'s defaults; ``n_bins`` is for SMCE and GMCE).
    min_entries : int, optional
        Default: :func:`mce`'s (400, two bins).
    top_label : bool, default=False
        Also compute top-label ECE (20 fixed-width bins, Jagannatha & Yu 2020).
    metrics : sequence of str, default=()
        Further measures by name (:data:`sparsecal.metrics.measures.MEASURES`,
        e.g. ``"ece"``, ``"brier"``), each over all entries and over each
        group's, with ``n_bins`` bins where binned. A measure undefined on a
        group's entries (Cllr, DCF of one class) is NaN there, with one
        warning naming the groups and why.
    bin_size : int, optional
        Entries per equal-mass bin of SMCE and GMCE, instead of ``n_bins``.
    binning : {"equal-mass", "fixed"}, default="equal-mass"
        The bins of SMCE, GMCE and the binned ``metrics`` (see
        :func:`~sparsecal.metrics.calibration_error`).
    norm : {2, 1, inf}, default=2
        p of SMCE and GMCE's CE_p (2: the paper's; 1: ECE; inf: the maximum).
    debias : bool, default=False
        SMCE and GMCE as Kumar et al.'s debiased CE_2 (``norm=2``).
    prior : float, optional
        The application prior of the measures that need one (``"dcf"``,
        ``"min-dcf"``); refused if none of ``metrics`` takes it.
    measure_options : dict, optional
        ``{"n_resamples": R, "random_state": seed}`` of the measures that
        resample (``"calibration-test-p"``; default: theirs, 999 and 0);
        refused if none of ``metrics`` takes them. (The intervals take theirs
        from ``ci``, the one interval argument.)
    progress : callable, optional
        Called as ``progress(done, total)`` after each calibration error: SMCE,
        the GMCE of each group, MCE (``per_tag``), top-label ECE
        (``top_label``), each of ``metrics``; ``total`` counts them.

    Returns
    -------
    EvaluationResult

    Raises
    ------
    TypeError, ValueError
        As the metrics it calls (:func:`smce`, :func:`gmce`, :func:`mce`,
        :func:`top_label_ece`); an invalid ``ci``, ``progress``, binning,
        ``norm``, ``debias``, ``prior`` or measure name, a measure that
        needs ``prior`` without it, or an option none of ``metrics`` takes
        (:func:`~sparsecal.metrics.measures.check_options`), before any work.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Table 1 (SMCE, GMCE per TFG group);
    Nguyen & O'Connor 2015, Algorithm 2 (intervals).

    Examples
    --------
    >>> from sparsecal import TagGroups, threshold
    >>> from sparsecal.metrics import ConfidenceInterval
    >>> from sparsecal.datasets.synthetic import make_tagger_outputs
    >>> data = make_tagger_outputs(2000, n_tags=40, split_seed=1)
    >>> groups = TagGroups.from_counts(data.train_counts, 3, n_tags=40)
    >>> ci = ConfidenceInterval(confidence_level=0.9, n_resamples=500)
    >>> res = evaluate(threshold(data.scores, data.gold, 0.01), groups, ci=ci)
    >>> len(res.gmce), res.smce.ci_level, res.to_markdown().splitlines()[0]
    (3, 0.9, 'Threshold 0.01, 10 equal-mass bins, 90% CI: simulation')
    """
    spec = ConfidenceInterval.resolve(ci)
    if isinstance(metrics, str):
        metrics = [metrics]
    measures = [get_measure(name) for name in metrics]
    if prior is not None:
        prior = check_prior(prior, "prior")
    for m in measures:
        m.check_prior(prior)
    options = dict(_check_measure_options(measure_options), n_bins=n_bins,
                   bin_size=bin_size, binning=binning, prior=prior)
    check_options(measures, options, used=("n_bins", "bin_size", "binning"))
    n_bins, _ = check_ce_options(n_bins, bin_size, binning, norm, debias, spec)
    entries = check_entries(entries)
    if groups is not None:
        check_groups(groups, entries.n_tags)
    else:
        n_tags = entries.n_tags if entries.n_tags is not None else int(entries.tag.max()) + 1
        groups = TagGroups.scw(n_tags)
    counter = ProgressCounter(progress, 1 + groups.n_groups + bool(per_tag) + bool(top_label)
                              + len(measures))
    interval = {} if spec is None else spec.to_dict()
    shared, grouped = smce_and_gmce(entries, groups, n_bins=n_bins, bin_size=bin_size,
                                    ci=spec, binning=binning, norm=norm, debias=debias,
                                    progress=counter.nested())
    other = None if debias else spec   # the score interval is the debiased CE's only
    marginal = tagged = None
    if per_tag:
        marginal = mce(entries, min_entries=min_entries, ci=other)
        counter.advance()
    if top_label:
        tagged = top_label_ece(entries, ci=other)
        counter.advance()
    options["n_bins"] = n_bins   # 10 when neither n_bins nor bin_size was given
    extra = _measures_by_group(measures, entries, groups, options, counter)
    return EvaluationResult(
        smce=shared, gmce=grouped, groups=groups.summary(entries), mce=marginal,
        top_label_ece=tagged, metrics=extra,
        settings={"threshold": entries.threshold,
                  "n_bins": bins_used(n_bins, binning, len(entries)),
                  "bin_size": bin_size, "binning": binning, "norm": shared.norm,
                  "debias": bool(debias), "prior": prior,
                  "ci": interval.get("method"),
                  "confidence_level": interval.get("confidence_level"),
                  "n_resamples": interval.get("n_resamples"),
                  "random_state": interval.get("random_state"),
                  "grouping": groups.kind, "n_groups": groups.n_groups})


@dataclass(frozen=True)
class Comparison(Table):
    """Before/after change of SMCE and every GMCE (Kranzlein et al. 2021, Table 1).

    Made by :func:`compare`; one row per metric.

    Attributes
    ----------
    rows : list of dict
        ``{"name", "before", "after", "change", "relative_change"}`` per metric:
        ``"SMCE"`` then ``"GMCE group 1"`` ... ; ``change`` is ``after - before``,
        ``relative_change`` is ``change / before`` (None where either value is
        missing or ``before`` is 0).

    Examples
    --------
    >>> from sparsecal.metrics.evaluation import Comparison
    >>> table = Comparison([{"name": "SMCE", "before": 0.02, "after": 0.015,
    ...                      "change": -0.005, "relative_change": -0.25}])
    >>> print(table.to_markdown("dev", "recalibrated"))
    | Metric | dev | recalibrated | change | relative |
    |---|---|---|---|---|
    | SMCE | 0.0200 | 0.0150 | -0.0050 | -25.0% |
    """

    rows: list   # dicts: name, before, after, change, relative_change

    def to_dict(self):
        return {"rows": self.rows}

    def _columns(self):
        keys = ("name", "before", "after", "change", "relative_change")
        return {k: [r[k] for r in self.rows] for k in keys}   # a loop over metrics

    def to_markdown(self, label_before="before", label_after="after"):
        lines = [f"| Metric | {label_before} | {label_after} | change | relative |",
                 "|---|---|---|---|---|"]
        for r in self.rows:
            rel = "—" if r["relative_change"] is None else f"{r['relative_change']:+.1%}"
            lines.append(f"| {r['name']} | {_num(r['before'])} | {_num(r['after'])} | "
                         f"{_num(r['change'], 4) if r['change'] is not None else '—'} | {rel} |")
        return "\n".join(lines)


def compare(before, after):
    """Absolute and relative change of SMCE and each GMCE from ``before`` to ``after``.

    The before/after columns of Kranzlein et al. 2021, Table 1: the same test
    outputs evaluated before and after recalibration; then each measure both
    evaluations computed (``evaluate(metrics=...)``), pooled and per group.

    Parameters
    ----------
    before, after : EvaluationResult
        Two evaluations (:func:`evaluate`) over the same tag groups.

    Returns
    -------
    Comparison
        One row per metric; ``to_markdown()`` renders the table.

    Raises
    ------
    ValueError
        If the two evaluations have different numbers of groups.

    Examples
    --------
    >>> from sparsecal import TagGroups, threshold, IsotonicCalibrator
    >>> from sparsecal.metrics import evaluate, compare
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> data = make_tagger_outputs(3000, n_tags=40, split_seed=1)
    >>> dev = threshold(data.scores, data.gold, 0.01)
    >>> data = make_tagger_outputs(3000, n_tags=40, split_seed=2)
    >>> test = threshold(data.scores, data.gold, 0.01)
    >>> groups = TagGroups.from_counts(data.train_counts, 2, n_tags=40)
    >>> cal = IsotonicCalibrator().fit(dev.score, dev.label)
    >>> table = compare(evaluate(test, groups, ci=None),
    ...                 evaluate(test.with_scores(cal.predict(test.score)), groups, ci=None))
    >>> [row["name"] for row in table.rows]
    ['SMCE', 'GMCE group 1', 'GMCE group 2']
    >>> table.rows[0]["after"] < table.rows[0]["before"]
    True
    """
    if len(before.gmce) != len(after.gmce):
        raise ValueError(f"the evaluations have different groups ({len(before.gmce)} vs "
                         f"{len(after.gmce)})")
    pairs = [("SMCE", before.smce, after.smce)]
    pairs += [(f"GMCE group {g + 1}", b, a)
              for g, (b, a) in enumerate(zip(before.gmce, after.gmce))]
    values = [(name, None if b is None else b.value, None if a is None else a.value)
              for name, b, a in pairs]
    for key in (k for k in before.metrics if k in after.metrics):
        shown = get_measure(key).display_name
        b, a = before.metrics[key], after.metrics[key]
        values.append((shown, b["pooled"], a["pooled"]))
        values += [(f"{shown} group {g + 1}", bv, av)
                   for g, (bv, av) in enumerate(zip(b["groups"], a["groups"]))]
    rows = []
    for name, bv, av in values:
        change = None if _missing(bv) or _missing(av) else av - bv
        rel = None if change is None or bv == 0 else change / bv
        rows.append({"name": name, "before": bv, "after": av, "change": change,
                     "relative_change": rel})
    return Comparison(rows)
