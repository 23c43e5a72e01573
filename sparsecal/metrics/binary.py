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
from .._docs import fill_doc
from ..io.tables import Table, interval, number, plural, summary
from ..core.dispatch import takes_data

__all__ = ["CalibrationError", "calibration_error", "check_debias", "error_from_bins",
           "reliability_table", "sorted_calibration_error"]


@dataclass(frozen=True)
class CalibrationError:
    """A binned calibration error: ``value`` (CE_p of ``n`` points), ``norm``, the
    ``bins`` it comes from, and the interval ``ci_low``, ``ci_high`` computed as
    ``ci`` says (:class:`ConfidenceInterval`; ``ci_method``, ``ci_level``), if
    one was asked for.

    Examples
    --------
    See :func:`calibration_error`.
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

    def __repr__(self):
        return summary(self, f"value={number(self.value)}", f"norm={self.norm:g}",
                       f"n={self.n}", plural(self.bins.n_bins, "bin"),
                       self.ci and interval(self.ci_low, self.ci_high, self.ci_level))

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
@fill_doc
def calibration_error(scores, labels, *, norm=2, binning="equal-mass", n_bins=None,
                      bin_size=None, ci=None, n_threads=None, debias=False):
    """Binned calibration error ``CE_p = (sum_i |B_i|/N |q_i - p_i|^p)^(1/p)`` over
    the non-empty bins, ``q_i`` the mean score and ``p_i`` the positive rate of
    bin ``i`` (Nguyen & O'Connor 2015, Algorithm 1; Kranzlein et al. 2021, eq. 2).

    Parameters
    ----------
    {scores_labels}
    {norm}
    {binning}
    {ci}
    {n_threads}
    {debias}

    Returns
    -------
    CalibrationError

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> q = rng.random(2000)
    >>> ce = calibration_error(q, rng.random(2000) < q ** 2, ci="simulation")
    >>> round(ce.value, 3), bool(ce.ci_low < ce.value < ce.ci_high)
    (0.188, True)
    """
    norm = check_norm(norm)
    spec = ConfidenceInterval.resolve(ci)
    check_debias(debias, norm, spec)
    bins, x, y, order = bin_statistics(scores, labels, binning=binning, n_bins=n_bins,
                                       bin_size=bin_size, n_threads=n_threads)
    return error_from_bins(bins, x, y, order, norm, spec, debias)


def error_from_bins(bins, x, y, order, norm, spec, debias, value=None):
    """The CalibrationError of ``bins`` of the points ``x``, ``y`` (``order``: see
    :func:`~sparsecal.metrics.intervals.ce_interval`), its ``value`` computed
    unless given."""
    if value is None:
        value = debiased_ce_from_bins(bins) if debias else ce_from_bins(bins, norm)
    lo = hi = None
    if spec is not None:
        lo, hi = (score_interval(bins, spec) if debias
                  else ce_interval(spec, bins, norm, x, y, order))
    return CalibrationError(value, norm, x.shape[0], bins, lo, hi, spec)


def check_debias(debias, norm, spec):
    """Check ``debias``: a bool, with norm 2 and no interval or the score interval."""
    if not isinstance(debias, (bool, np.bool_)):
        raise TypeError(f"debias must be True or False, got {debias!r}")
    if debias and norm != 2.0:
        raise ValueError(f"debias=True needs norm=2 (the debiased squared CE), got norm={norm}")
    if debias and spec is not None and spec.method != "score":
        raise ValueError(f"debias=True takes ci=None or ci='score' (the interval of the "
                         f"debiased CE), got ci method {spec.method!r}")


def sorted_calibration_error(sorted_scores, sorted_labels, *, n_bins=None, bin_size=None,
                             ci=None, norm=2, debias=False):
    """:func:`calibration_error` with equal-mass bins of stably sorted scores and
    labels, unvalidated (one sort for several estimates).
    """
    spec = ConfidenceInterval.resolve(ci)
    if n_bins is None and bin_size is None:
        n_bins = 10
    n = sorted_scores.shape[0]
    starts = equal_mass_bin_starts(n, n_bins=n_bins, bin_size=bin_size)
    bins = equal_mass_bins_sorted(sorted_scores, sorted_labels, None, starts)
    order = None if spec is None else (np.arange(n), sorted_scores)
    return error_from_bins(bins, sorted_scores, sorted_labels, order, check_norm(norm),
                           spec, debias)


class ReliabilityTable(Table, dict):
    """The dict :func:`reliability_table` returns, with ``to_frame()`` and an HTML view."""

    def _columns(self):
        return {k: v for k, v in self.items() if v is not None}


def reliability_table(bins, *, ci="simulation", bin_interval="wilson"):
    """Per-bin rows of a reliability diagram (calibration curve).

    Parameters
    ----------
    bins : BinStats
        E.g. ``calibration_error(...).bins``.
    ci : None, str or ConfidenceInterval, default="simulation"
        Only its ``confidence_level`` is used; None: no interval.
    bin_interval : {"wilson", "clopper-pearson"}, default="wilson"
        The interval of each bin's positive rate (:func:`binomial_interval`).

    Returns
    -------
    ReliabilityTable (a dict of ndarray)
        Over the non-empty bins: "mean_score", "mean_label", "count", "ci_low",
        "ci_high" (None without ``ci``), "lower" and "upper".

    Examples
    --------
    >>> bins = calibration_error([0.1, 0.2, 0.7, 0.9], [0, 1, 1, 1], n_bins=2).bins
    >>> reliability_table(bins)["ci_low"].round(3).tolist()
    [0.095, 0.342]
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
