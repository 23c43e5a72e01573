"""Binned calibration error and the marginal metrics built on it.

- ``CE_p = (sum_i |B_i|/N * |mean_score_i - mean_label_i|^p)^(1/p)`` over bins
  ``B_i`` (Nguyen & O'Connor 2015, Algorithm 1 step 5 for p=2; ECE for p=1;
  the maximum for p=inf).
- SMCE / GMCE (Kranzlein, Liu & Schneider 2021, eqs. 2-3): CE_2 over thresholded
  entries of all tags pooled / of the tags of one group.
- MCE (Kumar, Liang & Ma 2019): root mean over tags of the per-tag squared CE,
  over the tags with enough entries; tags lacking data are reported.
- Confidence intervals by simulation (Nguyen & O'Connor, Algorithm 2) or by a
  bootstrap over points that re-bins every replicate.
- Brier score with its calibration / refinement decomposition (Nguyen's thesis,
  Section 3.1.3: Brier = E[(q - p_q)^2] + E[p_q (1 - p_q)]).
"""
from dataclasses import dataclass, field

import numpy as np

from ..core.validation import check_choice, check_labels, check_positive_int, check_probabilities
from ..core.binning import BinStats, bin_statistics, fixed_width_bins
from ..core.entries import Entries
from ..core.groups import partition_by_group

__all__ = ["CalibrationError", "MarginalCalibrationError", "BrierDecomposition",
           "calibration_error", "ce_from_bins", "smce", "gmce", "mce",
           "top_label", "top_label_ece", "brier_decomposition", "reliability_table"]

_Z95 = 1.959963984540054
# Normal draws held at once by Algorithm 2 (samples x bins), ~32 MiB of float64.
_SIM_BLOCK_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class CalibrationError:
    """A binned calibration error estimate.

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
        95% interval: Algorithm 2's ``mean ± 1.96 sd`` of the simulated CEs, or
        the bootstrap percentile interval.
    ci_method : str or None
        "simulation", "bootstrap" or None.
    """

    value: float
    norm: float
    n: int
    bins: BinStats = field(repr=False)
    ci_low: float = None
    ci_high: float = None
    ci_method: str = None

    def __float__(self):
        return float(self.value)

    @property
    def ci_halfwidth(self):
        return None if self.ci_low is None else (self.ci_high - self.ci_low) / 2.0

    def to_dict(self):
        return {"value": self.value, "norm": self.norm, "n": self.n,
                "n_bins": self.bins.n_bins, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "ci_method": self.ci_method}


def _check_norm(norm):
    if norm in (np.inf, "inf", "max"):
        return np.inf
    if norm not in (1, 2):
        raise ValueError(f"norm must be 1, 2 or inf, got {norm!r}")
    return float(norm)


def _ce(weights, gaps, norm):
    """CE_p from bin weights |B_i|/N and gaps |q_i - p_i| (last axis = bins)."""
    if norm == np.inf:
        return np.max(np.where(weights > 0, gaps, 0.0), axis=-1)
    return np.sum(weights * gaps ** norm, axis=-1) ** (1.0 / norm)


def ce_from_bins(bins, norm=2):
    """CE_p of bin statistics (empty bins carry no weight)."""
    norm = _check_norm(norm)
    nonempty = bins.count > 0
    count = bins.count[nonempty]
    gaps = np.abs(bins.sum_score[nonempty] - bins.sum_label[nonempty]) / count
    return float(_ce(count / count.sum(), gaps, norm))


def calibration_error(scores, labels, *, norm=2, binning="equal-mass", n_bins=None,
                      bin_size=None, ci=None, n_samples=None, seed=0, n_threads=None):
    """Binned calibration error CE_p of binary predictions.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Predicted probabilities in [0, 1].
    labels : array_like of {0, 1} or bool, shape (n,)
    norm : {2, 1, inf}, default=2
        2: RMS calibration error (CalibErr, SMCE, GMCE); 1: ECE; inf: maximum.
    binning : {"equal-mass", "fixed"}, default="equal-mass"
        Equal-mass: Nguyen & O'Connor Algorithm 1 (ties broken by input order).
    n_bins, bin_size : int, optional
        Default ``n_bins=10``; ``bin_size`` for equal-mass binning only.
    ci : {None, "simulation", "bootstrap"}, default=None
        95% confidence interval: Algorithm 2 (per-bin normal draws of the label
        rate, clipped to [0, 1]; ``mean ± 1.96 sd``) or a bootstrap over points
        (re-binned each replicate; percentile interval).
    n_samples : int, optional
        Simulation samples (Algorithm 2's S; default 10000) or bootstrap
        replicates (default 1000; each costs O(n)).
    seed : int or numpy Generator, default=0

    Returns
    -------
    CalibrationError
    """
    norm = _check_norm(norm)
    check_choice(ci, "ci", {None, "simulation", "bootstrap"})
    bins, x, y, order = bin_statistics(scores, labels, binning=binning, n_bins=n_bins,
                                       bin_size=bin_size, n_threads=n_threads)
    value = ce_from_bins(bins, norm)
    lo = hi = None
    if ci == "simulation":
        lo, hi = _simulation_ci(bins, norm, 10000 if n_samples is None else n_samples, seed)
    elif ci == "bootstrap":
        lo, hi = _bootstrap_ci(x, y, bins, order, norm,
                               1000 if n_samples is None else n_samples, seed)
    return CalibrationError(value, norm, x.shape[0], bins, lo, hi, ci)


def _simulation_ci(bins, norm, n_samples, seed):
    """Nguyen & O'Connor Algorithm 2, vectorised over samples."""
    n_samples = check_positive_int(n_samples, "n_samples")
    rng = np.random.default_rng(seed)
    nonempty = bins.count > 0
    count = bins.count[nonempty].astype(np.float64)
    q = bins.sum_score[nonempty] / count
    p = bins.sum_label[nonempty] / count
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
        ce[s0:s0 + m] = _ce(weights, np.abs(q - p_star), norm)
    mean, spread = ce.mean(), ce.std(ddof=1) if n_samples > 1 else 0.0
    return float(mean - _Z95 * spread), float(mean + _Z95 * spread)


def _bootstrap_ci(x, y, bins, order, norm, n_samples, seed):
    """Percentile bootstrap over points, re-binning every replicate.

    A replicate is a multinomial count per point; in sorted order the replicate's
    copies of a point are consecutive, so its equal-mass bins are cuts of the
    cumulative counts and bin sums are differences of cumulative sums,
    interpolated inside the point that straddles a cut. O(n) per replicate.
    """
    n_samples = check_positive_int(n_samples, "n_samples")
    rng = np.random.default_rng(seed)
    n = x.shape[0]
    values = np.empty(n_samples)
    if order is None:   # fixed-width: bins do not move, resample within them
        edges = bins.edges
        for s in range(n_samples):
            idx = rng.integers(0, n, n)
            values[s] = ce_from_bins(fixed_width_bins(x[idx], y[idx], n_bins=edges.shape[0] - 1), norm)
    else:
        perm, sorted_x, starts = order
        sx = sorted_x.astype(np.float64)
        sy = y[perm].astype(np.float64)
        for s in range(n_samples):
            w = np.bincount(rng.integers(0, n, n), minlength=n)
            cw = np.concatenate(([0], np.cumsum(w)))
            cs = np.concatenate(([0.0], np.cumsum(w * sx)))
            cy = np.concatenate(([0.0], np.cumsum(w * sy)))
            # Point containing replicate rank r (0-based): k with cw[k] <= r < cw[k+1].
            k = np.searchsorted(cw, starts, side="right") - 1
            k = np.minimum(k, n - 1)
            partial = starts - cw[k]
            s_at = cs[k] + partial * sx[k]
            y_at = cy[k] + partial * sy[k]
            count = np.diff(starts).astype(np.float64)
            gaps = np.abs(np.diff(s_at) - np.diff(y_at)) / count
            values[s] = _ce(count / count.sum(), gaps, norm)
    return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))


def reliability_table(bins):
    """Per-bin rows for a reliability diagram: mean score, mean label, count and
    the 95% half-width of the label rate, ``1.96 sqrt(p(1-p)/|B|)``
    (Nguyen & O'Connor Fig. 1d and Algorithm 2's per-bin spread)."""
    nonempty = bins.count > 0
    count = bins.count[nonempty]
    p = bins.sum_label[nonempty] / count
    return {"mean_score": bins.sum_score[nonempty] / count, "mean_label": p,
            "count": count, "ci_halfwidth": _Z95 * np.sqrt(p * (1 - p) / count),
            "lower": bins.lower[nonempty], "upper": bins.upper[nonempty]}


def _entries_arg(entries):
    if not isinstance(entries, Entries):
        raise TypeError(f"expected Entries (see sparsecal.threshold), got "
                        f"{type(entries).__name__}")
    if len(entries) == 0:
        raise ValueError("no entries: every score is below the threshold")
    return entries


def smce(entries, *, n_bins=None, bin_size=None, ci=None, n_samples=None, seed=0):
    """Shared marginal calibration error (Kranzlein et al. 2021, eq. 2): RMS
    calibration error over the thresholded entries of all tags pooled, with
    equal-mass bins (``n_bins`` or ``bin_size``; default 10 bins)."""
    entries = _entries_arg(entries)
    return calibration_error(entries.score, entries.label, n_bins=n_bins,
                             bin_size=bin_size, ci=ci, n_samples=n_samples, seed=seed)


def gmce(entries, groups, *, n_bins=None, bin_size=None, ci=None, n_samples=None, seed=0):
    """Grouped marginal calibration error (Kranzlein et al. 2021, eq. 3): SMCE over
    the entries of each tag group (``n_bins`` or ``bin_size``; default 10 bins).

    Returns
    -------
    list of CalibrationError or None
        One per group (index = group); None for a group with no entries.
    """
    entries = _entries_arg(entries)
    perm, offsets = groups.partition(entries)
    out = []
    for g in range(groups.n_groups):
        idx = perm[offsets[g]:offsets[g + 1]]
        if idx.size == 0:
            out.append(None)
            continue
        out.append(calibration_error(entries.score[idx], entries.label[idx], n_bins=n_bins,
                                     bin_size=bin_size, ci=ci, n_samples=n_samples,
                                     seed=seed))
    return out


@dataclass(frozen=True)
class MarginalCalibrationError:
    """Kumar et al.'s marginal CE over the tags with enough data.

    Attributes
    ----------
    value : float
        ``sqrt(mean over evaluated tags of CE_tag^2)``.
    per_tag : dict
        tag index -> CalibrationError for every evaluated tag.
    too_few : dict
        tag index -> number of entries, for tags with entries but fewer than
        ``min_entries`` (not evaluated).
    """

    value: float
    per_tag: dict
    too_few: dict
    min_entries: int

    def __float__(self):
        return float(self.value)


def mce(entries, *, min_entries=100, n_bins=10, ci=None, n_samples=None, seed=0):
    """Marginal calibration error (Kumar et al. 2019), per tag.

    Every tag with at least ``min_entries`` thresholded entries gets its own
    equal-mass CE_2; MCE is the root mean of their squares. Tags with fewer
    entries are listed in ``too_few`` rather than silently dropped.
    """
    entries = _entries_arg(entries)
    min_entries = check_positive_int(min_entries, "min_entries")
    n_tags = entries.n_tags if entries.n_tags is not None else int(entries.tag.max()) + 1
    perm, offsets = partition_by_group(entries.tag, np.arange(n_tags), n_tags)
    sizes = np.diff(offsets)
    per_tag, too_few = {}, {}
    for t in np.flatnonzero(sizes):
        if sizes[t] < min_entries:
            too_few[int(t)] = int(sizes[t])
            continue
        idx = perm[offsets[t]:offsets[t + 1]]
        per_tag[int(t)] = calibration_error(entries.score[idx], entries.label[idx],
                                            n_bins=n_bins, ci=ci, n_samples=n_samples,
                                            seed=seed)
    if not per_tag:
        raise ValueError(f"no tag has at least min_entries={min_entries} entries")
    value = float(np.sqrt(np.mean([c.value ** 2 for c in per_tag.values()])))
    return MarginalCalibrationError(value, per_tag, too_few, min_entries)


def top_label(entries):
    """Top-label view: per token with any entry, its highest score (first tag on
    ties, as ``np.argmax``) and whether that tag is gold.

    Tokens whose every score is below the threshold have no entry and are
    absent; threshold at 0 (or below 1/n_tags) to keep every token.

    Returns
    -------
    confidence : ndarray (dtype of the scores), correct : ndarray of uint8
    """
    entries = _entries_arg(entries)
    if entries.token is None:
        raise ValueError("top-label calibration needs the token of each entry")
    tok = entries.token
    if tok.size > 1 and (np.diff(tok) < 0).any():
        raise ValueError("entries must be in token order (as threshold() returns them)")
    seg = np.concatenate(([0], np.flatnonzero(np.diff(tok)) + 1))
    best = np.maximum.reduceat(entries.score, seg)
    seg_id = np.repeat(np.arange(seg.shape[0]), np.diff(np.append(seg, tok.shape[0])))
    is_best = entries.score == best[seg_id]
    _, first = np.unique(seg_id[is_best], return_index=True)
    winner = np.flatnonzero(is_best)[first]
    return entries.score[winner], entries.label[winner]


def top_label_ece(entries, *, n_bins=20, binning="fixed", norm=1, ci=None,
                  n_samples=None, seed=0):
    """Top-label ECE: CE over one entry per token (its argmax), 20 bins by default
    as in Jagannatha & Yu 2020; fixed-width or equal-mass bins."""
    conf, correct = top_label(entries)
    return calibration_error(conf, correct, norm=norm, binning=binning, n_bins=n_bins,
                             ci=ci, n_samples=n_samples, seed=seed)


@dataclass(frozen=True)
class BrierDecomposition:
    """Brier score and its binned calibration / refinement terms.

    ``brier = calibration + refinement + within_bin`` exactly, where
    ``calibration = sum |B|/N (q_B - p_B)^2`` (= CE_2 squared),
    ``refinement = sum |B|/N p_B (1 - p_B)`` and ``within_bin`` is what binning
    leaves out (the spread of scores inside bins, minus their covariance with
    the labels); it vanishes as bins shrink to single score values.
    """

    brier: float
    calibration: float
    refinement: float
    within_bin: float
    n: int


def brier_decomposition(scores, labels, *, binning="equal-mass", n_bins=None,
                        bin_size=None):
    """Brier score with its calibration-refinement decomposition
    (Nguyen's thesis Section 3.1.3; DeGroot & Fienberg 1982)."""
    bins, x, y, _ = bin_statistics(scores, labels, binning=binning, n_bins=n_bins,
                                   bin_size=bin_size)
    brier = float(np.mean((x.astype(np.float64) - y) ** 2))
    nonempty = bins.count > 0
    w = bins.count[nonempty] / x.shape[0]
    q = bins.sum_score[nonempty] / bins.count[nonempty]
    p = bins.sum_label[nonempty] / bins.count[nonempty]
    calibration = float(np.sum(w * (q - p) ** 2))
    refinement = float(np.sum(w * p * (1 - p)))
    return BrierDecomposition(brier, calibration, refinement,
                              brier - calibration - refinement, x.shape[0])
