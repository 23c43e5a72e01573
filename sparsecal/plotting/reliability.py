"""Reliability diagram: calibration curves from (equal-mass) bins with the per-bin
95% interval of the label rate and the score distribution below (Nguyen &
O'Connor 2015, Fig. 1d, 2, 3)."""
import numbers
from ..core.dispatch import takes_data
from collections.abc import Mapping, Sequence

import numpy as np

from ..core.binning import histogram_counts
from ..metrics import reliability_table
from ._inputs import _curves
from ._labels import _bins_phrase, _ce_text
from ._scales import (_check_scale, _diagonal, _from_display, _scale_limits, _set_scale,
                      _to_display)
from ._style import _main_and_lower_axes, _rc_style, _style_of

__all__ = ["reliability_diagram", "score_histogram_edges"]


def _draw_curve(ax, ce, i, label, colors, markersize=5, errorbars=True,
                bin_interval="wilson"):
    """Curve ``i``: bin means with 95% bars; returns its errorbar container and
    reliability table (shared with the per-group grid)."""
    t = reliability_table(ce.bins, bin_interval=bin_interval)
    x, y = t["mean_score"], t["mean_label"]
    st = _style_of(i, colors)
    yerr = np.vstack([y - t["ci_low"], t["ci_high"] - y]) if errorbars else None
    cont = ax.errorbar(x, y, yerr=yerr, color=st["color"], marker=st["marker"],
                       linestyle=st["linestyle"], markersize=markersize, linewidth=1.4,
                       elinewidth=1.0, capsize=2.5 if errorbars else 0,
                       markeredgecolor="white", markeredgewidth=0.6, label=label,
                       zorder=3 + i)
    cont.lines[0].set_gid(f"curve-{i}")
    return cont, t


@takes_data(refuse="its scores= are only for the exact histogram; on a cluster pass "
                    "hist_counts= from sparsecal.distributed.score_histogram")
def reliability_diagram(results, labels=None, *, scores=None, scale="linear", yscale=None,
                        show_distribution=True, hist_bins=40, ax=None, hist_ax=None,
                        title=None, colors=None, figsize=(5.2, 5.6), legend_loc=None,
                        bin_interval="wilson", hist_counts=None):
    """Calibration curve(s) from binned statistics, with 95% intervals per bin.

    Points are ``(mean score, empirical frequency of the label)`` of each
    non-empty bin, joined by lines; vertical bars are the 95% interval of the
    bin's label rate, Wilson's or Clopper–Pearson's (``bin_interval``;
    :func:`sparsecal.reliability_table`), never of zero width.
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
        them (or ``hist_counts``) the histogram is approximated from the bins:
        each bin's count is spread evenly over its score range [lower, upper].
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
    figsize : (float, float), default (5.2, 5.6)
        Size in inches of a new figure.
    legend_loc : str, optional
        Legend position; default "upper left" on a linear frequency axis, else
        "lower right".
    bin_interval : {"wilson", "clopper-pearson"}, default "wilson"
        The interval of each bin's label rate
        (:func:`~sparsecal.metrics.bin_intervals.binomial_interval`).
    hist_counts : list or dict of arrays, optional
        Instead of ``scores``: each curve's exact histogram, counted elsewhere
        (on a cluster) over :func:`score_histogram_edges` of the same
        ``results``, ``scale``, ``yscale`` and ``hist_bins``
        (:func:`sparsecal.core.binning.histogram_counts`, what ``scores`` give).

    Returns
    -------
    matplotlib.figure.Figure
        The given axes' figure, or a new one: the curves on top, the score
        histogram (log counts) below.

    Raises
    ------
    TypeError
        If a result is not a CalibrationError or an EvaluationResult, or
        ``ax`` / ``hist_ax`` is not a matplotlib Axes.
    ValueError
        If ``bin_interval`` is unknown, ``results`` is empty or has no
        non-empty bins, the labels or score arrays do not match the curves,
        scores are not probabilities, a scale is unknown, ``hist_bins`` is not
        a positive integer, ``hist_ax`` is given without ``ax``, or
        ``hist_counts`` is given with ``scores`` or is not one array of
        ``hist_bins`` counts per curve.

    References
    ----------
    .. [1] Nguyen & O'Connor 2015, "Posterior calibration and exploratory analysis for
       natural language processing models", EMNLP, Section 3.3 (calibration curves from
       adaptive bins), Algorithm 2 (interval per bin), Fig. 1(d), 2 and 3.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from sparsecal import calibration_error
    >>> rng = np.random.default_rng(0)
    >>> s = rng.random(2000)
    >>> y = (rng.random(2000) < s).astype(np.uint8)
    >>> from sparsecal.plotting import reliability_diagram
    >>> fig = reliability_diagram(calibration_error(s, y, n_bins=10), scores=s,
    ...                           scale="logit")
    >>> main, hist = fig.axes
    >>> main.get_title(), hist.get_xlabel()
    ('Calibration curve (10 equal-mass bins)', 'predicted score')
    """
    curves = _curves(results, labels)
    scale = _check_scale(scale)
    yscale = scale if yscale is None else _check_scale(yscale, "yscale")
    _check_hist_bins(hist_bins)
    score_arrays = _score_arrays(scores, len(curves))
    count_arrays = _count_arrays(hist_counts, len(curves), hist_bins, scores)
    with _rc_style():
        fig, ax, hist_ax = _main_and_lower_axes(ax, hist_ax, show_distribution, figsize,
                                                "hist_ax")
        show_distribution = hist_ax is not None
        tables = []
        for i, (label, ce) in enumerate(curves):
            text = _ce_text(ce)
            label = text if label is None else f"{label}: {text}"
            _, t = _draw_curve(ax, ce, i, label, colors, bin_interval=bin_interval)
            tables.append(t)
        xlo, xhi, ylo, yhi = _limits(tables, scale, yscale)
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
            edges = _edges_of(xlo, xhi, scale, hist_bins)
            approx = False
            for i, (label, ce) in enumerate(curves):
                st = _style_of(i, colors)
                s = None if score_arrays is None else score_arrays[i]
                if count_arrays is not None:
                    h = count_arrays[i]
                elif s is not None:
                    h = histogram_counts(s, edges)
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


def _limits(tables, scale, yscale):
    """``(xlo, xhi, ylo, yhi)`` of the axes that show the reliability tables."""
    allx = np.concatenate([t["mean_score"] for t in tables])
    ally = np.concatenate([t["mean_label"] for t in tables])
    xlo, xhi = _scale_limits(allx, scale)
    ylo, yhi = _scale_limits(np.r_[ally, allx], yscale) if yscale != "linear" else (0, 1)
    if scale == yscale != "linear":   # one range, so the diagonal is the square's
        xlo = ylo = min(xlo, ylo)
        xhi = yhi = max(xhi, yhi)
    return xlo, xhi, ylo, yhi


def _edges_of(xlo, xhi, scale, hist_bins):
    """The histogram's edges under a score axis from ``xlo`` to ``xhi``."""
    return _hist_edges(max(xlo, 1e-15) if scale != "linear" else 0.0,
                       xhi if scale != "linear" else 1.0, scale, hist_bins)


def score_histogram_edges(results, *, scale="linear", yscale=None, hist_bins=40):
    """The edges of the score histogram that :func:`reliability_diagram` draws
    under these curves: ``hist_bins`` bins evenly spaced on the score axis's
    scale, over the axis's range.

    Count scores over them with :func:`sparsecal.core.binning.histogram_counts`
    (on each chunk of distributed entries, adding the counts) and pass the
    counts as ``reliability_diagram(..., hist_counts=...)``: the figure is the
    one its ``scores`` would give.

    Parameters
    ----------
    results, scale, yscale, hist_bins
        As in :func:`reliability_diagram`.

    Returns
    -------
    ndarray of float64, shape (hist_bins + 1,)

    Raises
    ------
    TypeError, ValueError
        As :func:`reliability_diagram` for these arguments.

    References
    ----------
    Nguyen & O'Connor 2015, Fig. 1(d).

    Examples
    --------
    >>> from sparsecal import calibration_error
    >>> ce = calibration_error([0.1, 0.4, 0.6, 0.9], [0, 1, 0, 1], n_bins=2)
    >>> score_histogram_edges(ce, hist_bins=4).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    curves = _curves(results, None)
    scale = _check_scale(scale)
    yscale = scale if yscale is None else _check_scale(yscale, "yscale")
    _check_hist_bins(hist_bins)
    tables = [reliability_table(ce.bins) for _, ce in curves]
    xlo, xhi, _, _ = _limits(tables, scale, yscale)
    return _edges_of(xlo, xhi, scale, hist_bins)


def _check_hist_bins(hist_bins):
    if not isinstance(hist_bins, numbers.Integral) or hist_bins < 1:
        raise ValueError(f"hist_bins must be a positive integer, got {hist_bins!r}")


def _count_arrays(hist_counts, n_curves, hist_bins, scores):
    """None, or one array of ``hist_bins`` non-negative counts per curve."""
    if hist_counts is None:
        return None
    if scores is not None:
        raise ValueError("give scores or hist_counts, not both")
    counts = list(hist_counts.values() if isinstance(hist_counts, Mapping) else hist_counts)
    if len(counts) != n_curves:
        raise ValueError(f"got {len(counts)} hist_counts arrays for {n_curves} curves")
    out = []
    for i, c in enumerate(counts):
        a = np.asarray(c)
        if a.shape != (hist_bins,) or not np.issubdtype(a.dtype, np.number) or (a < 0).any():
            raise ValueError(f"hist_counts[{i}] must be {hist_bins} non-negative counts, "
                             f"got {a!r:.60}")
        out.append(a)
    return out


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
