"""Text on the figures: the CE symbol, CE values with their interval, interval
levels and methods as the data give them, and the binning named in titles."""
import numpy as np

#: the level of a bin's interval when its CE has none (reliability_table's default)
DEFAULT_LEVEL = 0.95


def _ce_symbol(norm, debiased=False):
    """CE_p in mathtext, e.g. CE_2 or CE_inf; "debiased CE_2" for Kumar et
    al.'s estimate."""
    if norm == np.inf:
        return r"$\mathrm{CE}_\infty$"
    return ("debiased " if debiased else "") + rf"$\mathrm{{CE}}_{int(norm)}$"


def _is_debiased(ce):
    """Whether a CalibrationError is the debiased CE_2: its interval is the
    score interval, which is that estimate's only."""
    return ce.ci_method == "score"


def _fmt(v):
    """A CE value: 4 decimals, scientific below 1e-3, "n/a" when missing."""
    if v is None or not np.isfinite(v):
        return "n/a"
    if v == 0 or abs(v) >= 1e-3:
        return f"{v:.4f}"
    return f"{v:.1e}"


def _ce_text(ce, symbol=True):
    """'CE_2 = 0.0218 [0.0197, 0.0241]' (the interval only when computed)."""
    s = (_ce_symbol(ce.norm, _is_debiased(ce)) + " = " if symbol else "") + _fmt(ce.value)
    if ce.ci_low is not None:
        s += f" [{_fmt(ce.ci_low)}, {_fmt(ce.ci_high)}]"
    return s


def _pct(level):
    """0.95 -> '95%', 0.975 -> '97.5%'."""
    return f"{100 * level:.6g}%"


def _joined(values):
    """Distinct values in first-seen order, joined by ' / '."""
    return " / ".join(dict.fromkeys(values))


def _bar_level(ce):
    """The level of a bin's interval: its CE's, else :data:`DEFAULT_LEVEL`."""
    return DEFAULT_LEVEL if ce.ci_level is None else ce.ci_level


def _intervals_title(errors, bin_interval, per_bin="of each bin's label rate"):
    """The key to the bars and brackets of curves ``errors``: e.g. 'bars: 95%
    Wilson interval of each bin's label rate' (not when ``bin_interval`` is
    None) and 'in brackets: 90% interval (bootstrap) of CE_2' when a CE has
    one; None when there is neither."""
    lines = []
    if bin_interval is not None:
        kind = {"wilson": "Wilson", "clopper-pearson": "Clopper–Pearson"}[bin_interval]
        lines.append(f"bars: {_joined(_pct(_bar_level(ce)) for ce in errors)} {kind} "
                     f"interval {per_bin}")
    with_ci = [ce for ce in errors if ce.ci_low is not None]
    if with_ci:   # the brackets of the CE texts
        lines.append(f"in brackets: {_interval_phrase(with_ci)} of "
                     f"{_ce_symbol(with_ci[0].norm, _is_debiased(with_ci[0]))}")
    return "\n".join(lines) or None


def _interval_phrase(errors):
    """'95% interval (simulation)' or '95% score interval' of CEs with an
    interval; without its specification (a CE built by hand) just 'interval'."""
    known = [ce for ce in errors if ce.ci is not None]
    if not known:
        return "interval"
    return _spec_phrase(_joined(_pct(ce.ci_level) for ce in known),
                        _joined(ce.ci_method for ce in known))


def _spec_phrase(level, method):
    """'95% score interval' (the debiased CE's), '95% interval (simulation)'."""
    if method == "score":
        return f"{level} score interval"
    return f"{level} interval ({method})"


def _bins_phrase(ce):
    """"10 equal-mass bins" / "20 fixed-width bins" for a CalibrationError."""
    kind = "fixed-width" if ce.bins.edges is not None else "equal-mass"
    return f"{ce.bins.n_bins} {kind} bins"
