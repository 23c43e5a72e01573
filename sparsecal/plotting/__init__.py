"""Figures (matplotlib, imported only when one is drawn) and the HTML report.

Each figure is a display, as scikit-learn's: ``from_results`` (or
``from_entries``) computes the data it shows, ``plot(ax=None, ...)`` only draws
it and returns the display with ``figure_`` and ``ax_`` (or ``axes_``) set.
Nothing opens a window or touches pyplot's state. Colours are Okabe-Ito
(:data:`COLORS`), and curves also differ in marker and line style.

One module per figure:

- :mod:`.reliability`: :class:`ReliabilityDisplay` (and
  :func:`reliability_diagram`, its figure in one call): calibration curves
  with each bin's interval and the score histogram (Nguyen & O'Connor 2015).
- :mod:`.groups`: :class:`GroupReliabilityDisplay`, one panel per tag group
  (Kranzlein et al. 2021, Section 3.3).
- :mod:`.methods`: :class:`MethodComparisonDisplay`, CE per recalibration
  method and group (Kranzlein et al. 2021, Fig. 2 and 3).
- :mod:`.per_tag`: :class:`PerTagDisplay`, per-tag CE of the most frequent
  tags (Nguyen & O'Connor 2015, Fig. 4).
- :mod:`.modified`: :class:`ModifiedReliabilityDisplay`, accuracy - confidence
  per bin (Jagannatha & Yu 2020, Fig. 1).
- :mod:`.kernel_reliability`: :class:`SmoothReliabilityDisplay` (Błasiok &
  Nakkiran 2023).
- :mod:`.bayes_error`: :class:`BayesErrorDisplay`, actual and minimum DCF
  (Brümmer & du Preez 2006).
- :mod:`.save`: :func:`save_figure`, a figure in several formats, atomically.

Private helpers: ``_style`` (palette, rcParams, axes, legends off the data),
``_scales`` (probability axes), ``_inputs`` (accepted results), ``_labels``
(CE and interval text). :mod:`.report` writes the HTML report.
"""
from .._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {
    "ReliabilityDisplay": "reliability", "reliability_diagram": "reliability",
    "GroupReliabilityDisplay": "groups", "MethodComparisonDisplay": "methods",
    "PerTagDisplay": "per_tag", "ModifiedReliabilityDisplay": "modified",
    "SmoothReliabilityDisplay": "kernel_reliability", "BayesErrorDisplay": "bayes_error",
    "save_figure": "save", "write_report": "report", "COLORS": "_style",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
