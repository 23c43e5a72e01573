"""Bayes error plot: normalized actual and minimum DCF against the prior log-odds
of the application (Brümmer & du Preez 2006; Cumani's notes ``004``)."""
import numpy as np

from ..core.entries import Entries
from ..metrics.application import BayesErrorPlot, bayes_error_plot
from ._inputs import _labelled
from ._style import _GREY, _legend, _rc_style, _single_axes, _style_of

__all__ = ["BayesErrorDisplay"]


class BayesErrorDisplay:
    """Normalized DCF over a range of applications: actual (solid, Bayes
    decisions with the scores as LLRs) and minimum (dashed, the best threshold
    per application); their gap is the cost of miscalibration. The dotted line
    at 1 is a system without information.

    Build it with :meth:`from_results` or :meth:`from_entries`; :meth:`plot`
    draws it.

    Attributes
    ----------
    labels : list of str or None
        One per system.
    plots : list of BayesErrorPlot
        Each system's prior log-odds, actual and minimum DCF.
    figure_, ax_ : matplotlib objects
        Set by :meth:`plot`.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import bayes_error_plot
    >>> from sparsecal.plotting import BayesErrorDisplay
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(1000) < 0.4
    >>> llr = np.where(y, 1.0, -1.0) + rng.normal(0, 1, 1000)
    >>> d = BayesErrorDisplay.from_results(bayes_error_plot(llr, y, scores_are="llr"))
    >>> d.plot().ax_.get_ylabel()
    'normalized DCF'
    """

    def __init__(self, *, labels, plots):
        self.labels, self.plots = labels, plots

    @classmethod
    def from_results(cls, plots):
        """The display of Bayes error plots.

        Parameters
        ----------
        plots : BayesErrorPlot or dict of str to BayesErrorPlot
            From :func:`sparsecal.bayes_error_plot`; a dict's keys label the systems.

        Returns
        -------
        BayesErrorDisplay
        """
        pairs = _labelled(plots, BayesErrorPlot, "plots", "sparsecal.bayes_error_plot")
        return cls(labels=[lab for lab, _ in pairs], plots=[b for _, b in pairs])

    @classmethod
    def from_entries(cls, entries):
        """The Bayes error plot of all entries (probabilities, empirical prior).

        Parameters
        ----------
        entries : Entries or dict of str to Entries
            One system each; a dict's keys are the labels.

        Returns
        -------
        BayesErrorDisplay
        """
        pairs = _labelled(entries, Entries, "entries", "sparsecal.threshold")
        return cls(labels=[lab for lab, _ in pairs],
                   plots=[bayes_error_plot(e.score, e.label) for _, e in pairs])

    def plot(self, ax=None, *, title=None, colors=None, ylim=None, figsize=(6.0, 4.8)):
        """Draw the curves.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Draw into this instead of a new figure.
        title, colors, figsize : optional
            Title (default "Bayes error plot", "" for none), colours (default
            :data:`COLORS`), size of a new figure.
        ylim : (float, float), optional
            Default ``(0, 1.1 * max)``, at least up to 1.1.

        Returns
        -------
        BayesErrorDisplay
            ``self``, with ``figure_`` and ``ax_`` set.
        """
        owned = ax is None
        with _rc_style():
            fig, ax = _single_axes(ax, figsize)
            top = 1.0
            for i, (label, b) in enumerate(zip(self.labels, self.plots)):
                st = _style_of(i, colors)
                name = "" if label is None else f"{label}: "
                ax.plot(b.prior_log_odds, b.actual_dcf, color=st["color"], linewidth=1.8,
                        label=f"{name}actual DCF", gid=f"actual-{i}")
                ax.plot(b.prior_log_odds, b.min_dcf, color=st["color"], linewidth=1.4,
                        linestyle="--", label=f"{name}minimum DCF", gid=f"min-{i}")
                top = max(top, float(np.max(b.actual_dcf)))
            grid = self.plots[0].prior_log_odds
            ax.axhline(1.0, color=_GREY, linestyle=":", linewidth=1.2, zorder=1,
                       label="no information")
            ax.set_xlim(float(grid.min()), float(grid.max()))
            ax.set_ylim(*(ylim if ylim is not None else (0.0, 1.1 * top)))
            ax.set_xlabel("prior log-odds log(π / (1 − π))")
            ax.set_ylabel("normalized DCF")
            ax.grid(True, color="#E5E5E5", linewidth=0.6)
            if title is None:
                title = "Bayes error plot"
            if title:
                ax.set_title(title)
            _legend(ax, owned)
        self.figure_, self.ax_ = fig, ax
        return self
