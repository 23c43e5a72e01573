"""One-call evaluation of a tagger's marginal calibration (what Kranzlein, Liu &
Schneider 2021, Table 1, report per tagger), and the change between two
evaluations.
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
from ..io.tables import Table, interval, number, plural, summary, value_range
from .._docs import fill_doc
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


#: how a grouping kind reads in a summary
_GROUPINGS = {"scw": "SCW", "tfg": "TFG"}


@dataclass(frozen=True)
class EvaluationResult(Table):
    """Calibration of one set of entries, made by :func:`evaluate`: ``smce``, one
    ``gmce`` per group (None: no entries), the ``groups``' summary rows, ``mce``
    and ``top_label_ece`` if asked for, the ``metrics`` by name (``{"pooled":
    value, "groups": [...]}``) and the ``settings`` of the evaluation.

    Examples
    --------
    See :func:`evaluate`.
    """

    smce: object
    gmce: list
    groups: list
    mce: object = None
    top_label_ece: object = None
    metrics: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)

    def __repr__(self):
        s, top = self.smce, self.top_label_ece
        gmce = [None if c is None else c.value for c in self.gmce]
        kind = self.settings.get("grouping")
        groups = plural(len(gmce), f"{_GROUPINGS.get(kind, kind)} group" if kind else "group")
        names = list(self.metrics)
        return summary(
            self, f"SMCE={number(s.value)}", interval(s.ci_low, s.ci_high, s.ci_level),
            f"{s.n} entries",
            f"GMCE of {groups} in {value_range(gmce)}" if len(gmce) > 3 else
            f"GMCE of {groups}: {', '.join(number(v) for v in gmce)}",
            self.mce is not None and f"MCE={number(self.mce.value)}",
            top is not None and f"top-label ECE={number(top.value)}",
            names and "metrics " + ", ".join(names[:3])
            + (f" and {len(names) - 3} more" if len(names) > 3 else ""))

    def to_dict(self):
        out = {"settings": dict(self.settings), "smce": _ce_dict(self.smce),
               "gmce": [_ce_dict(c) for c in self.gmce], "groups": self.groups}
        if self.mce is not None:
            out["mce"] = {"value": self.mce.value, "min_entries": self.mce.min_entries,
                          "debias": self.mce.debias,
                          "per_tag": {str(t): c.to_dict() for t, c in self.mce.per_tag.items()},
                          "too_few": {str(t): n for t, n in self.mce.too_few.items()}}
        if self.top_label_ece is not None:
            out["top_label_ece"] = self.top_label_ece.to_dict()
        if self.metrics:
            out["metrics"] = {k: dict(v) for k, v in self.metrics.items()}
        return out

    def _columns(self):
        """The group table: "all" (SMCE), then each group (GMCE); a column per measure."""
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
            kind = "debiased, " if d["mce"]["debias"] else ""
            lines += ["", f"**MCE** ({kind}per tag, >= {d['mce']['min_entries']} entries): "
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
    """Measure name -> ``{"pooled": value, "groups": [value or None]}``.

    A measure undefined on a set of entries (a DegenerateDataError) is NaN there,
    with one warning; measures of one function and arguments share its call.
    """
    if not measures:
        return {}
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


def _per_tag_ci(spec):
    """The interval of the per-tag CEs of an evaluation with interval ``spec``:
    the score interval of :func:`mce`'s debiased CE, at ``spec``'s level."""
    return None if spec is None else ConfidenceInterval(
        "score", confidence_level=spec.confidence_level)


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
@fill_doc
def evaluate(entries, groups=None, *, n_bins=None, ci="simulation", per_tag=False,
             min_entries=None, top_label=False, metrics=(), progress=None,
             bin_size=None, binning="equal-mass", norm=2, debias=False, prior=None,
             measure_options=None):
    """Evaluate the marginal calibration of thresholded entries: SMCE and GMCE per
    group (Kranzlein et al. 2021, Table 1) with their intervals; optionally MCE,
    top-label ECE and further measures, pooled and per group.

    Parameters
    ----------
    {entries}
    groups : TagGroups, optional
        Default: SCW (one group of all tags).
    {binning}
    ci : None, str or ConfidenceInterval, default="simulation"
        The interval of every CE (as in :func:`calibration_error`).
    per_tag : bool, default=False
        Also per-tag CE and MCE (:func:`mce`, its own bins and ``min_entries``).
    min_entries : int, optional
        :func:`mce`'s.
    top_label : bool, default=False
        Also top-label ECE (:func:`top_label_ece`).
    metrics : sequence of str, default=()
        Measures by name (:data:`~sparsecal.metrics.measures.MEASURES`); one
        undefined on a group's entries (Cllr of one class) is NaN there, with a
        warning.
    {norm}
    {debias}
    prior : float, optional
        The application prior of ``"dcf"`` and ``"min-dcf"``.
    measure_options : dict, optional
        ``{"n_resamples": R, "random_state": seed}`` of the resampling measures.
    progress : callable, optional
        ``progress(done, total)`` after SMCE, each GMCE and each further result.

    Returns
    -------
    EvaluationResult

    Raises
    ------
    ValueError
        Before any work, for an option that none of ``metrics`` takes or a
        measure that needs ``prior`` without it.

    Examples
    --------
    >>> from sparsecal import TagGroups, threshold
    >>> from sparsecal.datasets.synthetic import make_tagger_outputs
    >>> data = make_tagger_outputs(2000, n_tags=40, split_seed=1)
    >>> groups = TagGroups.from_counts(data.train_counts, 3, n_tags=40)
    >>> res = evaluate(threshold(data.scores, data.gold, 0.01), groups, metrics=["ece"])
    >>> len(res.gmce), res.to_markdown().splitlines()[0]
    (3, 'Threshold 0.01, 10 equal-mass bins, 95% CI: simulation')
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
        marginal = mce(entries, min_entries=min_entries, ci=_per_tag_ci(spec))
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
    """Before/after change of SMCE, every GMCE and every measure, made by
    :func:`compare`: ``rows`` of ``{"name", "before", "after", "change",
    "relative_change"}`` (None where a value is missing or ``before`` is 0).

    Examples
    --------
    See :func:`compare`.
    """

    rows: list   # dicts: name, before, after, change, relative_change

    def __repr__(self):
        if not self.rows:
            return summary(self, "no rows")
        first, rel = self.rows[0], self.rows[0]["relative_change"]
        gmce = [r["change"] for r in self.rows
                if r["name"].startswith("GMCE ") and r["change"] is not None]
        return summary(self, f"{first['name']} {number(first['before'])} -> "
                             f"{number(first['after'])}"
                             + ("" if rel is None else f" ({rel:+.1%})"),
                       gmce and f"GMCE lower in {sum(c < 0 for c in gmce)} of "
                                f"{plural(len(gmce), 'group')}",
                       plural(len(self.rows), "row"))

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
    """Absolute and relative change of SMCE, each GMCE and each measure from
    ``before`` to ``after`` (Kranzlein et al. 2021, Table 1).

    Parameters
    ----------
    before, after : EvaluationResult
        Two evaluations over the same tag groups.

    Returns
    -------
    Comparison

    Examples
    --------
    >>> import sparsecal as sc
    >>> e = sc.Entries([0.9, 0.8, 0.3, 0.2], [0, 1, 0, 1], [1, 1, 0, 0], n_tags=2)
    >>> before = sc.evaluate(e, n_bins=2, ci=None)
    >>> after = sc.evaluate(e.with_scores([0.9, 0.9, 0.1, 0.1]), n_bins=2, ci=None)
    >>> print(compare(before, after).to_markdown().splitlines()[2])
    | SMCE | 0.2062 | 0.1000 | -0.1062 | -51.5% |
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
