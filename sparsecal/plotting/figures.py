"""Figures for calibration analysis (matplotlib, object-oriented API only).

Every function returns a :class:`matplotlib.figure.Figure`; none opens a window
or touches pyplot's global state, so the module works on a machine without a
display. Functions that draw one panel accept ``ax=`` to draw into an existing
axes (the figure returned is then ``ax.figure``). Colours are the Okabe-Ito
palette (safe for colour-blind readers), and curves also differ in marker and
line style so figures survive greyscale printing.

- :func:`reliability_diagram`: calibration curve from (equal-mass) bins with the
  per-bin 95% interval of the label rate and the score distribution below it
  (Nguyen & O'Connor 2015, Fig. 1d, 2, 3).
- :func:`group_reliability`: one small reliability diagram per tag group (TFG).
- :func:`method_comparison`: CE per recalibration method and group, with an
  arrow from the uncalibrated to the TFG-recalibrated value and a square at the
  SCW value (Kranzlein, Liu & Schneider 2021, Fig. 2 and 3); build its input
  from evaluations with :func:`comparison_table`.
- :func:`per_tag_ce`: per-tag CE of the most frequent tags (Nguyen & O'Connor
  Fig. 4).
- :func:`modified_reliability`: accuracy - confidence against confidence, marker
  area proportional to bin size (Jagannatha & Yu 2020, Fig. 1).
- :func:`save_figure`: write a figure in several formats, atomically.
"""
import math
import numbers
import os
import tempfile
from collections.abc import Mapping, Sequence

import numpy as np

from ..core.binning import BinStats
from ..metrics.binned import (CalibrationError, MarginalCalibrationError, calibration_error,
                      reliability_table)

__all__ = ["reliability_diagram", "group_reliability", "method_comparison",
           "comparison_table", "per_tag_ce", "modified_reliability", "save_figure",
           "COLORS"]

#: Okabe & Ito (2008) colour-blind-safe palette, in the order curves use it.
COLORS = ("#D55E00",   # vermillion
          "#0072B2",   # blue
          "#009E73",   # bluish green
          "#CC79A7",   # reddish purple
          "#E69F00",   # orange
          "#56B4E9",   # sky blue
          "#000000")   # black
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")
_LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (3, 1)), (0, (1, 1)))
_GREEN, _RED, _BLUE, _GREY = "#009E73", "#D55E00", "#0072B2", "#7F7F7F"

_STYLE = {
    "font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10,
    "xtick.labelsize": 9, "ytick.labelsize": 9, "legend.fontsize": 8.5,
    "legend.title_fontsize": 9, "figure.titlesize": 12, "axes.spines.top": False,
    "axes.spines.right": False, "axes.grid": False, "legend.frameon": True,
    "legend.framealpha": 0.9, "legend.edgecolor": "#CCCCCC", "errorbar.capsize": 2.5,
    "savefig.dpi": 200, "figure.dpi": 100, "axes.axisbelow": True,
}
_SCALES = ("linear", "log", "logit")
_FORMATS = ("png", "svg", "pdf", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp")


# --------------------------------------------------------------------------- #
# Plumbing                                                                     #
# --------------------------------------------------------------------------- #

def _style():
    import matplotlib
    return matplotlib.rc_context(_STYLE)


def _new_figure(figsize):
    """A figure with an Agg canvas and constrained layout; no pyplot involved."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _check_ax(ax, name="ax"):
    from matplotlib.axes import Axes
    if ax is not None and not isinstance(ax, Axes):
        raise TypeError(f"{name} must be a matplotlib Axes, got {type(ax).__name__}")
    return ax


def _bins_phrase(ce):
    """"10 equal-mass bins" / "20 fixed-width bins" for a CalibrationError."""
    kind = "fixed-width" if ce.bins.edges is not None else "equal-mass"
    return f"{ce.bins.n_bins} {kind} bins"


def _single_axes(ax, figsize):
    """``(fig, ax)``: a new one-panel figure, or the caller's axes and figure."""
    if ax is None:
        fig = _new_figure(figsize)
        return fig, fig.add_subplot()
    _check_ax(ax)
    return ax.figure, ax


def _panel_axes(axes, n, what, nrows, ncols, figsize, **subplot_kw):
    """A grid of ``n`` panels: new (``axes=None``) or the caller's axes.

    Returns ``(fig, panels, spare)``: the first ``n`` axes and the unused ones
    of a new grid (none when the caller gave the axes)."""
    if axes is None:
        fig = _new_figure(figsize)
        grid = list(fig.subplots(nrows, ncols, squeeze=False, **subplot_kw).ravel())
        return fig, grid[:n], grid[n:]
    panels = list(np.ravel(np.asarray(axes, dtype=object)))
    if len(panels) < n:
        raise ValueError(f"got {len(panels)} axes for {n} {what}")
    for a in panels:
        _check_ax(a, "axes")
    return panels[0].figure, panels[:n], []


def _is_evaluation(x):
    # Duck-typed so that plots.py does not import evaluation (and vice versa).
    return hasattr(x, "smce") and hasattr(x, "gmce") and hasattr(x, "groups")


def _ce_symbol(norm):
    if norm == np.inf:
        return r"$\mathrm{CE}_\infty$"
    return rf"$\mathrm{{CE}}_{int(norm)}$"


def _fmt(v):
    if v is None or not np.isfinite(v):
        return "n/a"
    if v == 0 or abs(v) >= 1e-3:
        return f"{v:.4f}"
    return f"{v:.1e}"


def _ce_text(ce, symbol=True):
    """'CE_2 = 0.0218 [0.0197, 0.0241]' (the interval only when computed)."""
    s = (_ce_symbol(ce.norm) + " = " if symbol else "") + _fmt(ce.value)
    if ce.ci_low is not None:
        s += f" [{_fmt(ce.ci_low)}, {_fmt(ce.ci_high)}]"
    return s


def _style_of(i, colors=None):
    palette = COLORS if colors is None else tuple(colors)
    if not palette:
        raise ValueError("colors must not be empty")
    return {"color": palette[i % len(palette)], "marker": _MARKERS[i % len(_MARKERS)],
            "linestyle": _LINESTYLES[i % len(_LINESTYLES)]}


def _check_labels_arg(labels, n, what="curves"):
    if labels is None:
        return [None] * n
    if isinstance(labels, str):
        labels = [labels]
    labels = list(labels)
    if len(labels) != n:
        raise ValueError(f"got {len(labels)} labels for {n} {what}")
    return [None if lab is None else str(lab) for lab in labels]


def _as_ce(x, what, evaluation_attr="smce"):
    """A CalibrationError from a CalibrationError or an EvaluationResult."""
    if isinstance(x, CalibrationError):
        ce = x
    elif _is_evaluation(x):
        ce = getattr(x, evaluation_attr, None) or x.smce
    else:
        raise TypeError(f"{what} must be a CalibrationError or an EvaluationResult, got "
                        f"{type(x).__name__}")
    if not isinstance(ce.bins, BinStats) or not (ce.bins.count > 0).any():
        raise ValueError(f"{what} has no non-empty bins to plot")
    return ce


def _curves(results, labels, what="results", evaluation_attr="smce"):
    """[(label, CalibrationError)] from one result, a sequence or a mapping."""
    if isinstance(results, Mapping):
        if not results:
            raise ValueError(f"{what} is empty")
        if labels is not None:
            raise ValueError(f"give labels either as the keys of {what} or as labels, "
                             "not both")
        items = [(str(k), v) for k, v in results.items()]
    elif isinstance(results, CalibrationError) or _is_evaluation(results):
        items = list(zip(_check_labels_arg(labels, 1), [results]))
    elif isinstance(results, Sequence) and not isinstance(results, str):
        if len(results) == 0:
            raise ValueError(f"{what} is empty")
        items = list(zip(_check_labels_arg(labels, len(results)), results))
    else:
        raise TypeError(f"{what} must be a CalibrationError, an EvaluationResult, or a "
                        f"list or dict of them; got {type(results).__name__}")
    return [(lab, _as_ce(r, f"{what}[{lab if lab is not None else i}]", evaluation_attr))
            for i, (lab, r) in enumerate(items)]


def _check_scale(scale, name="scale"):
    if scale not in _SCALES:
        raise ValueError(f"{name} must be one of {_SCALES}, got {scale!r}")
    return scale


def _set_scale(ax, axis, scale, max_ticks=None):
    """Set a linear / log / logit scale; ``max_ticks`` thins the major ticks of
    a logit axis (its labels such as ``1 - 10^-4`` are wide: small panels)."""
    if scale == "linear":
        return
    setter = ax.set_xscale if axis == "x" else ax.set_yscale
    if scale == "log":
        setter("log", nonpositive="mask")
    else:
        setter("logit", nonpositive="mask")
        if max_ticks is not None:
            from matplotlib.ticker import LogitLocator
            target = ax.xaxis if axis == "x" else ax.yaxis
            target.set_major_locator(LogitLocator(nbins=max_ticks))


def _scale_limits(values, scale, margin=0.3):
    """Axis limits that hold ``values`` (probabilities) on ``scale``, with
    ``margin`` decades to spare on log / logit axes."""
    if scale == "linear":
        return 0.0, 1.0
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v) & (v > 0) & ((v < 1) if scale == "logit" else (v <= 1))]
    if v.size == 0:
        return (1e-3, 1.0) if scale == "log" else (1e-3, 1 - 1e-3)
    u = _to_display(v, scale)
    lo = float(_from_display(u.min() - margin, scale))
    if scale == "log":
        return lo, 1.0
    return lo, float(_from_display(u.max() + margin, scale))


def _diagonal(ax, lo, hi, **kw):
    """y = x, drawn densely so that it is right on any scale."""
    t = np.linspace(0.0, 1.0, 400)
    x = np.unique(np.concatenate([lo + (hi - lo) * t,
                                  np.geomspace(max(lo, 1e-12), hi, 400),
                                  1 - np.geomspace(max(1 - hi, 1e-12), 1 - lo, 400)]))
    x = x[(x >= lo) & (x <= hi)]
    kw = {"color": _GREY, "linestyle": ":", "linewidth": 1.2, "zorder": 1, **kw}
    return ax.plot(x, x, **kw)[0]


def _to_display(x, scale):
    x = np.asarray(x, dtype=np.float64)
    if scale == "log":
        return np.log10(x)
    if scale == "logit":
        return np.log10(x) - np.log10(1 - x)
    return x


def _from_display(u, scale):
    if scale == "log":
        return 10 ** u
    if scale == "logit":
        return 1 / (1 + 10 ** -u)
    return u


def _hist_edges(lo, hi, scale, n):
    return _from_display(np.linspace(_to_display(lo, scale), _to_display(hi, scale),
                                     n + 1), scale)


def _approx_hist(bins, edges, scale):
    """Counts per histogram bin, spreading each equal-mass bin's count evenly
    (in display coordinates) over its score range [lower, upper]."""
    out = np.zeros(edges.shape[0] - 1)
    e = _to_display(np.clip(edges, 1e-15, 1 - 1e-15) if scale == "logit" else
                    np.clip(edges, 1e-15, None) if scale == "log" else edges, scale)
    keep = bins.count > 0
    lo, hi, cnt = bins.lower[keep], bins.upper[keep], bins.count[keep].astype(float)
    if scale != "linear":
        lo = np.clip(lo, 1e-15, 1 - 1e-15 if scale == "logit" else 1.0)
        hi = np.clip(hi, 1e-15, 1 - 1e-15 if scale == "logit" else 1.0)
    a, b = _to_display(lo, scale), _to_display(hi, scale)
    for ai, bi, c in zip(a, b, cnt):
        if bi - ai <= 1e-12 * max(1.0, abs(ai)):
            k = int(np.clip(np.searchsorted(e, ai, side="right") - 1, 0, out.shape[0] - 1))
            out[k] += c
            continue
        overlap = np.clip(np.minimum(e[1:], bi) - np.maximum(e[:-1], ai), 0, None)
        tot = overlap.sum()
        if tot > 0:
            out += c * overlap / tot
        else:   # the range lies outside the axis: put it on the nearest edge bin
            out[0 if bi < e[0] else -1] += c
    return out


def _score_arrays(scores, n_curves):
    """None, or one 1-D array per curve (a single array is shared)."""
    if scores is None:
        return None
    if isinstance(scores, np.ndarray) or (isinstance(scores, Sequence) and scores
                                          and isinstance(scores[0], numbers.Real)):
        scores = [scores] * n_curves
    if isinstance(scores, Mapping):
        scores = list(scores.values())
    scores = list(scores)
    if len(scores) != n_curves:
        raise ValueError(f"got {len(scores)} score arrays for {n_curves} curves")
    out = []
    for i, s in enumerate(scores):
        if s is None:
            out.append(None)
            continue
        a = np.asarray(s, dtype=np.float64)
        if a.ndim != 1:
            raise ValueError(f"scores[{i}] must be 1-dimensional, got shape {a.shape}")
        if a.size and (np.isnan(a).any() or a.min() < 0 or a.max() > 1):
            raise ValueError(f"scores[{i}] must be probabilities in [0, 1]")
        out.append(a)
    return out


# --------------------------------------------------------------------------- #
# Reliability diagram                                                          #
# --------------------------------------------------------------------------- #

def _draw_curve(ax, ce, i, label, colors, markersize=5, errorbars=True):
    t = reliability_table(ce.bins)
    x, y, hw = t["mean_score"], t["mean_label"], t["ci_halfwidth"]
    st = _style_of(i, colors)
    lo = np.clip(y - hw, 0.0, 1.0)
    hi = np.clip(y + hw, 0.0, 1.0)
    yerr = np.vstack([y - lo, hi - y]) if errorbars else None
    cont = ax.errorbar(x, y, yerr=yerr, color=st["color"], marker=st["marker"],
                       linestyle=st["linestyle"], markersize=markersize, linewidth=1.4,
                       elinewidth=1.0, capsize=2.5 if errorbars else 0,
                       markeredgecolor="white", markeredgewidth=0.6, label=label,
                       zorder=3 + i)
    cont.lines[0].set_gid(f"curve-{i}")
    return cont, t


def reliability_diagram(results, labels=None, *, scores=None, scale="linear", yscale=None,
                        show_distribution=True, hist_bins=40, ax=None, hist_ax=None,
                        title=None, colors=None, figsize=(5.2, 5.6), legend_loc=None):
    """Calibration curve(s) from binned statistics, with 95% intervals per bin.

    Points are ``(mean score, empirical frequency of the label)`` of each
    non-empty bin, joined by lines; vertical bars are the 95% interval of the
    bin's label rate, ``p ± 1.96 sqrt(p (1 - p) / |B|)`` (clipped to [0, 1]),
    Nguyen & O'Connor's Algorithm 2 spread (:func:`sparsecal.reliability_table`).
    The dotted diagonal is perfect calibration. Below, on a shared x axis, the
    distribution of the scores (their Fig. 1d: adaptive bins follow it).

    Parameters
    ----------
    results : CalibrationError, EvaluationResult, or a list or dict of them
        One curve each (e.g. before and after recalibration); an
        EvaluationResult contributes its SMCE. A dict's keys are the labels.
    labels : list of str, optional
        Legend label per curve (not with a dict).
    scores : array or list of arrays, optional
        The scores each curve was binned from, for an exact histogram. Without
        them the histogram is approximated from the bins: each bin's count is
        spread evenly over its score range [lower, upper].
    scale : {"linear", "log", "logit"}, default "linear"
        Scale of the score axis. Thresholded tagger scores pile up near the
        threshold (0.01) and near 1: "logit" spreads out both ends, "log" the
        low end. Bins whose label rate is 0 (or 1, on "logit") cannot be shown
        on a log/logit y axis and are left out there.
    yscale : {"linear", "log", "logit"}, optional
        Scale of the frequency axis; defaults to ``scale`` so that the
        diagonal stays straight.
    show_distribution : bool, default True
        Draw the score histogram below (ignored when ``ax`` is given without
        ``hist_ax``).
    hist_bins : int, default 40
        Histogram bins, evenly spaced on the score axis's scale.
    ax, hist_ax : matplotlib Axes, optional
        Draw into these instead of a new figure.
    title : str, optional
        Defaults to "Calibration curve (<B> equal-mass bins)". "" for none.
    colors : sequence of colours, optional
        Defaults to :data:`COLORS` (Okabe-Ito).

    Returns
    -------
    matplotlib.figure.Figure
    """
    curves = _curves(results, labels)
    scale = _check_scale(scale)
    yscale = scale if yscale is None else _check_scale(yscale, "yscale")
    _check_ax(ax)
    _check_ax(hist_ax, "hist_ax")
    if hist_ax is not None and ax is None:
        raise ValueError("hist_ax needs ax as well")
    if not isinstance(hist_bins, numbers.Integral) or hist_bins < 1:
        raise ValueError(f"hist_bins must be a positive integer, got {hist_bins!r}")
    score_arrays = _score_arrays(scores, len(curves))
    with _style():
        if ax is None:
            fig = _new_figure(figsize)
            if show_distribution:
                gs = fig.add_gridspec(2, 1, height_ratios=(3.3, 1))
                ax = fig.add_subplot(gs[0])
                hist_ax = fig.add_subplot(gs[1], sharex=ax)
            else:
                ax = fig.add_subplot()
        else:
            fig = ax.figure
            if hist_ax is None:
                show_distribution = False
        tables = []
        for i, (label, ce) in enumerate(curves):
            text = _ce_text(ce)
            label = text if label is None else f"{label}: {text}"
            _, t = _draw_curve(ax, ce, i, label, colors)
            tables.append(t)
        allx = np.concatenate([t["mean_score"] for t in tables])
        ally = np.concatenate([t["mean_label"] for t in tables])
        xlo, xhi = _scale_limits(allx, scale)
        ylo, yhi = _scale_limits(np.r_[ally, allx], yscale) if yscale != "linear" else (0, 1)
        if scale == yscale != "linear":   # one range, so the diagonal is the square's
            xlo = ylo = min(xlo, ylo)
            xhi = yhi = max(xhi, yhi)
        _set_scale(ax, "x", scale)
        _set_scale(ax, "y", yscale)
        pad = 0.02 if scale == "linear" else 0.0
        ax.set_xlim(xlo - pad, xhi + pad)
        ax.set_ylim(ylo - (0.02 if yscale == "linear" else 0), yhi + (0.02 if yscale == "linear" else 0))
        _diagonal(ax, max(xlo, ylo), min(xhi, yhi), label="perfect calibration")
        ax.set_ylabel("empirical frequency of the label")
        ax.grid(True, color="#E5E5E5", linewidth=0.6)
        if title is None:
            title = f"Calibration curve ({_bins_phrase(curves[0][1])})"
        if title:
            ax.set_title(title)
        leg_title = "error bars: 95% interval of each bin's label rate"
        ax.legend(loc=legend_loc or ("upper left" if yscale == "linear" else "lower right"),
                  title=leg_title, title_fontsize=7.5)
        if show_distribution:
            edges = _hist_edges(max(xlo, 1e-15) if scale != "linear" else 0.0,
                                xhi if scale != "linear" else 1.0, scale, hist_bins)
            approx = False
            for i, (label, ce) in enumerate(curves):
                st = _style_of(i, colors)
                s = None if score_arrays is None else score_arrays[i]
                if s is not None:
                    h, _ = np.histogram(np.clip(s, edges[0], edges[-1]), bins=edges)
                else:
                    h = _approx_hist(ce.bins, edges, scale)
                    approx = True
                hist_ax.stairs(h, edges, color=st["color"], linewidth=1.3,
                               linestyle=st["linestyle"], fill=False,
                               label=label, baseline=None)
                if i == 0:
                    hist_ax.stairs(h, edges, color=st["color"], alpha=0.15, fill=True,
                                   linewidth=0)
            hist_ax.set_yscale("log")
            hist_ax.set_ylabel("entries" + (" (approx.)" if approx else ""))
            hist_ax.set_xlabel("predicted score")
            hist_ax.grid(True, axis="y", color="#E5E5E5", linewidth=0.6)
            ax.tick_params(labelbottom=False)
        else:
            ax.set_xlabel("predicted score")
    return fig


# --------------------------------------------------------------------------- #
# Grid of reliability diagrams per group                                       #
# --------------------------------------------------------------------------- #

def _group_grid(per_group_results, labels):
    """(curve labels, grid[g][c] = CalibrationError or None, group summary rows)."""
    summary = None
    if _is_evaluation(per_group_results):
        per_group_results = {None: per_group_results}
    if isinstance(per_group_results, Mapping):
        if not per_group_results:
            raise ValueError("per_group_results is empty")
        if labels is not None:
            raise ValueError("give labels either as dict keys or as labels, not both")
        curve_labels = [None if k is None else str(k) for k in per_group_results]
        columns = []
        for k, v in per_group_results.items():
            if _is_evaluation(v):
                summary = summary or v.groups
                v = v.gmce
            if isinstance(v, (str, Mapping)) or not isinstance(v, Sequence):
                raise TypeError(f"per_group_results[{k!r}] must be a list of per-group "
                                "CalibrationError (or None), or an EvaluationResult")
            columns.append(list(v))
        n_groups = len(columns[0])
        if any(len(c) != n_groups for c in columns):
            raise ValueError("every curve needs the same number of groups, got "
                             f"{[len(c) for c in columns]}")
        grid = [[columns[c][g] for c in range(len(columns))] for g in range(n_groups)]
    elif isinstance(per_group_results, Sequence) and not isinstance(per_group_results, str):
        items = list(per_group_results)
        if not items:
            raise ValueError("per_group_results is empty")
        if all(_is_evaluation(x) for x in items):   # one curve per evaluation
            labs = _check_labels_arg(labels, len(items))
            return _group_grid({lab or f"curve {i + 1}": x
                                for i, (lab, x) in enumerate(zip(labs, items))}, None)
        rows = []   # per group: None (empty) or (labels, [CalibrationError or None])
        for g, item in enumerate(items):
            if item is None:
                rows.append(None)
            elif isinstance(item, CalibrationError):
                rows.append(([None], [item]))
            elif isinstance(item, Mapping):
                rows.append(([str(k) for k in item], list(item.values())))
            elif isinstance(item, Sequence) and not isinstance(item, str):
                rows.append(([None] * len(item), list(item)))
            else:
                raise TypeError(f"per_group_results[{g}] must be a CalibrationError, None, "
                                f"or a list or dict of them; got {type(item).__name__}")
        sizes = {len(r[1]) for r in rows if r is not None}
        if len(sizes) > 1:
            raise ValueError("every group needs the same number of curves, got "
                             f"{sorted(sizes)}")
        n_curves = sizes.pop() if sizes else 1
        if n_curves == 0:
            raise ValueError("a group has an empty list of curves")
        named = [r[0] for r in rows if r is not None and any(x is not None for x in r[0])]
        if labels is not None:
            curve_labels = _check_labels_arg(labels, n_curves)
        else:
            curve_labels = named[0] if named else [None] * n_curves
        grid = [[None] * n_curves if r is None else r[1] for r in rows]
    else:
        raise TypeError("per_group_results must be an EvaluationResult, a list over groups, "
                        f"or a dict of curves; got {type(per_group_results).__name__}")
    for g, row in enumerate(grid):
        for c, ce in enumerate(row):
            if ce is not None and not isinstance(ce, CalibrationError):
                raise TypeError(f"group {g + 1}, curve {c + 1}: expected a CalibrationError "
                                f"or None, got {type(ce).__name__}")
    if len(curve_labels) > 1 and any(x is None for x in curve_labels):
        curve_labels = [f"curve {i + 1}" if x is None else x
                        for i, x in enumerate(curve_labels)]
    return curve_labels, grid, summary


def group_reliability(per_group_results, group_names=None, *, labels=None, ncols=None,
                      scale="linear", axes=None, title=None, colors=None,
                      panel_size=(2.9, 2.7), errorbars=True):
    """A grid of small reliability diagrams, one per tag group (TFG).

    Parameters
    ----------
    per_group_results :
        One of

        - an EvaluationResult (its ``gmce``), or a dict ``{label: EvaluationResult}``
          / list of them, one curve each (e.g. before and after recalibration);
        - a dict ``{label: [CalibrationError or None per group]}``;
        - a list over groups whose items are a CalibrationError, None (an empty
          group) or a list / dict of them (one per curve).
    group_names : list of str, optional
        Panel titles; default "Group g" with the group's tag types and entries
        when an EvaluationResult is given.
    labels : list of str, optional
        Curve labels (when not given as dict keys).
    ncols : int, optional
        Panels per row; default ``min(n_groups, 3)``.
    scale : {"linear", "log", "logit"}
        Both axes (see :func:`reliability_diagram`).
    axes : sequence of Axes, optional
        At least one per group, to draw into.
    errorbars : bool, default True
        Per-bin 95% intervals of the label rate.

    Empty groups (None) get a panel saying so. Each panel lists the CE of each
    curve in that curve's colour; one legend names the curves.

    Returns
    -------
    matplotlib.figure.Figure
    """
    curve_labels, grid, summary = _group_grid(per_group_results, labels)
    scale = _check_scale(scale)
    n_groups, n_curves = len(grid), len(curve_labels)
    if group_names is None:
        group_names = []
        for g in range(n_groups):
            name = f"Group {g + 1}"
            if summary is not None and g < len(summary):
                row = summary[g]
                extra = f"{row.get('tag_types', '?')} tags"
                if "entries" in row:
                    extra += f", {row['entries']:,} entries"
                name += f"\n{extra}"
            group_names.append(name)
    else:
        group_names = [str(x) for x in group_names]
        if len(group_names) != n_groups:
            raise ValueError(f"got {len(group_names)} group names for {n_groups} groups")
    if ncols is None:
        ncols = min(n_groups, 3)
    if not isinstance(ncols, numbers.Integral) or ncols < 1:
        raise ValueError(f"ncols must be a positive integer, got {ncols!r}")
    nrows = -(-n_groups // ncols)
    present = [ce for row in grid for ce in row if ce is not None]
    if not present:
        raise ValueError("every group is empty: nothing to plot")
    tabs = [reliability_table(ce.bins) for ce in present]
    allx = np.concatenate([np.r_[t["mean_score"], t["mean_label"]] for t in tabs])
    lo, hi = _scale_limits(allx, scale)
    with _style():
        fig, axes_list, spare = _panel_axes(
            axes, n_groups, "groups", nrows, ncols,
            (panel_size[0] * ncols, panel_size[1] * nrows + 0.6), sharex=True, sharey=True)
        handles = {}
        # Scales first: setting the scale of a shared axis resets its limits.
        for a in axes_list:
            _set_scale(a, "x", scale, max_ticks=3)
            _set_scale(a, "y", scale)
        pad = 0.02 if scale == "linear" else 0
        for g, (a, row) in enumerate(zip(axes_list, grid)):
            a.set_xlim(lo - pad, hi + pad)
            a.set_ylim(lo - pad, hi + pad)
            a.set_title(group_names[g], fontsize=10)
            a.grid(True, color="#EEEEEE", linewidth=0.5)
            if all(ce is None for ce in row):
                a.text(0.5, 0.5, "no entries", transform=a.transAxes, ha="center",
                       va="center", color=_GREY, fontsize=10, style="italic",
                       gid="empty-group")
                continue
            _diagonal(a, lo, hi)
            lines = []
            for c, ce in enumerate(row):
                if ce is None:
                    continue
                cont, _ = _draw_curve(a, ce, c, curve_labels[c], colors,
                                      markersize=4, errorbars=errorbars)
                handles.setdefault(c, cont)
                st = _style_of(c, colors)
                lines.append((_ce_text(ce, symbol=False), st["color"]))
            # CE of each curve, top-left, in the curve's colour.
            sym = _ce_symbol(next(ce for ce in row if ce is not None).norm)
            a.text(0.04, 0.96, sym, transform=a.transAxes, ha="left", va="top",
                   fontsize=8.5)
            for k, (txt, col) in enumerate(lines):
                a.text(0.04, 0.96 - 0.085 * (k + 1), txt, transform=a.transAxes,
                       ha="left", va="top", fontsize=7.5, color=col)
        for a in spare:
            a.axis("off")
        if axes is None:
            fig.supxlabel("predicted score (bin mean)", fontsize=10)
            fig.supylabel("empirical frequency of the label", fontsize=10)
            for a in axes_list:
                a.tick_params(labelbottom=True)
        if title is None:
            title = "Calibration per tag-frequency group"
        if title:
            fig.suptitle(title)
        if n_curves > 1 or curve_labels[0] is not None:
            hs = [handles[c] for c in sorted(handles)]
            ls = [curve_labels[c] or f"curve {c + 1}" for c in sorted(handles)]
            from matplotlib.lines import Line2D
            hs.append(Line2D([], [], color=_GREY, linestyle=":", linewidth=1.2))
            ls.append("perfect calibration")
            if spare:
                spare[0].legend(hs, ls, loc="center", title="bars: 95% interval per bin",
                                frameon=False)
            else:
                fig.legend(hs, ls, loc="outside lower center", ncols=min(len(hs), 4),
                           frameon=False)
    return fig


# --------------------------------------------------------------------------- #
# Method comparison (Kranzlein et al. Fig. 2 / 3)                              #
# --------------------------------------------------------------------------- #

def comparison_table(before, tfg, scw=None):
    """The input of :func:`method_comparison` from evaluations.

    Parameters
    ----------
    before : EvaluationResult
        The uncalibrated evaluation.
    tfg : dict ``{method: EvaluationResult}``
        Evaluations after TFG recalibration, per method.
    scw : dict ``{method: EvaluationResult}``, optional
        Evaluations after SCW recalibration, per method.

    Returns
    -------
    dict ``{method: {"none": [...], "tfg": [...], "scw": [...]}}`` over the
    columns ``["All", "Group 1", ...]`` (SMCE, then each GMCE; None where a
    group is empty).
    """
    def row(ev, what):
        if not _is_evaluation(ev):
            raise TypeError(f"{what} must be an EvaluationResult, got {type(ev).__name__}")
        return [ev.smce.value] + [None if c is None else c.value for c in ev.gmce]

    if not isinstance(tfg, Mapping) or not tfg:
        raise TypeError("tfg must be a non-empty dict {method: EvaluationResult}")
    if scw is not None and not isinstance(scw, Mapping):
        raise TypeError("scw must be a dict {method: EvaluationResult}")
    none = row(before, "before")
    out = {}
    for method, ev in tfg.items():
        out[method] = {"none": list(none), "tfg": row(ev, f"tfg[{method!r}]")}
        if scw is not None and method in scw:
            out[method]["scw"] = row(scw[method], f"scw[{method!r}]")
    if scw is not None:
        extra = set(scw) - set(tfg)
        if extra:
            raise ValueError(f"scw has methods without a TFG result: {sorted(map(str, extra))}")
    return out


def _check_table(table, columns):
    if not isinstance(table, Mapping) or not table:
        raise TypeError("table must be a non-empty dict {method: {'none': [...], "
                        "'tfg': [...], 'scw': [...]}}")
    n_cols = None
    clean = {}
    for method, row in table.items():
        if not isinstance(row, Mapping):
            raise TypeError(f"table[{method!r}] must be a dict with keys 'none', 'tfg' "
                            "and optionally 'scw'")
        unknown = set(row) - {"none", "tfg", "scw"}
        if unknown:
            raise ValueError(f"table[{method!r}] has unknown keys {sorted(map(str, unknown))}; "
                             "expected 'none', 'tfg', 'scw'")
        for key in ("none", "tfg"):
            if key not in row:
                raise ValueError(f"table[{method!r}] lacks {key!r}")
        vals = {}
        for key, seq in row.items():
            if isinstance(seq, (numbers.Real, CalibrationError)) or seq is None:
                seq = [seq]
            seq = [np.nan if v is None else float(v) for v in seq]
            arr = np.asarray(seq, dtype=np.float64)
            if arr.ndim != 1:
                raise ValueError(f"table[{method!r}][{key!r}] must be a flat list")
            if (arr[np.isfinite(arr)] < 0).any() or np.isinf(arr).any():
                raise ValueError(f"table[{method!r}][{key!r}] must hold non-negative "
                                 "finite calibration errors (None or NaN for missing)")
            if n_cols is None:
                n_cols = arr.shape[0]
            elif arr.shape[0] != n_cols:
                raise ValueError(f"table[{method!r}][{key!r}] has {arr.shape[0]} values, "
                                 f"expected {n_cols} (one per column)")
            vals[key] = arr
        clean[str(method)] = vals
    if n_cols == 0:
        raise ValueError("table has no columns")
    if columns is None:
        columns = ["All"] + [f"Group {g}" for g in range(1, n_cols)]
    else:
        columns = [str(c) for c in columns]
        if len(columns) != n_cols:
            raise ValueError(f"got {len(columns)} column names for {n_cols} columns")
    return clean, columns


def method_comparison(table, columns=None, *, ncols=None, axes=None, title=None,
                      xlabel=None, include_zero=True, scw_offset=0.25,
                      panel_size=(2.6, None), row_height=0.55):
    """Calibration error per recalibration method and group, uncalibrated ->
    TFG-recalibrated, with SCW alongside (Kranzlein et al. 2021, Fig. 2 and 3).

    One panel per column (e.g. All, Group 1, ..., Group 5); in each, one row per
    method: a black circle at the uncalibrated CE, an arrow from it to the CE
    after TFG recalibration (green when lower, red when higher) and a blue
    square at the CE after SCW recalibration. Lower is better.

    Parameters
    ----------
    table : dict
        ``{method: {"none": [...], "tfg": [...], "scw": [...]}}``: one value per
        column for each of uncalibrated, TFG and (optional) SCW; None or NaN
        for a missing value (nothing is drawn). Build it from evaluations with
        :func:`comparison_table`.
    columns : list of str, optional
        Column names; default ``["All", "Group 1", ...]``.
    ncols : int, optional
        Panels per row (default: all in one row up to 4 columns, else 3).
    axes : sequence of Axes, optional
        One per column, to draw into.
    xlabel : str, optional
        Default "SMCE" under the "All" panel and "GMCE" under the others.
    include_zero : bool, default True
        Start every x axis at 0, so that arrow lengths read as relative changes.
    scw_offset : float, default 0.25
        Draw the SCW square this far below its method's arrow (in rows), so
        that it never hides the arrowhead; 0 puts it on the arrow's line as in
        the paper.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch
    clean, columns = _check_table(table, columns)
    methods = list(clean)
    n_cols, n_methods = len(columns), len(methods)
    if ncols is None:
        ncols = n_cols if n_cols <= 4 else 3
    if not isinstance(ncols, numbers.Integral) or ncols < 1:
        raise ValueError(f"ncols must be a positive integer, got {ncols!r}")
    nrows = -(-n_cols // ncols)
    height = panel_size[1] or (0.9 + row_height * n_methods)
    with _style():
        fig, axes_list, spare = _panel_axes(
            axes, n_cols, "columns", nrows, ncols,
            (panel_size[0] * ncols + 0.7, height * nrows + 0.9), sharey=True)
        for a in spare:
            a.axis("off")
        y = np.arange(n_methods)
        for j, (a, col) in enumerate(zip(axes_list, columns)):
            vals = np.concatenate([clean[m][k][j:j + 1] for m in methods for k in clean[m]])
            vals = vals[np.isfinite(vals)]
            vmax = vals.max() if vals.size else 1.0
            vmin = 0.0 if include_zero else (vals.min() if vals.size else 0.0)
            span = max(vmax - vmin, vmax * 0.05, 1e-6)
            a.set_xlim(max(0.0, vmin - 0.08 * span) if not include_zero else 0.0,
                       vmax + 0.12 * span)
            for i, m in enumerate(methods):
                none, tfg = clean[m]["none"][j], clean[m]["tfg"][j]
                scw = clean[m]["scw"][j] if "scw" in clean[m] else np.nan
                a.axhline(i, color="#EEEEEE", linewidth=0.8, zorder=0)
                if scw_offset and np.isfinite(scw):
                    a.axhline(i + scw_offset, color="#F4F4F4", linewidth=0.6, zorder=0)
                if np.isfinite(none) and np.isfinite(tfg):
                    color = _GREEN if tfg < none else _RED if tfg > none else _GREY
                    arrow = FancyArrowPatch((none, i), (tfg, i), arrowstyle="-|>",
                                            mutation_scale=13, color=color, linewidth=2.0,
                                            shrinkA=4.5, shrinkB=0.5, zorder=3,
                                            gid="tfg-arrow")
                    a.add_patch(arrow)
                elif np.isfinite(tfg):
                    a.plot([tfg], [i], marker="|", color=_GREY, markersize=10, zorder=3)
                if np.isfinite(scw):
                    a.plot([scw], [i + scw_offset], marker="s", linestyle="none", markersize=7.5,
                           markerfacecolor=_BLUE, markeredgecolor="white",
                           markeredgewidth=0.8, alpha=0.9, zorder=4, gid="scw")
                if np.isfinite(none):
                    a.plot([none], [i], marker="o", linestyle="none", markersize=7.5,
                           color="black", markeredgecolor="white", markeredgewidth=0.8,
                           zorder=5, gid="uncalibrated")
                if not (np.isfinite(none) or np.isfinite(tfg) or np.isfinite(scw)):
                    a.text(a.get_xlim()[1] / 2, i, "no entries", ha="center", va="center",
                           color=_GREY, fontsize=8, style="italic")
            a.set_title(col)
            a.set_ylim(n_methods - 0.5, -0.5)
            a.set_yticks(y, methods)
            a.spines["left"].set_visible(False)
            a.tick_params(axis="y", length=0)
            a.grid(True, axis="x", color="#E5E5E5", linewidth=0.6)
            a.xaxis.set_major_locator(_max_n_locator(4))
            if xlabel is None:
                a.set_xlabel("SMCE" if col.strip().lower() in ("all", "smce") else "GMCE")
            else:
                a.set_xlabel(xlabel)
        if title is None:
            title = "Calibration error before and after recalibration (lower is better)"
        if title:
            fig.suptitle(title)
        handles = [
            Line2D([], [], marker="o", color="black", linestyle="none", markersize=7),
            Line2D([], [], marker=r"$\leftarrow$", color=_GREEN, linestyle="none",
                   markersize=16),
            Line2D([], [], marker=r"$\rightarrow$", color=_RED, linestyle="none",
                   markersize=16),
            Line2D([], [], marker="s", color=_BLUE, linestyle="none", markersize=7)]
        names = ["uncalibrated", "TFG recalibrated: lower", "TFG recalibrated: higher",
                 "SCW recalibrated"]
        if not any("scw" in clean[m] for m in methods):
            handles, names = handles[:3], names[:3]
        if axes is None:
            fig.legend(handles, names, loc="outside lower center", ncols=len(handles),
                       frameon=False)
    return fig


def _max_n_locator(n):
    from matplotlib.ticker import MaxNLocator
    return MaxNLocator(nbins=n, min_n_ticks=3)


# --------------------------------------------------------------------------- #
# Per-tag CE (Nguyen & O'Connor Fig. 4)                                        #
# --------------------------------------------------------------------------- #

def _per_tag_dict(x, what):
    """{tag: CalibrationError or float}, and the MCE value (or None)."""
    if _is_evaluation(x):
        if x.mce is None:
            raise ValueError(f"{what} has no per-tag CE: evaluate(..., per_tag=True)")
        x = x.mce
    if isinstance(x, MarginalCalibrationError):
        return dict(x.per_tag), x
    if isinstance(x, Mapping):
        if not x:
            raise ValueError(f"{what} is empty")
        for k, v in x.items():
            if not isinstance(v, (CalibrationError, numbers.Real)):
                raise TypeError(f"{what}[{k!r}] must be a CalibrationError or a number, "
                                f"got {type(v).__name__}")
        return dict(x), None
    raise TypeError(f"{what} must be a MarginalCalibrationError, an EvaluationResult with "
                    f"per-tag CE, or a dict {{tag: CalibrationError}}; got {type(x).__name__}")


def _is_per_tag_value(v):
    return isinstance(v, (CalibrationError, numbers.Real))


def per_tag_ce(mce_result_or_dict, tag_names=None, top=20, *, labels=None, counts=None,
               show_mean=True, ax=None, title=None, colors=None, figsize=None):
    """Horizontal bars of per-tag calibration error for the most frequent tags,
    with 95% interval whiskers where computed (Nguyen & O'Connor 2015, Fig. 4).

    Parameters
    ----------
    mce_result_or_dict :
        A MarginalCalibrationError (``sparsecal.mce``), an EvaluationResult with
        per-tag CE, a dict ``{tag: CalibrationError or float}``; or, to compare
        models side by side, a dict ``{model: one of those}`` / a list of them.
    tag_names : sequence, dict or TagGroups, optional
        Name of each tag index (default: the index).
    top : int, default 20
        How many tags: the most frequent, by number of entries (the ``n`` of the
        first model's CE) or by ``counts``.
    labels : list of str, optional
        Model names when a list is given.
    counts : dict or array, optional
        Entries (or training count) per tag, to rank plain-float inputs. Without
        CE objects or counts the input order is kept.
    show_mean : bool, default True
        Add the root mean square over the tags shown and, given a
        MarginalCalibrationError, the MCE over all evaluated tags.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not isinstance(top, numbers.Integral) or top < 1:
        raise ValueError(f"top must be a positive integer, got {top!r}")
    x = mce_result_or_dict
    if isinstance(x, Mapping) and x and not all(_is_per_tag_value(v) for v in x.values()):
        if labels is not None:
            raise ValueError("give model labels either as dict keys or as labels, not both")
        models = [(str(k), *_per_tag_dict(v, f"results[{k!r}]")) for k, v in x.items()]
    elif isinstance(x, Sequence) and not isinstance(x, str):
        if not x:
            raise ValueError("mce_result_or_dict is empty")
        labs = _check_labels_arg(labels, len(x), "models")
        models = [(lab or f"model {i + 1}", *_per_tag_dict(v, f"results[{i}]"))
                  for i, (lab, v) in enumerate(zip(labs, x))]
    else:
        lab = _check_labels_arg(labels, 1, "models")[0]
        models = [(lab, *_per_tag_dict(x, "mce_result_or_dict"))]
    first = models[0][1]
    if counts is not None:
        if isinstance(counts, Mapping):
            count_of = {k: float(v) for k, v in counts.items()}
        else:
            arr = np.asarray(counts)
            count_of = {i: float(arr[i]) for i in range(arr.shape[0])}
        order = sorted(first, key=lambda t: -count_of.get(t, 0.0))
    elif all(isinstance(v, CalibrationError) for v in first.values()):
        order = sorted(first, key=lambda t: (-first[t].n, str(t)))
    else:
        order = list(first)
    tags = order[:top]
    names = _tag_name_func(tag_names)

    def n_of(t):
        if counts is not None:
            return count_of.get(t)
        v = first[t]
        return v.n if isinstance(v, CalibrationError) else None

    rows = []
    for t in tags:
        n = n_of(t)
        rows.append(f"{_shorten(names(t))}  (n={int(n):,})" if n is not None
                    else _shorten(names(t)))
    n_models = len(models)
    extra = []
    if show_mean:
        extra.append(f"RMS, these {len(tags)} tags")
        if any(m[2] is not None for m in models):
            n_all = max(len(m[2].per_tag) for m in models if m[2] is not None)
            extra.append(f"MCE, all {n_all} tags")
    n_rows = len(rows) + len(extra)
    if figsize is None:
        # Room for the tick labels (about 0.075 in per character) beside a bar
        # area of at least 4 in.
        label_in = 0.075 * max((len(r) for r in rows), default=10)
        figsize = (max(6.4, 4.2 + label_in), 1.5 + (0.17 + 0.09 * n_models) * n_rows)
    bar_h = 0.8 / n_models
    with _style():
        fig, ax = _single_axes(ax, figsize)
        ypos = np.arange(n_rows, dtype=float)
        ypos[len(rows):] += 0.6   # gap before the summary rows
        any_ci = False
        for k, (lab, d, mres) in enumerate(models):
            st = _style_of(k, colors)
            off = (k - (n_models - 1) / 2) * bar_h
            vals, lo, hi = [], [], []
            for t in tags:
                v = d.get(t)
                if isinstance(v, CalibrationError):
                    vals.append(v.value)
                    lo.append(np.nan if v.ci_low is None else v.ci_low)
                    hi.append(np.nan if v.ci_high is None else v.ci_high)
                else:
                    vals.append(np.nan if v is None else float(v))
                    lo.append(np.nan)
                    hi.append(np.nan)
            vals, lo, hi = map(np.asarray, (vals, lo, hi))
            sv = vals[np.isfinite(vals)]
            summ = []
            if show_mean:
                summ.append(float(np.sqrt(np.mean(sv ** 2))) if sv.size else np.nan)
                if len(extra) > 1:
                    summ.append(np.nan if mres is None else mres.value)
            allv = np.r_[vals, summ]
            hatch_mask = np.r_[np.zeros(len(vals), bool), np.ones(len(summ), bool)]
            yk = ypos[:allv.shape[0]] + off
            ax.barh(yk[~hatch_mask], allv[~hatch_mask], height=bar_h * 0.92,
                           color=st["color"], alpha=0.85, label=lab, gid=f"bars-{k}")
            if hatch_mask.any():
                ax.barh(yk[hatch_mask], allv[hatch_mask], height=bar_h * 0.92,
                        facecolor="white", edgecolor=st["color"], hatch="////",
                        linewidth=1.0, gid=f"summary-{k}")
            ok = np.isfinite(lo) & np.isfinite(hi)
            if ok.any():
                any_ci = True
                mid, half = (lo + hi) / 2, (hi - lo) / 2
                ax.errorbar(mid[ok], yk[:len(vals)][ok], xerr=half[ok], fmt="none",
                            ecolor="#333333", elinewidth=0.9, capsize=2.2, zorder=4,
                            gid=f"ci-{k}")
        ax.set_yticks(ypos, rows + extra)
        for lbl in ax.get_yticklabels()[len(rows):]:
            lbl.set_fontweight("bold")
        if extra:
            ax.axhline(len(rows) - 0.5 + 0.3, color="#999999", linewidth=0.8)
        ax.set_ylim(ypos[-1] + 0.6, -0.6)
        ax.tick_params(axis="y", length=0)
        ax.set_xlim(left=0)
        ax.grid(True, axis="x", color="#E5E5E5", linewidth=0.6)
        sym = _ce_symbol(next((v.norm for v in first.values()
                               if isinstance(v, CalibrationError)), 2))
        ax.set_xlabel(f"per-tag calibration error ({sym}, lower is better)")
        if title is None:
            title = f"Calibration error of the {len(tags)} most frequent tags"
            if counts is None and not all(isinstance(v, CalibrationError)
                                          for v in first.values()):
                title = f"Calibration error of {len(tags)} tags"
        legend_above = False
        if n_models > 1 or models[0][0] is not None or any_ci:
            handles, labs = ax.get_legend_handles_labels()
            if any_ci:
                from matplotlib.lines import Line2D
                handles.append(Line2D([], [], color="#333333", marker="|", markersize=8,
                                      linewidth=0.9))
                labs.append("95% interval")
            handles = [h for h, l in zip(handles, labs) if l and not l.startswith("_")]
            labs = [l for l in labs if l and not l.startswith("_")]
            if handles:   # above the bars, under the title: never over data
                ax.legend(handles, labs, loc="lower left", bbox_to_anchor=(0.0, 1.0),
                          ncols=len(handles), frameon=False, borderaxespad=0.2)
                legend_above = True
        if title:
            ax.set_title(title, pad=22 if legend_above else 6)
    return fig


def _shorten(name, width=34):
    """A tag name cut to ``width`` characters with an ellipsis in the middle, so
    long compound tags (``VERB|Mood=Ind|Number=Sing|...``) keep both ends."""
    name = str(name)
    if len(name) <= width:
        return name
    keep = width - 1
    return name[:keep - keep // 2] + "…" + name[-(keep // 2):]


def _tag_name_func(tag_names):
    if tag_names is None:
        return lambda t: str(t)
    if hasattr(tag_names, "tag_names"):   # TagGroups
        tag_names = tag_names.tag_names
        if tag_names is None:
            return lambda t: str(t)
    if isinstance(tag_names, Mapping):
        return lambda t: str(tag_names.get(t, t))
    if isinstance(tag_names, Sequence) and not isinstance(tag_names, str):
        names = list(tag_names)
        return lambda t: str(names[t]) if isinstance(t, numbers.Integral) and \
            0 <= t < len(names) and names[t] != "" else str(t)
    raise TypeError("tag_names must be a sequence, a dict or a TagGroups")


# --------------------------------------------------------------------------- #
# Modified reliability plot (Jagannatha & Yu 2020, Fig. 1)                     #
# --------------------------------------------------------------------------- #

def _modified_curves(results, labels, n_bins, binning, norm):
    from ..core.entries import Entries
    from ..metrics.binned import top_label

    def one(x, what):
        if isinstance(x, Entries):
            conf, correct = top_label(x)
            return calibration_error(conf, correct, binning=binning, n_bins=n_bins,
                                     norm=norm)
        if isinstance(x, tuple) and len(x) == 2 and not any(
                isinstance(v, CalibrationError) or _is_evaluation(v) for v in x):
            return calibration_error(x[0], x[1], binning=binning, n_bins=n_bins,
                                     norm=norm)
        return _as_ce(x, what, evaluation_attr="top_label_ece")

    if isinstance(results, Mapping):
        if not results:
            raise ValueError("results is empty")
        if labels is not None:
            raise ValueError("give labels either as dict keys or as labels, not both")
        return [(str(k), one(v, f"results[{k!r}]")) for k, v in results.items()]
    if isinstance(results, list):
        if not results:
            raise ValueError("results is empty")
        labs = _check_labels_arg(labels, len(results))
        return [(lab, one(v, f"results[{i}]")) for i, (lab, v) in
                enumerate(zip(labs, results))]
    return [(_check_labels_arg(labels, 1)[0], one(results, "results"))]


def modified_reliability(results, labels=None, n_bins=20, *, binning="fixed", norm=1,
                         show_positives=True, errorbars=False, ax=None, title=None,
                         colors=None, max_marker_area=600.0, figsize=(7.2, 4.3),
                         xlim=None):
    """Modified reliability plot: accuracy - confidence against confidence per
    bin, marker area proportional to the bin's size (Jagannatha & Yu 2020, Fig. 1).

    Points above the dotted zero line are underconfident, below overconfident.

    Parameters
    ----------
    results :
        A CalibrationError; an EvaluationResult (its top-label ECE when
        computed, else its SMCE); ``(scores, labels)`` arrays, binned here;
        :class:`Entries` (their top-label confidence and correctness, as
        Jagannatha & Yu); or a list / dict of these, one series each.
    labels : list of str, optional
        Legend label per series (not with a dict).
    n_bins : int, default 20
        Bins for arrays / Entries (Jagannatha & Yu use 20 fixed-width bins).
    binning : {"fixed", "equal-mass"}, default "fixed"
        Binning for arrays / Entries.
    norm : {1, 2, inf}, default 1
        CE reported in the legend for arrays / Entries (1: ECE, as Jagannatha &
        Yu); a given CalibrationError keeps its own.
    show_positives : bool, default True
        Fill an inner marker whose area is the bin's number of positives
        (Jagannatha & Yu's inner diameter) inside the ring of the bin size.
    errorbars : bool, default False
        Also draw the 95% interval of each bin's accuracy,
        ``1.96 sqrt(p (1 - p) / |B|)`` (a normal approximation: unreliable, even
        zero-width, for bins of a few points; the axis is not widened for it).
    max_marker_area : float, default 600
        Area in points^2 of the largest bin (all series share one size scale).
    xlim : (float, float), optional
        Confidence range; default from the data, ending at 1.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not isinstance(n_bins, numbers.Integral) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    curves = _modified_curves(results, labels, n_bins, binning, norm)
    tabs = [reliability_table(ce.bins) for _, ce in curves]
    sums_label = [ce.bins.sum_label[ce.bins.count > 0] for _, ce in curves]
    cmax = max(float(t["count"].max()) for t in tabs)
    scale_area = max_marker_area / cmax
    from matplotlib.lines import Line2D
    with _style():
        fig, ax = _single_axes(ax, figsize)
        ax.axhline(0.0, color=_GREY, linestyle=":", linewidth=1.3, zorder=1)
        handles, names = [], []
        ymax, xmin = 0.0, 1.0
        for i, ((lab, ce), t, pos) in enumerate(zip(curves, tabs, sums_label)):
            st = _style_of(i, colors)
            x = t["mean_score"]
            d = t["mean_label"] - t["mean_score"]
            hw = t["ci_halfwidth"]
            ymax = max(ymax, float(np.abs(d).max()))
            xmin = min(xmin, float(x.min()))
            ax.plot(x, d, color=st["color"], linestyle=st["linestyle"], linewidth=1.1,
                    alpha=0.9, zorder=2)
            if errorbars:
                ax.errorbar(x, d, yerr=hw, fmt="none", ecolor=st["color"], elinewidth=0.9,
                            capsize=2, alpha=0.7, zorder=2)
            area = t["count"] * scale_area
            ax.scatter(x, d, s=area, facecolors="none", edgecolors=st["color"],
                       linewidths=1.2, marker="o", zorder=4, gid=f"bins-{i}")
            inner = np.maximum(pos * scale_area, 1.5) if show_positives else area
            ax.scatter(x, d, s=inner, color=st["color"], alpha=0.45, linewidths=0,
                       marker="o", zorder=3, gid=f"positives-{i}")
            handles.append(Line2D([], [], color=st["color"], marker="o",
                                  markerfacecolor=(*_rgb(st["color"]), 0.45),
                                  linestyle=st["linestyle"], markersize=8))
            text = _ce_text(ce)
            names.append(text if lab is None else f"{lab}: {text}")
        lim = max(ymax * 1.2, 0.02)
        ax.set_ylim(-lim, lim)
        if xlim is None:
            xlim = (max(0.0, math.floor((xmin - 0.04) * 10) / 10), 1.02)
        ax.set_xlim(*xlim)
        ax.set_xlabel("confidence (mean score in bin)")
        ax.set_ylabel("accuracy − confidence")
        ax.grid(True, color="#EEEEEE", linewidth=0.6)
        ax.text(0.01, 0.98, "underconfident", transform=ax.transAxes, ha="left",
                va="top", color=_GREY, fontsize=8, style="italic")
        ax.text(0.01, 0.02, "overconfident", transform=ax.transAxes, ha="left",
                va="bottom", color=_GREY, fontsize=8, style="italic")
        if title is None:
            title = f"Modified reliability plot ({_bins_phrase(curves[0][1])})"
        if title:
            ax.set_title(title)
        leg1 = ax.legend(handles, names, loc="upper right")
        ax.add_artist(leg1)
        # Size key, outside on the right: round bin sizes.
        refs = _nice_sizes(cmax)
        size_handles = [Line2D([], [], marker="o", linestyle="none",
                               markersize=math.sqrt(r * scale_area), markerfacecolor="none",
                               markeredgecolor="#555555") for r in refs]
        size_names = [f"{int(r):,}" for r in refs]
        key_title = "bin size" + ("\n(fill: positives)" if show_positives else "")
        ax.legend(size_handles, size_names, loc="center left", bbox_to_anchor=(1.01, 0.5),
                  title=key_title, labelspacing=1.6, borderpad=1.0, handletextpad=1.2,
                  frameon=False, fontsize=8.5)
    return fig


def _rgb(color):
    from matplotlib.colors import to_rgb
    return to_rgb(color)


def _nice_sizes(cmax):
    """Up to three round numbers at or below ``cmax`` for a size legend."""
    top = 10 ** math.floor(math.log10(cmax))
    for m in (5, 2, 1):
        if m * top <= cmax:
            top = m * top
            break
    out = [top, top / 10, top / 100] if top >= 100 else [top, max(top / 10, 1)]
    return sorted({max(1.0, float(v)) for v in out})


# --------------------------------------------------------------------------- #
# Saving                                                                       #
# --------------------------------------------------------------------------- #

def save_figure(fig, path, formats=None, *, dpi=200, **savefig_kw):
    """Write ``fig`` atomically in one or more formats; returns the paths.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : str or path-like
        ``out/fig`` writes ``out/fig.png`` and ``out/fig.svg``; ``out/fig.pdf``
        writes that file only, unless ``formats`` is given, in which case the
        extension is replaced by each format's.
    formats : sequence of str, optional
        Default ``("png", "svg")`` (or the extension of ``path``).
    dpi : int, default 200
        For raster formats.

    Every file is written to a temporary file beside the target and renamed
    over it, so a failure never leaves a partial figure; the directory must
    exist.

    Returns
    -------
    list of str
    """
    from matplotlib.figure import Figure
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    path = os.fspath(path)
    if not path or os.path.basename(path) in ("", ".", ".."):
        raise ValueError(f"path must name a file, got {path!r}")
    stem, ext = os.path.splitext(path)
    ext = ext[1:].lower()
    if ext in _FORMATS:
        if formats is None:
            formats = (ext,)
    else:
        stem = path
    if formats is None:
        formats = ("png", "svg")
    if isinstance(formats, str):
        formats = (formats,)
    formats = [str(f).lower().lstrip(".") for f in formats]
    if not formats:
        raise ValueError("formats must name at least one format")
    supported = fig.canvas.get_supported_filetypes()
    for f in formats:
        if f not in supported:
            raise ValueError(f"unsupported format {f!r}; matplotlib writes "
                             f"{sorted(supported)}")
    directory = os.path.dirname(os.path.abspath(stem))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"directory {directory!r} does not exist")
    written = []
    for f in dict.fromkeys(formats):
        target = f"{stem}.{f}"
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=f".{f}", dir=directory)
        os.close(fd)
        try:
            fig.savefig(tmp, format=f, dpi=dpi, **savefig_kw)
            os.chmod(tmp, _file_mode(target))
            os.replace(tmp, target)
        except BaseException:
            try:
                os.remove(tmp)
            except OSError:
                pass
            raise
        written.append(target)
    return written


def _file_mode(target):
    """The mode of an existing target, else 0o666 less the umask (mkstemp's 0o600
    would make the figure private)."""
    try:
        return os.stat(target).st_mode & 0o777
    except OSError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o666 & ~mask
