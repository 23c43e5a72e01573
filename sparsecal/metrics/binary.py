"""Calibration error of one binary problem (scores and 0/1 labels), with its
confidence interval, and the per-bin rows of its reliability diagram."""
from dataclasses import dataclass, field

import numpy as np

from ..core.binning import (BinStats, bin_statistics, equal_mass_bin_starts,
                             equal_mass_bins_sorted)
from ..core.validation import check_choice
from .bin_intervals import BIN_INTERVAL_METHODS, binomial_interval
from .ce import bin_rates, ce_from_bins, check_norm
from .debiased import debiased_ce_from_bins, score_interval
from .intervals import ConfidenceInterval, ce_interval
from ..io.tables import Table
from ..core.dispatch import takes_data

__all__ = ["CalibrationError", "calibration_error", "check_debias", "reliability_table",
           "sorted_calibration_error"]


@dataclass(frozen=True)
class CalibrationError:
    """A binned calibration error estimate, with its interval if one was asked for.

    Attributes
    ----------
    value : float
        CE_p of the data.
    norm : float
        p (1, 2 or inf).
    n : int
        Number of points.
    bins : BinStats
        The bins it was computed from (for reliability diagrams).
    ci_low, ci_high : float or None
        Interval ends: Algorithm 2's ``mean ± z sd`` of the simulated CEs, or
        the bootstrap percentile interval, at ``ci.confidence_level``.
    ci : ConfidenceInterval or None
        How the interval was computed (None: no interval).
    ci_method : str or None
        ``ci.method``: "simulation", "bootstrap" or None.
    ci_level : float or None
        ``ci.confidence_level`` (0.95 by default).
    ci_halfwidth : float or None
        ``(ci_high - ci_low) / 2``.

    Examples
    --------
    >>> ce = calibration_error([0.1, 0.4, 0.6, 0.9], [0, 0, 1, 1], n_bins=2)
    >>> round(float(ce), 4), ce.ci_method, ce.to_dict()["n_bins"]
    (0.25, None, 2)
    """

    value: float
    norm: float
    n: int
    bins: BinStats = field(repr=False)
    ci_low: float = None
    ci_high: float = None
    ci: ConfidenceInterval = None

    def __float__(self):
        return float(self.value)

    @property
    def ci_method(self):
        return None if self.ci is None else self.ci.method

    @property
    def ci_level(self):
        return None if self.ci is None else self.ci.confidence_level

    @property
    def ci_halfwidth(self):
        return None if self.ci_low is None else (self.ci_high - self.ci_low) / 2.0

    def to_dict(self):
        """Value, norm, size, bin count and interval (ends, method, level)."""
        return {"value": self.value, "norm": self.norm, "n": self.n,
                "n_bins": self.bins.n_bins, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "ci_method": self.ci_method,
                "ci_level": self.ci_level}


@takes_data
def calibration_error(scores, labels, *, norm=2, binning="equal-mass", n_bins=None,
                      bin_size=None, ci=None, n_threads=None, debias=False):
    """Binned calibration error CE_p of binary predictions.

    ``CE_p = (sum_i |B_i|/N |q_i - p_i|^p)^(1/p)`` over the non-empty bins, with
    ``q_i`` the mean score and ``p_i`` the positive rate of bin ``i``.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Predicted probabilities in [0, 1].
    labels : array_like of {0, 1} or bool, shape (n,)
    norm : {2, 1, inf}, default=2
        2: RMS calibration error (CalibErr, SMCE, GMCE); 1: ECE; inf: maximum
        (also "inf" or "max").
    binning : {"equal-mass", "fixed"}, default="equal-mass"
        Equal-mass: Nguyen & O'Connor Algorithm 1 (ties broken by input order);
        fixed: ``n_bins`` equal intervals of [0, 1].
    n_bins, bin_size : int, optional
        Default ``n_bins=10``; ``bin_size`` for equal-mass binning only.
    ci : None, {"simulation", "bootstrap"} or ConfidenceInterval, default=None
        Confidence interval (see :class:`ConfidenceInterval`): Algorithm 2 or a
        bootstrap that re-bins every replicate; a method name uses the defaults
        (95%, 10,000 samples / 1,000 replicates, ``random_state=0``).
    n_threads : int, optional
        Threads for the sort (default: ``SPARSECAL_NUM_THREADS``, else all CPUs; see :func:`sparsecal.core.threads.get_n_threads`).
    debias : bool, default=False
        ``norm=2`` only: Kumar, Liang & Ma (2019)'s debiased estimate
        ``sqrt(max(D, 0))``, ``D = sum_i |B_i|/N ((q_i - p_i)² - p_i (1 - p_i) /
        (|B_i| - 1))`` (bins of one point add 0; 0 when D < 0, as their
        ``uncertainty-calibration`` package) instead of the plug-in CE_2. Its
        interval is ``ci="score"`` (:mod:`~sparsecal.metrics.debiased`); the
        other methods are intervals of the plug-in estimate.

    Returns
    -------
    CalibrationError

    Raises
    ------
    TypeError
        ``debias`` not a bool.
    ValueError
        Invalid scores, labels, ``norm``, ``binning``, ``n_bins``, ``bin_size`` or
        ``ci`` (the message names the argument); ``debias=True`` with a norm
        other than 2 or a ``ci`` method other than "score", or "score" without it.
    TypeError
        Non-numeric scores or labels.

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 1 (estimate, step 5 for p = 2) and
    Algorithm 2 (interval); Kranzlein et al. 2021, eq. 2; Kumar, Liang & Ma
    2019, "Verified Uncertainty Calibration", NeurIPS, Section 5 (``debias``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> q = rng.random(2000)
    >>> y = (rng.random(2000) < q ** 2).astype(np.uint8)      # overconfident
    >>> ce = calibration_error(q, y, ci="simulation")
    >>> round(ce.value, 3), ce.ci_level, bool(ce.ci_low < ce.value < ce.ci_high)
    (0.188, 0.95, True)
    >>> ece = calibration_error(q, y, norm=1, binning="fixed", n_bins=15)
    >>> round(ece.value, 3)
    0.171
    >>> deb = calibration_error(q, y, debias=True, ci="score")
    >>> round(deb.value, 3), round(deb.ci_low, 3), round(deb.ci_high, 3)
    (0.187, 0.169, 0.206)
    """
    norm = check_norm(norm)
    spec = ConfidenceInterval.resolve(ci)
    check_debias(debias, norm, spec)
    bins, x, y, order = bin_statistics(scores, labels, binning=binning, n_bins=n_bins,
                                       bin_size=bin_size, n_threads=n_threads)
    return _from_bins(bins, x, y, order, norm, spec, debias)


def _from_bins(bins, x, y, order, norm, spec, debias):
    """The CalibrationError of binned data (arguments checked)."""
    value = debiased_ce_from_bins(bins) if debias else ce_from_bins(bins, norm)
    lo = hi = None
    if spec is not None:
        lo, hi = (score_interval(bins, spec) if debias
                  else ce_interval(spec, bins, norm, x, y, order))
    return CalibrationError(value, norm, x.shape[0], bins, lo, hi, spec)


def check_debias(debias, norm, spec):
    """``debias`` is a bool, used with norm 2 and no interval or the score interval.

    Parameters
    ----------
    debias : bool
    norm : float
        From :func:`~sparsecal.metrics.ce.check_norm`.
    spec : ConfidenceInterval or None

    Raises
    ------
    TypeError, ValueError
        As :func:`calibration_error` for ``debias``.
    """
    if not isinstance(debias, (bool, np.bool_)):
        raise TypeError(f"debias must be True or False, got {debias!r}")
    if debias and norm != 2.0:
        raise ValueError(f"debias=True needs norm=2 (the debiased squared CE), got norm={norm}")
    if debias and spec is not None and spec.method != "score":
        raise ValueError(f"debias=True takes ci=None or ci='score' (the interval of the "
                         f"debiased CE), got ci method {spec.method!r}")


def sorted_calibration_error(sorted_scores, sorted_labels, *, n_bins=None, bin_size=None,
                             ci=None, norm=2, debias=False):
    """CE_2 with equal-mass bins of scores already sorted (stably) with their labels.

    The sort that :func:`calibration_error` would make, made once for several
    estimates (SMCE and every GMCE share one: :mod:`sparsecal.metrics.marginal`).
    No validation: the arrays come from :func:`~sparsecal.core.binning.argsort_scores`
    over validated scores.

    Parameters
    ----------
    sorted_scores : ndarray of float32 or float64, shape (n,)
        Scores in ascending order, ties in entry order.
    sorted_labels : ndarray of uint8, shape (n,)
        Their labels, in the same order.
    n_bins, bin_size : int, optional
        As in :func:`calibration_error` (default 10 bins).
    ci : None, {"simulation", "bootstrap", "score"} or ConfidenceInterval, default=None
        As in :func:`calibration_error`.
    norm : {2, 1, inf}, default=2
        As in :func:`calibration_error` (checked here).
    debias : bool, default=False
        As in :func:`calibration_error` (checked by the caller,
        :func:`check_debias`).

    Returns
    -------
    CalibrationError
        Equal to ``calibration_error`` of the same scores and labels in any order.

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 1 (step 1 is the sort) and Algorithm 2.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([0.9, 0.1, 0.4, 0.1, 0.7])
    >>> y = np.array([1, 0, 0, 1, 1], dtype=np.uint8)
    >>> order = np.argsort(x, kind="stable")
    >>> a = sorted_calibration_error(x[order], y[order], n_bins=2)
    >>> a.value == calibration_error(x, y, n_bins=2).value
    True
    """
    spec = ConfidenceInterval.resolve(ci)
    if n_bins is None and bin_size is None:
        n_bins = 10
    n = sorted_scores.shape[0]
    starts = equal_mass_bin_starts(n, n_bins=n_bins, bin_size=bin_size)
    bins = equal_mass_bins_sorted(sorted_scores, sorted_labels, None, starts)
    order = None if spec is None else (np.arange(n), sorted_scores, starts)
    return _from_bins(bins, sorted_scores, sorted_labels, order, check_norm(norm), spec,
                      debias)


class ReliabilityTable(Table, dict):
    """The dict :func:`reliability_table` returns, with ``to_frame()`` and an
    HTML view (one row per non-empty bin; the columns that are not None)."""

    def _columns(self):
        return {k: v for k, v in self.items() if v is not None}


def reliability_table(bins, *, ci="simulation", bin_interval="wilson"):
    """Per-bin rows of a reliability diagram (calibration curve).

    Parameters
    ----------
    bins : BinStats
        E.g. ``calibration_error(...).bins``.
    ci : None, {"simulation", "bootstrap"} or ConfidenceInterval, default="simulation"
        Only its ``confidence_level`` is used (95% by default). None: no interval.
    bin_interval : {"wilson", "clopper-pearson"}, default="wilson"
        The interval of each bin's positive rate
        (:func:`~sparsecal.metrics.bin_intervals.binomial_interval`): Wilson's
        score interval or the exact Clopper–Pearson interval. Neither has zero
        width for a bin whose labels are all 0 or all 1.

    Returns
    -------
    ReliabilityTable (a dict of ndarray)
        Over the non-empty bins: "mean_score", "mean_label", "count", "ci_low"
        and "ci_high" (the interval of the positive rate; None when ``ci`` is
        None), "lower" and "upper" (smallest and largest score of the bin);
        ``to_frame()`` gives a DataFrame of them (pandas extra), and Jupyter
        shows them as a table.

    Raises
    ------
    ValueError
        If ``ci`` or ``bin_interval`` is invalid.

    References
    ----------
    Nguyen & O'Connor 2015, Fig. 1d (the curve); Wilson 1927; Clopper & Pearson
    1934 (the intervals, replacing Algorithm 2's normal approximation per bin).

    Examples
    --------
    >>> bins = calibration_error([0.1, 0.2, 0.7, 0.9], [0, 1, 1, 1], n_bins=2).bins
    >>> t = reliability_table(bins)
    >>> t["mean_label"].tolist(), t["ci_low"].round(3).tolist(), t["ci_high"].round(3).tolist()
    ([0.5, 1.0], [0.095, 0.342], [0.905, 1.0])
    """
    spec = ConfidenceInterval.resolve(ci)
    check_choice(bin_interval, "bin_interval", set(BIN_INTERVAL_METHODS))
    count, q, p = bin_rates(bins)
    nonempty = bins.count > 0
    lo = hi = None
    if spec is not None:
        lo, hi = binomial_interval(bins.sum_label[nonempty], count,
                                   confidence_level=spec.confidence_level,
                                   method=bin_interval)
    return ReliabilityTable(mean_score=q, mean_label=p, count=count, ci_low=lo, ci_high=hi,
                            lower=bins.lower[nonempty], upper=bins.upper[nonempty])
