"""Per-tag calibration error of the most frequent tags, as horizontal bars with
95% interval whiskers (Nguyen & O'Connor 2015, Fig. 4)."""
import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from ..metrics import CalibrationError, MarginalCalibrationError
from ._inputs import _check_labels_arg, _is_evaluation
from ._labels import _ce_symbol
from ._style import _rc_style, _single_axes, _style_of

__all__ = ["per_tag_ce"]


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
    ax : matplotlib Axes, optional
        Draw into this instead of a new figure.
    title : str, optional
        Default "Calibration error of the <top> most frequent tags"; "" for none.
    colors : sequence of colours, optional
        One per model; defaults to :data:`COLORS` (Okabe-Ito).
    figsize : (float, float), optional
        Size in inches of a new figure; default from the longest tag name and
        the number of rows.

    Returns
    -------
    matplotlib.figure.Figure
        The given axes' figure, or a new one sized for the tag names.

    Raises
    ------
    TypeError
        If an input is not one of the forms above, ``tag_names`` is not a
        sequence, dict or TagGroups, or ``ax`` is not a matplotlib Axes.
    ValueError
        If ``top`` is not a positive integer, an input is empty, an
        EvaluationResult has no per-tag CE, or labels are given twice or with
        the wrong length.

    References
    ----------
    .. [1] Nguyen & O'Connor 2015, "Posterior calibration and exploratory analysis for
       natural language processing models", EMNLP, Section 4.2.2-4.2.3 and Fig. 4
       (calibration error of the most frequent tags, with averages over them).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sparsecal.plotting import per_tag_ce
    >>> fig = per_tag_ce({"NN": 0.02, "VB": 0.05, "JJ": 0.01},
    ...                  counts={"NN": 30, "VB": 20, "JJ": 10})
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['NN  (n=30)', 'VB  (n=20)', 'JJ  (n=10)', 'RMS, these 3 tags']
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
    with _rc_style():
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
