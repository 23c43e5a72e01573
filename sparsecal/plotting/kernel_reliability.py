"""Smooth (kernel) reliability diagram: the kernel-smoothed label rate against the
score, with the score density below (Błasiok & Nakkiran 2023, Section 5)."""
import numpy as np

from ..core.entries import Entries
from ..metrics.smooth import SmoothReliability, smooth_reliability
from ._inputs import _labelled
from ._labels import _fmt
from ._scales import _diagonal
from ._style import _legend, _main_and_lower_axes, _rc_style, _style_of

__all__ = ["SmoothReliabilityDisplay"]

#: mesh points whose density is below this fraction of the largest are drawn faint
_SPARSE = 0.02


class SmoothReliabilityDisplay:
    """Smooth reliability diagrams with smECE in the legend: ``E[y | f = t]``
    at smECE's bandwidth, bold where the scores have density (at least 2% of
    its peak), faint where the curve extrapolates; the score density below.

    Build it with :meth:`from_results` or :meth:`from_entries`; :meth:`plot`
    draws it.

    Attributes
    ----------
    labels : list of str or None
        One per curve.
    diagrams : list of SmoothReliability
        Each curve's mesh, curve, density and smECE.
    figure_, ax_, density_ax_ : matplotlib objects
        Set by :meth:`plot` (``density_ax_`` None without the density).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import smooth_reliability
    >>> from sparsecal.plotting import SmoothReliabilityDisplay
    >>> rng = np.random.default_rng(0)
    >>> f = rng.random(2000)
    >>> d = SmoothReliabilityDisplay.from_results(
    ...     smooth_reliability(f, rng.random(2000) < f ** 2)).plot()
    >>> d.ax_.get_title(), d.density_ax_.get_xlabel()
    ('Smooth reliability diagram', 'predicted score')
    """

    def __init__(self, *, labels, diagrams):
        self.labels, self.diagrams = labels, diagrams

    @classmethod
    def from_results(cls, diagrams):
        """The display of smooth reliability diagrams.

        Parameters
        ----------
        diagrams : SmoothReliability or dict of str to SmoothReliability
            From :func:`sparsecal.smooth_reliability`; a dict's keys are the labels.

        Returns
        -------
        SmoothReliabilityDisplay
        """
        pairs = _labelled(diagrams, SmoothReliability, "diagrams",
                          "sparsecal.smooth_reliability")
        return cls(labels=[lab for lab, _ in pairs], diagrams=[d for _, d in pairs])

    @classmethod
    def from_entries(cls, entries):
        """The smooth reliability diagram of all entries.

        Parameters
        ----------
        entries : Entries or dict of str to Entries
            One curve each; a dict's keys are the labels.

        Returns
        -------
        SmoothReliabilityDisplay
        """
        pairs = _labelled(entries, Entries, "entries", "sparsecal.threshold")
        return cls(labels=[lab for lab, _ in pairs],
                   diagrams=[smooth_reliability(e.score, e.label) for _, e in pairs])

    def plot(self, ax=None, *, density_ax=None, show_density=True, title=None,
             colors=None, figsize=(5.2, 6.2)):
        """Draw the curves, and the density below.

        Parameters
        ----------
        ax, density_ax : matplotlib Axes, optional
            Draw into these instead of a new figure (the density only with
            ``density_ax``).
        show_density : bool, default True
            Draw the density (on a new figure).
        title, colors, figsize : optional
            Title (default "Smooth reliability diagram", "" for none), colours
            (default :data:`COLORS`), size of a new figure.

        Returns
        -------
        SmoothReliabilityDisplay
            ``self``, with ``figure_``, ``ax_`` and ``density_ax_`` set.
        """
        owned = ax is None
        with _rc_style():
            fig, ax, density_ax = _main_and_lower_axes(ax, density_ax, show_density,
                                                       figsize, "density_ax")
            for i, (label, d) in enumerate(zip(self.labels, self.diagrams)):
                st = _style_of(i, colors)
                s = d.smooth_ece
                text = f"smECE = {_fmt(s.value)} (σ = {s.bandwidth:.3g})"
                dense = d.density >= _SPARSE * d.density.max()
                ax.plot(d.mesh, d.curve, color=st["color"], linestyle=st["linestyle"],
                        linewidth=1.0, alpha=0.35, zorder=2)
                ax.plot(d.mesh, np.where(dense, d.curve, np.nan), color=st["color"],
                        linestyle=st["linestyle"], linewidth=2.2, zorder=3 + i,
                        label=text if label is None else f"{label}: {text}",
                        gid=f"curve-{i}")
                if density_ax is not None:
                    density_ax.plot(d.mesh, d.density, color=st["color"],
                                    linestyle=st["linestyle"], linewidth=1.3,
                                    gid=f"density-{i}")
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
            _legend(ax, owned, title=f"faint: score density < {_SPARSE:.0%} of its peak",
                    title_fontsize=7.5)
            if density_ax is not None:
                density_ax.set_ylim(bottom=0)
                density_ax.set_ylabel("score density")
                density_ax.set_xlabel("predicted score")
                density_ax.grid(True, axis="y", color="#E5E5E5", linewidth=0.6)
                ax.tick_params(labelbottom=False)
            else:
                ax.set_xlabel("predicted score")
        self.figure_, self.ax_, self.density_ax_ = fig, ax, density_ax
        return self
