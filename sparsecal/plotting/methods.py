"""Calibration error per recalibration method and group, uncalibrated -> TFG,
with SCW alongside (Kranzlein et al. 2021, Fig. 2 and 3)."""
import numbers

import numpy as np

from ..calibration.comparison import MethodComparison
from ..calibration.registry import METHODS
from ._style import _BLUE, _GREEN, _GREY, _RED, _legend, _panel_axes, _rc_style

__all__ = ["MethodComparisonDisplay"]


class MethodComparisonDisplay:
    """CE per method and column (all entries, each group): uncalibrated, after
    TFG and after SCW recalibration.

    Build it from :func:`sparsecal.compare_methods`' result with
    :meth:`from_comparison`, or from numbers (e.g. a paper's) with the
    constructor; :meth:`plot` draws it.

    Parameters
    ----------
    methods : list of str
        Row names.
    columns : list of str
        Panel names, e.g. ``["All", "Group 1", ...]``.
    none, tfg : array_like, shape (n_methods, n_columns)
        CE uncalibrated and after TFG recalibration; NaN where missing.
    scw : array_like, shape (n_methods, n_columns), optional
        CE after SCW recalibration; NaN where missing.

    Attributes
    ----------
    methods, columns : list of str
    none, tfg, scw : ndarray of float64
        ``scw`` all NaN when not given.
    figure_, axes_ : matplotlib objects
        Set by :meth:`plot`: the figure and the list of panels.

    Examples
    --------
    >>> from sparsecal.plotting import MethodComparisonDisplay
    >>> d = MethodComparisonDisplay(["HB", "IR"], ["All", "Group 1"],
    ...                             none=[[0.03, 0.04], [0.03, 0.04]],
    ...                             tfg=[[0.01, 0.05], [0.01, 0.02]])
    >>> [ax.get_xlabel() for ax in d.plot().axes_]
    ['SMCE', 'GMCE']
    """

    def __init__(self, methods, columns, none, tfg, scw=None):
        self.methods, self.columns = [str(m) for m in methods], [str(c) for c in columns]
        shape = (len(self.methods), len(self.columns))
        if 0 in shape:
            raise ValueError(f"need at least one method and one column, got {shape}")
        self.none, self.tfg = _values(none, "none", shape), _values(tfg, "tfg", shape)
        self.scw = np.full(shape, np.nan) if scw is None else _values(scw, "scw", shape)

    @classmethod
    def from_comparison(cls, comparison):
        """The SMCE and GMCE of every method in a comparison.

        Parameters
        ----------
        comparison : MethodComparison
            From :func:`sparsecal.compare_methods`.

        Returns
        -------
        MethodComparisonDisplay
            One row per method fitted with TFG, by its display name.
        """
        if not isinstance(comparison, MethodComparison):
            raise TypeError("comparison must be a MethodComparison (from "
                            f"sparsecal.compare_methods), got {type(comparison).__name__}")
        keys = [m for m, g in comparison.after if g == "tfg"]

        def row(method, grouping):
            result = comparison.after.get((method, grouping))
            return ([np.nan] * len(comparison.columns()) if result is None else
                    [np.nan if v is None else v for v in comparison.values(result)])

        none = [np.nan if v is None else v for v in comparison.values(comparison.before)]
        return cls([METHODS[m].display_name if m in METHODS else m for m in keys],
                   comparison.columns(), [none] * len(keys),
                   [row(m, "tfg") for m in keys], [row(m, "scw") for m in keys])

    def plot(self, axes=None, *, ncols=None, title=None, xlabel=None, include_zero=True,
             scw_offset=0.25, panel_size=(2.6, None), row_height=0.55):
        """Draw one panel per column: per method a circle (uncalibrated), an
        arrow to the TFG value (green: lower, red: higher), a square (SCW).

        Parameters
        ----------
        axes : sequence of matplotlib Axes, optional
            One per column, to draw into.
        ncols : int, optional
            Panels per row; default all up to 4 columns, else 3.
        title : str, optional
            Default "Calibration error before and after recalibration (lower
            is better)"; "" for none.
        xlabel : str, optional
            Default "SMCE" under "All", "GMCE" under the others.
        include_zero : bool, default True
            Start each x axis at 0 (arrow lengths read as relative changes).
        scw_offset : float, default 0.25
            Rows by which the SCW square sits below its arrow (0: on it, as
            the paper).
        panel_size : (float, float or None), default (2.6, None)
            Of one panel of a new figure; height None: ``0.9 + row_height *
            n_methods``.
        row_height : float, default 0.55

        Returns
        -------
        MethodComparisonDisplay
            ``self``, with ``figure_`` and ``axes_`` set.
        """
        n_cols, n_methods = len(self.columns), len(self.methods)
        if ncols is None:
            ncols = n_cols if n_cols <= 4 else 3
        if not isinstance(ncols, numbers.Integral) or ncols < 1:
            raise ValueError(f"ncols must be a positive integer, got {ncols!r}")
        nrows = -(-n_cols // ncols)
        height = panel_size[1] or (0.9 + row_height * n_methods)
        with _rc_style():
            fig, panels, spare = _panel_axes(
                axes, n_cols, "columns", nrows, ncols,
                (panel_size[0] * ncols + 0.7, height * nrows + 0.9), sharey=True)
            for a in spare:
                a.axis("off")
            for j, (a, col) in enumerate(zip(panels, self.columns)):
                self._draw_panel(a, j, include_zero, scw_offset)
                a.set_title(col)
                a.set_xlabel(xlabel if xlabel is not None else
                             "SMCE" if col.strip().lower() in ("all", "smce") else "GMCE")
            if title is None:
                title = "Calibration error before and after recalibration (lower is better)"
            if title:
                fig.suptitle(title)
            self._draw_legend(panels[0], axes is None)
        self.figure_, self.axes_ = fig, panels
        return self

    def _draw_panel(self, a, j, include_zero, scw_offset):
        from matplotlib.patches import FancyArrowPatch
        from matplotlib.ticker import MaxNLocator
        vals = np.r_[self.none[:, j], self.tfg[:, j], self.scw[:, j]]
        vals = vals[np.isfinite(vals)]
        vmax = vals.max() if vals.size else 1.0
        vmin = 0.0 if include_zero or not vals.size else vals.min()
        span = max(vmax - vmin, vmax * 0.05, 1e-6)
        a.set_xlim(0.0 if include_zero else max(0.0, vmin - 0.08 * span),
                   vmax + 0.12 * span)
        for i, (none, tfg, scw) in enumerate(zip(self.none[:, j], self.tfg[:, j],
                                                 self.scw[:, j])):
            a.axhline(i, color="#EEEEEE", linewidth=0.8, zorder=0)
            if scw_offset and np.isfinite(scw):
                a.axhline(i + scw_offset, color="#F4F4F4", linewidth=0.6, zorder=0)
            if np.isfinite(none) and np.isfinite(tfg):
                color = _GREEN if tfg < none else _RED if tfg > none else _GREY
                a.add_patch(FancyArrowPatch((none, i), (tfg, i), arrowstyle="-|>",
                                            mutation_scale=13, color=color, linewidth=2.0,
                                            shrinkA=4.5, shrinkB=0.5, zorder=3,
                                            gid="tfg-arrow"))
            elif np.isfinite(tfg):
                a.plot([tfg], [i], marker="|", color=_GREY, markersize=10, zorder=3)
            if np.isfinite(scw):
                a.plot([scw], [i + scw_offset], marker="s", linestyle="none",
                       markersize=7.5, markerfacecolor=_BLUE, markeredgecolor="white",
                       markeredgewidth=0.8, alpha=0.9, zorder=4, gid="scw")
            if np.isfinite(none):
                a.plot([none], [i], marker="o", linestyle="none", markersize=7.5,
                       color="black", markeredgecolor="white", markeredgewidth=0.8,
                       zorder=5, gid="uncalibrated")
            if not (np.isfinite(none) or np.isfinite(tfg) or np.isfinite(scw)):
                a.text(a.get_xlim()[1] / 2, i, "no entries", ha="center", va="center",
                       color=_GREY, fontsize=8, style="italic")
        a.set_ylim(len(self.methods) - 0.5, -0.5)
        a.set_yticks(np.arange(len(self.methods)), self.methods)
        a.spines["left"].set_visible(False)
        a.tick_params(axis="y", length=0)
        a.grid(True, axis="x", color="#E5E5E5", linewidth=0.6)
        a.xaxis.set_major_locator(MaxNLocator(nbins=4, min_n_ticks=3))

    def _draw_legend(self, ax, owned):
        from matplotlib.lines import Line2D
        handles = [
            Line2D([], [], marker="o", color="black", linestyle="none", markersize=7),
            Line2D([], [], marker=r"$\leftarrow$", color=_GREEN, linestyle="none",
                   markersize=16),
            Line2D([], [], marker=r"$\rightarrow$", color=_RED, linestyle="none",
                   markersize=16),
            Line2D([], [], marker="s", color=_BLUE, linestyle="none", markersize=7)]
        names = ["uncalibrated", "TFG recalibrated: lower", "TFG recalibrated: higher",
                 "SCW recalibrated"]
        n = 4 if np.isfinite(self.scw).any() else 3
        if owned:
            _legend(ax, owned, handles[:n], names[:n])


def _values(x, name, shape):
    """``x`` as a float array of ``shape``: non-negative finite, or NaN."""
    try:
        a = np.array([[np.nan if v is None else v for v in row] for row in x]
                     if isinstance(x, (list, tuple)) else x, dtype=np.float64)
    except (TypeError, ValueError):   # ragged rows, or not numbers
        raise ValueError(f"{name} must be numbers of shape {shape} (methods x "
                         "columns)") from None
    if a.shape != shape:
        raise ValueError(f"{name} must have shape {shape} (methods x columns), got "
                         f"{a.shape}")
    if np.isinf(a).any() or (a[np.isfinite(a)] < 0).any():
        raise ValueError(f"{name} must hold non-negative finite calibration errors "
                         "(NaN for missing)")
    return a
