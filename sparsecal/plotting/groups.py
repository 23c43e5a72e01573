"""A grid of small reliability diagrams, one per tag group (TFG; Kranzlein et
al. 2021, Section 3.3)."""
import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from ..metrics import CalibrationError, reliability_table
from ._inputs import _check_labels_arg, _is_evaluation
from ._labels import _ce_symbol, _ce_text
from ._scales import _check_scale, _diagonal, _scale_limits, _set_scale
from ._style import _GREY, _panel_axes, _rc_style, _style_of
from .reliability import _draw_curve

__all__ = ["group_reliability"]


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
    title : str, optional
        Figure title; default "Calibration per tag-frequency group", "" for none.
    colors : sequence of colours, optional
        Defaults to :data:`COLORS` (Okabe-Ito).
    panel_size : (float, float), default (2.9, 2.7)
        Size in inches of one panel of a new figure.
    errorbars : bool, default True
        Per-bin 95% intervals of the label rate.

    Empty groups (None) get a panel saying so. Each panel lists the CE of each
    curve in that curve's colour; one legend names the curves.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per group (spare grid cells hold the legend or are blank).

    Raises
    ------
    TypeError
        If ``per_group_results`` (or an item of it) is not one of the forms
        above, or ``axes`` holds something other than matplotlib Axes.
    ValueError
        If it is empty, every group is empty, curves or groups do not line up,
        ``group_names`` or ``labels`` has the wrong length, ``ncols`` is not a
        positive integer, ``scale`` is unknown, or ``axes`` is too short.

    References
    ----------
    .. [1] Kranzlein, Liu & Schneider 2021, "Making Heads and Tails of Models with
       Marginal Calibration for Sparse Tagsets", Findings of EMNLP, Section 3.3 (tag
       frequency grouping) and Fig. 1.
    .. [2] Nguyen & O'Connor 2015, "Posterior calibration and exploratory analysis for
       natural language processing models", EMNLP, Section 3.3 (calibration curves).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sparsecal.plotting import group_reliability
    >>> from sparsecal import calibration_error
    >>> import numpy as np
    >>> s = np.linspace(0.01, 0.99, 1000)
    >>> frequent = calibration_error(s, (s > 0.5).astype(np.uint8))
    >>> rare = calibration_error(s[::4], (s[::4] > 0.3).astype(np.uint8))
    >>> fig = group_reliability([frequent, None, rare], ["frequent", "middle", "rare"])
    >>> [ax.get_title() for ax in fig.axes]
    ['frequent', 'middle', 'rare']
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
    with _rc_style():
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
