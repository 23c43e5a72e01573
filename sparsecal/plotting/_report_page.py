"""The HTML page of :func:`~sparsecal.plotting.report.write_report`: a summary
that fits one screen, a table of contents, then measure x group matrices, the
per-tag table, the method comparison and the figures.

Every number is finite or says why not: a cell that is not a finite number
(an empty group, a measure undefined there, an infinite log loss, a relative
change that would mislead) carries a footnote that explains it, and an
estimate outside its own interval (possible for the plug-in CE with
Algorithm 2 or the bootstrap, never for the debiased CE's score interval) is
marked with one.
"""
import html
import math

from ._labels import _pct

MARKER = "<!-- sparsecal report -->"

_CSS = """body{font-family:system-ui,sans-serif;max-width:1180px;margin:1.5em auto;
padding:0 1em;color:#222;line-height:1.4}h1{font-size:1.6em;margin:.2em 0}h2{font-weight:600;
font-size:1.25em;margin:1.4em 0 .4em;border-bottom:1px solid #ddd}table{border-collapse:collapse;
margin:.6em 0;font-size:.88em}td,th{border:1px solid #d4d4d4;padding:.22em .5em;text-align:right;
vertical-align:top}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
td.sig{background:#fdecea}small{color:#666}nav.toc{font-size:.92em;background:#f7f7f7;
padding:.4em .8em;border:1px solid #e2e2e2}nav.toc a{margin-right:1.1em}.note{color:#555;
font-size:.88em}.summary p{margin:.35em 0}figure{margin:1.2em 0}figure img{max-width:min(100%,
880px);border:1px solid #eee}figcaption{font-size:.88em;color:#555;max-width:880px}
ol.notes{font-size:.85em;color:#444}sup a{text-decoration:none}td,th{white-space:nowrap}td.text{text-align:left;
white-space:normal}"""


class Notes:
    """Numbered footnotes of one page: :meth:`ref` returns the marker of a
    text (the same text, the same number), :meth:`html` the list."""

    def __init__(self):
        self.texts = []

    def ref(self, text):
        if text not in self.texts:
            self.texts.append(text)
        k = self.texts.index(text) + 1
        return f"<sup><a href='#note-{k}' id='ref-{k}'>{k}</a></sup>"

    def html(self):
        if not self.texts:
            return ""
        items = "".join(f"<li id='note-{k}'>{html.escape(t)}</li>"
                        for k, t in enumerate(self.texts, 1))
        return f"<h2 id='notes'>Notes</h2><ol class='notes'>{items}</ol>"


def num(x):
    """A finite number as the tables show it: an int with thousands separators,
    a float with 4 decimals (2 significant digits below 0.001, "0" for 0); None
    for what is not a finite number."""
    if isinstance(x, int):
        return f"{x:,}"
    if x is None or not math.isfinite(x):
        return None
    if x == 0:
        return "0"
    if abs(x) < 1e-3:
        return f"{x:.1e}"
    return f"{x:.4f}"


def missing_text(x, notes, why):
    """The cell of a value that is not a finite number, with its footnote:
    "—" (no value) or "∞"; ``why`` explains it."""
    shown = "∞" if x is not None and x == math.inf else "—"
    return f"{shown}{notes.ref(why)}"


def value_cell(x, notes, why):
    """A number, or the marked cell of a missing (an empty group) or a
    non-finite one (``why``)."""
    shown = num(x)
    if shown is None:
        return missing_text(x, notes, "No entries in this group." if x is None else why)
    return shown


def ce_cell(ce, notes, outside_note):
    """'0.0212 [0.0190, 0.0235]' of a CalibrationError (None: an empty group),
    marked when the estimate lies outside its interval."""
    if ce is None:
        return missing_text(None, notes, "No entries in this group.")
    text = num(ce.value)
    if ce.ci_low is None:
        return text
    text += f" <small>[{num(ce.ci_low)}, {num(ce.ci_high)}]</small>"
    if not ce.ci_low <= ce.value <= ce.ci_high:
        text += notes.ref(outside_note)
    return text


def relative(before, after, notes, clipped_at_zero):
    """The relative change (after - before) / before, or why it is not shown."""
    if num(before) is None or num(after) is None:
        return ""
    if before == 0:
        return "n/a" + notes.ref("The value before is 0: a relative change is undefined.")
    if clipped_at_zero and after == 0:
        return "n/a" + notes.ref(
            "The debiased CE after is 0: its estimated square is at or below 0, i.e. no "
            "miscalibration is detectable above the sampling noise. '-100%' would claim "
            "perfect calibration; the upper end of its interval bounds what is left.")
    return f"{(after - before) / before:+.1%}"


def holm(pvalues):
    """Holm's step-down adjustment of a family of p-values (None passes through)."""
    known = sorted((p, i) for i, p in enumerate(pvalues) if p is not None and p == p)
    out = list(pvalues)
    running, m = 0.0, len(known)
    for rank, (p, i) in enumerate(known):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def p_cell(p, alpha, notes):
    """An adjusted p-value, bold at or below ``alpha``."""
    if p is None or p != p:
        return missing_text(None, notes, "No calibration test: no entries in this set.")
    text = f"{p:.3f}" if p >= 0.001 else f"{p:.0e}"
    return f"<strong>{text}</strong>" if p <= alpha else text


def table(head, rows, cls=None, columns=None):
    """An HTML table; cells are HTML already. ``cls``: a class per cell (or
    None), ``columns``: a class per column (or None)."""
    out = ["<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    for r, row in enumerate(rows):
        cells = []
        for c, cell in enumerate(row):
            k = (cls[r][c] if cls is not None else None) or (
                columns[c] if columns is not None else None)
            cells.append(f"<td class='{k}'>{cell}</td>" if k else f"<td>{cell}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    return "".join(out) + "</table>"


def toc(sections):
    """The table of contents: [(anchor, title)]."""
    return ("<nav class='toc'><strong>Contents</strong>: " + "".join(
        f"<a href='#{a}'>{html.escape(t)}</a>" for a, t in sections) + "</nav>")


def interval_words(spec):
    """What the intervals of the report are, for the captions."""
    if spec is None:
        return "no intervals"
    level = _pct(spec.confidence_level)
    if spec.method == "score":
        return (f"{level} score intervals of the debiased CE₂ (Kumar, Liang & Ma 2019's "
                "estimator; each interval holds its estimate by construction, and its "
                "coverage on calibrated and miscalibrated taggers is measured in the "
                "package's docs, ci_coverage.md)")
    if spec.method == "simulation":
        return (f"{level} intervals of the plug-in CE₂ by Nguyen & O'Connor's Algorithm 2 "
                "(mean ± z sd of simulated CEs)")
    return f"{level} percentile bootstrap intervals of the plug-in CE₂"


def outside_note(spec):
    """The footnote of an estimate outside its own interval."""
    return ("The estimate lies outside its interval: "
            + ("Algorithm 2 centres the interval on the mean of simulated CEs, which the "
               "sampling noise of every bin biases upward, so a small plug-in CE₂ can fall "
               "below it. " if spec is not None and spec.method == "simulation" else
               "the percentile bootstrap of a statistic biased upward near 0 can lie "
               "above it. ")
            + "The report's default, the debiased CE₂ with its score interval, holds its "
              "estimate by construction.")


# ------------------------------------------------------------- sections -- #

def set_names(groups):
    """Row names of the sets: all entries, then each group (with its top tags)."""
    names = ["All entries (SMCE)"]
    for g in range(groups.n_groups):
        names.append(f"Group {g + 1} (GMCE)")
    return names


def tag_name(groups, t):
    """The name of tag ``t`` from the groups' tag index, else "tag t"."""
    names = groups.tag_names
    return html.escape(names[t]) if names and t < len(names) and names[t] else f"tag {t}"


def summary(columns, groups, spec, alpha, notes, outside):
    """The one-screen summary: CE with its interval and the calibration test of
    every set, before (and after), which sets and tags are miscalibrated, MCE."""
    first = columns[0]["result"]
    s = first.settings
    head = ["Set", "Tag types", "Entries"]
    for c in columns:
        head += [f"{html.escape(c['label'])}: CE [{_pct(spec.confidence_level) if spec else ''}"
                 " interval]", "test p"]
    adjusted = [holm([c["result"].metrics["calibration-test-p"]["pooled"]]
                     + list(c["result"].metrics["calibration-test-p"]["groups"]))
                for c in columns]
    rows, cls = [], []
    for i, name in enumerate(set_names(groups)):
        summary_row = first.groups[i - 1] if i else None
        types = sum(r["tag_types"] for r in first.groups) if i == 0 else summary_row["tag_types"]
        entries = first.smce.n if i == 0 else summary_row.get("entries", 0)
        row, k = [name, f"{types:,}", f"{entries:,}"], [None] * 3
        for c, adj in zip(columns, adjusted):
            res = c["result"]
            ce = res.smce if i == 0 else res.gmce[i - 1]
            sig = adj[i] is not None and adj[i] <= alpha
            row += [ce_cell(ce, notes, outside), p_cell(adj[i], alpha, notes)]
            k += ["sig" if sig else None] * 2
        rows.append(row)
        cls.append(k)
    words = [f"<p>{first.smce.n:,} entries (tag scores ≥ {s.get('threshold')}) in "
             f"{groups.n_groups} tag-frequency groups. Calibration error: "
             f"{'the debiased CE₂' if s.get('debias') else 'the plug-in CE₂'} over "
             f"{_bins_words(s)}, with {interval_words(spec)}. "
             f"<strong>Test p</strong>: Bröcker &amp; Smith's calibration test (consistency "
             f"resampling), Holm-adjusted over the {1 + groups.n_groups} sets; shaded and "
             f"bold: miscalibrated at the {alpha:.0%} level.</p>",
             table(head, rows, cls)]
    verdicts = []
    for c, adj in zip(columns, adjusted):
        sets = [("all entries" if i == 0 else f"group {i}") for i, p in enumerate(adj)
                if p is not None and p <= alpha]
        verdicts.append(f"{html.escape(c['label'])}: {', '.join(sets) if sets else 'none'}")
    words.append("<p><strong>Miscalibrated sets</strong> (calibration test, Holm, "
                 f"{alpha:.0%}): " + "; ".join(verdicts) + ".</p>")
    if first.mce is not None:
        words.append(_tag_verdicts(columns, groups, alpha))
        mces = " → ".join(f"{num(c['result'].mce.value)} ({html.escape(c['label'])})"
                          for c in columns)
        kind = "debiased, " if first.mce.debias else ""
        words.append(f"<p><strong>MCE</strong> ({kind}root mean square over the "
                     f"{len(first.mce.per_tag)} tags with ≥ {first.mce.min_entries} "
                     f"entries): {mces}.</p>")
    return "<div class='summary'>" + "".join(words) + "</div>"


def _bins_words(s):
    if s.get("bin_size") is not None:
        return f"equal-mass bins of {s['bin_size']} entries"
    kind = "fixed-width" if s.get("binning") == "fixed" else "equal-mass"
    return f"{s.get('n_bins')} {kind} bins"


def tag_adjusted(column):
    """{tag: Holm-adjusted p} of a column's per-tag calibration tests."""
    tags = sorted(column["tag_p"])
    return dict(zip(tags, holm([column["tag_p"][t] for t in tags])))


def _tag_verdicts(columns, groups, alpha):
    parts = []
    for c in columns:
        adj = tag_adjusted(c)
        bad = sorted((t for t, p in adj.items() if p <= alpha),
                     key=lambda t: -c["result"].mce.per_tag[t].n)
        shown = ", ".join(tag_name(groups, t) for t in bad[:12]) + (" …" if len(bad) > 12 else "")
        parts.append(f"{html.escape(c['label'])}: {len(bad)} of {len(adj)}"
                     + (f" ({shown})" if bad else ""))
    return ("<p><strong>Miscalibrated tags</strong> (the calibration test per tag, Holm over "
            "the tags with their own CE, " + f"{alpha:.0%}): " + "; ".join(parts) + ".</p>")


def groups_table(first, groups, notes):
    """Per group: tag types, training share, entries, tokens, the most frequent tags."""
    rows = []
    share = "train_share_min" in first.groups[0]
    for g, r in enumerate(first.groups):
        members = groups.members(g)
        if groups.train_counts is not None and members.size:
            members = members[(-groups.train_counts[members]).argsort(kind="stable")]
        top = ", ".join(tag_name(groups, int(t)) for t in members[:4])
        row = [f"Group {g + 1}", f"{r['tag_types']:,}"]
        if share:
            row.append(f"{r['train_share_min']:.1%} – {r['train_share_max']:.1%}"
                       if r["tag_types"] else missing_text(None, notes, "No tags in this group."))
        row += [f"{r.get('entries', 0):,}", f"{r.get('tokens', 0):,}",
                top + (" …" if members.size > 4 else "")]
        rows.append(row)
    head = ["Group", "Tag types"] + (["Training share per tag"] if share else []) + [
        "Entries", "Tokens", "Most frequent tags"]
    return table(head, rows, columns=[None] * (len(head) - 1) + ["text"])


def measures_matrix(columns, groups, notes, extra_rows):
    """Measure x set: the value (before → after, relative change below)."""
    first = columns[0]["result"]
    debiased = first.settings.get("debias")
    skip = {"calibration-test-p", "debiased-ce" if debiased else "ce"}
    head = ["Measure"] + ["All"] + [f"Group {g + 1}" for g in range(groups.n_groups)]
    rows = []
    from ..metrics.measures import get_measure
    why = {"log-loss": LOG_LOSS_NOTE, "log-loss-mcb": LOG_LOSS_NOTE}
    shown = {"ce": "Plug-in CE₂", "debiased-ce": "Debiased CE₂"}
    for name in first.metrics:
        if name in skip:
            continue
        values = [[c["result"].metrics[name]["pooled"]] + list(c["result"].metrics[name]["groups"])
                  for c in columns]
        rows.append([shown.get(name, html.escape(get_measure(name).display_name))] + _cells(
            values, notes, why.get(name, UNDEFINED_NOTE), name == "debiased-ce"))
    for label, values, change in extra_rows:
        rows.append([label] + _cells(values, notes, UNDEFINED_NOTE, False, change))
    return table(head, rows)


def _cells(values, notes, why, clipped_at_zero, change=True):
    """The cells of one matrix row: per set, each column's value (→), and
    (``change``) the relative change from the first column to the last."""
    out = []
    for i in range(len(values[0])):
        vs = [v[i] for v in values]
        if vs[0] is None and all(v is None for v in vs):
            out.append(missing_text(None, notes, "No entries in this group."))
            continue
        text = " → ".join(value_cell(v, notes, why) for v in vs)
        if len(vs) > 1 and change:
            rel = relative(vs[0], vs[-1], notes, clipped_at_zero)
            if rel:
                text += f"<br><small>{rel}</small>"
        out.append(text)
    return out


#: the footnote of an infinite log loss (the counts are a row of the matrix)
LOG_LOSS_NOTE = ("Infinite: some entries scored exactly 0 with the label 1, or 1 with the "
                 "label 0, and the log loss charges -log 0 = ∞ for each (the rows 'entries "
                 "with infinite log loss' count them). The finite variant beside it clips "
                 "the scores to [1e-15, 1 - 1e-15], scikit-learn's sklearn.metrics.log_loss "
                 "default (eps=1e-15) before version 1.2: each such entry then costs 34.5 "
                 "nats.")
#: the footnote of a measure undefined on a set
UNDEFINED_NOTE = ("Undefined on these entries (e.g. all of one class); the warning of "
                  "sparsecal.evaluate names the measure and the reason.")


def per_tag_table(columns, groups, notes, outside):
    """Every tag with its own CE: entries, CE [interval] and adjusted test p per column."""
    first = columns[0]["result"].mce
    tags = sorted(first.per_tag, key=lambda t: (-first.per_tag[t].n, t))
    adjusted = [tag_adjusted(c) for c in columns]
    head = ["Tag", "Group", "Entries"]
    for c in columns:
        head += [f"{html.escape(c['label'])}: CE [interval]", "test p"]
    rows, cls = [], []
    for t in tags:
        row = [tag_name(groups, t), str(int(groups.tag_to_group[t]) + 1),
               f"{first.per_tag[t].n:,}"]
        k = [None] * 3
        for c, adj in zip(columns, adjusted):
            sig = adj.get(t) is not None and adj[t] <= ALPHA
            row += [ce_cell(c["result"].mce.per_tag.get(t), notes, outside),
                    p_cell(adj.get(t), ALPHA, notes)]
            k += ["sig" if sig else None] * 2
        rows.append(row)
        cls.append(k)
    return table(head, rows, cls)


#: the level of the calibration tests' verdicts (Holm-adjusted per family)
ALPHA = 0.05


def comparison_matrix(comparison, notes):
    """Recalibration method x grouping (rows) by set (columns): the CE and its
    relative change from the uncalibrated one (Kranzlein et al. 2021, Table 1)."""
    from ..calibration.registry import METHODS
    G = comparison.groups.n_groups
    debiased = comparison.before.settings.get("debias")
    head = ["Recalibration", "Groups", "All"] + [f"Group {g + 1}" for g in range(G)]
    base = comparison.values(comparison.before)
    rows = [["None", ""] + [value_cell(v, notes, UNDEFINED_NOTE) for v in base]]
    for (method, grouping), result in comparison.after.items():
        values = comparison.values(result)
        cells = [_change_cell(b, v, notes, debiased) for b, v in zip(base, values)]
        rows.append([METHODS[method].display_name, "1" if grouping == "scw" else str(G)]
                    + cells)
    out = table(head, rows)
    if comparison.before.metrics:   # the measures asked for, per method and set
        from ..metrics.measures import get_measure
        rows = []
        for name in comparison.before.metrics:
            shown = html.escape(get_measure(name).display_name)
            base = comparison.measure_values(comparison.before, name)
            rows.append([shown, "None", ""] + [value_cell(v, notes, UNDEFINED_NOTE)
                                               for v in base])
            for (method, grouping), result in comparison.after.items():
                values = comparison.measure_values(result, name)
                rows.append([shown, METHODS[method].display_name,
                             "1" if grouping == "scw" else str(G)]
                            + [_change_cell(b, v, notes, False) for b, v in zip(base, values)])
        out += table(["Measure"] + head, rows)
    return out


def _change_cell(before, value, notes, clipped_at_zero):
    """A method's value with its relative change from the uncalibrated one."""
    rel = relative(before, value, notes, clipped_at_zero)
    return value_cell(value, notes, UNDEFINED_NOTE) + (f" <small>({rel})</small>" if rel
                                                       else "")


def figures_html(figures):
    return "".join(
        f"<figure id='fig-{name}'><img src='figures/{name}.png' alt='{html.escape(caption)}'>"
        f"<figcaption>{html.escape(caption)} (<a href='figures/{name}.svg'>SVG</a>)"
        "</figcaption></figure>" for name, caption in figures)
