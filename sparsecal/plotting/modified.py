"""Modified reliability plot: accuracy - confidence against confidence, marker
area proportional to bin size (Jagannatha & Yu 2020, Fig. 1)."""
import math
import numbers

import numpy as np

from ..core.entries import Entries
from ..metrics import calibration_error, reliability_table, top_label
from ._inputs import _curves, _labelled
from ._labels import _bins_phrase, _ce_text, _intervals_title
from ._style import _GREY, _legend, _rc_style, _single_axes, _style_of

__all__ = ["ModifiedReliabilityDisplay"]


class ModifiedReliabilityDisplay:
    """Per bin, accuracy - confidence against confidence; marker area the bin's
    size, inner area its positives (Jagannatha & Yu 2020, Fig. 1). Points above
    zero are underconfident, below overconfident.

    Build it with :meth:`from_results` or :meth:`from_entries`; :meth:`plot`
    draws it.

    Attributes
    ----------
    labels : list of str or None
        One per series.
    errors : list of CalibrationError
        Each series' CE (the legend; the points are its bins).
    tables : list of ReliabilityTable
        Each series' :func:`sparsecal.reliability_table` (Wilson intervals at
        its CE's level, 95% without one).
    positives : list of ndarray
        Each series' positives per non-empty bin.
    figure_, ax_ : matplotlib objects
        Set by :meth:`plot`.

    Examples
    --------
    >>> import sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> from sparsecal.plotting import ModifiedReliabilityDisplay
    >>> data = make_tagger_outputs(1000, n_tags=20)
    >>> entries = sc.threshold(data.scores, data.gold, 0.01)
    >>> d = ModifiedReliabilityDisplay.from_entries({"tagger": entries})
    >>> d.plot().ax_.get_title()
    'Modified reliability plot (20 fixed-width bins)'
    """

    def __init__(self, *, labels, errors, tables, positives):
        self.labels, self.errors, self.tables, self.positives = (labels, errors, tables,
                                                                 positives)

    @classmethod
    def from_results(cls, results, labels=None):
        """The series of calibration errors.

        Parameters
        ----------
        results : CalibrationError, EvaluationResult, or a list or dict of them
            One series each; an EvaluationResult gives its top-label ECE
            (else its SMCE); a dict's keys are the labels.
        labels : list of str, optional
            Label per series (not with a dict).

        Returns
        -------
        ModifiedReliabilityDisplay
        """
        curves = _curves(results, labels, evaluation_attr="top_label_ece")
        errors = [ce for _, ce in curves]
        return cls(labels=[lab for lab, _ in curves], errors=errors,
                   tables=[reliability_table(ce.bins, ci=ce.ci or "simulation")
                           for ce in errors],
                   positives=[ce.bins.sum_label[ce.bins.count > 0] for ce in errors])

    @classmethod
    def from_entries(cls, entries, *, n_bins=20, binning="fixed", norm=1, ci=None):
        """The series of entries' top-label confidence and correctness.

        Parameters
        ----------
        entries : Entries or dict of str to Entries
            One series each; a dict's keys are the labels.
        n_bins : int, default 20
            Jagannatha & Yu's 20 fixed-width bins.
        binning : {"fixed", "equal-mass"}, default "fixed"
        norm : {1, 2, inf}, default 1
            The CE in the legend (1: ECE).
        ci : None, str or ConfidenceInterval, optional
            The CE's interval (:func:`sparsecal.calibration_error`).

        Returns
        -------
        ModifiedReliabilityDisplay
        """
        if not isinstance(n_bins, numbers.Integral) or n_bins < 1:
            raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
        pairs = _labelled(entries, Entries, "entries", "sparsecal.threshold")
        errors = [calibration_error(*top_label(e), binning=binning, n_bins=n_bins,
                                    norm=norm, ci=ci) for _, e in pairs]
        return cls.from_results(errors, [lab for lab, _ in pairs])

    def plot(self, ax=None, *, show_positives=True, errorbars=False, title=None,
             colors=None, max_marker_area=600.0, xlim=None, figsize=(7.2, 4.6)):
        """Draw the series, with the bin-size key right of the axes.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Draw into this instead of a new figure.
        show_positives : bool, default True
            Fill an inner marker whose area is the bin's positives.
        errorbars : bool, default False
            Also draw each bin's interval of its accuracy.
        title, colors, figsize : optional
            Title (default "Modified reliability plot (<B> fixed-width bins)",
            "" for none), colours (default :data:`COLORS`), size of a new figure.
        max_marker_area : float, default 600
            Area (points^2) of the largest bin; all series share the scale.
        xlim : (float, float), optional
            Default from the data, ending at 1.

        Returns
        -------
        ModifiedReliabilityDisplay
            ``self``, with ``figure_`` and ``ax_`` set.
        """
        cmax = max(float(t["count"].max()) for t in self.tables)
        scale_area = max_marker_area / cmax
        owned = ax is None
        with _rc_style():
            fig, ax = _single_axes(ax, figsize)
            ax.axhline(0.0, color=_GREY, linestyle=":", linewidth=1.3, zorder=1)
            handles, names = [], []
            for i, (lab, ce) in enumerate(zip(self.labels, self.errors)):
                handles.append(self._draw_series(ax, i, scale_area, show_positives,
                                                 errorbars, colors))
                names.append(_ce_text(ce) if lab is None else f"{lab}: {_ce_text(ce)}")
            d = np.concatenate([t["mean_label"] - t["mean_score"] for t in self.tables])
            lim = max(float(np.abs(d).max()) * 1.2, 0.02)
            ax.set_ylim(-lim, lim)
            if xlim is None:
                xmin = min(float(t["mean_score"].min()) for t in self.tables)
                xlim = (max(0.0, math.floor((xmin - 0.04) * 10) / 10), 1.02)
            ax.set_xlim(*xlim)
            ax.set_xlabel("confidence (mean score in bin)")
            ax.set_ylabel("accuracy − confidence")
            ax.grid(True, color="#EEEEEE", linewidth=0.6)
            for y, va, text in ((0.98, "top", "underconfident"),
                                (0.02, "bottom", "overconfident")):
                ax.text(0.01, y, text, transform=ax.transAxes, ha="left", va=va,
                        color=_GREY, fontsize=8, style="italic")
            if title is None:
                title = f"Modified reliability plot ({_bins_phrase(self.errors[0])})"
            if title:
                ax.set_title(title)
            key = _legend(ax, owned, handles, names, title_fontsize=7.5,
                          title=_intervals_title(self.errors, "wilson" if errorbars else
                                                 None, "of each bin's accuracy"))
            if not owned:
                ax.add_artist(key)   # the size key below replaces the axes' legend
            _draw_size_key(ax, cmax, scale_area, show_positives)
        self.figure_, self.ax_ = fig, ax
        return self

    def _draw_series(self, ax, i, scale_area, show_positives, errorbars, colors):
        """Series ``i``: line, rings of the bin sizes, filled positives; its
        legend handle."""
        from matplotlib.colors import to_rgb
        from matplotlib.lines import Line2D
        t, pos, st = self.tables[i], self.positives[i], _style_of(i, colors)
        x, d = t["mean_score"], t["mean_label"] - t["mean_score"]
        ax.plot(x, d, color=st["color"], linestyle=st["linestyle"], linewidth=1.1,
                alpha=0.9, zorder=2)
        if errorbars:
            yerr = np.vstack([t["mean_label"] - t["ci_low"], t["ci_high"] - t["mean_label"]])
            ax.errorbar(x, d, yerr=yerr, fmt="none", ecolor=st["color"], elinewidth=0.9,
                        capsize=2, alpha=0.7, zorder=2, gid=f"ci-{i}")
        area = t["count"] * scale_area
        ax.scatter(x, d, s=area, facecolors="none", edgecolors=st["color"],
                   linewidths=1.2, marker="o", zorder=4, gid=f"bins-{i}")
        inner = np.maximum(pos * scale_area, 1.5) if show_positives else area
        ax.scatter(x, d, s=inner, color=st["color"], alpha=0.45, linewidths=0,
                   marker="o", zorder=3, gid=f"positives-{i}")
        return Line2D([], [], color=st["color"], marker="o",
                      markerfacecolor=(*to_rgb(st["color"]), 0.45),
                      linestyle=st["linestyle"], markersize=8)


def _draw_size_key(ax, cmax, scale_area, show_positives):
    """Round bin sizes, outside right of the axes."""
    from matplotlib.lines import Line2D
    refs = _nice_sizes(cmax)
    handles = [Line2D([], [], marker="o", linestyle="none",
                      markersize=math.sqrt(r * scale_area), markerfacecolor="none",
                      markeredgecolor="#555555") for r in refs]
    ax.legend(handles, [f"{int(r):,}" for r in refs], loc="center left",
              bbox_to_anchor=(1.01, 0.5), labelspacing=1.6, borderpad=1.0,
              handletextpad=1.2, frameon=False, fontsize=8.5,
              title="bin size" + ("\n(fill: positives)" if show_positives else ""))


def _nice_sizes(cmax):
    """Up to three round numbers at or below ``cmax`` for a size legend."""
    top = 10 ** math.floor(math.log10(cmax))
    for m in (5, 2, 1):
        if m * top <= cmax:
            top = m * top
            break
    out = [top, top / 10, top / 100] if top >= 100 else [top, max(top / 10, 1)]
    return sorted({max(1.0, float(v)) for v in out})
