"""Every recalibration method x {SCW, TFG}, fit on dev and evaluated on test
(Kranzlein et al. 2021, Table 1).
"""
from dataclasses import dataclass

import numpy as np

from ..core.entries import check_entries
from ..core.groups import TagGroups, check_groups
from ..core.progress import ProgressCounter
from ..metrics.evaluation import evaluate
from ..io.tables import Table, number, plural, summary
from ..metrics.intervals import ConfidenceInterval
from ..metrics.measures import get_measure
from .grouped import GroupedCalibrator
from .registry import METHODS, check_prior_methods, get_method
from ..core.dispatch import takes_data

__all__ = ["MethodComparison", "compare_methods"]


@dataclass(frozen=True)
class MethodComparison(Table):
    """Evaluations of the uncalibrated test entries (``before``) and of every
    (method, grouping) recalibration (``after``, fitted ``models``) over the TFG
    ``groups``; ``to_markdown()`` gives the layout of Kranzlein et al. 2021,
    Table 1.

    Examples
    --------
    See :func:`compare_methods`.
    """

    before: object
    after: dict
    groups: object
    test_tokens: int = None
    models: dict = None

    def __repr__(self):
        scored = [(r.smce.value, f"{m}/{g}") for (m, g), r in self.after.items()
                  if r.smce.value == r.smce.value]   # not NaN
        best = min(scored) if scored else None
        return summary(self, f"uncalibrated SMCE={number(self.before.smce.value)}",
                       f"{plural(len(self.after), 'recalibration')} over "
                       f"{plural(self.groups.n_groups, 'group')}",
                       best and f"best {best[1]} SMCE={number(best[0])}")

    def columns(self):
        return ["All"] + [f"Group {g + 1}" for g in range(self.groups.n_groups)]

    def values(self, result):
        """SMCE then every GMCE of ``result`` (None for an empty group)."""
        return [result.smce.value] + [None if c is None else c.value for c in result.gmce]

    def measure_values(self, result, name):
        """Measure ``name`` of ``result`` in the columns of :meth:`values`."""
        m = result.metrics[name]
        return [m["pooled"]] + list(m["groups"])

    def to_dict(self):
        out = {"columns": self.columns(), "none": self.values(self.before),
               "methods": {f"{m}/{g}": self.values(r) for (m, g), r in self.after.items()},
               "groups": self.before.groups}
        if self.before.metrics:
            out["metrics"] = {name: {"none": self.measure_values(self.before, name),
                                     "methods": {f"{m}/{g}": self.measure_values(r, name)
                                                 for (m, g), r in self.after.items()}}
                              for name in self.before.metrics}
        return out

    def _columns(self):
        """One row per recalibration ("none" first): method, grouping, groups, values."""
        results = [("none", None, self.before)] + [(m, g, r) for (m, g), r in self.after.items()]
        out = {"method": [m for m, _, _ in results], "grouping": [g for _, g, _ in results],
               "n_groups": [None if g is None else 1 if g == "scw" else self.groups.n_groups
                            for _, g, _ in results]}
        values = [self.values(r) for _, _, r in results]
        out.update({c: [v[i] for v in values] for i, c in enumerate(self.columns())})
        for name in self.before.metrics:
            values = [self.measure_values(r, name) for _, _, r in results]
            out.update({f"{name} {c}": [v[i] for v in values]
                        for i, c in enumerate(self.columns())})
        return out

    def to_markdown(self, all_groups=False):
        """Table 1: SMCE and the first and last (or all) groups' GMCE with relative
        changes, then the groups' entries, tag types, training shares and tokens.
        """
        G = self.groups.n_groups
        shown = list(range(G)) if all_groups or G <= 2 else [0, G - 1]
        cols = [0] + [g + 1 for g in shown]
        names = ["All (SMCE)"] + [f"Group {g + 1} (GMCE)" for g in shown]
        base = self.values(self.before)
        lines = ["| Recalibration | Groups | " + " | ".join(names) + " |",
                 "|---|---|" + "---|" * len(names)]
        lines.append("| None | | " + " | ".join(_cell(base[c], None) for c in cols) + " |")
        for (method, grouping), result in self.after.items():
            vals = self.values(result)
            n = 1 if grouping == "scw" else G
            lines.append(f"| {METHODS[method].display_name} | {n} | "
                         + " | ".join(_cell(vals[c], base[c]) for c in cols) + " |")
        rows = self.before.groups
        total = {"entries": sum(r.get("entries", 0) for r in rows),
                 "tag_types": sum(r["tag_types"] for r in rows),
                 "tokens": self.test_tokens}
        if "train_share_min" in rows[0]:
            total["train_share_min"] = min(r["train_share_min"] for r in rows if r["tag_types"])
            total["train_share_max"] = max(r["train_share_max"] for r in rows if r["tag_types"])
        columns = [total] + [rows[g] for g in shown]

        def bottom(label, fmt):
            lines.append(f"| {label} | | " + " | ".join(fmt(c) for c in columns) + " |")

        bottom("Entries", lambda c: f"{c.get('entries', 0):,}")
        bottom("Tag types", lambda c: str(c["tag_types"]))
        if "train_share_min" in total:
            bottom("Tag freq in train", lambda c: (
                f"[{c['train_share_min']:.1%}, {c['train_share_max']:.1%}]"
                if c["tag_types"] else "—"))
        bottom("Tokens", lambda c: "—" if c.get("tokens") is None else f"{c['tokens']:,}")
        if self.before.metrics:
            lines += ["", self._measures_markdown(cols)]
        return "\n".join(lines)

    def _measures_markdown(self, cols):
        names = [self.columns()[c] for c in cols]
        lines = ["| Measure | Recalibration | Groups | " + " | ".join(names) + " |",
                 "|---|---|---|" + "---|" * len(names)]
        for name in self.before.metrics:
            shown = get_measure(name).display_name
            base = self.measure_values(self.before, name)
            lines.append(f"| {shown} | None | | "
                         + " | ".join(_cell(base[c], None) for c in cols) + " |")
            for (method, grouping), result in self.after.items():
                vals = self.measure_values(result, name)
                n = 1 if grouping == "scw" else self.groups.n_groups
                lines.append(f"| {shown} | {METHODS[method].display_name} | {n} | "
                             + " | ".join(_cell(vals[c], base[c]) for c in cols) + " |")
        return "\n".join(lines)


def _cell(value, base):
    if value is None or value != value:   # an empty group; NaN: a measure undefined there
        return "—"
    if base is None or base == 0 or base != base:
        return f"{value:.4f}"
    return f"{value:.4f} ({(value - base) / base:+.1%})"


@takes_data
def compare_methods(dev, test, groups, *, methods=tuple(METHODS), groupings=("scw", "tfg"),
                    n_bins=10, ci=None, seed=0, progress=None, prior=None,
                    evaluation=None):
    """Fit every method x grouping on ``dev`` entries and evaluate them on ``test``.

    Parameters
    ----------
    dev, test : Entries
    groups : TagGroups
        TFG groups (the evaluation reports GMCE over them).
    methods : sequence of str
        Names in :data:`~sparsecal.calibration.registry.METHODS`.
    groupings : sequence of {"scw", "tfg"}
    n_bins : int
        Bins of the evaluation and of the binning calibrators.
    ci : None, str or ConfidenceInterval
    seed : int, default=0
        Random state of seeded methods (and of ``ci`` given by name).
    progress : callable, optional
        ``progress(done, total)`` after each evaluation and fit.
    prior : float, optional
        The application prior of the methods that take one.
    evaluation : dict, optional
        Further keyword arguments of :func:`~sparsecal.metrics.evaluate`.

    Returns
    -------
    MethodComparison

    Examples
    --------
    >>> import sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> dev, test = (make_tagger_outputs(2000, split_seed=s) for s in (1, 2))
    >>> groups = sc.TagGroups.from_counts(dev.train_counts, 3)
    >>> result = sc.compare_methods(sc.threshold(dev.scores, dev.gold),
    ...                             sc.threshold(test.scores, test.gold), groups,
    ...                             methods=["isotonic"])
    >>> sorted(result.models)
    [('isotonic', 'scw'), ('isotonic', 'tfg')]
    """
    for name, entries in (("dev", dev), ("test", test)):
        check_entries(entries, name)
    check_groups(groups, test.n_tags)
    if dev.n_tags is not None and test.n_tags is not None and dev.n_tags != test.n_tags:
        raise ValueError(f"dev has {dev.n_tags} tags but test has {test.n_tags}")
    return _run_comparison(
        dev, test, groups, evaluate,
        lambda: None if test.token is None else int(np.unique(test.token).size),
        methods=methods, groupings=groupings, n_bins=n_bins, ci=ci, seed=seed,
        progress=progress, prior=prior, evaluation=evaluation)


def _run_comparison(dev, test, groups, evaluate, tokens, *, methods, groupings, n_bins, ci,
                   seed, progress, prior, evaluation):
    """The body of :func:`compare_methods` for checked entries of any kind."""
    prior = check_prior_methods(methods, prior)
    bad = [g for g in groupings if g not in ("scw", "tfg")]
    if bad:
        raise ValueError(f"unknown grouping {bad[0]!r}; choose from ['scw', 'tfg']")
    counter = ProgressCounter(progress, 1 + len(methods) * len(groupings))
    scw = TagGroups.scw(groups.n_tags)
    if isinstance(ci, str):
        ci = ConfidenceInterval(ci, random_state=seed)
    kw = dict(n_bins=n_bins, ci=ci, **(evaluation or {}))
    if kw.get("bin_size") is not None:
        kw["n_bins"] = None
    before = evaluate(test, groups, **kw)
    counter.advance()
    after, models = {}, {}
    for method in methods:
        for grouping in groupings:
            base = get_method(method).build(n_bins, seed, prior)
            model = GroupedCalibrator(base, scw if grouping == "scw" else groups).fit(dev)
            models[(method, grouping)] = model
            after[(method, grouping)] = evaluate(model.transform(test), groups, **kw)
            counter.advance()
    return MethodComparison(before, after, groups, tokens(), models)
