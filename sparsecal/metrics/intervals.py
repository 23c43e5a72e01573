"""Confidence intervals of a binned calibration error: one specification, two methods.

:class:`ConfidenceInterval` says how every metric of :mod:`sparsecal.metrics`
computes its interval (the names follow :func:`scipy.stats.bootstrap`):

- ``method="simulation"``: Nguyen & O'Connor 2015, Algorithm 2. Draw every bin's
  positive rate ``p_i* ~ N(p_i, p_i (1 - p_i) / |B_i|)``, clip to [0, 1],
  recompute CE_p with the bins' mean scores fixed; report ``mean ± z sd`` of the
  ``n_resamples`` simulated values (default 10,000), ``z`` the two-sided normal
  quantile of ``confidence_level`` (1.96 at 95%, the paper's Step 3).
- ``method="bootstrap"``: resample the points with replacement, **re-bin** each
  replicate (equal-mass bins move with the data), and report the percentile
  interval of ``n_resamples`` replicates (default 1,000); replicate ``r``
  draws from the ``r``-th generator spawned from ``random_state``
  (:mod:`~sparsecal.metrics.resampling`).

Metrics take ``ci=None`` (no interval), ``ci="simulation"`` / ``"bootstrap"``
(that method with the defaults) or ``ci=ConfidenceInterval(...)``.
"""
import numbers
from dataclasses import dataclass

import numpy as np

from ..core.validation import check_positive_int
from .ce import bin_rates, ce_of_gaps
from .resampling import check_random_state, data_table, table_bootstrap_interval

__all__ = ["ConfidenceInterval", "bootstrap_interval", "ce_interval", "check_confidence_level",
           "check_random_state", "simulation_interval", "two_sided_z"]

#: Default ``n_resamples`` per method: Algorithm 2's S, and bootstrap replicates;
#: the score interval of the debiased CE (:mod:`~sparsecal.metrics.debiased`) draws none.
DEFAULT_RESAMPLES = {"simulation": 10000, "bootstrap": 1000, "score": 0}
# Normal draws held at once by Algorithm 2 (samples x bins), ~32 MiB of float64.
_SIM_BLOCK_ELEMENTS = 1 << 22


def check_confidence_level(level):
    """A confidence level strictly between 0 and 1, as a Python float.

    Parameters
    ----------
    level : float

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``level`` is not a real number strictly between 0 and 1 (booleans
        included); the message names ``confidence_level``.

    Examples
    --------
    >>> check_confidence_level(0.9)
    0.9
    >>> check_confidence_level(1)
    Traceback (most recent call last):
        ...
    ValueError: confidence_level must be a number strictly between 0 and 1, got 1
    """
    if not isinstance(level, numbers.Real) or isinstance(level, bool) \
            or not 0.0 < level < 1.0:
        raise ValueError(f"confidence_level must be a number strictly between 0 and 1, "
                         f"got {level!r}")
    return float(level)


def two_sided_z(level):
    """The two-sided standard normal quantile ``z`` of a confidence level.

    Parameters
    ----------
    level : float
        Strictly between 0 and 1 (checked by the caller).

    Returns
    -------
    float
        ``Phi^-1(1/2 + level/2)``: 1.959963984540054 at 0.95.

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 2, Step 3 (1.96 at 95%).

    Examples
    --------
    >>> two_sided_z(0.95)
    1.959963984540054
    """
    # inv_cdf is accurate to a few units in the last place (1.9599639845400536
    # at 0.975, vs 1.959963984540054 correctly printed); 16 significant digits
    # drop that noise and give the 1.959963984540054 sparsecal has always used.
    from statistics import NormalDist   # here only: it imports decimal and fractions
    return float(f"{NormalDist().inv_cdf(0.5 + level / 2):.16g}")


@dataclass(frozen=True)
class ConfidenceInterval:
    """How a calibration error's confidence interval is computed.

    Every metric (:func:`~sparsecal.calibration_error`, :func:`~sparsecal.smce`,
    :func:`~sparsecal.gmce`, :func:`~sparsecal.mce`, :func:`~sparsecal.top_label_ece`,
    :func:`~sparsecal.evaluate`, :func:`~sparsecal.reliability_table`) takes
    ``ci=`` as None, a method name (shorthand for ``ConfidenceInterval(method)``)
    or an instance of this class. The constructor validates every field.

    Parameters
    ----------
    method : {"simulation", "bootstrap", "score"}, default="simulation"
        Algorithm 2 of Nguyen & O'Connor (``mean ± z sd`` of simulated CEs), a
        percentile bootstrap over points that re-bins every replicate, or the
        score interval of the debiased CE (``calibration_error(...,
        debias=True)`` only; :func:`~sparsecal.metrics.debiased.score_interval`).
    confidence_level : float, default=0.95
        Strictly between 0 and 1.
    n_resamples : int, optional
        Simulated samples (Algorithm 2's S; default 10,000) or bootstrap
        replicates (default 1,000; each costs O(n)); 0 for "score", which
        draws nothing (a given value is stored, unused). None stores the default.
    random_state : None, int, SeedSequence or numpy Generator, default=0
        Seed of :func:`numpy.random.default_rng`. An int gives the same draws at
        every call; a Generator is consumed (metrics that compute several
        intervals draw them one after another from it).

    Attributes
    ----------
    z : float
        Two-sided normal quantile of ``confidence_level`` (1.959963984540054 at 0.95).
    percentiles : tuple of float
        Bootstrap percentiles ``50 ∓ 50 confidence_level`` (2.5 and 97.5 at 0.95).

    Raises
    ------
    ValueError
        If a field is invalid; the message names the field.

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 2 (Steps 2-3).

    Examples
    --------
    >>> ConfidenceInterval()
    ConfidenceInterval(method='simulation', confidence_level=0.95, n_resamples=10000, random_state=0)
    >>> spec = ConfidenceInterval("bootstrap", confidence_level=0.9)
    >>> spec.n_resamples, spec.percentiles
    (1000, (5.0, 95.0))
    >>> round(ConfidenceInterval(confidence_level=0.99).z, 4)
    2.5758
    >>> ConfidenceInterval(confidence_level=95)
    Traceback (most recent call last):
        ...
    ValueError: confidence_level must be a number strictly between 0 and 1, got 95
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
             else check_positive_int(self.n_resamples, "n_resamples"))
        check_random_state(self.random_state)
        object.__setattr__(self, "confidence_level", level)
        object.__setattr__(self, "n_resamples", n)

    @classmethod
    def resolve(cls, ci):
        """The specification a metric's ``ci=`` argument stands for.

        Parameters
        ----------
        ci : None, {"simulation", "bootstrap", "score"} or ConfidenceInterval

        Returns
        -------
        ConfidenceInterval or None
            None for None; ``ConfidenceInterval(ci)`` for a method name; ``ci``
            itself for a specification.

        Raises
        ------
        ValueError
            For anything else (the message names ``ci``).

        Examples
        --------
        >>> ConfidenceInterval.resolve("bootstrap").n_resamples
        1000
        >>> ConfidenceInterval.resolve("jackknife")
        Traceback (most recent call last):
            ...
        ValueError: ci must be None, 'simulation', 'bootstrap' or 'score', or a ConfidenceInterval, got 'jackknife'
        """
        if ci is None or isinstance(ci, cls):
            return ci
        if isinstance(ci, str) and ci in DEFAULT_RESAMPLES:
            return cls(ci)
        raise ValueError(f"ci must be None, 'simulation', 'bootstrap' or 'score', or a "
                         f"ConfidenceInterval, got {ci!r}")

    @property
    def z(self):
        return two_sided_z(self.confidence_level)

    @property
    def percentiles(self):
        # 50 * level is exact for the usual levels (47.5 at 0.95), so the ends are
        # exactly 2.5 and 97.5 (not 100 * (1 - 0.95) / 2 = 2.500000000000002).
        half = 50.0 * self.confidence_level
        return 50.0 - half, 50.0 + half

    def to_dict(self):
        """The fields as JSON-ready values (a Generator seed as its repr).

        Examples
        --------
        >>> ConfidenceInterval("bootstrap", n_resamples=200, random_state=3).to_dict()
        {'method': 'bootstrap', 'confidence_level': 0.95, 'n_resamples': 200, 'random_state': 3}
        """
        seed = self.random_state
        return {"method": self.method, "confidence_level": self.confidence_level,
                "n_resamples": self.n_resamples,
                "random_state": seed if seed is None or isinstance(seed, numbers.Integral)
                else repr(seed)}


def ce_interval(spec, bins, norm, scores, labels, order):
    """The interval ``spec`` asks for, of CE_p over ``bins``.

    Parameters
    ----------
    spec : ConfidenceInterval
    bins : BinStats
    norm : float
        From :func:`~sparsecal.metrics.ce.check_norm`.
    scores, labels, order :
        The binned data as :func:`~sparsecal.core.binning.bin_statistics` returns
        it (the bootstrap resamples points).

    Returns
    -------
    (float, float)
        Lower and upper end.

    Raises
    ------
    ValueError
        For ``method="score"``, which is the interval of the debiased CE only.

    Examples
    --------
    >>> from sparsecal.core.binning import bin_statistics
    >>> bins, x, y, order = bin_statistics([0.2, 0.4, 0.6, 0.8], [0, 1, 0, 1], n_bins=2)
    >>> lo, hi = ce_interval(ConfidenceInterval(n_resamples=100), bins, 2.0, x, y, order)
    >>> bool(lo < hi)
    True
    """
    if spec.method == "score":
        raise ValueError("ci method 'score' is the interval of the debiased CE: use it with "
                         "calibration_error(..., debias=True)")
    if spec.method == "simulation":
        return simulation_interval(bins, norm, spec)
    return bootstrap_interval(scores, labels, bins, order, norm, spec)


def simulation_interval(bins, norm, spec):
    """Nguyen & O'Connor's Algorithm 2, vectorised over samples.

    Parameters
    ----------
    bins : BinStats
    norm : float
        1.0, 2.0 or inf.
    spec : ConfidenceInterval
        ``n_resamples`` samples S from ``default_rng(random_state)``; the level
        sets ``z``.

    Returns
    -------
    (float, float)
        ``mean ∓ z sd`` of the simulated CEs (sd with ddof=1; 0 for one sample).

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 2 (Step 1 uses Algorithm 1, step 4).

    Examples
    --------
    >>> from sparsecal.core.binning import fixed_width_bins
    >>> bins = fixed_width_bins([0.1, 0.2, 0.9], [0, 0, 1], n_bins=2)   # pure bins
    >>> [round(v, 4) for v in simulation_interval(bins, 2.0, ConfidenceInterval())]
    [0.1354, 0.1354]
    """
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
    """Percentile bootstrap over points, re-binning every replicate.

    A replicate resamples the ``n`` points with replacement: its counts of the
    distinct ``(score, label)`` cells are ``Multinomial(n, cells / n)``, drawn
    from the replicate's own generator spawned from ``spec.random_state``.
    Equal-mass bins are re-cut at the data's rank starts over the replicate's
    copies in score order (a cut inside the copies of one score splits their
    positives hypergeometrically); fixed-width bins do not move. The data enter
    only through their distinct-score table, so a cluster computes the same
    interval (:mod:`sparsecal.metrics.resampling`, docs/metrics.md).

    Parameters
    ----------
    scores : ndarray, shape (n,)
    labels : ndarray of uint8, shape (n,)
    bins : BinStats
        The bins of the data (their edges, for fixed-width bins).
    order : tuple or None
        ``(perm, sorted_scores, starts)`` of equal-mass bins, None for fixed-width
        (as :func:`~sparsecal.core.binning.bin_statistics` returns it).
    norm : float
    spec : ConfidenceInterval
        ``n_resamples`` replicates; the level sets the percentiles.

    Returns
    -------
    (float, float)
        The ``spec.percentiles`` of the replicates' CE_p.

    References
    ----------
    Efron & Tibshirani 1993, Chapter 13 (the percentile interval); Nguyen &
    O'Connor 2015, Algorithm 1 (the re-binned CE_p).

    Examples
    --------
    >>> from sparsecal.core.binning import bin_statistics
    >>> bins, x, y, order = bin_statistics([0.2, 0.4, 0.6, 0.8], [0, 1, 0, 1], n_bins=2)
    >>> lo, hi = bootstrap_interval(x, y, bins, order, 2.0,
    ...                             ConfidenceInterval("bootstrap", n_resamples=50))
    >>> bool(0 <= lo <= hi)
    True
    """
    return table_bootstrap_interval(data_table(scores, labels, order), bins, norm, spec)
