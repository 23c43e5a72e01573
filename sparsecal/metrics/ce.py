"""The binned calibration error CE_p of bin statistics, ``(sum_i |B_i|/N
|mean_score_i - mean_label_i|^p)^(1/p)`` over the non-empty bins (Nguyen &
O'Connor 2015, Algorithm 1; ECE for p = 1; the largest gap for p = inf).
"""
import numpy as np

__all__ = ["bin_rates", "ce_from_bins", "ce_of_gaps", "check_norm", "segment_ce",
           "segment_rates"]


def check_norm(norm):
    """The norm p of CE_p as a float: 1.0, 2.0 or inf (from 1, 2, inf, "inf", "max")."""
    if norm in (np.inf, "inf", "max"):
        return np.inf
    if norm not in (1, 2):
        raise ValueError(f"norm must be 1, 2 or inf, got {norm!r}")
    return float(norm)


def ce_of_gaps(weights, gaps, norm):
    """CE_p from bin weights and gaps (last axis: bins); for inf, zero-weight bins are
    ignored. The root is the C library's ``pow`` for one set and for many
    (``float_power``: an array's ``** 0.5`` would take ``sqrt``, a last bit apart)."""
    if norm == np.inf:
        return np.max(np.where(weights > 0, gaps, 0.0), axis=-1)
    return np.float_power(np.sum(weights * gaps ** norm, axis=-1), 1.0 / norm)


def bin_rates(bins):
    """``(count, mean_score, mean_label)`` of the non-empty bins."""
    nonempty = bins.count > 0
    count = bins.count[nonempty]
    return count, bins.sum_score[nonempty] / count, bins.sum_label[nonempty] / count


def segment_rates(bins, starts):
    """:func:`bin_rates` of bins in segments (bins ``starts[s]:starts[s + 1]``, the
    last to the end; each with a non-empty bin), the points of each segment and
    the segments' starts among the non-empty bins:
    ``(count, mean_score, mean_label, n, starts)``."""
    count, q, p = bin_rates(bins)
    starts = np.asarray(starts, dtype=np.intp)
    if count.shape[0] < bins.count.shape[0]:
        starts = np.concatenate(([0], np.cumsum(bins.count > 0)))[starts]
    return count, q, p, np.add.reduceat(count, starts), starts


def segment_weights(count, n, starts):
    """Each bin's share ``count / n`` of its segment's points."""
    return count / np.repeat(n, np.diff(starts, append=count.shape[0]))


def segment_ce(bins, starts, norm=2):
    """CE_p of each segment of bins (see :func:`segment_rates`), its sums in bin
    order, so that a segment's value does not depend on the others: one call
    gives every tag's CE exactly as :func:`ce_from_bins` gives it alone."""
    count, q, p, n, starts = segment_rates(bins, starts)
    gaps = np.abs(q - p)
    if norm == np.inf:
        return np.maximum.reduceat(gaps, starts)
    return np.add.reduceat(segment_weights(count, n, starts) * gaps ** norm,
                           starts) ** (1.0 / norm)


def ce_from_bins(bins, norm=2):
    """CE_p of bin statistics; empty bins carry no weight."""
    return float(segment_ce(bins, [0], check_norm(norm))[0])
