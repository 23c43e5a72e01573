"""Shared by the examples that recalibrate: the figures of the HTML report from an
evaluation before and after TFG isotonic recalibration and a method comparison."""
import os

from sparsecal import plotting


def save_figures(out_dir, before, after, table):
    """Save ``reliability.png`` (all entries), ``groups.png`` (one curve per TFG
    group) and ``methods.png`` (CE per method and group, Kranzlein et al. 2021,
    Figs. 2-3) into ``out_dir``; returns their paths."""
    curves = {"uncalibrated": before, "TFG isotonic": after}
    figures = {
        "reliability": plotting.reliability_diagram(
            {name: result.smce for name, result in curves.items()}, scale="logit"),
        "groups": plotting.GroupReliabilityDisplay.from_results(curves, scale="logit")
        .plot().figure_,
        "methods": plotting.MethodComparisonDisplay.from_comparison(table).plot().figure_,
    }
    return [plotting.save_figure(fig, os.path.join(out_dir, f"{name}.png"))[0]
            for name, fig in figures.items()]
