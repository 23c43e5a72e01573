"""A self-contained calibration report: HTML page, figures (PNG + SVG), numbers (JSON).

``write_report`` evaluates test entries (SMCE, GMCE per TFG group, per-tag CE,
top-label ECE, the measures of :data:`REPORT_METRICS` and the calibration test
of every set and tag), and, given dev entries, runs every recalibration method
x {SCW, TFG} (Kranzlein et al. 2021, Table 1 and Figs. 2-3). By default every
calibration error is Kumar et al.'s debiased CE_2 with its score interval,
which holds its estimate and covers a calibrated tagger's 0 at about the
nominal rate (docs/report.md, docs/ci_coverage.md). The page (one-screen
summary, contents, measure x group matrices, per-tag table, figures) is
written by :mod:`~sparsecal.plotting._report_page`; it references only files
it wrote, opens offline, and the whole directory is written to a temporary
sibling and renamed into place.
"""
import json
import os
import re
import html

import numpy as np

from .. import plotting as plots
from ..core.binning import argsort_scores, histogram_counts
from ..core.entries import check_entries
from ..core.groups import TagGroups, check_groups
from ..core.progress import ProgressCounter
from ..io.atomic import atomic_directory
from ..calibration.comparison import compare_methods
from ..calibration.registry import METHODS, check_prior_methods, get_method
from ..metrics.application import bayes_error_plot
from ..metrics.corp import LOG_LOSS_CLIP, infinite_log_losses, table_corp
from ..metrics.evaluation import evaluate
from ..metrics.intervals import ConfidenceInterval
from ..metrics.marginal import DEFAULT_BIN_SIZE, PER_TAG_BINNING
from ..metrics.measures import get_measure
from ..metrics.resampling import score_table
from ..metrics.smooth import smooth_reliability
from ..calibration.grouped import GroupedCalibrator
from . import _report_page as page
from ._labels import _bar_level, _pct

__all__ = ["REPORT_BINNING", "REPORT_METRICS", "write_report", "markdown_to_html",
           "OneMachine"]

MARKER = page.MARKER
# entries a tag needs for its own CE (per-tag figure and table, MCE): mce's default
MIN_TAG_ENTRIES = 2 * DEFAULT_BIN_SIZE
#: the measures of every evaluation (pooled and per group) besides SMCE/GMCE: the
#: plug-in and the debiased CE_2 (the table shows the one that is not the main
#: CE), issue 13's smooth ECE, the CORP decompositions of Brier and log loss,
#: and the p-value of the calibration test (the summary's verdicts)
REPORT_METRICS = ("ce", "debiased-ce", "smooth-ece", "brier", "brier-mcb", "brier-dsc",
                  "brier-unc", "log-loss", "log-loss-mcb", "log-loss-dsc", "log-loss-unc",
                  "calibration-test-p")
#: the bins of SMCE and GMCE with the report's default interval (the debiased
#: CE_2's score interval): the per-tag CE's, equal-mass bins of 200 entries,
#: with which the interval covers at the nominal rate on whole taggers
#: (docs/ci_coverage.md); ``evaluation`` chooses others. The
#: calibration curves are drawn in the paper's 10 equal-mass bins.
REPORT_BINNING = PER_TAG_BINNING

#: the evaluation options of the comparison table without measures asked for
#: (``measure_options`` are the measures')
_TABLE_OPTIONS = ("bin_size", "binning", "norm", "debias")


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
        Tag groups for GMCE (usually TFG); their tag index names the tags.
    dev : Entries, optional
        With them every method is fit on dev with SCW and TFG and evaluated on
        ``test``; the TFG isotonic result is the page's "after".
    methods : sequence of str
        Names in :data:`~sparsecal.calibration.registry.METHODS`.
    n_bins : int, default=10
        Bins of the binning calibrators, and of SMCE and GMCE with a
        "simulation" or "bootstrap" interval; with the score interval SMCE
        and GMCE take :data:`REPORT_BINNING` unless ``evaluation`` gives
        ``bin_size`` or ``binning="fixed"``.
    ci : None, str or ConfidenceInterval
        The intervals of every table and figure. None: the debiased CE_2 with
        its 95% score interval (or, with ``evaluation`` ``{"debias": False}``
        or a norm other than 2, the plug-in CE_p with Algorithm 2's); a
        method name: that method;
        "simulation" and "bootstrap" are intervals of the plug-in CE_2, whose
        estimate can fall outside them (marked on the page).
    seed : int, default=0
        Random state of seeded methods, of the calibration tests and of ``ci``
        unless a specification.
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
    # progress units: the evaluation (and its per-tag tests); with dev,
    # compare_methods' (1 + SCW and TFG per method) and the evaluation after
    # (and its tests); a figure each (5, the methods' with dev, the per-tag one)
    n_dev = 0 if dev is None else 1 + 2 * len(compare_options["methods"]) + 1 + per_tag
    counter = ProgressCounter(progress, 1 + per_tag + n_dev + 5 + (dev is not None) + per_tag)
    ev["per_tag"] = per_tag
    with atomic_directory(out_dir, _is_report, "a sparsecal report") as tmp:
        columns = [_column("uncalibrated", engine, test, groups, ev, seed, counter)]
        entries = {"uncalibrated": test}
        comparison = None
        if dev is not None:
            comparison = engine.compare_methods(dev, test, groups,
                                                progress=counter.nested(),
                                                **compare_options)
            calibrated = _tfg_isotonic(comparison, dev, groups).transform(test)
            columns.append(_column("TFG isotonic", engine, calibrated, groups, ev, seed,
                                   counter))
            entries["TFG isotonic"] = calibrated
        _explain_log_loss(columns, entries, engine, groups)
        figures = _figures(tmp, columns, entries, engine, comparison, groups, counter)
        _write_pages(tmp, title, notes, columns, comparison, figures, groups, ev["ci"])
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

    @staticmethod
    def score_tables(entries, groups):
        """The distinct-score tables of all entries, then of each group."""
        perm, offsets = groups.partition(entries)
        sets = [np.arange(len(entries))] + [perm[offsets[g]:offsets[g + 1]]
                                            for g in range(groups.n_groups)]
        out = []
        for idx in sets:
            order, sorted_x = argsort_scores(entries.score[idx])
            out.append(score_table(sorted_x, entries.label[idx][order]))
        return out


def _column(label, engine, entries, groups, ev, seed, counter):
    """One column of the page: the evaluation of ``entries``, the calibration
    test of each tag with its own CE, and why a log loss is infinite."""
    result = engine.evaluate(entries, groups, **ev)
    counter.advance()
    column = {"label": label, "result": result, "tag_p": None, "log_loss": None}
    if result.mce is not None:
        column["tag_p"] = _tag_tests(engine, entries, result.mce, ev, seed)
        counter.advance()
    return column


def _explain_log_loss(columns, entries, engine, groups):
    """Where a column's log loss is infinite (a score of exactly 0 or 1 met the
    other label), every column gets, per set, the entries with an infinite
    loss and the clipped decomposition (:data:`LOG_LOSS_CLIP`): one more pass."""
    def infinite(c):
        m = c["result"].metrics["log-loss"]
        return any(v == np.inf for v in [m["pooled"]] + list(m["groups"]))
    if not any(infinite(c) for c in columns):
        return
    for c, e in zip(columns, entries.values()):
        c["log_loss"] = [(infinite_log_losses(*t), table_corp(*t, "log_loss", LOG_LOSS_CLIP))
                         if t[0].size else None for t in engine.score_tables(e, groups)]


def _tag_tests(engine, entries, marginal, ev, seed):
    """{tag: p-value} of the calibration test of every tag with its own CE, in
    the per-tag CE's bins: one evaluation whose groups are those tags (the
    other tags form a last group)."""
    tags = sorted(marginal.per_tag)
    tag_to_group = np.full(entries.n_tags, len(tags), dtype=np.int64)
    tag_to_group[tags] = np.arange(len(tags))
    result = engine.evaluate(entries, TagGroups(tag_to_group, len(tags) + 1), ci=None,
                             metrics=["calibration-test-p"], **PER_TAG_BINNING,
                             measure_options=dict(ev.get("measure_options") or {},
                                                  random_state=seed))
    return dict(zip(tags, result.metrics["calibration-test-p"]["groups"][:len(tags)]))


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
    if ci is None:   # the debiased CE_2 (norm 2) with its score interval, unless not
        ci = "score" if binning.get("debias", binning.get("norm", 2) == 2) else "simulation"
    if isinstance(ci, str):
        ci = ConfidenceInterval(ci, random_state=seed)
    bins = {"n_bins": n_bins}
    if ci.method == "score":
        binning.setdefault("debias", True)
        if binning.get("bin_size") is None and binning.get("binning", "equal-mass") \
                == "equal-mass":   # (the command line always names the binning)
            bins = dict(REPORT_BINNING)
    if binning.get("bin_size") is not None:
        bins = {}
    binning.update(bins)   # (the command line gives bin_size=None)
    ev = dict(min_entries=MIN_TAG_ENTRIES, top_label=True, ci=ci, metrics=metrics,
              prior=prior if measure_prior or dev is None else None, **binning)
    compare_options = dict(
        methods=methods, n_bins=n_bins or 10, ci=ci, seed=seed, prior=method_prior,
        evaluation=dict({k: v for k, v in binning.items()
                         if k != "n_bins" and (k in _TABLE_OPTIONS or asked)},
                        metrics=asked, prior=prior if measure_prior else None))
    return ev, compare_options


def _tfg_isotonic(comparison, dev, groups):
    """The TFG isotonic model the figures show: the one compare fitted, if it did."""
    model = comparison.models.get(("isotonic", "tfg"))
    if model is None:
        model = GroupedCalibrator(get_method("isotonic").build(), groups).fit(dev)
    return model


def _numbers(columns, comparison):
    """``numbers.json``: every evaluation, the tests per tag, the log-loss notes."""
    out = {"evaluation": columns[0]["result"].to_dict()}
    if comparison is not None:
        out["after_tfg_isotonic"] = columns[1]["result"].to_dict()
        out["comparison"] = comparison.to_dict()
    for key, c in zip(("evaluation", "after_tfg_isotonic"), columns):
        if c["tag_p"] is not None:
            out.setdefault("tag_calibration_test_p", {})[key] = {
                str(t): p for t, p in c["tag_p"].items()}
        if c["log_loss"] is not None:
            out.setdefault("infinite_log_loss", {})[key] = [
                None if x is None else {"entries": x[0], "clip": LOG_LOSS_CLIP,
                                        "clipped": x[1].to_dict()} for x in c["log_loss"]]
    return out


def _write_pages(directory, title, notes, columns, comparison, figures, groups, spec):
    """``numbers.json`` and ``index.html`` of a report."""
    with open(os.path.join(directory, "numbers.json"), "w", encoding="utf-8") as f:
        json.dump(_numbers(columns, comparison), f, indent=2)
    text = _page(title, notes, columns, comparison, figures, groups, spec)
    with open(os.path.join(directory, "index.html"), "w", encoding="utf-8") as f:
        f.write(text)


def _is_report(path):
    try:
        with open(os.path.join(path, "index.html"), encoding="utf-8") as f:
            return MARKER in f.read(4096)
    except OSError:
        return False


def _figures(directory, columns, entries, engine, comparison, groups, counter):
    """Render every figure to PNG and SVG, counting each; returns [(name, caption)].

    The score histogram, the smooth reliability diagram and the Bayes error
    plot come from ``engine``. Without ``engine.per_entry`` (entries on a
    cluster) the modified reliability plot is drawn from the evaluations'
    top-label ECE (20 fixed-width bins, as from entries)."""
    os.makedirs(os.path.join(directory, "figures"))
    figs = []
    curves = {c["label"]: c["result"] for c in columns}
    before = columns[0]["result"]
    intervals = page.interval_words(before.smce.ci)

    def save(name, fig, caption):
        plots.save_figure(fig, os.path.join(directory, "figures", name), ("png", "svg"))
        figs.append((name, caption))
        counter.advance()

    drawn = _curves(columns, entries, engine, groups)
    smce = {k: v.smce for k, v in drawn.items()}
    # the histogram's edges follow the curves: counted by the engine (on a
    # cluster, the second pass) once they are known
    edges = plots.ReliabilityDisplay.from_results(smce, scale="logit").hist_edges
    reliability = plots.ReliabilityDisplay.from_results(
        smce, hist_counts=[engine.score_histogram(e, edges) for e in entries.values()],
        scale="logit")
    level = _pct(_bar_level(before.smce))
    bins = page._bins_words(next(iter(drawn.values())).settings)
    brackets = ("the legend gives the CE with its interval in brackets: " + intervals
                if before.settings.get("bin_size") is None else
                "the legend gives their plug-in CE₂ (the tables' CE and intervals are "
                "over bins of 200 entries)")
    save("reliability", reliability.plot().figure_,
         f"Calibration curve of all thresholded entries (SMCE) in {bins}: bars are {level} "
         f"Wilson intervals of each bin's label rate; {brackets}. Below, the score "
         "distribution (Nguyen & O'Connor Fig. 1d; logit axes spread out scores near 0.01 "
         "and 1).")
    save("groups", plots.GroupReliabilityDisplay.from_results(drawn, scale="logit")
         .plot().figure_, "Calibration curve per tag frequency group (GMCE), in the bins "
         "and with the bars of the figure above.")
    if comparison is not None:
        save("methods", plots.MethodComparisonDisplay.from_comparison(comparison)
             .plot().figure_,
             "Calibration error before (circles) and after recalibration with TFG "
             "(arrows) and SCW (squares), per method and group (Kranzlein et al. Figs. 2-3).")
    if before.mce is not None and before.mce.per_tag:
        save("per_tag", plots.PerTagDisplay.from_results(
            {k: v.mce for k, v in curves.items()}, tag_names=groups).plot().figure_,
             "Per-tag calibration error of the most frequent tags (Nguyen & O'Connor "
             f"Fig. 4), each with its {page.interval_words(_tag_spec(before))}; hatched: "
             "MCE over every tag with its own CE.")
    save("smooth_reliability", plots.SmoothReliabilityDisplay.from_results(
        {k: engine.smooth_reliability(e) for k, e in entries.items()}).plot().figure_,
        "Smooth (kernel) reliability diagram of all thresholded entries at smECE's "
        "bandwidth, with the score density below (Błasiok & Nakkiran 2023); no interval.")
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
         "bin size (Jagannatha & Yu Fig. 1); the legend gives the top-label ECE.")
    return figs


def _curves(columns, entries, engine, groups):
    """The evaluations the calibration curves draw: the columns' own, or, when
    their bins are of a size (hundreds of bins), the paper's 10 equal-mass bins
    (plug-in CE_2, no interval)."""
    curves = {c["label"]: c["result"] for c in columns}
    if columns[0]["result"].settings.get("bin_size") is None:
        return curves
    return {k: engine.evaluate(e, groups, ci=None, n_bins=10) for k, e in entries.items()}


def _tag_spec(result):
    """The interval specification of the per-tag CEs of an evaluation."""
    return next(iter(result.mce.per_tag.values())).ci


def _page(title, notes, columns, comparison, figures, groups, spec):
    notes_ = page.Notes()
    outside = page.outside_note(spec)
    first = columns[0]["result"]
    sections = [("summary", "Summary"), ("groups", "Tag groups"),
                ("measures", "Measures per group")]
    if first.mce is not None:
        sections.append(("tags", "Per tag"))
    if comparison is not None:
        sections.append(("methods", "Recalibration methods"))
    sections.append(("figures", "Figures"))
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>{MARKER}",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             f"<title>{html.escape(title)}</title><style>{page._CSS}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>"]
    if notes:
        parts.append(f"<p>{html.escape(notes)}</p>")
    parts += [page.toc(sections),
              "<h2 id='summary'>Summary</h2>",
              page.summary(columns, groups, spec, page.ALPHA, notes_, outside),
              "<h2 id='groups'>Tag groups</h2>", page.groups_table(first, groups, notes_),
              "<h2 id='measures'>Measures per group</h2>",
              "<p class='note'>" + (" → ".join(html.escape(c["label"]) for c in columns))
              + (", relative change below. " if len(columns) > 1 else ". ")
              + "The summary's CE is not repeated: the other estimator of CE₂ over "
                "the same bins is (plug-in: Kranzlein et al.'s, biased upward by the bins' "
                "sampling noise; debiased: Kumar et al.'s). MCB, DSC, UNC: the CORP "
                "decomposition score = MCB − DSC + UNC (Dimitriadis et al. 2021).</p>",
              page.measures_matrix(columns, groups, notes_, _log_loss_rows(columns))]
    if first.mce is not None:
        parts += ["<h2 id='tags'>Per tag</h2>",
                  f"<p class='note'>Every tag with at least {first.mce.min_entries} entries, "
                  "by entries: its CE with the interval of the summary, over its own bins "
                  f"({page._bins_words(PER_TAG_BINNING)}), and its calibration test "
                  "(Holm-adjusted over these tags). Tags by name where the tag index "
                  "gives one.</p>",
                  page.per_tag_table(columns, groups, notes_, outside)]
    if comparison is not None:
        parts += ["<h2 id='methods'>Recalibration methods</h2>",
                  "<p class='note'>Every method fit on dev with one group (SCW) and the "
                  "TFG groups, evaluated on test: the CE of every set with the relative "
                  "change from the uncalibrated one (Kranzlein et al. 2021, Table 1).</p>",
                  page.comparison_matrix(comparison, notes_)]
    parts += ["<h2 id='figures'>Figures</h2>", page.figures_html(figures), notes_.html(),
              "<p class='note'>All numbers: <a href='numbers.json'>numbers.json</a>. "
              "Made with sparsecal.</p></body></html>"]
    return "\n".join(parts)


def _log_loss_rows(columns):
    """The matrix rows that explain infinite log losses: per set, the entries
    with an infinite loss (formatted as counts), and the clipped log loss and
    its MCB."""
    if columns[0]["log_loss"] is None:
        return []

    def row(pick):
        return [[None if x is None else pick(x) for x in c["log_loss"]] for c in columns]
    clip = f"{LOG_LOSS_CLIP:.0e}".replace("e-", "e−")
    return [("Entries with infinite log loss", row(lambda x: x[0]), False),
            (f"Log loss, clipped at {clip}", row(lambda x: x[1].score), True),
            (f"Log loss MCB, clipped at {clip}", row(lambda x: x[1].miscalibration), True)]
