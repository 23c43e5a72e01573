"""Every recalibration method x {SCW, TFG}: Kranzlein et al. 2021, Table 1.

Fit each method on dev entries with one group (SCW) and with the TFG groups,
apply to test entries, and evaluate SMCE and per-group GMCE (always over the TFG
groups) before and after, with absolute and relative change.
"""
from dataclasses import dataclass

from .calibrators import HistogramBinning, IsotonicCalibrator, PlattCalibrator, ScalingBinning
from .evaluation import evaluate
from .grouped import GroupedCalibrator
from .groups import TagGroups

__all__ = ["METHODS", "MethodComparison", "compare_methods"]

#: CLI name -> (display name, factory)
METHODS = {
    "scaling-binning": ("Scaling Binning", lambda n_bins, seed: ScalingBinning(n_bins, seed)),
    "isotonic": ("Isotonic Regression", lambda n_bins, seed: IsotonicCalibrator()),
    "histogram": ("Histogram Binning", lambda n_bins, seed: HistogramBinning(n_bins)),
    "platt": ("Platt Scaling", lambda n_bins, seed: PlattCalibrator()),
}


@dataclass(frozen=True)
class MethodComparison:
    """Evaluations of the uncalibrated test entries and of every
    (method, grouping) recalibration of them.

    Attributes
    ----------
    before : EvaluationResult
    after : dict
        ``(method, grouping) -> EvaluationResult`` with grouping "scw" or "tfg".
    groups : TagGroups
        The TFG groups used for evaluation (and TFG recalibration).
    """

    before: object
    after: dict
    groups: object

    def columns(self):
        """Column names: "All", then "Group 1".. "Group G"."""
        return ["All"] + [f"Group {g + 1}" for g in range(self.groups.n_groups)]

    def values(self, result):
        """SMCE then every GMCE of ``result`` (None for an empty group)."""
        return [result.smce.value] + [None if c is None else c.value for c in result.gmce]

    def to_dict(self):
        return {"columns": self.columns(), "none": self.values(self.before),
                "methods": {f"{m}/{g}": self.values(r) for (m, g), r in self.after.items()},
                "groups": self.before.groups}

    def to_markdown(self, groups_shown=None):
        """Table 1 layout: rows None and method x {1 group (SCW), G groups (TFG)};
        columns All (SMCE) and the chosen groups (default first and last, GMCE),
        each as value and relative change; then entries, tag types, training
        share range and tokens per column."""
        G = self.groups.n_groups
        shown = [0, G - 1] if groups_shown is None else list(groups_shown)
        if G == 1:
            shown = [0]
        cols = [0] + [g + 1 for g in shown]
        names = ["All (SMCE)"] + [f"Group {g + 1} (GMCE)" for g in shown]
        base = self.values(self.before)
        lines = ["| Recalibration | Groups | " + " | ".join(names) + " |",
                 "|---|---|" + "---|" * len(names)]
        lines.append("| None | | " + " | ".join(_cell(base[c], None) for c in cols) + " |")
        for (method, grouping), result in self.after.items():
            vals = self.values(result)
            n = 1 if grouping == "scw" else G
            lines.append(f"| {METHODS[method][0]} | {n} | "
                         + " | ".join(_cell(vals[c], base[c]) for c in cols) + " |")
        rows = self.before.groups
        total_entries = sum(r.get("entries", 0) for r in rows)
        lines.append("| Entries | | " + " | ".join(
            [f"{total_entries:,}"] + [f"{rows[g].get('entries', 0):,}" for g in shown]) + " |")
        lines.append("| Tag types | | " + " | ".join(
            [str(sum(r["tag_types"] for r in rows))]
            + [str(rows[g]["tag_types"]) for g in shown]) + " |")
        if "train_share_min" in rows[0]:
            lines.append("| Tag freq in train | | | " + " | ".join(
                f"[{rows[g]['train_share_min']:.1%}, {rows[g]['train_share_max']:.1%}]"
                for g in shown) + " |")
        return "\n".join(lines)


def _cell(value, base):
    if value is None:
        return "—"
    if base is None or base == 0:
        return f"{value:.4f}"
    return f"{value:.4f} ({(value - base) / base:+.1%})"


def compare_methods(dev, test, groups, *, methods=tuple(METHODS), groupings=("scw", "tfg"),
                    n_bins=10, ci=None, seed=0):
    """Fit every method x grouping on ``dev`` entries, evaluate on ``test``.

    Parameters
    ----------
    dev, test : Entries
    groups : TagGroups
        TFG groups (evaluation always reports GMCE over them).
    methods : sequence of str
        Keys of :data:`METHODS`.
    groupings : sequence of {"scw", "tfg"}
    n_bins : int
        Bins for evaluation and for the binning calibrators.
    ci : {None, "simulation", "bootstrap"}

    Returns
    -------
    MethodComparison
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method {unknown[0]!r}; choose from {sorted(METHODS)}")
    bad = [g for g in groupings if g not in ("scw", "tfg")]
    if bad:
        raise ValueError(f"unknown grouping {bad[0]!r}; choose from ['scw', 'tfg']")
    scw = TagGroups.scw(groups.n_tags)
    kw = dict(n_bins=n_bins, ci=ci, seed=seed)
    before = evaluate(test, groups, **kw)
    after = {}
    for method in methods:
        for grouping in groupings:
            base = METHODS[method][1](n_bins, seed)
            model = GroupedCalibrator(base, scw if grouping == "scw" else groups).fit(dev)
            after[(method, grouping)] = evaluate(model.transform(test), groups, **kw)
    return MethodComparison(before, after, groups)
