"""Figures (matplotlib, imported only when a figure is drawn) and the HTML report."""
from .figures import (COLORS, comparison_table, group_reliability, method_comparison,
                      modified_reliability, per_tag_ce, reliability_diagram, save_figure)

__all__ = ["COLORS", "comparison_table", "group_reliability", "method_comparison",
           "modified_reliability", "per_tag_ce", "reliability_diagram", "save_figure"]
