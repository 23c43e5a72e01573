"""Modified reliability plot: accuracy - confidence against confidence, marker
area proportional to bin size (Jagannatha & Yu 2020, Fig. 1)."""
import math
import numbers
from collections.abc import Mapping

import numpy as np

from ..core.entries import Entries
from ..metrics import CalibrationError, calibration_error, reliability_table, top_label
from ._inputs import _as_ce, _check_labels_arg, _is_evaluation
from ._labels import _bins_phrase, _ce_text
from ._style import _GREY, _rc_style, _single_axes, _style_of

__all__ = ["modified_reliability"]


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
        Also draw the 95% Wilson interval of each bin's accuracy
        (:func:`sparsecal.reliability_table`; the axis is not widened for it).
    ax : matplotlib Axes, optional
        Draw into this instead of a new figure.
    title : str, optional
        Default "Modified reliability plot (<B> fixed-width bins)"; "" for none.
    colors : sequence of colours, optional
        Defaults to :data:`COLORS` (Okabe-Ito).
    max_marker_area : float, default 600
        Area in points^2 of the largest bin (all series share one size scale).
    xlim : (float, float), optional
        Confidence range; default from the data, ending at 1.
    figsize : (float, float), default (7.2, 4.3)
        Size in inches of a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        The given axes' figure, or a new one; the bin-size key sits right of
        the axes.

    Raises
    ------
    TypeError
        If an input is not one of the forms above, or ``ax`` is not a
        matplotlib Axes.
    ValueError
        If ``n_bins`` is not a positive integer, ``results`` is empty or has no
        non-empty bins, labels are given twice or with the wrong length, or
        arrays are not valid scores and labels.

    References
    ----------
    .. [1] Jagannatha & Yu 2020, "Calibrating Structured Output Predictors for Natural
       Language Processing", ACL, Sections 3.3 and 4, Fig. 1 (modified reliability plots
       of a QA system before and after calibration).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> from sparsecal.plotting import modified_reliability
    >>> data = make_tagger_outputs(1000, n_tags=20)
    >>> entries = sc.threshold(data.scores, data.gold, 0.01)
    >>> ax = modified_reliability({"tagger": entries}).axes[0]
    >>> ax.get_title(), ax.get_ylabel()
    ('Modified reliability plot (20 fixed-width bins)', 'accuracy − confidence')
    """
    if not isinstance(n_bins, numbers.Integral) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    curves = _modified_curves(results, labels, n_bins, binning, norm)
    tabs = [reliability_table(ce.bins) for _, ce in curves]
    sums_label = [ce.bins.sum_label[ce.bins.count > 0] for _, ce in curves]
    cmax = max(float(t["count"].max()) for t in tabs)
    scale_area = max_marker_area / cmax
    from matplotlib.lines import Line2D
    with _rc_style():
        fig, ax = _single_axes(ax, figsize)
        ax.axhline(0.0, color=_GREY, linestyle=":", linewidth=1.3, zorder=1)
        handles, names = [], []
        ymax, xmin = 0.0, 1.0
        for i, ((lab, ce), t, pos) in enumerate(zip(curves, tabs, sums_label)):
            st = _style_of(i, colors)
            x = t["mean_score"]
            d = t["mean_label"] - t["mean_score"]
            ymax = max(ymax, float(np.abs(d).max()))
            xmin = min(xmin, float(x.min()))
            ax.plot(x, d, color=st["color"], linestyle=st["linestyle"], linewidth=1.1,
                    alpha=0.9, zorder=2)
            if errorbars:
                yerr = np.vstack([t["mean_label"] - t["ci_low"], t["ci_high"] - t["mean_label"]])
                ax.errorbar(x, d, yerr=yerr, fmt="none", ecolor=st["color"], elinewidth=0.9,
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


def _modified_curves(results, labels, n_bins, binning, norm):
    """[(label, CalibrationError)]: arrays and Entries binned here, results as given."""
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
