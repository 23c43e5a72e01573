"""Calibration error per recalibration method and group, uncalibrated -> TFG,
with SCW alongside (Kranzlein et al. 2021, Fig. 2 and 3), and the table it
draws built from evaluations."""
import numbers
from collections.abc import Mapping

import numpy as np

from ..metrics import CalibrationError
from ._inputs import _is_evaluation
from ._style import _BLUE, _GREEN, _GREY, _RED, _panel_axes, _rc_style

__all__ = ["comparison_table", "method_comparison"]


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

    Raises
    ------
    TypeError
        If ``before`` or a value of ``tfg`` / ``scw`` is not an
        EvaluationResult, ``tfg`` is not a non-empty dict or ``scw`` not a dict.
    ValueError
        If ``scw`` has a method that ``tfg`` lacks.

    References
    ----------
    .. [1] Kranzlein, Liu & Schneider 2021, "Making Heads and Tails of Models with
       Marginal Calibration for Sparse Tagsets", Findings of EMNLP, Section 4.2 (SMCE
       and GMCE per method; TFG against SCW), Fig. 2 and 3.

    Examples
    --------
    >>> import sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> from sparsecal.plotting import comparison_table
    >>> dev, test = (make_tagger_outputs(500, n_tags=20, split_seed=k) for k in (1, 2))
    >>> groups = sc.TagGroups.tfg(dev.train_counts, n_groups=2, n_tags=20)
    >>> e_dev, e_test = (sc.threshold(d.scores, d.gold, 0.01) for d in (dev, test))
    >>> tfg = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups).fit(e_dev)
    >>> before = sc.evaluate(e_test, groups, ci=None)
    >>> after = sc.evaluate(tfg.transform(e_test), groups, ci=None)
    >>> table = comparison_table(before, {"IR": after})
    >>> sorted(table["IR"]), len(table["IR"]["none"])   # All, Group 1, Group 2
    (['none', 'tfg'], 3)
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
    title : str, optional
        Figure title; default "Calibration error before and after recalibration
        (lower is better)", "" for none.
    xlabel : str, optional
        Default "SMCE" under the "All" panel and "GMCE" under the others.
    include_zero : bool, default True
        Start every x axis at 0, so that arrow lengths read as relative changes.
    scw_offset : float, default 0.25
        Draw the SCW square this far below its method's arrow (in rows), so
        that it never hides the arrowhead; 0 puts it on the arrow's line as in
        the paper.
    panel_size : (float, float or None), default (2.6, None)
        Size in inches of one panel of a new figure; a height of None is
        ``0.9 + row_height * n_methods``.
    row_height : float, default 0.55
        Height in inches per method when ``panel_size`` gives none.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per column; the legend below (on a new figure only).

    Raises
    ------
    TypeError
        If ``table`` or a row of it is not a dict, or ``axes`` holds something
        other than matplotlib Axes.
    ValueError
        If a row lacks "none" or "tfg" or has other keys, rows differ in
        length, a value is negative or infinite, ``columns`` has the wrong
        length, ``ncols`` is not a positive integer, or ``axes`` is too short.

    References
    ----------
    .. [1] Kranzlein, Liu & Schneider 2021, "Making Heads and Tails of Models with
       Marginal Calibration for Sparse Tagsets", Findings of EMNLP, Section 5 and Fig. 2
       (SMCE) and 3 (GMCE per group).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sparsecal.plotting import method_comparison
    >>> table = {"HB": {"none": [0.03, 0.04], "tfg": [0.01, 0.05], "scw": [0.02, 0.03]},
    ...          "IR": {"none": [0.03, 0.04], "tfg": [0.01, 0.02]}}
    >>> fig = method_comparison(table, columns=["All", "Group 1"])
    >>> [ax.get_title() for ax in fig.axes], [ax.get_xlabel() for ax in fig.axes]
    (['All', 'Group 1'], ['SMCE', 'GMCE'])
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
    with _rc_style():
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


def _max_n_locator(n):
    from matplotlib.ticker import MaxNLocator
    return MaxNLocator(nbins=n, min_n_ticks=3)
