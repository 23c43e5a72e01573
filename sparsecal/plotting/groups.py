"""A grid of small reliability diagrams, one per tag group (TFG; Kranzlein et
al. 2021, Section 3.3)."""
import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from ..metrics import CalibrationError, reliability_table
from ._inputs import _is_evaluation
from ._labels import _ce_symbol, _ce_text, _intervals_title, _is_debiased
from ._scales import _check_scale, _diagonal, _scale_limits, _set_scale
from ._style import _GREY, _panel_axes, _rc_style, _style_of
from .reliability import _draw_curve, _off_axis_note

__all__ = ["GroupReliabilityDisplay"]


class GroupReliabilityDisplay:
    """One small reliability diagram per tag group, with each curve's CE.

    Build it with :meth:`from_results`; :meth:`plot` draws it.

    Attributes
    ----------
    labels : list of str or None
        One per curve.
    group_names : list of str
        The panels' titles.
    errors : list of list
        ``errors[g][c]``: curve ``c``'s CalibrationError in group ``g``, None
        for an empty group.
    tables : list of list
        ``tables[g][c]``: its :func:`sparsecal.reliability_table` at its
        interval level (95% without one), or None.
    bin_interval : {"wilson", "clopper-pearson"}
    scale : {"linear", "log", "logit"}
        Of both axes.
    limits : (float, float)
        The range of both axes, shared by the panels.
    figure_, axes_ : matplotlib objects
        Set by :meth:`plot`: the figure and the list of group panels.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import calibration_error
    >>> from sparsecal.plotting import GroupReliabilityDisplay
    >>> s = np.linspace(0.01, 0.99, 1000)
    >>> frequent = calibration_error(s, (s > 0.5).astype(np.uint8))
    >>> rare = calibration_error(s[::4], (s[::4] > 0.3).astype(np.uint8))
    >>> d = GroupReliabilityDisplay.from_results([frequent, None, rare],
    ...                                          group_names=["frequent", "middle", "rare"])
    >>> [ax.get_title() for ax in d.plot().axes_]
    ['frequent', 'middle', 'rare']
    """

    def __init__(self, *, labels, group_names, errors, tables, bin_interval, scale,
                 limits):
        self.labels, self.group_names, self.errors, self.tables = (labels, group_names,
                                                                   errors, tables)
        self.bin_interval, self.scale, self.limits = bin_interval, scale, limits

    @classmethod
    def from_results(cls, results, *, group_names=None, scale="linear",
                     bin_interval="wilson"):
        """The per-group curves of evaluations or per-group CEs.

        Parameters
        ----------
        results : EvaluationResult, list, or dict of str to either
            An evaluation (its GMCE per group), a list over groups of
            CalibrationError (None: an empty group), or a dict of these, one
            curve each (e.g. before and after recalibration).
        group_names : list of str, optional
            Default "Group g", with the group's tags and entries from an
            evaluation.
        scale : {"linear", "log", "logit"}, default "linear"
        bin_interval : {"wilson", "clopper-pearson"}, default "wilson"

        Returns
        -------
        GroupReliabilityDisplay
        """
        labels, columns, summary = _columns(results)
        n_groups = len(columns[0])
        errors = [[col[g] for col in columns] for g in range(n_groups)]
        present = [ce for row in errors for ce in row if ce is not None]
        if not present:
            raise ValueError("every group is empty: nothing to plot")
        scale = _check_scale(scale)
        tables = [[None if ce is None else
                   reliability_table(ce.bins, ci=ce.ci or "simulation",
                                     bin_interval=bin_interval) for ce in row]
                  for row in errors]
        allx = np.concatenate([np.r_[t["mean_score"], t["mean_label"]]
                               for row in tables for t in row if t is not None])
        return cls(labels=labels, group_names=_group_names(group_names, n_groups, summary),
                   errors=errors, tables=tables, bin_interval=bin_interval, scale=scale,
                   limits=_scale_limits(allx, scale))

    def plot(self, axes=None, *, ncols=None, title=None, colors=None,
             panel_size=(2.9, 2.7), errorbars=True):
        """Draw one panel per group (a bin at 0 or 1, off a log or logit axis: a
        triangle at its edge).

        Parameters
        ----------
        axes : sequence of matplotlib Axes, optional
            At least one per group, to draw into.
        ncols : int, optional
            Panels per row; default ``min(n_groups, 3)``.
        title, colors : optional
            Title (default "Calibration per tag-frequency group", "" for
            none), colours (default :data:`COLORS`).
        panel_size : (float, float), default (2.9, 2.7)
            Of one panel of a new figure.
        errorbars : bool, default True
            Draw each bin's interval.

        Returns
        -------
        GroupReliabilityDisplay
            ``self``, with ``figure_`` and ``axes_`` set.
        """
        n_groups = len(self.group_names)
        if ncols is None:
            ncols = min(n_groups, 3)
        if not isinstance(ncols, numbers.Integral) or ncols < 1:
            raise ValueError(f"ncols must be a positive integer, got {ncols!r}")
        nrows = -(-n_groups // ncols)
        lo, hi = self.limits
        key_width = 0 if nrows * ncols > n_groups else 2.4   # no spare panel: a key beside
        with _rc_style():
            fig, panels, spare = _panel_axes(
                axes, n_groups, "groups", nrows, ncols,
                (panel_size[0] * ncols + key_width, panel_size[1] * nrows + 0.6),
                sharex=True, sharey=True)
            for a in panels:   # scales first: a shared axis's scale resets its limits
                _set_scale(a, "x", self.scale, max_ticks=3)
                _set_scale(a, "y", self.scale)
            pad = 0.02 if self.scale == "linear" else 0
            handles = {}
            for a, name, row, tabs in zip(panels, self.group_names, self.errors,
                                          self.tables):
                a.set_xlim(lo - pad, hi + pad)
                a.set_ylim(lo - pad, hi + pad)
                a.set_title(name, fontsize=10)
                a.grid(True, color="#EEEEEE", linewidth=0.5)
                self._draw_panel(a, row, tabs, colors, errorbars, handles)
            for a in spare:
                a.axis("off")
            if axes is None:
                fig.supxlabel("predicted score (bin mean)", fontsize=10)
                fig.supylabel("empirical frequency of the label", fontsize=10)
                for a in panels:
                    a.tick_params(labelbottom=True)
            if title is None:
                title = "Calibration per tag-frequency group"
            if title:
                fig.suptitle(title)
            self._draw_legend(panels, spare, handles, axes is None)
        self.figure_, self.axes_ = fig, panels
        return self

    def _draw_panel(self, a, row, tabs, colors, errorbars, handles):
        """One group: its curves, and each curve's CE top left in its colour."""
        if all(ce is None for ce in row):
            a.text(0.5, 0.5, "no entries", transform=a.transAxes, ha="center",
                   va="center", color=_GREY, fontsize=10, style="italic",
                   gid="empty-group")
            return
        _diagonal(a, *self.limits)
        k = 0
        first = next(ce for ce in row if ce is not None)
        a.text(0.04, 0.96, _ce_symbol(first.norm, _is_debiased(first)),
               transform=a.transAxes, ha="left", va="top", fontsize=8.5)
        for c, (ce, t) in enumerate(zip(row, tabs)):
            if ce is None:
                continue
            handles.setdefault(c, _draw_curve(a, t, c, self.labels[c], colors,
                                              markersize=4, errorbars=errorbars,
                                              scales=(self.scale, self.scale),
                                              limits=a.get_xlim() + a.get_ylim()))
            k += 1
            a.text(0.04, 0.96 - 0.085 * k, _ce_text(ce, symbol=False),
                   transform=a.transAxes, ha="left", va="top", fontsize=7.5,
                   color=_style_of(c, colors)["color"])

    def _draw_legend(self, panels, spare, handles, owned):
        """The curves' key with the intervals': in a spare panel, else right of
        the panels (at the emptiest corner of the caller's last axes)."""
        from matplotlib.lines import Line2D
        if len(self.labels) == 1 and self.labels[0] is None:
            hs, ls = [], []
        else:
            hs = [handles[c] for c in sorted(handles)]
            ls = [self.labels[c] for c in sorted(handles)]
        hs.append(Line2D([], [], color=_GREY, linestyle=":", linewidth=1.2))
        ls.append("perfect calibration")
        present = [ce for row in self.errors for ce in row if ce is not None]
        kw = dict(title=_off_axis_note(_intervals_title(present, self.bin_interval,
                                                        "per bin"), panels),
                  title_fontsize=8)
        if spare:
            spare[0].legend(hs, ls, loc="center", frameon=False, **kw)
        elif owned:   # right of the panels: below them is the x label
            panels[-1].figure.legend(hs, ls, loc="outside right center", frameon=False,
                                     **kw)
        else:
            panels[-1].legend(hs, ls, loc="best", **kw)


def _columns(results):
    """(curve labels, [per-group list of CalibrationError or None per curve],
    the first evaluation's group summary rows or None)."""
    if _is_evaluation(results) or not isinstance(results, Mapping):
        results = {None: results}
    if not results:
        raise ValueError("results is empty")
    labels, columns, summary = [], [], None
    for k, v in results.items():
        what = "results" if k is None else f"results[{k!r}]"
        if _is_evaluation(v):
            summary = summary or v.groups
            v = v.gmce
        if isinstance(v, (str, Mapping)) or not isinstance(v, Sequence) or not v:
            raise TypeError(f"{what} must be an EvaluationResult or a list over groups of "
                            f"CalibrationError or None, got {type(v).__name__}")
        for g, ce in enumerate(v):
            if ce is not None and not isinstance(ce, CalibrationError):
                raise TypeError(f"{what}[{g}] must be a CalibrationError or None, got "
                                f"{type(ce).__name__}")
        labels.append(None if k is None else str(k))
        columns.append(list(v))
    if len({len(c) for c in columns}) > 1:
        raise ValueError("every curve needs the same number of groups, got "
                         f"{[len(c) for c in columns]}")
    return labels, columns, summary


def _group_names(group_names, n_groups, summary):
    """The given names (checked), or "Group g" with its tags and entries."""
    if group_names is not None:
        names = [str(x) for x in group_names]
        if len(names) != n_groups:
            raise ValueError(f"got {len(names)} group names for {n_groups} groups")
        return names
    names = []
    for g in range(n_groups):
        name = f"Group {g + 1}"
        if summary is not None and g < len(summary):
            row = summary[g]
            name += f"\n{row.get('tag_types', '?')} tags"
            if "entries" in row:
                name += f", {row['entries']:,} entries"
        names.append(name)
    return names
