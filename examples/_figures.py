"""Shared by the examples that recalibrate: the figures of the HTML report from an
evaluation before and after TFG isotonic recalibration and a method comparison."""
import os

from sparsecal import plotting
from sparsecal.calibration import METHODS


def save_figures(out_dir, before, after, table):
    """Save ``reliability.png`` (all entries), ``groups.png`` (one curve per TFG
    group) and ``methods.png`` (CE per method and group, Kranzlein et al. 2021,
    Figs. 2-3) into ``out_dir``; returns their paths."""
    curves = {"uncalibrated": before, "TFG isotonic": after}
    by_grouping = ({METHODS[m].display_name: r for (m, g), r in table.after.items()
                    if g == grouping} for grouping in ("tfg", "scw"))
    figures = {
        "reliability": plotting.reliability_diagram(
            {name: result.smce for name, result in curves.items()}, scale="logit"),
        "groups": plotting.group_reliability(curves, scale="logit"),
        "methods": plotting.method_comparison(plotting.comparison_table(table.before,
                                                                        *by_grouping)),
    }
    return [plotting.save_figure(fig, os.path.join(out_dir, f"{name}.png"))[0]
            for name, fig in figures.items()]
