"""Smooth (kernel) reliability diagram: the kernel-smoothed label rate against the
score, with the kernel density of the scores below (Błasiok & Nakkiran 2023,
Section 5, as ``relplot``'s diagrams)."""
import numpy as np

from ..metrics.smooth import SmoothReliability
from ._inputs import _labelled
from ._labels import _fmt
from ._scales import _diagonal
from ._style import _main_and_lower_axes, _rc_style, _style_of

__all__ = ["plot_smooth_reliability"]

#: mesh points whose density is below this fraction of the largest are drawn faint
_SPARSE = 0.02


def plot_smooth_reliability(diagrams, *, show_density=True, ax=None, density_ax=None,
                            title=None, colors=None, figsize=(5.2, 5.6)):
    """Smooth reliability diagram(s) with smECE in the legend.

    The line is the kernel regression ``E[y | f = t]`` at smECE's bandwidth;
    it is drawn bold where the scores have density (at least 2% of its
    peak) and faint elsewhere, where the curve is an extrapolation. The dotted
    diagonal is perfect calibration; below, the kernel density of the scores.

    Parameters
    ----------
    diagrams : SmoothReliability or dict of str to SmoothReliability
        From :func:`sparsecal.smooth_reliability`; a dict's keys are the legend
        labels (e.g. before / after recalibration).
    show_density : bool, default True
        Draw the score density below (ignored when ``ax`` is given without
        ``density_ax``).
    ax, density_ax : matplotlib Axes, optional
        Draw into these instead of a new figure.
    title : str, optional
        Default "Smooth reliability diagram"; "" for none.
    colors : sequence of colours, optional
        Defaults to :data:`COLORS` (Okabe-Ito).
    figsize : (float, float), default (5.2, 5.6)
        Size in inches of a new figure.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TypeError
        If ``diagrams`` is not of the forms above, or an axes is not a
        matplotlib Axes.
    ValueError
        If ``diagrams`` is an empty dict, or ``density_ax`` is given without ``ax``.

    References
    ----------
    .. [1] Błasiok & Nakkiran 2023, "Smooth ECE: Principled reliability diagrams via
       kernel smoothing", Section 5 and Fig. 1 (the smooth reliability diagram with
       its density); the ``relplot`` package.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import smooth_reliability
    >>> from sparsecal.plotting import plot_smooth_reliability
    >>> rng = np.random.default_rng(0)
    >>> f = rng.random(2000)
    >>> fig = plot_smooth_reliability(smooth_reliability(f, rng.random(2000) < f ** 2))
    >>> main, dens = fig.axes
    >>> main.get_title(), dens.get_xlabel()
    ('Smooth reliability diagram', 'predicted score')
    """
    curves = _labelled(diagrams, SmoothReliability, "diagrams",
                       "sparsecal.smooth_reliability")
    with _rc_style():
        fig, ax, density_ax = _main_and_lower_axes(ax, density_ax, show_density, figsize,
                                                   "density_ax")
        show_density = density_ax is not None
        for i, (label, d) in enumerate(curves):
            st = _style_of(i, colors)
            s = d.smooth_ece
            text = f"smECE = {_fmt(s.value)} (σ = {s.bandwidth:.3g})"
            dense = d.density >= _SPARSE * d.density.max()
            ax.plot(d.mesh, d.curve, color=st["color"], linestyle=st["linestyle"],
                    linewidth=1.0, alpha=0.35, zorder=2)
            ax.plot(d.mesh, np.where(dense, d.curve, np.nan), color=st["color"],
                    linestyle=st["linestyle"], linewidth=2.2, zorder=3 + i,
                    label=text if label is None else f"{label}: {text}", gid=f"curve-{i}")
            if show_density:
                density_ax.plot(d.mesh, d.density, color=st["color"],
                                linestyle=st["linestyle"], linewidth=1.3)
                density_ax.fill_between(d.mesh, d.density, color=st["color"],
                                        alpha=0.12 if i == 0 else 0.0, linewidth=0)
        _diagonal(ax, 0.0, 1.0, label="perfect calibration")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_ylabel("smoothed frequency of the label")
        ax.grid(True, color="#E5E5E5", linewidth=0.6)
        if title is None:
            title = "Smooth reliability diagram"
        if title:
            ax.set_title(title)
        ax.legend(loc="lower right", title="faint: score density < 2% of its peak",
                  title_fontsize=7.5)
        if show_density:
            density_ax.set_ylim(bottom=0)
            density_ax.set_ylabel("score density")
            density_ax.set_xlabel("predicted score")
            density_ax.grid(True, axis="y", color="#E5E5E5", linewidth=0.6)
            ax.tick_params(labelbottom=False)
        else:
            ax.set_xlabel("predicted score")
    return fig
