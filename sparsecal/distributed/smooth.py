"""The smooth ECE and reliability diagram of distributed entries: per-chunk grid
sums added in a fixed order, smoothed as on one machine (within 1e-12)."""
import numpy as np

from .._docs import fill_doc
from ..core.groups import TagGroups, partition_by_group
from ..metrics.smooth import (_check_bandwidth, _check_n_points, _grid_size, _grid_sums,
                              _reliability_from_grids, _smooth_eces)
from .checks import check_dask_entries
from .reduce import tree_merge

__all__ = ["smooth_ece", "smooth_reliability"]


def _chunk_grids(block, index, tag_to_group, n_groups, requests):
    """Entries per set and the grid sums of each requested ``(set, m)`` of one chunk."""
    x, y = block.score.astype(np.float64), block.label.astype(np.float64)
    sets, counts = [slice(None)], [x.shape[0]]
    if tag_to_group is not None:
        perm, offsets = partition_by_group(block.tag, tag_to_group, n_groups)
        sets += [perm[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
        counts += np.diff(offsets).tolist()
    counts = np.array(counts, dtype=np.int64)
    return counts, [_grid_sums(x[sets[s]], y[sets[s]], m) for s, m in requests]


def _add_in_order(parts):
    counts, grids = parts[0][0].copy(), [g.copy() for g in parts[0][1]]
    for c, more in parts[1:]:
        counts += c
        for total, g in zip(grids, more):
            total += g
    return counts, grids


class _Grids:
    """The merged grid sums per (set, grid size), the missing ones of a request in one pass."""

    def __init__(self, entries, groups):
        self.entries, self.counts, self.cache = entries, None, {}
        self.groups = (None, 0) if groups is None else (
            np.asarray(groups.tag_to_group, dtype=np.int64), groups.n_groups)

    def fetch(self, requests):
        missing = sorted(set(requests) - set(self.cache))
        if missing or self.counts is None:
            self.counts, grids = tree_merge(
                _chunk_grids, _add_in_order, self.entries.blocks, *self.groups, missing)
            self.cache.update(zip(missing, grids))

    def __call__(self, s, m):
        self.fetch([(s, m)])
        return self.cache[(s, m)]


def _eces(entries, groups, bandwidth):
    grids = _Grids(entries, groups)
    n_sets = 1 + (0 if groups is None else groups.n_groups)
    m = _grid_size(1.0 if bandwidth is None else bandwidth)   # the search's first step
    grids.fetch([(s, m) for s in range(n_sets)])   # with the entries per set
    eces = _smooth_eces(grids, grids.counts, bandwidth, grids.fetch)
    if eces[0] is None:
        raise ValueError("cannot compute a smooth ECE of no points")
    return grids, eces


@fill_doc
def smooth_ece(entries, groups=None, *, bandwidth=None):
    """:func:`sparsecal.smooth_ece` of all distributed entries and of each group.

    Parameters
    ----------
    {dask_entries}
    groups : TagGroups, optional
        Default: SCW.
    bandwidth : float, optional
        As :func:`sparsecal.smooth_ece`.

    Returns
    -------
    pooled : SmoothECE
    per_group : list of SmoothECE or None

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x, gold = np.random.default_rng(5).dirichlet(np.ones(4), size=250), np.arange(250) % 4
    >>> pooled, _ = smooth_ece(sc.threshold(da.from_array(x, chunks=(60, 4)), gold))
    >>> one = sc.threshold(x, gold)
    >>> abs(pooled.value - sc.smooth_ece(one.score, one.label).value) < 1e-12
    True
    """
    check_dask_entries(entries, groups)
    groups = TagGroups.scw(entries.n_tags) if groups is None else groups
    _, (pooled, *per_group) = _eces(entries, groups, _check_bandwidth(bandwidth))
    return pooled, per_group


@fill_doc
def smooth_reliability(entries, *, bandwidth=None, n_points=200):
    """:func:`sparsecal.smooth_reliability` of all distributed entries.

    Parameters
    ----------
    {dask_entries}
    bandwidth, n_points
        As :func:`sparsecal.smooth_reliability`.

    Returns
    -------
    SmoothReliability

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> f = np.random.default_rng(0).random(2000); y = (f > 0.3).astype(np.uint8)
    >>> entries = sc.distributed.from_arrays(da.from_array(f, chunks=500), y)
    >>> r = smooth_reliability(entries, n_points=5)
    >>> bool(np.allclose(r.curve, sc.smooth_reliability(f, y, n_points=5).curve, atol=1e-12))
    True
    """
    check_dask_entries(entries)
    bandwidth = _check_bandwidth(bandwidth)
    n_points = _check_n_points(n_points)
    grids, (pooled,) = _eces(entries, None, bandwidth)
    return _reliability_from_grids(lambda m: grids(0, m), pooled, n_points)
