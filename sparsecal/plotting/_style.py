"""Shared look and layout of every figure: the palette, markers and line styles
of the curves, the rcParams style, new figures / axes (Agg canvas, no pyplot)
and legends placed off the data.

matplotlib is imported inside the helpers, never at import time."""
import numpy as np

__all__ = ["COLORS"]

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


def _rc_style():
    """A context in which the figures' rcParams (:data:`_STYLE`) hold."""
    import matplotlib
    return matplotlib.rc_context(_STYLE)


def _style_of(i, colors=None):
    """Colour, marker and line style of curve ``i`` (cycling through each)."""
    palette = COLORS if colors is None else tuple(colors)
    if not palette:
        raise ValueError("colors must not be empty")
    return {"color": palette[i % len(palette)], "marker": _MARKERS[i % len(_MARKERS)],
            "linestyle": _LINESTYLES[i % len(_LINESTYLES)]}


def _new_figure(figsize):
    """A figure with an Agg canvas and constrained layout; no pyplot involved."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _check_ax(ax, name="ax"):
    """``ax`` if it is None or a matplotlib Axes, else TypeError."""
    from matplotlib.axes import Axes
    if ax is not None and not isinstance(ax, Axes):
        raise TypeError(f"{name} must be a matplotlib Axes, got {type(ax).__name__}")
    return ax


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


def _main_and_lower_axes(ax, lower_ax, show_lower, figsize, lower_name):
    """``(fig, ax, lower_ax)``: a new figure with a main panel over a short panel
    sharing its x axis (just the main one without ``show_lower``), or the
    caller's axes; ``lower_ax`` is None when there is no lower panel. Call it
    inside :func:`_rc_style`."""
    _check_ax(ax)
    _check_ax(lower_ax, lower_name)
    if lower_ax is not None and ax is None:
        raise ValueError(f"{lower_name} needs ax as well")
    if ax is not None:
        return ax.figure, ax, lower_ax
    fig = _new_figure(figsize)
    if not show_lower:
        return fig, fig.add_subplot(), None
    gs = fig.add_gridspec(2, 1, height_ratios=(3.3, 1))
    ax = fig.add_subplot(gs[0])
    return fig, ax, fig.add_subplot(gs[1], sharex=ax)


def _legend(ax, owned, handles=None, labels=None, **kw):
    """A legend off the data: below the panels of a figure drawn here
    (``owned``), else where the caller's axes ``ax`` are emptiest ("best")."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if not owned:
        return ax.legend(handles, labels, loc="best", **kw)
    # the most columns (one row at best) whose legend fits across the figure
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    for ncols in range(len(labels), 0, -1):
        legend = fig.legend(handles, labels, loc="outside lower center", ncols=ncols,
                            frameon=False, **kw)
        if ncols == 1 or legend.get_window_extent(renderer).width <= fig.bbox.width:
            return legend
        legend.remove()
