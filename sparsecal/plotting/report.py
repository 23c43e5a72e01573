"""A self-contained calibration report: HTML page, figures (PNG + SVG), numbers (JSON).

``write_report`` evaluates test entries (SMCE, GMCE per TFG group, per-tag CE,
top-label ECE, all with Algorithm-2 intervals), and, given dev entries, runs every
recalibration method x {SCW, TFG} (Kranzlein et al. 2021, Table 1 and Figs. 2-3).
The page references only files it wrote, opens offline, and the whole directory
is written to a temporary sibling and renamed into place.
"""
import html
import json
import os
import re
import warnings

import numpy as np

from .. import plotting as plots
from ..core.entries import check_entries
from ..core.groups import check_groups
from ..core.progress import ProgressCounter
from ..io.atomic import atomic_directory
from ..calibration.comparison import compare_methods
from ..calibration.registry import METHODS, check_prior_methods, get_method
from ..metrics.evaluation import compare, evaluate
from ..metrics.measures import get_measure
from ..metrics.intervals import ConfidenceInterval
from ..metrics.marginal import DEFAULT_BIN_SIZE
from ..metrics.application import bayes_error_plot
from ..core.binning import histogram_counts
from ..metrics.smooth import smooth_reliability
from ..calibration.grouped import GroupedCalibrator
from ._labels import _bar_level, _pct

__all__ = ["REPORT_METRICS", "write_report", "markdown_to_html", "OneMachine"]

MARKER = "<!-- sparsecal report -->"
# entries a tag needs for its own CE (per-tag figure, MCE): mce's default, two
# full bins
MIN_TAG_ENTRIES = 2 * DEFAULT_BIN_SIZE
#: the measures of every evaluation table (pooled and per group), besides SMCE/GMCE:
#: issue 13's debiased CE and smooth ECE, the CORP decompositions of Brier and log loss
REPORT_METRICS = ("debiased-ce", "smooth-ece", "brier", "brier-mcb", "brier-dsc",
                  "brier-unc", "log-loss", "log-loss-mcb", "log-loss-dsc", "log-loss-unc")

#: the evaluation options of the comparison table without measures asked for
#: (``measure_options`` are the measures')
_TABLE_OPTIONS = ("bin_size", "binning", "norm", "debias")

_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}h1,h2{font-weight:600}table{border-collapse:
collapse;margin:1em 0;font-size:.92em}td,th{border:1px solid #ccc;padding:.3em .6em;
text-align:right}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
figure{margin:1.5em 0}figure img{max-width:min(100%,880px);border:1px solid #eee}figcaption{
font-size:.9em;color:#555}.note{color:#555;font-size:.9em}"""


def markdown_to_html(text):
    """The small markdown subset ``to_markdown`` methods produce: pipe tables,
    ``**bold**`` and plain paragraphs."""
    out, table = [], []

    def inline(s):
        return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", html.escape(s))

    def flush():
        if not table:
            return
        rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in table]
        body = [r for r in rows[1:] if not all(set(c) <= set("-: ") for c in r)]
        out.append("<table><tr>" + "".join(f"<th>{inline(c)}</th>" for c in rows[0])
                   + "</tr>" + "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r)
                                       + "</tr>" for r in body) + "</table>")
        table.clear()

    for line in text.splitlines():
        if line.strip().startswith("|"):
            table.append(line)
            continue
        flush()
        if line.strip():
            out.append(f"<p>{inline(line)}</p>")
    flush()
    return "\n".join(out)


def write_report(out_dir, test, groups, *, dev=None, methods=tuple(METHODS), n_bins=10,
                 ci=None, seed=0, title="Calibration report", notes=None, progress=None,
                 prior=None, evaluation=None, engine=None):
    """Write a report directory; returns the path of its ``index.html``.

    Parameters
    ----------
    out_dir : str or path
        Created, or replaced if it holds an earlier sparsecal report.
    test : Entries
        The entries evaluated.
    groups : TagGroups
        Tag groups for GMCE (usually TFG).
    dev : Entries, optional
        With them every method is fit on dev with SCW and TFG and evaluated on
        ``test``; the TFG isotonic result is the figures' "after".
    methods : sequence of str
        Names in :data:`~sparsecal.calibration.registry.METHODS`.
    n_bins : int, default=10
        Bins for evaluation and for the binning calibrators.
    ci : None, str or ConfidenceInterval
        The intervals of every table and figure; None: the default
        specification, a method name: that method (both with ``seed``).
    seed : int, default=0
        Random state of seeded methods (and of ``ci`` unless a specification).
    title : str
    notes : str, optional
        A paragraph about the data, at the top.
    progress : callable, optional
        ``progress(done, total)`` after each evaluation, fit and figure.
    prior : float, optional
        The application prior of the methods and measures that take one;
        with ``dev``, refused if none does.
    evaluation : dict, optional
        Further :func:`~sparsecal.metrics.evaluate` options of every
        evaluation (``bin_size``, ``binning``, ``norm``, ``debias``,
        ``metrics``, ``measure_options``); the tables always show
        :data:`REPORT_METRICS`.
    engine : optional
        How the report computes (default :class:`OneMachine`;
        :data:`sparsecal.distributed.CLUSTER_REPORT` for DaskEntries).

    Returns
    -------
    str
        The path of ``index.html``. Invalid arguments raise before anything
        is written.

    Examples
    --------
    >>> import os, tempfile
    >>> import sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> from sparsecal.plotting.report import write_report
    >>> test = make_tagger_outputs(500, split_seed=2)
    >>> groups = sc.TagGroups.from_counts(test.train_counts, 3)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_report(os.path.join(tmp, "r"), sc.threshold(test.scores, test.gold),
    ...                         groups)
    ...     os.path.basename(path), os.path.isfile(path)
    ('index.html', True)
    """
    out_dir = os.fspath(out_dir)
    engine = OneMachine if engine is None else engine
    engine.check(test, dev, groups)
    ev, compare_options = _options(dev, methods, n_bins, ci, seed, prior, evaluation)
    _restrict(engine, compare_options, dev, seed)
    # Per-tag CE needs a tag with MIN_TAG_ENTRIES entries; a small test set may
    # have none (evaluate would raise): the report then goes without it.
    per_tag = engine.most_tag_entries(test) >= MIN_TAG_ENTRIES
    # progress units: the evaluation; with dev, compare_methods' (1 + SCW and
    # TFG per method) and the evaluation after; a figure each (_figures draws 5,
    # the methods' with dev, the per-tag one with per_tag)
    n_dev = 0 if dev is None else 1 + 2 * len(compare_options["methods"]) + 1
    n_figures = 5
    counter = ProgressCounter(progress, 1 + n_dev + n_figures + (dev is not None) + per_tag)
    ev["per_tag"] = per_tag
    with atomic_directory(out_dir, _is_report, "a sparsecal report") as tmp:
        before = engine.evaluate(test, groups, **ev)
        counter.advance()
        curves = {"uncalibrated": before}
        entries = {"uncalibrated": test}
        comparison = after = None
        if dev is not None:
            comparison = engine.compare_methods(dev, test, groups,
                                                progress=counter.nested(),
                                                **compare_options)
            calibrated = _tfg_isotonic(comparison, dev, groups).transform(test)
            after = engine.evaluate(calibrated, groups, **ev)
            counter.advance()
            curves["TFG isotonic"] = after
            entries["TFG isotonic"] = calibrated
        figures = _figures(tmp, curves, entries, engine, before, comparison, groups,
                           counter)
        _write_pages(tmp, title, notes, before, after, comparison, figures)
    return os.path.join(out_dir, "index.html")


class OneMachine:
    """The report's engine for :class:`Entries` (:func:`write_report`'s
    default): every section, from every entry."""

    per_entry = True       #: the modified reliability plot from the entries
    evaluate = staticmethod(evaluate)
    compare_methods = staticmethod(compare_methods)

    @staticmethod
    def check(test, dev, groups):
        """Refuse what is not ``Entries`` (and groups of another tagset)."""
        check_entries(test, "test")
        if dev is not None:
            check_entries(dev, "dev")
        check_groups(groups, test.n_tags)

    @staticmethod
    def methods(methods, seed, prior):
        """The methods compared: all."""
        return list(methods)

    @staticmethod
    def most_tag_entries(test):
        """The entries of the test tag with the most."""
        return int(np.bincount(test.tag).max()) if len(test) else 0

    @staticmethod
    def smooth_reliability(entries):
        """The smooth reliability diagram of all the entries."""
        return smooth_reliability(entries.score, entries.label)

    @staticmethod
    def bayes_error_plot(entries):
        """The Bayes error plot of entries (probabilities, empirical prior)."""
        return bayes_error_plot(entries.score, entries.label)

    @staticmethod
    def score_histogram(entries, edges):
        """The entries per histogram bin of ``edges``."""
        return histogram_counts(entries.score, edges)


def _restrict(engine, compare_options, dev, seed):
    """The methods compared: those the engine can fit (it warns about others)."""
    if dev is not None:
        compare_options["methods"] = engine.methods(compare_options["methods"], seed,
                                                    compare_options["prior"])


def _options(dev, methods, n_bins, ci, seed, prior, evaluation):
    """The keywords of every evaluation of the report (but ``per_tag``) and of
    its :func:`compare_methods` (but ``progress``), from :func:`write_report`'s
    arguments (checked)."""
    binning = dict(evaluation or {})
    asked = list(binning.pop("metrics", ()))   # also per method in the comparison
    metrics = list(dict.fromkeys(REPORT_METRICS + tuple(asked)))
    measure_prior = any("prior" in get_measure(m).options for m in metrics)
    if dev is not None and not measure_prior:
        check_prior_methods(methods, prior)   # the prior must be some method's
    method_prior = prior if any(get_method(m).uses_prior for m in methods) else None
    if binning.get("bin_size") is not None:
        n_bins = None
    if ci is None or isinstance(ci, str):
        ci = ConfidenceInterval(*(() if ci is None else (ci,)), random_state=seed)
    ev = dict(min_entries=MIN_TAG_ENTRIES, top_label=True, n_bins=n_bins, ci=ci,
              metrics=metrics, prior=prior if measure_prior or dev is None else None,
              **binning)
    compare_options = dict(
        methods=methods, n_bins=n_bins or 10, ci=ci, seed=seed, prior=method_prior,
        evaluation=dict({k: v for k, v in binning.items() if k in _TABLE_OPTIONS or asked},
                        metrics=asked, prior=prior if measure_prior else None))
    return ev, compare_options


def _tfg_isotonic(comparison, dev, groups):
    """The TFG isotonic model the figures show: the one compare fitted, if it did."""
    model = comparison.models.get(("isotonic", "tfg"))
    if model is None:
        model = GroupedCalibrator(get_method("isotonic").build(), groups).fit(dev)
    return model


def _write_pages(directory, title, notes, before, after, comparison, figures):
    """``numbers.json`` and ``index.html`` of a report."""
    numbers = {"evaluation": before.to_dict()}
    if comparison is not None:
        numbers["after_tfg_isotonic"] = after.to_dict()
        numbers["comparison"] = comparison.to_dict()
    with open(os.path.join(directory, "numbers.json"), "w", encoding="utf-8") as f:
        json.dump(numbers, f, indent=2)
    page = _page(title, notes, before, after, comparison, figures)
    with open(os.path.join(directory, "index.html"), "w", encoding="utf-8") as f:
        f.write(page)


def _is_report(path):
    try:
        with open(os.path.join(path, "index.html"), encoding="utf-8") as f:
            return MARKER in f.read(4096)
    except OSError:
        return False


def _figures(directory, curves, entries, engine, before, comparison, groups, counter):
    """Render every figure to PNG and SVG, counting each; returns [(name, caption)].

    The score histogram, the smooth reliability diagram and the Bayes error
    plot come from ``engine``. Without ``engine.per_entry`` (entries on a
    cluster) the modified reliability plot is drawn from the evaluations'
    top-label ECE (20 fixed-width bins, as from entries)."""
    os.makedirs(os.path.join(directory, "figures"))
    figs = []

    def save(name, fig, caption):
        plots.save_figure(fig, os.path.join(directory, "figures", name), ("png", "svg"))
        figs.append((name, caption))
        counter.advance()

    smce = {k: v.smce for k, v in curves.items()}
    # the histogram's edges follow the curves: counted by the engine (on a
    # cluster, the second pass) once they are known
    edges = plots.ReliabilityDisplay.from_results(smce, scale="logit").hist_edges
    reliability = plots.ReliabilityDisplay.from_results(
        smce, hist_counts=[engine.score_histogram(e, edges) for e in entries.values()],
        scale="logit")
    level = _pct(_bar_level(before.smce))
    save("reliability", reliability.plot().figure_,
         "Calibration curve of all thresholded entries (SMCE), 10 equal-mass bins with "
         f"{level} Wilson bars, and the score distribution (Nguyen & O'Connor Fig. 1d; "
         "logit axes spread out scores near 0.01 and 1).")
    save("groups", plots.GroupReliabilityDisplay.from_results(curves, scale="logit")
         .plot().figure_, "Calibration curve per tag frequency group (GMCE).")
    if comparison is not None:
        save("methods", plots.MethodComparisonDisplay.from_comparison(comparison)
             .plot().figure_,
             "Calibration error before (circles) and after recalibration with TFG "
             "(arrows) and SCW (squares), per method and group (Kranzlein et al. Figs. 2-3).")
    if before.mce is not None and before.mce.per_tag:
        save("per_tag", plots.PerTagDisplay.from_results(
            {k: v.mce for k, v in curves.items()}, tag_names=groups).plot().figure_,
             f"Per-tag calibration error of the most frequent tags with {level} intervals "
             "(Nguyen & O'Connor Fig. 4).")
    save("smooth_reliability", plots.SmoothReliabilityDisplay.from_results(
        {k: engine.smooth_reliability(e) for k, e in entries.items()}).plot().figure_,
        "Smooth (kernel) reliability diagram of all thresholded entries at smECE's "
        "bandwidth, with the score density below (Błasiok & Nakkiran 2023).")
    save("bayes_error", plots.BayesErrorDisplay.from_results(
        {k: engine.bayes_error_plot(e) for k, e in entries.items()}).plot().figure_,
        "Bayes error plot: normalized actual DCF (solid) and minimum DCF (dashed) over "
        "application prior log-odds; the gap is the cost of miscalibration (score-"
        "calibration lecture notes, Cumani).")
    modified = (plots.ModifiedReliabilityDisplay.from_entries(dict(entries))
                if engine.per_entry else
                plots.ModifiedReliabilityDisplay.from_results(curves))
    save("modified_reliability", modified.plot().figure_,
         "Top-label accuracy minus confidence per confidence bin; marker area is the "
         "bin size (Jagannatha & Yu Fig. 1).")
    return figs


def _page(title, notes, before, after, comparison, figures):
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>{MARKER}",
             f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>"]
    if notes:
        parts.append(f"<p>{html.escape(notes)}</p>")
    parts += ["<h2>Calibration of the test outputs</h2>", markdown_to_html(before.to_markdown())]
    if comparison is not None:
        parts += ["<h2>Recalibration: every method x {SCW, TFG}</h2>",
                  "<p class='note'>Fit on dev, evaluated on test; relative change vs. "
                  "uncalibrated in parentheses (Kranzlein et al. 2021, Table 1).</p>",
                  markdown_to_html(comparison.to_markdown()),
                  "<h2>Before and after TFG isotonic recalibration</h2>",
                  markdown_to_html(compare(before, after).to_markdown(
                      "uncalibrated", "TFG isotonic"))]
    parts.append("<h2>Figures</h2>")
    for name, caption in figures:
        parts.append(f"<figure><img src='figures/{name}.png' alt='{html.escape(caption)}'>"
                     f"<figcaption>{html.escape(caption)} "
                     f"(<a href='figures/{name}.svg'>SVG</a>)</figcaption></figure>")
    parts.append("<p class='note'>All numbers: <a href='numbers.json'>numbers.json</a>. "
                 "Made with sparsecal.</p></body></html>")
    return "\n".join(parts)
