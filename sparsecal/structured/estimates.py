"""Event probabilities and derived quantities estimated from samples, with
intervals (Nguyen & O'Connor 2015, Sections 5.2-5.3 and 6).
"""
from dataclasses import dataclass

import numpy as np

from ..core.dispatch import IN_MEMORY_SAMPLES, takes_data
from ..core.validation import as_array, as_float_array
from ..io.tables import number, plural, summary
from ..metrics.intervals import ConfidenceInterval

__all__ = ["SampleEstimate", "sample_frequency", "sample_percentiles"]


@dataclass(frozen=True)
class SampleEstimate:
    """An ``estimate`` per item from ``n_samples`` samples, with its interval
    ``low``, ``high`` at ``confidence_level`` (``method`` "wilson" or
    "percentile").

    Examples
    --------
    See :func:`sample_frequency`.
    """

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n_samples: int
    confidence_level: float
    method: str

    def __repr__(self):
        return summary(self, plural(self.estimate.size, "item"),
                       plural(self.n_samples, "sample"),
                       f"{100 * self.confidence_level:g}% {self.method} intervals",
                       self.estimate.size and f"mean {number(float(self.estimate.mean()))}")

    def to_dict(self):
        return {"estimate": self.estimate.tolist(), "low": self.low.tolist(),
                "high": self.high.tolist(), "n_samples": self.n_samples,
                "confidence_level": self.confidence_level, "method": self.method}


def _samples_axis(x, name):
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"{name} needs at least one sample on its last axis, got shape "
                         f"{x.shape}")
    return x.shape[-1]


@takes_data(refuse=IN_MEMORY_SAMPLES)
def sample_frequency(indicator, confidence_level=0.95):
    """Probability of an event as its frequency ``k / S`` over samples, with the
    Wilson score interval (Wilson 1927).

    Parameters
    ----------
    indicator : array_like of bool or {0, 1}, shape (..., S)
        Whether the event holds in each of S samples (last axis).
    confidence_level : float, default 0.95

    Returns
    -------
    SampleEstimate

    Examples
    --------
    >>> est = sample_frequency([1] * 30 + [0] * 70)
    >>> float(est.estimate), round(float(est.low), 4), round(float(est.high), 4)
    (0.3, 0.2189, 0.3958)
    """
    spec = ConfidenceInterval(confidence_level=confidence_level)
    x = as_array(indicator, "indicator")
    if x.dtype.kind not in "biuf":
        raise TypeError(f"indicator must be boolean or 0/1, got dtype {x.dtype}")
    S = _samples_axis(x, "indicator")
    if x.dtype != np.bool_ and not ((x == 0) | (x == 1)).all():
        raise ValueError("indicator must hold 0/1 or booleans")
    p = np.count_nonzero(x, axis=-1) / S
    z2 = spec.z ** 2
    centre = (p + z2 / (2 * S)) / (1 + z2 / S)
    half = spec.z * np.sqrt(p * (1 - p) / S + z2 / (4 * S * S)) / (1 + z2 / S)
    return SampleEstimate(np.asarray(p, np.float64), np.clip(centre - half, 0.0, 1.0),
                          np.clip(centre + half, 0.0, 1.0), S, spec.confidence_level,
                          "wilson")


@takes_data(refuse=IN_MEMORY_SAMPLES)
def sample_percentiles(values, confidence_level=0.95):
    """Mean of a quantity over samples and the central percentile interval of its values.

    Parameters
    ----------
    values : array_like of float, shape (..., S)
    confidence_level : float, default 0.95

    Returns
    -------
    SampleEstimate

    Examples
    --------
    >>> sample_percentiles([list(range(101))], confidence_level=0.9).low.tolist()
    [5.0]
    """
    spec = ConfidenceInterval(confidence_level=confidence_level)
    x = as_array(values, "values")
    x = as_float_array(x, "values", ndim=max(x.ndim, 1))
    S = _samples_axis(x, "values")
    if np.isnan(x).any():
        raise ValueError("values contains NaN")
    low, high = np.percentile(x, spec.percentiles, axis=-1)
    return SampleEstimate(x.mean(-1, dtype=np.float64), np.asarray(low, np.float64),
                          np.asarray(high, np.float64), S, spec.confidence_level,
                          "percentile")
