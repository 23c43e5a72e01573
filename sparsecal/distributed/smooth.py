"""The smooth ECE and the smooth (kernel) reliability diagram of distributed
entries (Błasiok & Nakkiran 2023), as :mod:`sparsecal.metrics.smooth` computes
them on one machine.

The kernel smoothing starts from grid sums: each point is split linearly onto
an ``m``-point grid (one row per weight: ``x - y``, 1, ``y``), and those are
sums over points, so each chunk computes its own on its worker
(:func:`sparsecal.metrics.smooth._grid_sums`) and the partial sums are added in
a tree (:func:`~sparsecal.distributed.reduce.tree_merge`: within each merge
task in chunk order; the tree's shape depends only on the number of chunks).
The client then runs the single-machine code on the merged grids: the
smoothing, the evaluation on the mesh and relplot's bisection for the
bandwidth. Every ``sigma >= 0.01`` uses the same grid (``m = 1001``), so the
search usually needs one pass over the chunks; each step that tests a
``sigma < 0.01`` needs one more pass, for every set's grid of that step at
once (the bisections of the pooled set and of every group run in lockstep).

**Exactness.** Only the order in which each grid point's sum is added differs
from the single machine (per chunk, then chunk after chunk, instead of entry
after entry), so values, curves and densities agree within float rounding
(``1e-12``, tested), and repeated runs over the same chunking give the same
bits (the order is fixed). The bandwidth is the single machine's unless a
bisection step's ``sigma`` lies within that rounding of ``smECE(sigma)``,
where the comparison could go the other way (never seen in the tests; the
bandwidth then differs by one bisection step, 2^-10 at most). **What travels**:
three float64 rows of ``m`` values per set and grid size per partial result
(24 kB per set at ``m = 1001``), whatever the number of entries.
"""
import numpy as np

from ..core.groups import TagGroups, partition_by_group
from ..metrics.smooth import (_check_bandwidth, _check_n_points, _grid_size, _grid_sums,
                              _reliability_from_grids, _smooth_eces)
from .checks import check_dask_entries
from .reduce import tree_merge

__all__ = ["smooth_ece", "smooth_reliability"]


def _chunk_grids(block, index, tag_to_group, n_groups, requests):
    """Entries per set (all, then each group; ``tag_to_group`` None: all only)
    and the grid sums of each requested ``(set, m)`` of one chunk (on a worker)."""
    x, y = block.score.astype(np.float64), block.label.astype(np.float64)
    sets, counts = [slice(None)], [x.shape[0]]
    if tag_to_group is not None:
        perm, offsets = partition_by_group(block.tag, tag_to_group, n_groups)
        sets += [perm[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
        counts += np.diff(offsets).tolist()
    counts = np.array(counts, dtype=np.int64)
    return counts, [_grid_sums(x[sets[s]], y[sets[s]], m) for s, m in requests]


def _add_in_order(parts):
    """Counts and grid sums of partial results, added in the order given."""
    counts, grids = parts[0][0].copy(), [g.copy() for g in parts[0][1]]
    for c, more in parts[1:]:
        counts += c
        for total, g in zip(grids, more):
            total += g
    return counts, grids


class _Grids:
    """The merged grid sums of distributed entries per (set, grid size),
    computed on request, every missing one of a request in one pass
    (``groups`` None: all entries only)."""

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
    """The grids and the SmoothECE of all entries, then of each group."""
    grids = _Grids(entries, groups)
    n_sets = 1 + (0 if groups is None else groups.n_groups)
    m = _grid_size(1.0 if bandwidth is None else bandwidth)   # the search's first step
    grids.fetch([(s, m) for s in range(n_sets)])   # with the entries per set
    eces = _smooth_eces(grids, grids.counts, bandwidth, grids.fetch)
    if eces[0] is None:
        raise ValueError("cannot compute a smooth ECE of no points")
    return grids, eces


def smooth_ece(entries, groups=None, *, bandwidth=None):
    """Smooth ECE of distributed entries, all pooled and per group:
    :func:`sparsecal.smooth_ece` of the same sets, on a cluster.

    Parameters
    ----------
    entries : DaskEntries
    groups : TagGroups, optional
        Default: SCW (one group of all tags).
    bandwidth : float, optional
        A fixed sigma; default: each set's fixed point ``sigma = smECE(sigma)``
        (relplot's bisection, every set's steps in the same passes).

    Returns
    -------
    pooled : SmoothECE
        Of all entries.
    per_group : list of SmoothECE or None
        One per group (None for a group without entries). Values within
        1e-12 relative of the single-machine ones, the same bandwidths.

    Raises
    ------
    TypeError
        If ``entries`` is not ``DaskEntries`` (or ``groups`` not ``TagGroups``),
        or a non-numeric bandwidth.
    ValueError
        Groups of another tagset, a bandwidth that is not a finite number above
        0, or no entries.

    References
    ----------
    Błasiok & Nakkiran 2023, "Smooth ECE: Principled reliability diagrams via
    kernel smoothing", Sections 3-4; the ``relplot`` package (``metrics.smECE``).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> scores = np.random.default_rng(5).dirichlet(np.ones(4), size=250).round(2)
    >>> gold = np.arange(250) % 4
    >>> pooled, (g1, g2) = smooth_ece(threshold(da.from_array(scores, chunks=(60, 4)), gold),
    ...                               sc.TagGroups([0, 0, 1, 1], 2))
    >>> one = sc.threshold(scores, gold)
    >>> ref = sc.smooth_ece(one.score, one.label)
    >>> pooled.bandwidth == ref.bandwidth, abs(pooled.value - ref.value) <= 1e-12 * ref.value
    (True, True)
    >>> g1.n + g2.n == ref.n
    True
    """
    check_dask_entries(entries, groups)
    groups = TagGroups.scw(entries.n_tags) if groups is None else groups
    _, (pooled, *per_group) = _eces(entries, groups, _check_bandwidth(bandwidth))
    return pooled, per_group


def smooth_reliability(entries, *, bandwidth=None, n_points=200):
    """The smooth (kernel) reliability diagram of all distributed entries:
    :func:`sparsecal.smooth_reliability` on a cluster.

    Parameters
    ----------
    entries : DaskEntries
    bandwidth : float, optional
        As in :func:`smooth_ece` (default: smECE's fixed point).
    n_points : int, default=200
        Mesh points on [0, 1].

    Returns
    -------
    SmoothReliability
        Mesh as on one machine; curve and density within 1e-12 of it.

    Raises
    ------
    TypeError
        As :func:`smooth_ece`.
    ValueError
        As :func:`smooth_ece`; an ``n_points`` under 2.

    References
    ----------
    Błasiok & Nakkiran 2023, Section 5; relplot's ``prepare_rel_diagram``.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import from_arrays
    >>> rng = np.random.default_rng(0)
    >>> f = rng.random(2000); y = (rng.random(2000) < f ** 2).astype(np.uint8)
    >>> r = smooth_reliability(from_arrays(da.from_array(f, chunks=500), y), n_points=5)
    >>> bool(np.allclose(r.curve, sc.smooth_reliability(f, y, n_points=5).curve,
    ...                  rtol=0, atol=1e-12))
    True
    """
    check_dask_entries(entries)
    bandwidth = _check_bandwidth(bandwidth)
    n_points = _check_n_points(n_points)
    grids, (pooled,) = _eces(entries, None, bandwidth)
    return _reliability_from_grids(lambda m: grids(0, m), pooled, n_points)
