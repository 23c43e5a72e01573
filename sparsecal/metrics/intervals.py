"""Confidence intervals of a binned calibration error: ``"simulation"`` (Nguyen &
O'Connor 2015, Algorithm 2: each bin's positive rate drawn from ``N(p_i, p_i (1
- p_i) / |B_i|)``, clipped to [0, 1], and ``mean ± z sd`` of the simulated
CE_p) or ``"bootstrap"`` (the percentile interval of re-binned resamples,
:mod:`~sparsecal.metrics.resampling`).
"""
import numbers
from dataclasses import dataclass

import numpy as np

from .ce import bin_rates, ce_of_gaps
from .resampling import (check_random_state, check_resamples, data_table,
                         table_bootstrap_interval)

__all__ = ["ConfidenceInterval", "ce_interval", "check_confidence_level", "check_random_state",
           "simulation_interval", "two_sided_z"]

#: Default ``n_resamples`` per method: Algorithm 2's S, and bootstrap replicates;
#: the score interval of the debiased CE (:mod:`~sparsecal.metrics.debiased`) draws none.
DEFAULT_RESAMPLES = {"simulation": 10000, "bootstrap": 1000, "score": 0}
# Normal draws held at once by Algorithm 2 (samples x bins), ~32 MiB of float64.
_SIM_BLOCK_ELEMENTS = 1 << 22


def check_confidence_level(level):
    """A confidence level strictly between 0 and 1, as a float."""
    if not isinstance(level, numbers.Real) or isinstance(level, bool) \
            or not 0.0 < level < 1.0:
        raise ValueError(f"confidence_level must be a number strictly between 0 and 1, "
                         f"got {level!r}")
    return float(level)


def two_sided_z(level):
    """The two-sided standard normal quantile of ``level`` (1.959963984540054 at 0.95)."""
    # inv_cdf is accurate to a few units in the last place (1.9599639845400536
    # at 0.975, vs 1.959963984540054 correctly printed); 16 significant digits
    # drop that noise and give the 1.959963984540054 sparsecal has always used.
    from statistics import NormalDist   # here only: it imports decimal and fractions
    return float(f"{NormalDist().inv_cdf(0.5 + level / 2):.16g}")


@dataclass(frozen=True)
class ConfidenceInterval:
    """How a calibration error's confidence interval is computed; every ``ci=`` takes
    one, or a method name for its defaults.

    Parameters
    ----------
    method : {"simulation", "bootstrap", "score"}, default="simulation"
        N&O's Algorithm 2, a percentile bootstrap that re-bins every replicate,
        or the score interval of the debiased CE.
    confidence_level : float, default=0.95
    n_resamples : int, optional
        Simulated samples (default 10,000) or bootstrap replicates (1,000).
    random_state : None, int, SeedSequence or numpy Generator, default=0
        An int gives the same draws at every call; a Generator is consumed.

    Examples
    --------
    >>> ConfidenceInterval("bootstrap", confidence_level=0.9).percentiles
    (5.0, 95.0)
    """

    method: str = "simulation"
    confidence_level: float = 0.95
    n_resamples: int = None
    random_state: object = 0

    def __post_init__(self):
        if not isinstance(self.method, str) or self.method not in DEFAULT_RESAMPLES:
            raise ValueError(f"method must be 'simulation', 'bootstrap' or 'score', "
                             f"got {self.method!r}")
        level = check_confidence_level(self.confidence_level)
        n = (DEFAULT_RESAMPLES[self.method] if self.n_resamples is None
             else check_resamples(self.n_resamples))
        check_random_state(self.random_state)
        object.__setattr__(self, "confidence_level", level)
        object.__setattr__(self, "n_resamples", n)

    @classmethod
    def resolve(cls, ci):
        """The specification ``ci=`` stands for (None, a method name's defaults, or ``ci``)."""
        if ci is None or isinstance(ci, cls):
            return ci
        if isinstance(ci, str) and ci in DEFAULT_RESAMPLES:
            return cls(ci)
        raise ValueError(f"ci must be None, 'simulation', 'bootstrap' or 'score', or a "
                         f"ConfidenceInterval, got {ci!r}")

    @property
    def z(self):
        """The two-sided normal quantile of ``confidence_level``."""
        return two_sided_z(self.confidence_level)

    @property
    def percentiles(self):
        # 50 * level is exact for the usual levels (47.5 at 0.95), so the ends are
        # exactly 2.5 and 97.5 (not 100 * (1 - 0.95) / 2 = 2.500000000000002).
        """``50 ∓ 50 confidence_level``."""
        half = 50.0 * self.confidence_level
        return 50.0 - half, 50.0 + half

    def to_dict(self):
        """The fields as JSON-ready values (a Generator as its repr)."""
        seed = self.random_state
        return {"method": self.method, "confidence_level": self.confidence_level,
                "n_resamples": self.n_resamples,
                "random_state": seed if seed is None or isinstance(seed, numbers.Integral)
                else repr(seed)}


def ce_interval(spec, bins, norm, scores, labels, order):
    """The interval ``spec`` asks for of CE_p over ``bins`` (not "score")."""
    if spec.method == "score":
        raise ValueError("ci method 'score' is the interval of the debiased CE: use it with "
                         "calibration_error(..., debias=True)")
    if spec.method == "simulation":
        return simulation_interval(bins, norm, spec)
    return bootstrap_interval(scores, labels, bins, order, norm, spec)


def simulation_interval(bins, norm, spec):
    """Nguyen & O'Connor's Algorithm 2, vectorised over samples: ``mean ∓ z sd`` (ddof=1)."""
    n_samples = spec.n_resamples
    rng = np.random.default_rng(spec.random_state)
    count, q, p = bin_rates(bins)
    sd = np.sqrt(p * (1.0 - p) / count)
    weights = count / count.sum()
    # Draw in blocks of samples so memory stays bounded with many bins (bin_size
    # of 100 over 10^8 entries is 10^6 bins); a Generator's stream does not depend
    # on the block shape, so the result equals one (n_samples, n_bins) draw.
    rows = max(1, _SIM_BLOCK_ELEMENTS // p.shape[0])
    ce = np.empty(n_samples)
    for s0 in range(0, n_samples, rows):
        m = min(rows, n_samples - s0)
        p_star = np.clip(p + sd * rng.standard_normal((m, p.shape[0])), 0.0, 1.0)
        ce[s0:s0 + m] = ce_of_gaps(weights, np.abs(q - p_star), norm)
    mean, spread = ce.mean(), ce.std(ddof=1) if n_samples > 1 else 0.0
    z = spec.z
    return float(mean - z * spread), float(mean + z * spread)


def bootstrap_interval(scores, labels, bins, order, norm, spec):
    """The percentile bootstrap interval, from the data's distinct-score table."""
    return table_bootstrap_interval(data_table(scores, labels, order), bins, norm, spec)
