"""Reliability diagram (Nguyen & O'Connor 2015, Fig. 1d, 2, 3): calibration
curves from bins, the interval of each bin's label rate, and the score
histogram below."""
import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from ..core.binning import histogram_counts
from ..core.dispatch import is_distributed, takes_data
from ..core.entries import Entries
from ..metrics import reliability_table, smce
from ._inputs import _curves, _labelled
from ._labels import _bins_phrase, _ce_text, _intervals_title
from ._scales import (_check_scale, _diagonal, _from_display, _scale_limits, _set_scale,
                      _to_display)
from ._style import _legend, _main_and_lower_axes, _rc_style, _style_of

__all__ = ["ReliabilityDisplay", "reliability_diagram"]


class ReliabilityDisplay:
    """Calibration curves: per bin, the mean score against the rate of the label
    with that rate's interval; the score histogram below.

    Build it with :meth:`from_results` or :meth:`from_entries`; :meth:`plot`
    draws it. The attributes are the data drawn.

    Attributes
    ----------
    labels : list of str or None
        One per curve.
    errors : list of CalibrationError
        Each curve's CE (the legend; the points are its bins).
    tables : list of ReliabilityTable
        Each curve's points and bar ends: :func:`sparsecal.reliability_table`
        of its bins at its CE's interval level (95% without one).
    bin_interval : {"wilson", "clopper-pearson"}
        The interval of a bin's label rate.
    scale, yscale : {"linear", "log", "logit"}
        The axes' scales.
    limits : tuple of float
        ``(xlo, xhi, ylo, yhi)``: the axes' range.
    hist_edges : ndarray
        The score histogram's edges, evenly spaced on the score axis's scale.
    hist_counts : list of ndarray
        Each curve's entries per histogram bin.
    hist_exact : bool
        False when the counts are spread from the bins (no scores given).
    figure_, ax_, hist_ax_ : matplotlib objects
        Set by :meth:`plot` (``hist_ax_`` None without a histogram).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import calibration_error
    >>> from sparsecal.plotting import ReliabilityDisplay
    >>> rng = np.random.default_rng(0)
    >>> s = rng.random(2000)
    >>> y = (rng.random(2000) < s).astype(np.uint8)
    >>> d = ReliabilityDisplay.from_results(calibration_error(s, y, n_bins=10), scores=s)
    >>> len(d.tables[0]["mean_score"]), int(d.hist_counts[0].sum())
    (10, 2000)
    >>> d.plot().ax_.get_ylabel()
    'empirical frequency of the label'
    """

    def __init__(self, *, labels, errors, tables, bin_interval, scale, yscale, limits,
                 hist_edges, hist_counts, hist_exact):
        self.labels, self.errors, self.tables = labels, errors, tables
        self.bin_interval, self.scale, self.yscale, self.limits = (bin_interval, scale,
                                                                   yscale, limits)
        self.hist_edges, self.hist_counts, self.hist_exact = (hist_edges, hist_counts,
                                                              hist_exact)

    @classmethod
    def from_results(cls, results, labels=None, *, scores=None, hist_counts=None,
                     scale="linear", yscale=None, hist_bins=40, bin_interval="wilson"):
        """The curves of calibration errors.

        Parameters
        ----------
        results : CalibrationError, EvaluationResult, or a list or dict of them
            One curve each (an EvaluationResult gives its SMCE); a dict's keys
            are the labels.
        labels : list of str, optional
            Label per curve (not with a dict).
        scores : array or list of arrays, optional
            The scores each curve was binned from, for the exact histogram
            (else it is spread from the bins).
        hist_counts : list of arrays, optional
            Instead of ``scores``: each curve's counts over ``hist_edges`` of
            the display without them (counted elsewhere, e.g. on a cluster).
        scale : {"linear", "log", "logit"}, default "linear"
            The score axis; "logit" spreads out scores near 0 and 1.
        yscale : {"linear", "log", "logit"}, optional
            The frequency axis; default ``scale`` (a straight diagonal).
        hist_bins : int, default 40
        bin_interval : {"wilson", "clopper-pearson"}, default "wilson"

        Returns
        -------
        ReliabilityDisplay
        """
        curves = _curves(results, labels)
        scale = _check_scale(scale)
        yscale = scale if yscale is None else _check_scale(yscale, "yscale")
        if not isinstance(hist_bins, numbers.Integral) or hist_bins < 1:
            raise ValueError(f"hist_bins must be a positive integer, got {hist_bins!r}")
        errors = [ce for _, ce in curves]
        tables = [reliability_table(ce.bins, ci=ce.ci or "simulation",
                                    bin_interval=bin_interval) for ce in errors]
        limits = _limits(tables, scale, yscale)
        edges = _hist_edges(limits, scale, hist_bins)
        score_arrays = _score_arrays(scores, len(curves))
        counts = _count_arrays(hist_counts, len(curves), hist_bins, scores)
        exact = True
        if counts is None:
            counts = []
            for i, ce in enumerate(errors):
                if score_arrays is not None and score_arrays[i] is not None:
                    counts.append(histogram_counts(score_arrays[i], edges))
                else:
                    counts.append(_approx_hist(ce.bins, edges, scale))
                    exact = False
        return cls(labels=[lab for lab, _ in curves], errors=errors, tables=tables,
                   bin_interval=bin_interval, scale=scale, yscale=yscale, limits=limits,
                   hist_edges=edges, hist_counts=counts, hist_exact=exact)

    @classmethod
    def from_entries(cls, entries, *, n_bins=None, binning="equal-mass", ci=None,
                     scale="linear", yscale=None, hist_bins=40, bin_interval="wilson"):
        """The curve of all entries (their SMCE) with the exact score histogram.

        Parameters
        ----------
        entries : Entries or dict of str to Entries
            One curve each; a dict's keys are the labels.
        n_bins, binning, ci
            As :func:`sparsecal.smce`.
        scale, yscale, hist_bins, bin_interval
            As :meth:`from_results`.

        Returns
        -------
        ReliabilityDisplay
        """
        pairs = _labelled(entries, Entries, "entries", "sparsecal.threshold")
        errors = [smce(e, n_bins=n_bins, binning=binning, ci=ci) for _, e in pairs]
        return cls.from_results(errors, [lab for lab, _ in pairs],
                                scores=[e.score for _, e in pairs], scale=scale,
                                yscale=yscale, hist_bins=hist_bins,
                                bin_interval=bin_interval)

    def plot(self, ax=None, *, hist_ax=None, show_distribution=True, title=None,
             colors=None, figsize=(5.2, 5.8)):
        """Draw the curves, and the histogram below. On a log or logit axis a bin
        at 0 or 1 is a triangle at the edge it lies beyond.

        Parameters
        ----------
        ax, hist_ax : matplotlib Axes, optional
            Draw into these instead of a new figure (the histogram only with
            ``hist_ax``).
        show_distribution : bool, default True
            Draw the histogram (on a new figure).
        title, colors, figsize : optional
            Title (default "Calibration curve (<B> equal-mass bins)", "" for
            none), colours (default :data:`COLORS`), size of a new figure.

        Returns
        -------
        ReliabilityDisplay
            ``self``, with ``figure_``, ``ax_`` and ``hist_ax_`` set.
        """
        owned = ax is None
        with _rc_style():
            fig, ax, hist_ax = _main_and_lower_axes(ax, hist_ax, show_distribution,
                                                    figsize, "hist_ax")
            handles = []
            xlo, xhi, ylo, yhi = self.limits
            pad = 0.02 if self.scale == "linear" else 0.0
            ypad = 0.02 if self.yscale == "linear" else 0.0
            for i, (label, ce, t) in enumerate(zip(self.labels, self.errors, self.tables)):
                text = _ce_text(ce)
                handles.append(_draw_curve(
                    ax, t, i, text if label is None else f"{label}: {text}", colors,
                    scales=(self.scale, self.yscale),
                    limits=(xlo - pad, xhi + pad, ylo - ypad, yhi + ypad)))
            _set_scale(ax, "x", self.scale)
            _set_scale(ax, "y", self.yscale)
            ax.set_xlim(xlo - pad, xhi + pad)
            ax.set_ylim(ylo - ypad, yhi + ypad)
            handles.append(_diagonal(ax, max(xlo, ylo), min(xhi, yhi),
                                     label="perfect calibration"))
            ax.set_ylabel("empirical frequency of the label")
            ax.grid(True, color="#E5E5E5", linewidth=0.6)
            if title is None:
                title = f"Calibration curve ({_bins_phrase(self.errors[0])})"
            if title:
                ax.set_title(title)
            _legend(ax, owned, handles, [h.get_label() for h in handles],
                    title=_off_axis_note(_intervals_title(self.errors, self.bin_interval),
                                         [ax]),
                    title_fontsize=7.5)
            if hist_ax is not None:
                self._draw_histogram(hist_ax, colors)
                ax.tick_params(labelbottom=False)
            else:
                ax.set_xlabel("predicted score")
        self.figure_, self.ax_, self.hist_ax_ = fig, ax, hist_ax
        return self

    def _draw_histogram(self, hist_ax, colors):
        for i, h in enumerate(self.hist_counts):
            st = _style_of(i, colors)
            hist_ax.stairs(h, self.hist_edges, color=st["color"], linewidth=1.3,
                           linestyle=st["linestyle"], fill=False, baseline=None,
                           gid=f"hist-{i}")
            if i == 0:
                hist_ax.stairs(h, self.hist_edges, color=st["color"], alpha=0.15,
                               fill=True, linewidth=0)
        hist_ax.set_yscale("log")
        hist_ax.set_ylabel("entries" + ("" if self.hist_exact else " (approx.)"))
        hist_ax.set_xlabel("predicted score")
        hist_ax.grid(True, axis="y", color="#E5E5E5", linewidth=0.6)


@takes_data(refuse="its scores= are only for the exact histogram; on a cluster pass "
                    "hist_counts= from sparsecal.distributed.score_histogram")
def reliability_diagram(results, labels=None, *, scores=None, scale="linear", yscale=None,
                        show_distribution=True, hist_bins=40, ax=None, hist_ax=None,
                        title=None, colors=None, figsize=(5.2, 5.8), bin_interval="wilson",
                        hist_counts=None):
    """The figure of :class:`ReliabilityDisplay`, in one call.

    Parameters
    ----------
    results, labels, scores, scale, yscale, hist_bins, bin_interval, hist_counts
        As :meth:`ReliabilityDisplay.from_results`.
    show_distribution, ax, hist_ax, title, colors, figsize
        As :meth:`ReliabilityDisplay.plot`.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import calibration_error
    >>> from sparsecal.plotting import reliability_diagram
    >>> s = np.linspace(0.01, 0.99, 500)
    >>> fig = reliability_diagram(calibration_error(s, (s > 0.5).astype(np.uint8)),
    ...                           scale="logit")
    >>> [ax.get_xlabel() for ax in fig.axes]
    ['', 'predicted score']
    """
    display = ReliabilityDisplay.from_results(
        results, labels, scores=scores, hist_counts=hist_counts, scale=scale,
        yscale=yscale, hist_bins=hist_bins, bin_interval=bin_interval)
    return display.plot(ax, hist_ax=hist_ax, show_distribution=show_distribution,
                        title=title, colors=colors, figsize=figsize).figure_


#: Markers of a bin off a log or logit axis, by the edge it lies beyond.
_OFF_AXIS = {("x", 0): "<", ("x", 1): ">", ("y", 0): "v", ("y", 1): "^"}


def _draw_curve(ax, table, i, label, colors, markersize=5, errorbars=True,
                scales=("linear", "linear"), limits=None):
    """Curve ``i``: bin means with their interval bars; returns the errorbar
    container (shared with the per-group grid). On log or logit ``scales``
    (x, y; axis ``limits`` ``(x0, x1, y0, y1)``) a bin off an axis (a mean score
    or label rate of 0, or 1 on logit) is a triangle at the edge it lies
    beyond, its bar drawn up to the edge."""
    x, y = table["mean_score"], table["mean_label"]
    low, high = table["ci_low"], table["ci_high"]
    st = _style_of(i, colors)
    off = np.full(y.shape, "")
    for axis, scale, values in (("x", scales[0], x), ("y", scales[1], y)):
        if scale != "linear":   # the rate's marker wins over the score's
            off[values <= 0] = _OFF_AXIS[axis, 0]
            if scale == "logit":
                off[values >= 1] = _OFF_AXIS[axis, 1]
    if scales[0] != "linear":
        x = np.clip(x, *limits[:2])
    if scales[1] != "linear":
        y, low, high = (np.clip(v, *limits[2:]) for v in (y, low, high))
    yerr = np.vstack([y - low, high - y]) if errorbars else None
    cont = ax.errorbar(x, y, yerr=yerr, color=st["color"], marker=st["marker"],
                       linestyle=st["linestyle"], markersize=markersize, linewidth=1.4,
                       elinewidth=1.0, capsize=2.5 if errorbars else 0,
                       markeredgecolor="white", markeredgewidth=0.6, label=label,
                       zorder=3 + i, markevery=list(np.flatnonzero(off == "")))
    cont.lines[0].set_gid(f"curve-{i}")
    for marker in _OFF_AXIS.values():
        at = off == marker
        if at.any():
            ax.plot(x[at], y[at], linestyle="none", marker=marker, color=st["color"],
                    markersize=markersize + 1, clip_on=False, zorder=3 + i,
                    gid=f"off-axis-{i}")
    return cont


def _off_axis_note(title, axes):
    """``title`` with a line on the triangles of :func:`_draw_curve`, if any are drawn."""
    if not any(str(line.get_gid()).startswith("off-axis-") for a in axes for line in a.lines):
        return title
    return "\n".join(filter(None, [title, "triangles: bins at 0 or 1, off the axes"]))


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


def _hist_edges(limits, scale, n):
    """``n`` histogram bins evenly spaced on the score axis."""
    lo, hi = (max(limits[0], 1e-15), limits[1]) if scale != "linear" else (0.0, 1.0)
    return _from_display(np.linspace(_to_display(lo, scale), _to_display(hi, scale),
                                     n + 1), scale)


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


def _approx_hist(bins, edges, scale):
    """Counts per histogram bin, spreading each bin's count evenly (in display
    coordinates) over its score range [lower, upper]."""
    out = np.zeros(edges.shape[0] - 1)
    e = _to_display(np.clip(edges, 1e-15, 1 - 1e-15) if scale == "logit" else
                    np.clip(edges, 1e-15, None) if scale == "log" else edges, scale)
    keep = bins.count > 0
    lo, hi, cnt = bins.lower[keep], bins.upper[keep], bins.count[keep].astype(float)
    if scale != "linear":
        lo = np.clip(lo, 1e-15, 1 - 1e-15 if scale == "logit" else 1.0)
        hi = np.clip(hi, 1e-15, 1 - 1e-15 if scale == "logit" else 1.0)
    a, b = _to_display(lo, scale), _to_display(hi, scale)
    for ai, bi, c in zip(a, b, cnt):   # over the bins (tens), not the entries
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
    """None, or one 1-D array (or None) per curve; a single array is shared."""
    if scores is None:
        return None
    if isinstance(scores, np.ndarray) or is_distributed(scores) or (
            isinstance(scores, Sequence) and scores and isinstance(scores[0], numbers.Real)):
        scores = [scores] * n_curves
    scores = list(scores.values() if isinstance(scores, Mapping) else scores)
    if len(scores) != n_curves:
        raise ValueError(f"got {len(scores)} score arrays for {n_curves} curves")
    out = []
    for i, s in enumerate(scores):
        if is_distributed(s):
            raise TypeError(f"scores[{i}] is distributed (dask): count its histogram on the "
                            "cluster (sparsecal.distributed.score_histogram) and pass "
                            "hist_counts")
        a = None if s is None else np.asarray(s, dtype=np.float64)
        if a is not None and a.ndim != 1:
            raise ValueError(f"scores[{i}] must be 1-dimensional, got shape {a.shape}")
        if a is not None and a.size and (np.isnan(a).any() or a.min() < 0 or a.max() > 1):
            raise ValueError(f"scores[{i}] must be probabilities in [0, 1]")
        out.append(a)
    return out
