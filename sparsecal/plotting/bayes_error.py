"""Bayes error plot: normalized actual and minimum DCF against the prior log-odds
of the application (Brümmer & du Preez 2006; Cumani's notes ``004``)."""
import numpy as np

from ..metrics.application import BayesErrorPlot
from ._inputs import _labelled
from ._style import _GREY, _rc_style, _single_axes, _style_of

__all__ = ["plot_bayes_error"]


def plot_bayes_error(plots, *, ax=None, title=None, colors=None, ylim=None,
                     figsize=(6.0, 4.2)):
    """Bayes error plot: normalized DCF over a range of applications.

    Solid: actual DCF (Bayes decisions with the scores as LLRs); dashed: minimum
    DCF (the best threshold per application). The gap between them is the cost
    of miscalibration; the dotted line at 1 is a system without information
    (always deciding the more probable class).

    Parameters
    ----------
    plots : BayesErrorPlot or dict of str to BayesErrorPlot
        From :func:`sparsecal.bayes_error_plot`; a dict's keys label the systems.
    ax : matplotlib Axes, optional
        Draw into this instead of a new figure.
    title : str, optional
        Default "Bayes error plot"; "" for none.
    colors : sequence of colours, optional
        Defaults to :data:`COLORS` (Okabe-Ito).
    ylim : (float, float), optional
        Default ``(0, 1.1 * max)``, at least up to 1.1.
    figsize : (float, float), default (6.0, 4.2)
        Size in inches of a new figure.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TypeError
        If ``plots`` is not of the forms above, or ``ax`` is not an Axes.
    ValueError
        If ``plots`` is an empty dict.

    References
    ----------
    .. [1] Brümmer & du Preez 2006, "Application-independent evaluation of speaker
       detection", Computer Speech and Language 20, Section 5 (applied probability
       of error plots); Cumani, "Score calibration and fusion" (``004``).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import bayes_error_plot
    >>> from sparsecal.plotting import plot_bayes_error
    >>> rng = np.random.default_rng(0)
    >>> y = rng.random(1000) < 0.4
    >>> llr = np.where(y, 1.0, -1.0) + rng.normal(0, 1, 1000)
    >>> ax = plot_bayes_error(bayes_error_plot(llr, y, scores_are="llr")).axes[0]
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('prior log-odds log(π / (1 − π))', 'normalized DCF')
    """
    series = _labelled(plots, BayesErrorPlot, "plots", "sparsecal.bayes_error_plot")
    with _rc_style():
        fig, ax = _single_axes(ax, figsize)
        top = 1.0
        for i, (label, b) in enumerate(series):
            st = _style_of(i, colors)
            name = "" if label is None else f"{label}: "
            ax.plot(b.prior_log_odds, b.actual_dcf, color=st["color"], linewidth=1.8,
                    label=f"{name}actual DCF", gid=f"actual-{i}")
            ax.plot(b.prior_log_odds, b.min_dcf, color=st["color"], linewidth=1.4,
                    linestyle="--", label=f"{name}minimum DCF", gid=f"min-{i}")
            top = max(top, float(np.max(b.actual_dcf)))
        grid = series[0][1].prior_log_odds
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
        ax.legend(loc="upper center")   # the curves are lowest at log-odds 0
    return fig
