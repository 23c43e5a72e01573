"""Scaling-binning per tag group fitted on distributed entries, from the merged
distinct-score tables of each group's two positional halves (docs/scale.md)."""
import numpy as np

from ..calibration.base import clone
from ..calibration.scaling_binning import second_half, split_key
from ..core.binning import BinStats, lookup_bin_means
from ..core.entries import Entries
from ..core.groups import TagGroups
from ..core.isotonic import isotonic_fit_pooled
from ._dask import require_dask
from .isotonic import _check_fit, score_tables

__all__ = ["fit_scaling_binning", "fit_halves"]


def _tag_counts(block, n_tags):
    return np.bincount(block.tag, minlength=n_tags)


def _split_block(block, offsets, tag_to_group, key):
    """The chunk's entries with each second-half entry's tag moved to ``n_tags + tag``."""
    n_tags = tag_to_group.shape[0]
    group = tag_to_group[block.tag]
    order = np.argsort(group, kind="stable")
    in_order = group[order]
    position = np.empty(group.shape[0], dtype=np.int64)
    position[order] = (offsets[in_order] + np.arange(in_order.shape[0])
                       - np.searchsorted(in_order, in_order))
    tag = block.tag + np.int32(n_tags) * second_half(position, key).astype(np.int32)
    return Entries._trusted(block.score, tag, block.label, block.token, 2 * n_tags,
                            block.n_tokens, block.threshold)


def fit_halves(base, first, second):
    """A fitted ``ScalingBinning`` from the distinct-score tables of its two halves."""
    cal = clone(base)
    x1, n1, s1 = first
    x2, n2, _ = second
    n = int(n2.sum())
    if n + int(n1.sum()) < 2:
        raise ValueError("scaling-binning needs at least 2 dev points to split")
    cal.x_knots_, cal.y_knots_ = isotonic_fit_pooled(
        x1, s1.astype(np.float64) / n1, n1.astype(np.float64))
    z = cal._scale(x2)
    n_bins = min(int(cal.n_bins), n)
    starts = np.unique(np.arange(n_bins + 1, dtype=np.int64) * n // n_bins)
    ends = np.cumsum(n2)
    at = z[np.searchsorted(ends, np.concatenate((starts[:-1], starts[1:] - 1)),
                           side="right")]
    zeros = np.zeros(starts.shape[0] - 1)
    bins = BinStats(np.diff(starts), zeros, zeros, at[: zeros.shape[0]],
                    at[zeros.shape[0]:])
    cal.boundaries_, cal.bin_values_ = lookup_bin_means(z, z, n2.astype(np.float64),
                                                        bins.boundaries())
    return cal


def _split_tables(entries, groups, chunk_tags, key):
    dask = require_dask()
    t2g = np.asarray(groups.tag_to_group, dtype=np.int64)
    per_chunk = np.stack([np.bincount(t2g, weights=c, minlength=groups.n_groups)
                          for c in chunk_tags]).astype(np.int64)
    offsets = np.cumsum(per_chunk, axis=0) - per_chunk
    task = dask.delayed(_split_block, pure=True)
    halves = entries._with_blocks([task(b, o, t2g, key)
                                   for b, o in zip(entries.blocks, offsets)])
    halves.n_tags = 2 * entries.n_tags
    doubled = TagGroups(np.concatenate((t2g, t2g + groups.n_groups)), 2 * groups.n_groups)
    (tables,), _ = score_tables(halves, [doubled])
    return tables[: groups.n_groups], tables[groups.n_groups:]


def fit_scaling_binning(model, entries, sample_weight=None, *, progress=None):
    """Fit a ``GroupedCalibrator`` of ``ScalingBinning`` on distributed dev entries."""
    dask = require_dask()
    _check_fit(model, entries, sample_weight)
    model.base._check_params()
    task = dask.delayed(_tag_counts, pure=True)
    chunk_tags = dask.compute(*[task(b, entries.n_tags) for b in entries.blocks])
    tag_counts = np.sum(chunk_tags, axis=0)
    if not tag_counts.any():
        raise ValueError("no dev entries to fit on")
    key = split_key(clone(model.base).seed)
    halves = {}

    def grouping(groups):
        if id(groups) not in halves:
            halves[id(groups)] = _split_tables(entries, groups, chunk_tags, key)
        first, second = halves[id(groups)]
        counts = np.array([a[1].sum() + b[1].sum() for a, b in zip(first, second)])
        return counts, lambda g: fit_halves(model.base, first[g], second[g])

    return model.fit_groups(grouping, np.flatnonzero(tag_counts), entries.threshold,
                            progress=progress)
