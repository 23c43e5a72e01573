"""Probability axes on a linear, log or logit scale: checking the scale name,
setting it, limits that hold the data, the y = x diagonal, and the map to and
from display coordinates (decades on log / logit axes)."""
import numpy as np

from ._style import _GREY

_SCALES = ("linear", "log", "logit")


def _check_scale(scale, name="scale"):
    """``scale`` if it is one of :data:`_SCALES`, else ValueError."""
    if scale not in _SCALES:
        raise ValueError(f"{name} must be one of {_SCALES}, got {scale!r}")
    return scale


def _set_scale(ax, axis, scale, max_ticks=None):
    """Set a linear / log / logit scale; ``max_ticks`` thins the major ticks of
    a logit axis (its labels such as ``1 - 10^-4`` are wide: small panels)."""
    if scale == "linear":
        return
    setter = ax.set_xscale if axis == "x" else ax.set_yscale
    if scale == "log":
        setter("log", nonpositive="mask")
    else:
        setter("logit", nonpositive="mask")
        if max_ticks is not None:
            from matplotlib.ticker import LogitLocator
            target = ax.xaxis if axis == "x" else ax.yaxis
            target.set_major_locator(LogitLocator(nbins=max_ticks))


def _scale_limits(values, scale, margin=0.3):
    """Axis limits that hold ``values`` (probabilities) on ``scale``, with
    ``margin`` decades to spare on log / logit axes."""
    if scale == "linear":
        return 0.0, 1.0
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v) & (v > 0) & ((v < 1) if scale == "logit" else (v <= 1))]
    if v.size == 0:
        return (1e-3, 1.0) if scale == "log" else (1e-3, 1 - 1e-3)
    u = _to_display(v, scale)
    lo = float(_from_display(u.min() - margin, scale))
    if scale == "log":
        return lo, 1.0
    return lo, float(_from_display(u.max() + margin, scale))


def _diagonal(ax, lo, hi, **kw):
    """y = x, drawn densely so that it is right on any scale."""
    t = np.linspace(0.0, 1.0, 400)
    x = np.unique(np.concatenate([lo + (hi - lo) * t,
                                  np.geomspace(max(lo, 1e-12), hi, 400),
                                  1 - np.geomspace(max(1 - hi, 1e-12), 1 - lo, 400)]))
    x = x[(x >= lo) & (x <= hi)]
    kw = {"color": _GREY, "linestyle": ":", "linewidth": 1.2, "zorder": 1, **kw}
    return ax.plot(x, x, **kw)[0]


def _to_display(x, scale):
    """Probabilities to display coordinates: decades on log / logit axes."""
    x = np.asarray(x, dtype=np.float64)
    if scale == "log":
        return np.log10(x)
    if scale == "logit":
        return np.log10(x) - np.log10(1 - x)
    return x


def _from_display(u, scale):
    """The inverse of :func:`_to_display`."""
    if scale == "log":
        return 10 ** u
    if scale == "logit":
        return 1 / (1 + 10 ** -u)
    return u
