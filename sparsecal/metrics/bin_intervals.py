"""Confidence intervals of a bin's positive rate, Wilson and Clopper–Pearson:
neither collapses to a point for a bin of one class, as the normal
approximation does (Brown, Cai & DasGupta 2001).
"""
import numpy as np

from ..core.validation import as_float_array, check_choice
from .intervals import check_confidence_level, two_sided_z

__all__ = ["BIN_INTERVAL_METHODS", "binomial_interval"]

#: Names of the per-bin interval methods.
BIN_INTERVAL_METHODS = ("wilson", "clopper-pearson")


def _check_counts(successes, trials):
    k = as_float_array(successes, "successes", ndim=np.ndim(successes)).astype(np.float64)
    n = as_float_array(trials, "trials", ndim=np.ndim(trials)).astype(np.float64)
    if k.shape != n.shape:
        raise ValueError(f"successes and trials must have the same shape, got {k.shape} "
                         f"and {n.shape}")
    if not np.all(n > 0) or not np.all(np.isfinite(n)):
        raise ValueError("trials must be finite and positive")
    if not np.all((k >= 0) & (k <= n)):
        raise ValueError("successes must lie in [0, trials] (and not be NaN)")
    return k, n


def _wilson(k, n, level):
    z = two_sided_z(level)
    centre = (k + z * z / 2.0) / (n + z * z)
    half = z / (n + z * z) * np.sqrt(k * (n - k) / n + z * z / 4.0)
    # the ends are exactly 0 at k = 0 and 1 at k = n (rounding would leave ~1e-17)
    return (np.where(k > 0, np.clip(centre - half, 0.0, 1.0), 0.0),
            np.where(k < n, np.clip(centre + half, 0.0, 1.0), 1.0))


def _clopper_pearson(k, n, level):
    from scipy.special import betaincinv   # lazy: scipy is heavy to import
    alpha = 1.0 - level
    with np.errstate(invalid="ignore", divide="ignore"):   # k = 0 or k = n: set below
        lo = betaincinv(k, n - k + 1.0, alpha / 2.0)
        hi = betaincinv(k + 1.0, n - k, 1.0 - alpha / 2.0)
    return np.where(k > 0, lo, 0.0), np.where(k < n, hi, 1.0)


def binomial_interval(successes, trials, *, confidence_level=0.95, method="wilson"):
    """Confidence interval of a binomial proportion ``k / n``, vectorised over bins:
    ``"wilson"`` (Wilson 1927, the score test's) or ``"clopper-pearson"`` (1934,
    exact from Beta quantiles).

    Parameters
    ----------
    successes, trials : array_like of float
        ``k`` positives of ``n > 0`` points per bin.
    confidence_level : float, default=0.95
    method : {"wilson", "clopper-pearson"}, default="wilson"

    Returns
    -------
    low, high : ndarray of float64

    Examples
    --------
    >>> lo, hi = binomial_interval([0, 7], [10, 10])
    >>> lo.round(4).tolist(), hi.round(4).tolist()
    ([0.0, 0.3968], [0.2775, 0.8922])
    """
    level = check_confidence_level(confidence_level)
    check_choice(method, "method", set(BIN_INTERVAL_METHODS))
    k, n = _check_counts(successes, trials)
    rule = _wilson if method == "wilson" else _clopper_pearson
    return rule(k, n, level)
