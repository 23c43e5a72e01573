"""Figures (matplotlib, imported only when a figure is drawn) and the HTML report.

Every figure function returns a :class:`matplotlib.figure.Figure`; none opens a
window or touches pyplot's global state, so the package works on a machine
without a display. Functions that draw one panel accept ``ax=`` to draw into an
existing axes (the figure returned is then ``ax.figure``). Colours are the
Okabe-Ito palette (safe for colour-blind readers), and curves also differ in
marker and line style so figures survive greyscale printing.

One module per figure:

- :mod:`.reliability`: :func:`reliability_diagram`, calibration curves from
  (equal-mass) bins with the per-bin 95% interval of the label rate and the
  score distribution below (Nguyen & O'Connor 2015, Fig. 1d, 2, 3).
  :func:`score_histogram_edges`: the edges of that histogram, for counts made
  elsewhere (on a cluster).
- :mod:`.groups`: :func:`group_reliability`, one small reliability diagram per
  tag group (TFG; Kranzlein et al. 2021, Section 3.3).
- :mod:`.methods`: :func:`method_comparison`, CE per recalibration method and
  group, uncalibrated -> TFG with SCW alongside (Kranzlein et al. 2021, Fig. 2
  and 3), drawn from :func:`comparison_table`.
- :mod:`.per_tag`: :func:`per_tag_ce`, per-tag CE of the most frequent tags
  (Nguyen & O'Connor 2015, Fig. 4).
- :mod:`.modified`: :func:`modified_reliability`, accuracy - confidence against
  confidence, marker area proportional to bin size (Jagannatha & Yu 2020, Fig. 1).
- :mod:`.kernel_reliability`: :func:`plot_smooth_reliability`, the kernel-smoothed
  reliability curve with the score density (Błasiok & Nakkiran 2023, Section 5).
- :mod:`.bayes_error`: :func:`plot_bayes_error`, normalized actual and minimum DCF
  against the prior log-odds (Brümmer & du Preez 2006; Cumani's notes).
- :mod:`.save`: :func:`save_figure`, a figure in several formats, atomically.

Shared by the figures (private): ``_style`` (palette :data:`COLORS`, markers,
line styles, rcParams, new figures and axes), ``_scales`` (linear / log / logit
probability axes), ``_inputs`` (the results a figure accepts), ``_labels`` (CE
text and titles). :mod:`.report`: :func:`write_report`, the HTML report from
these figures.
"""
from .._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {
    "reliability_diagram": "reliability", "score_histogram_edges": "reliability",
    "group_reliability": "groups", "comparison_table": "methods",
    "method_comparison": "methods", "per_tag_ce": "per_tag",
    "modified_reliability": "modified", "plot_smooth_reliability": "kernel_reliability",
    "plot_bayes_error": "bayes_error", "save_figure": "save", "write_report": "report",
    "COLORS": "_style",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
