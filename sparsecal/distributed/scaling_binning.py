"""Scaling-binning per tag group fitted on distributed entries.

:class:`~sparsecal.ScalingBinning` splits a group's dev entries by position
(:func:`~sparsecal.calibration.scaling_binning.second_half`: a function of the
seed and the entry's position in the group's entries, in entry order). One
pass of per-chunk tag counts gives each chunk the position of its first entry
in every group; each worker then computes its entries' sides and relabels the
second half's entries as tags ``n_tags + tag``, so that the merged
distinct-score tables (:func:`~sparsecal.distributed.isotonic.score_tables`)
of a doubled grouping hold each group's two halves apart. From them:

- the isotonic scaling: pooled PAV of the first half's table, the knots of
  the single-machine fit bit for bit (as the isotonic fit);
- the bins: the scaled scores ``z(x)`` are non-decreasing in ``x``, so the
  second half's sorted scaled scores are ``z`` of its sorted scores; the
  equal-mass rank cuts and each bin's smallest and largest scaled score are
  read from the table's cumulative counts: the same boundaries bit for bit;
- each bin's value: the count-weighted mean of ``z`` over the table
  (:func:`~sparsecal.core.binning.lookup_bin_means`), the single-machine sum in
  another order: within float rounding (docs/scale.md).
"""
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
    """Entries per tag of one chunk (on a worker)."""
    return np.bincount(block.tag, minlength=n_tags)


def _split_block(block, offsets, tag_to_group, key):
    """The chunk's entries with each second-half entry's tag moved to
    ``n_tags + tag`` (on a worker); ``offsets[g]``: the position, in group
    ``g``'s entries, of the chunk's first entry of ``g``."""
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
    """A fitted :class:`~sparsecal.ScalingBinning` from the distinct-score
    tables of the two halves of its dev split.

    Parameters
    ----------
    base : ScalingBinning
        Its ``n_bins`` is used (the split is already made).
    first, second : tuple of ndarray
        ``(scores, counts, positives)``: sorted distinct scores (float64) of
        each half with their entry counts and label sums (int64).

    Returns
    -------
    ScalingBinning
        Fitted: the knots and boundaries of ``base.fit`` on the same halves,
        bit for bit; bin values within float rounding.

    Raises
    ------
    ValueError
        If there are fewer than 2 dev points, as ``ScalingBinning.fit``.

    References
    ----------
    Kumar, Liang & Ma 2019 (scaling-binning); Kranzlein, Liu & Schneider
    2021, Section 2.2; Nguyen & O'Connor 2015, Algorithm 1 (equal-mass bins).

    Examples
    --------
    >>> import numpy as np
    >>> import sparsecal as sc
    >>> half = (np.array([0.2, 0.6]), np.array([2, 2]), np.array([0, 2]))
    >>> cal = fit_halves(sc.ScalingBinning(n_bins=2), half, half)
    >>> cal.boundaries_.tolist(), cal.bin_values_.tolist()
    ([0.5], [0.0, 1.0])
    """
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
    """Per group of ``groups``: the tables of its first and its second half."""
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
    """Fit a :class:`~sparsecal.GroupedCalibrator` of
    :class:`~sparsecal.ScalingBinning` on distributed dev entries
    (``model.fit(entries)`` calls this through
    :func:`sparsecal.distributed.fit_grouped`).

    The single-machine rule (``min_entries``, ``fallback``, warnings) and its
    split: each group's entries (of ``groups``, then of ``fallback``) split by
    their position in that group, so each group's calibrator has the
    single-machine knots and bin boundaries bit for bit and bin values within
    float rounding (1e-12 relative, docs/scale.md), whatever the chunking.

    Parameters
    ----------
    model : GroupedCalibrator
        With a ``ScalingBinning`` base whose ``seed`` is an integer (a
        generator or None: one split key drawn for every group).
    entries : DaskEntries
        The dev entries, e.g. of :func:`sparsecal.distributed.threshold`.
    sample_weight : None
        Must be None (no weights on a cluster).
    progress : callable, optional
        ``progress(done, total)`` over the groups fitted.

    Returns
    -------
    GroupedCalibrator
        ``model``, with one fitted ``ScalingBinning`` per group kept.

    Raises
    ------
    TypeError
        For entries of another kind than ``DaskEntries``.
    ValueError
        For weights, groups of another tagset, no entries at all, invalid
        ``n_bins`` or ``seed``, or a group fitted on fewer than 2 entries.

    References
    ----------
    Kumar, Liang & Ma 2019; Kranzlein, Liu & Schneider 2021, Sections 2.2 and
    3.3; docs/recalibration.md ("Scaling-binning's split").

    Examples
    --------
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> from sparsecal.distributed import threshold
    >>> import dask.array as da, sparsecal as sc
    >>> data = make_tagger_outputs(800, split_seed=3)
    >>> scw = sc.TagGroups.scw(data.scores.shape[1])
    >>> dist = threshold(da.from_array(data.scores, chunks=(300, -1)), data.gold)
    >>> a = sc.GroupedCalibrator(sc.ScalingBinning(seed=7), scw).fit(dist).calibrators_[0]
    >>> b = sc.GroupedCalibrator(sc.ScalingBinning(seed=7), scw).fit(
    ...     sc.threshold(data.scores, data.gold)).calibrators_[0]
    >>> bool((a.x_knots_ == b.x_knots_).all() and (a.boundaries_ == b.boundaries_).all())
    True
    """
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
