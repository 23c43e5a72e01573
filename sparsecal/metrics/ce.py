"""The binned calibration error CE_p of bin statistics, ``(sum_i |B_i|/N
|mean_score_i - mean_label_i|^p)^(1/p)`` over the non-empty bins (Nguyen &
O'Connor 2015, Algorithm 1; ECE for p = 1; the largest gap for p = inf).
"""
import numpy as np

__all__ = ["bin_rates", "ce_from_bins", "ce_of_gaps", "check_norm"]


def check_norm(norm):
    """The norm p of CE_p as a float: 1.0, 2.0 or inf (from 1, 2, inf, "inf", "max")."""
    if norm in (np.inf, "inf", "max"):
        return np.inf
    if norm not in (1, 2):
        raise ValueError(f"norm must be 1, 2 or inf, got {norm!r}")
    return float(norm)


def ce_of_gaps(weights, gaps, norm):
    """CE_p from bin weights and gaps (last axis: bins); for inf, zero-weight bins are ignored."""
    if norm == np.inf:
        return np.max(np.where(weights > 0, gaps, 0.0), axis=-1)
    return np.sum(weights * gaps ** norm, axis=-1) ** (1.0 / norm)


def bin_rates(bins):
    """``(count, mean_score, mean_label)`` of the non-empty bins."""
    nonempty = bins.count > 0
    count = bins.count[nonempty]
    return count, bins.sum_score[nonempty] / count, bins.sum_label[nonempty] / count


def ce_from_bins(bins, norm=2):
    """CE_p of bin statistics; empty bins carry no weight."""
    norm = check_norm(norm)
    nonempty = bins.count > 0
    count = bins.count[nonempty]
    gaps = np.abs(bins.sum_score[nonempty] - bins.sum_label[nonempty]) / count
    return float(ce_of_gaps(count / count.sum(), gaps, norm))
