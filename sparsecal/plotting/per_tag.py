"""Per-tag calibration error of the most frequent tags, as horizontal bars with
interval whiskers (Nguyen & O'Connor 2015, Fig. 4)."""
import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from ..metrics import MarginalCalibrationError
from ._inputs import _is_evaluation
from ._labels import _ce_symbol, _pct, _spec_phrase
from ._style import _legend, _rc_style, _single_axes, _style_of

__all__ = ["PerTagDisplay"]


class PerTagDisplay:
    """Per-tag CE of some tags for one or more models, with intervals, the RMS
    over the tags shown and each model's MCE.

    Build it from MCE results with :meth:`from_results`, or from numbers with
    the constructor; :meth:`plot` draws it.

    Parameters
    ----------
    tags : sequence
        The tags shown, top to bottom.
    values : array_like, shape (n_tags,) or (n_models, n_tags)
        CE per model and tag; NaN where missing.
    labels : list of str, optional
        Model names.
    tag_names : list of str, optional
        Names shown for ``tags``; default "tag <t>" for an integer tag.
    counts : array_like of int, shape (n_tags,), optional
        Entries per tag, shown beside its name.
    ci_low, ci_high : array_like, shape of ``values``, optional
        Interval ends (NaN where missing).
    ci_level : float, optional
        The intervals' level; ``ci_method`` their method's name.
    ci_method : str, optional
    mce : array_like, shape (n_models,), optional
        Each model's MCE over all ``n_evaluated`` tags it evaluated.
    n_evaluated : int, optional
    norm : float, default 2
        The CE's norm (the axis label).
    debias : bool, default False
        Whether the CEs are Kumar et al.'s debiased CE_2 (the axis label).

    Attributes
    ----------
    rms : ndarray of shape (n_models,)
        Each model's root mean square CE over the tags shown (the parameters
        are attributes too, arrays as float64 of shape (n_models, ...)).
    figure_, ax_ : matplotlib Figure and Axes
        Set by :meth:`plot`.

    Examples
    --------
    >>> from sparsecal.plotting import PerTagDisplay
    >>> d = PerTagDisplay(["NN", "VB"], [0.02, 0.05], counts=[30, 20])
    >>> ax = d.plot().ax_
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['NN  (n=30)', 'VB  (n=20)', 'RMS, these 2 tags']
    """

    def __init__(self, tags, values, *, labels=None, tag_names=None, counts=None,
                 ci_low=None, ci_high=None, ci_level=None, ci_method=None, mce=None,
                 n_evaluated=None, norm=2, debias=False):
        self.tags = list(tags)
        self.values = np.atleast_2d(np.asarray(values, dtype=np.float64))
        shape = self.values.shape
        if shape[1] != len(self.tags) or not len(self.tags):
            raise ValueError(f"values must hold one CE per tag ({len(self.tags)}) and "
                             f"model, got shape {shape}")
        self.labels = [None] * shape[0] if labels is None else [str(x) for x in labels]
        if len(self.labels) != shape[0]:
            raise ValueError(f"got {len(self.labels)} labels for {shape[0]} models")
        self.tag_names = ([f"tag {t}" if isinstance(t, numbers.Integral) else str(t)
                           for t in self.tags] if tag_names is None else
                          [str(x) for x in tag_names])
        self.counts = None if counts is None else np.asarray(counts, dtype=np.int64)
        nan = np.full(shape, np.nan)
        self.ci_low = nan if ci_low is None else np.atleast_2d(np.asarray(ci_low, float))
        self.ci_high = nan if ci_high is None else np.atleast_2d(np.asarray(ci_high, float))
        for name in ("tag_names", "counts"):
            v = getattr(self, name)
            if v is not None and len(v) != len(self.tags):
                raise ValueError(f"{name} must have one item per tag ({len(self.tags)})")
        if self.ci_low.shape != shape or self.ci_high.shape != shape:
            raise ValueError(f"ci_low and ci_high must have the shape of values, {shape}")
        self.ci_level, self.ci_method = ci_level, ci_method
        self.mce = None if mce is None else np.asarray(mce, dtype=np.float64).reshape(-1)
        self.n_evaluated, self.norm, self.debias = n_evaluated, norm, bool(debias)
        ok = np.isfinite(self.values)
        squares = np.where(ok, self.values, 0.0) ** 2
        with np.errstate(invalid="ignore"):   # a model without any value: NaN
            self.rms = np.sqrt(squares.sum(1) / ok.sum(1))

    @classmethod
    def from_results(cls, results, *, tag_names=None, top=20):
        """The per-tag CE of the ``top`` tags with the most entries.

        Parameters
        ----------
        results : MarginalCalibrationError, EvaluationResult, or dict of them
            From :func:`sparsecal.mce` or ``evaluate(..., per_tag=True)``; a
            dict's keys name the models (the first model ranks the tags).
        tag_names : sequence, dict or TagGroups, optional
            Name of each tag index (a TagGroups' from its tag index).
        top : int, default 20

        Returns
        -------
        PerTagDisplay
        """
        if not isinstance(top, numbers.Integral) or top < 1:
            raise ValueError(f"top must be a positive integer, got {top!r}")
        single = _is_evaluation(results) or not isinstance(results, Mapping)
        models = {None: results} if single else dict(results)
        if not models:
            raise ValueError("results is empty")
        mces = [_as_mce(v, "results" if single else f"results[{k!r}]")
                for k, v in models.items()]
        first = mces[0].per_tag
        tags = sorted(first, key=lambda t: (-first[t].n, t))[:top]
        ces = [[m.per_tag.get(t) for t in tags] for m in mces]

        def field(name):
            return [[np.nan if ce is None or getattr(ce, name) is None
                     else getattr(ce, name) for ce in row] for row in ces]

        with_ci = [ce for row in ces for ce in row if ce is not None and ce.ci is not None]
        names = _tag_name_func(tag_names)
        return cls(tags, field("value"), labels=None if single else list(models),
                   tag_names=[names(t) for t in tags], counts=[first[t].n for t in tags],
                   ci_low=field("ci_low"), ci_high=field("ci_high"),
                   ci_level=with_ci[0].ci_level if with_ci else None,
                   ci_method=with_ci[0].ci_method if with_ci else None,
                   mce=[m.value for m in mces], n_evaluated=max(len(m.per_tag) for m in mces),
                   norm=first[tags[0]].norm, debias=mces[0].debias)

    def plot(self, ax=None, *, show_mean=True, title=None, colors=None, figsize=None):
        """Draw the bars, most frequent tag on top, and the summary rows below.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Draw into this instead of a new figure.
        show_mean : bool, default True
            Add each model's MCE over all evaluated tags and, when fewer tags
            are shown, the RMS over those.
        title, colors, figsize : optional
            Title (default "Calibration error of the <k> most frequent tags",
            "" for none), colours (default :data:`COLORS`), size of a new
            figure (default from the tag names and the rows).

        Returns
        -------
        PerTagDisplay
            ``self``, with ``figure_`` and ``ax_`` set.
        """
        n_models, n_tags = self.values.shape
        rows = [_shorten(name) for name in self.tag_names]
        if self.counts is not None:
            rows = [f"{r}  (n={int(n):,})" for r, n in zip(rows, self.counts)]
        summary = self._summary() if show_mean else {}
        n_rows = n_tags + len(summary)
        if figsize is None:   # tick labels (~0.075 in a character) beside >= 4 in of bars
            label_in = 0.075 * max(len(r) for r in rows + list(summary))
            figsize = (max(6.4, 4.2 + label_in), 1.5 + (0.17 + 0.09 * n_models) * n_rows)
        bar_h = 0.8 / n_models
        ypos = np.arange(n_rows, dtype=float)
        ypos[n_tags:] += 0.6   # a gap before the summary rows
        owned = ax is None
        with _rc_style():
            fig, ax = _single_axes(ax, figsize)
            for k in range(n_models):
                self._draw_model(ax, k, ypos + (k - (n_models - 1) / 2) * bar_h, bar_h,
                                 [v[k] for v in summary.values()], colors)
            ax.set_yticks(ypos, rows + list(summary))
            for lbl in ax.get_yticklabels()[n_tags:]:
                lbl.set_fontweight("bold")
            if summary:
                ax.axhline(n_tags - 0.2, color="#999999", linewidth=0.8)
            ax.set_ylim(ypos[-1] + 0.6, -0.6)
            ax.tick_params(axis="y", length=0)
            ax.set_xlim(left=0)
            ax.grid(True, axis="x", color="#E5E5E5", linewidth=0.6)
            ax.set_xlabel(f"per-tag {'debiased ' if self.debias else ''}calibration "
                          f"error ({_ce_symbol(self.norm)}, lower is better)")
            if title is None:
                title = (f"Calibration error of the {n_tags} most frequent tags"
                         if self.counts is not None else f"Calibration error of {n_tags} tags")
            above = self._draw_legend(ax, owned)
            if title:
                ax.set_title(title, pad=22 if above else 6)
        self.figure_, self.ax_ = fig, ax
        return self

    def _summary(self):
        """{row name: value per model}: the RMS over the tags shown (unless they
        are all the evaluated tags: it is the MCE then), the MCE."""
        n_tags = self.values.shape[1]
        out = {}
        if self.mce is None or self.n_evaluated is None or n_tags < self.n_evaluated:
            out[f"RMS, these {n_tags} tags"] = self.rms
        if self.mce is not None:
            n_all = self.n_evaluated if self.n_evaluated is not None else "evaluated"
            out[f"MCE, all {n_all} tags"] = self.mce
        return out

    def _draw_model(self, ax, k, y, bar_h, summary, colors):
        st = _style_of(k, colors)
        n_tags = self.values.shape[1]
        ax.barh(y[:n_tags], self.values[k], height=bar_h * 0.92, color=st["color"],
                alpha=0.85, label=self.labels[k], gid=f"bars-{k}")
        # a value of exactly 0 (a debiased CE below the noise) has no bar: say so
        values = np.r_[self.values[k], summary]
        for yy in y[:values.shape[0]][values == 0]:
            ax.annotate("0", (0, yy), xytext=(3, 0), textcoords="offset points",
                        va="center", fontsize=7, color=st["color"], gid=f"zero-{k}")
        if summary:
            ax.barh(y[n_tags:], summary, height=bar_h * 0.92, facecolor="white",
                    edgecolor=st["color"], hatch="////", linewidth=1.0, gid=f"summary-{k}")
        lo, hi = self.ci_low[k], self.ci_high[k]
        ok = np.isfinite(lo) & np.isfinite(hi)
        if ok.any():
            ax.errorbar((lo + hi)[ok] / 2, y[:n_tags][ok], xerr=(hi - lo)[ok] / 2,
                        fmt="none", ecolor="#333333", elinewidth=0.9, capsize=2.2,
                        zorder=4, gid=f"ci-{k}")

    def _draw_legend(self, ax, owned):
        """The models and the interval: below a figure drawn here, else above
        the caller's axes (never over the bars); whether it is above."""
        from matplotlib.lines import Line2D
        handles, labels = [], []
        if self.values.shape[0] > 1 or self.labels[0] is not None:
            handles, labels = ax.get_legend_handles_labels()
        if np.isfinite(self.ci_low).any():
            handles.append(Line2D([], [], color="#333333", marker="|", markersize=8,
                                  linewidth=0.9))
            labels.append("interval" if self.ci_level is None else
                          f"{_pct(self.ci_level)} interval" if self.ci_method is None else
                          _spec_phrase(_pct(self.ci_level), self.ci_method))
        if not handles:
            return False
        if owned:
            _legend(ax, owned, handles, labels)
            return False
        ax.legend(handles, labels, loc="lower left", bbox_to_anchor=(0.0, 1.0),
                  ncols=len(handles), frameon=False, borderaxespad=0.2)
        return True


def _as_mce(x, what):
    """The MarginalCalibrationError of an MCE result or an evaluation."""
    if _is_evaluation(x):
        if x.mce is None:
            raise ValueError(f"{what} has no per-tag CE: evaluate(..., per_tag=True)")
        x = x.mce
    if not isinstance(x, MarginalCalibrationError):
        raise TypeError(f"{what} must be a MarginalCalibrationError (sparsecal.mce) or an "
                        f"EvaluationResult with per-tag CE; got {type(x).__name__}")
    if not x.per_tag:
        raise ValueError(f"{what} evaluated no tag (too few entries each)")
    return x


def _shorten(name, width=34):
    """A tag name cut to ``width`` characters with an ellipsis in the middle, so
    long compound tags (``VERB|Mood=Ind|Number=Sing|...``) keep both ends."""
    if len(name) <= width:
        return name
    keep = width - 1
    return name[:keep - keep // 2] + "…" + name[-(keep // 2):]


def _tag_name_func(tag_names):
    """Tag -> its name: from a sequence, a dict or a TagGroups' tag index; "tag
    <t>" where none is known."""
    def fallback(t):
        return f"tag {t}"

    if hasattr(tag_names, "tag_names") and hasattr(tag_names, "tag_to_group"):   # TagGroups
        tag_names = tag_names.tag_names
    if tag_names is None:
        return fallback
    if isinstance(tag_names, Mapping):
        return lambda t: str(tag_names[t]) if t in tag_names else fallback(t)
    if isinstance(tag_names, Sequence) and not isinstance(tag_names, str):
        names = list(tag_names)
        return lambda t: (str(names[t]) if isinstance(t, numbers.Integral)
                          and 0 <= t < len(names) and names[t] != "" else fallback(t))
    raise TypeError("tag_names must be a sequence, a dict or a TagGroups, got "
                    f"{type(tag_names).__name__}")
