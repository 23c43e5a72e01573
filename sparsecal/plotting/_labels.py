"""Text on the figures: the CE symbol, CE values with their interval, and the
binning named in titles."""
import numpy as np


def _ce_symbol(norm):
    """CE_p in mathtext, e.g. CE_2 or CE_inf."""
    if norm == np.inf:
        return r"$\mathrm{CE}_\infty$"
    return rf"$\mathrm{{CE}}_{int(norm)}$"


def _fmt(v):
    """A CE value: 4 decimals, scientific below 1e-3, "n/a" when missing."""
    if v is None or not np.isfinite(v):
        return "n/a"
    if v == 0 or abs(v) >= 1e-3:
        return f"{v:.4f}"
    return f"{v:.1e}"


def _ce_text(ce, symbol=True):
    """'CE_2 = 0.0218 [0.0197, 0.0241]' (the interval only when computed)."""
    s = (_ce_symbol(ce.norm) + " = " if symbol else "") + _fmt(ce.value)
    if ce.ci_low is not None:
        s += f" [{_fmt(ce.ci_low)}, {_fmt(ce.ci_high)}]"
    return s


def _bins_phrase(ce):
    """"10 equal-mass bins" / "20 fixed-width bins" for a CalibrationError."""
    kind = "fixed-width" if ce.bins.edges is not None else "equal-mass"
    return f"{ce.bins.n_bins} {kind} bins"
