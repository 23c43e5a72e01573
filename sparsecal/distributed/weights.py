"""``sample_weight`` on distributed entries: weighted per-group distinct-score
tables and the fits that depend on the data only through them.

Entries are made lazily per row chunk on the workers, so weights are given per
TOKEN (row of the score matrix), rechunked like the rows: each entry is weighted
by its token's weight. The single-machine equivalent is
``GroupedCalibrator.fit(entries, sample_weight=w[entries.token])``.

Each chunk checks its weights (:func:`sparsecal.core.validation.check_sample_weight`)
and tabulates its entries per grouping, group and distinct score: entries,
entries of positive weight, ``Σ w·y``, ``Σ w·(1 − y)`` and the weight of the
first entry of positive weight (in entry order). The tables are merged in a
fixed order (chunk order within each merge task of a fixed tree,
:func:`sparsecal.distributed.reduce.tree_merge`), so repeated runs give the same
bits; the float sums run in another order than the single machine's, so fitted
values agree with it within float rounding (docs/scale.md, "weights").

- isotonic: pooled PAV of the table (:func:`sparsecal.core.isotonic.isotonic_fit_pooled`);
- histogram binning: weighted equal-mass cuts from the cumulative weights over
  distinct scores, each score split in two points (its first entry of positive
  weight, then the rest of its run), so a cut at the run's start and a cut
  inside the run give the single machine's two boundaries
  (:func:`sparsecal.core.binning.weighted_bin_starts`), then
  :func:`sparsecal.core.binning.lookup_bin_means` of the table;
- Platt, beta, prior-weighted logistic, Gaussian: the base's ``fit`` on the
  table as weighted binary rows;
- scaling-binning is refused: its weighted fit depends on which entries fall in
  each half of its positional split, not on the group's table.

Which method fits which way is declared on its registry entry
(:attr:`sparsecal.calibration.registry.Method.distributed_fit`);
:data:`WEIGHTED_FITS` implements the ways that take weights.
"""
import numpy as np

from ..calibration.base import clone
from ..core.binning import BinStats, lookup_bin_means, weighted_bin_starts
from ..core.isotonic import isotonic_fit_pooled
from ..core.validation import check_sample_weight
from ._dask import require_dask
from .chunks import key_scores, native_keys, runs
from .reduce import tree

__all__ = ["WEIGHTED_FITS", "binary_rows", "fit_weighted", "token_weight_blocks",
           "weighted_score_tables"]


def token_weight_blocks(sample_weight, entries):
    """Per-token weights as lazy blocks aligned with the entries' row chunks.

    Parameters
    ----------
    sample_weight : dask.array.Array or array_like, shape (n_tokens,)
        One weight per row of the score matrix (each entry gets its token's).
    entries : DaskEntries
        From :func:`sparsecal.distributed.threshold` (rows known).

    Returns
    -------
    list of dask.delayed.Delayed
        Block ``i``: the weights of rows ``row_starts[i]:row_starts[i + 1]``
        (checked on the worker that uses them).

    Raises
    ------
    TypeError
        If ``sample_weight`` does not hold real numbers.
    ValueError
        If its shape is not ``(n_tokens,)``, or the entries have no rows
        (:func:`~sparsecal.distributed.from_arrays`).

    Examples
    --------
    >>> import dask, dask.array as da, numpy as np
    >>> from sparsecal.distributed import threshold
    >>> x = np.array([[0.5, 0.5], [0.25, 0.75], [0.5, 0.5]])
    >>> entries = threshold(da.from_array(x, chunks=(2, 2)), [0, 1, 1])
    >>> [b.tolist() for b in dask.compute(*token_weight_blocks([1, 2, 3], entries))]
    [[1, 2], [3]]
    """
    require_dask()
    import dask.array as da
    if entries.row_starts is None:
        raise ValueError("sample_weight is per token: it needs entries with rows (from "
                         "sparsecal.distributed.threshold), not from_arrays entries")
    w = sample_weight if isinstance(sample_weight, da.Array) else da.from_array(
        np.asarray(sample_weight))
    if w.dtype.kind not in "biuf":
        raise TypeError(f"sample_weight must hold real numbers, got dtype {w.dtype}")
    if w.shape != (entries.n_tokens,):
        raise ValueError(f"sample_weight has shape {w.shape}, expected ({entries.n_tokens},): "
                         "one weight per token (row of the score matrix) on DaskEntries")
    return list(w.rechunk((tuple(np.diff(entries.row_starts).tolist()),)).to_delayed())


def _run_sums(starts, count, kept, pos, neg, first):
    """Sum the rows of each run (``starts``, in row order); the first positive
    ``first`` of each run."""
    if starts.size == 0:
        return count[:0], kept[:0], pos[:0], neg[:0], first[:0]
    at = np.where(first > 0, np.arange(first.shape[0]), first.shape[0])
    return (np.add.reduceat(count, starts), np.add.reduceat(kept, starts),
            np.add.reduceat(pos, starts), np.add.reduceat(neg, starts),
            np.append(first, 0.0)[np.minimum.reduceat(at, starts)])


def _chunk_tables(block, index, weights, row0, groupings, n_tags):
    """One chunk's weighted tables per grouping and group, and entries per tag."""
    w = check_sample_weight(weights, weights.shape[0])[block.token - row0]
    keys, y = native_keys(block.score), block.label
    ones = np.ones(keys.shape[0], dtype=np.int64)
    pos, neg = np.where(y == 1, w, 0.0), np.where(y == 1, 0.0, w)
    out = []
    for tag_to_group, n_groups in groupings:
        group = tag_to_group[block.tag]
        order = np.lexsort((keys, group))   # stable: ties in entry order
        k, g = keys[order], group[order]
        starts = np.flatnonzero(np.concatenate(
            ([k.size > 0], (k[1:] != k[:-1]) | (g[1:] != g[:-1]))))
        sums = _run_sums(starts, ones, (w[order] > 0).astype(np.int64), pos[order],
                         neg[order], w[order])
        bounds = np.searchsorted(g[starts], np.arange(n_groups + 1))
        out.append([(k[starts][a:b], *(s[a:b] for s in sums))
                     for a, b in zip(bounds[:-1], bounds[1:])])
    return out, np.bincount(block.tag, minlength=n_tags)


def _add(tables):
    """Merge one group's tables, in the order given (fixed: chunk order)."""
    keys, *columns = (np.concatenate(c) for c in zip(*tables))
    order = np.argsort(keys, kind="stable")
    distinct, starts, _ = runs(keys[order])
    return (distinct, *_run_sums(starts, *(c[order] for c in columns)))


def _merge(parts):
    """Merge partial results (in the order given)."""
    merged = [[_add(tables) for tables in zip(*per_grouping)]
              for per_grouping in zip(*[p[0] for p in parts])]
    return merged, sum(p[1] for p in parts)


def weighted_score_tables(entries, groupings, sample_weight):
    """Per grouping and group, the distinct scores of distributed entries with
    their weighted sums, merged in a fixed order; and the entries per tag.

    Parameters
    ----------
    entries : DaskEntries
    groupings : list of TagGroups
    sample_weight : dask.array.Array or array_like, shape (n_tokens,)
        Per-token weights (:func:`token_weight_blocks`).

    Returns
    -------
    tables : list of list of tuple of ndarray
        ``tables[i][g]``: ``(scores, count, kept, pos, neg, first)``: sorted
        distinct scores (float64) of group ``g`` of grouping ``i``; entries and
        entries of positive weight at each (int64); ``Σ w·y`` and
        ``Σ w·(1 − y)``; the weight of the first entry of positive weight
        (0 if none) (float64).
    tag_counts : ndarray of int64, shape (n_tags,)

    Raises
    ------
    TypeError, ValueError
        For ``sample_weight`` (:func:`token_weight_blocks`; on the workers:
        a negative, NaN or infinite weight).

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Sections 2.2 and 3.3 (recalibration per
    group); Barlow et al. 1972, Chapter 1 (weighted pooling of ties).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> x = np.array([[0.5, 0.5], [0.25, 0.75], [0.5, 0.5]])
    >>> entries = threshold(da.from_array(x, chunks=(2, 2)), [0, 1, 1])
    >>> (((s, n, kept, pos, neg, first),),), _ = weighted_score_tables(
    ...     entries, [sc.TagGroups.scw(2)], [0.0, 2.0, 1.5])
    >>> s.tolist(), n.tolist(), kept.tolist(), pos.tolist(), neg.tolist(), first.tolist()
    ([0.25, 0.5, 0.75], [1, 4, 1], [1, 2, 1], [0.0, 1.5, 2.0], [2.0, 1.5, 0.0], [2.0, 1.5, 2.0])
    """
    dask = require_dask()
    spec = [(np.asarray(g.tag_to_group, dtype=np.int64), g.n_groups) for g in groupings]
    task = dask.delayed(_chunk_tables, pure=True)
    parts = [task(b, i, w, r0, spec, entries.n_tags) for i, (b, w, r0) in
             enumerate(zip(entries.blocks, token_weight_blocks(sample_weight, entries),
                           entries.row_starts))]
    tables, tag_counts = dask.compute(tree(parts, _merge))[0]
    return ([[(key_scores(k.astype(np.uint64), entries.dtype), *rest) for k, *rest in t]
             for t in tables], tag_counts)


def binary_rows(scores, positives, negatives, dtype):
    """A distinct-score table as weighted binary points.

    Parameters
    ----------
    scores : ndarray of float64, shape (m,)
        Distinct scores.
    positives, negatives : ndarray, shape (m,)
        Total weight (or count) of the positive and of the negative entries at
        each score.
    dtype : numpy dtype
        The entries' score dtype (the scores are cast back to it: exact).

    Returns
    -------
    x : ndarray of ``dtype``
    y : ndarray of uint8
    w : ndarray of float64
        Each score as a positive of weight ``positives`` and a negative of
        weight ``negatives``; zero weights dropped. Any weighted fit of these
        rows sees the same weighted data as the entries.

    Examples
    --------
    >>> import numpy as np
    >>> x, y, w = binary_rows(np.array([0.25, 0.5]), np.array([1.5, 2.0]),
    ...                       np.array([0.5, 0.0]), np.float32)
    >>> x.tolist(), y.tolist(), w.tolist()
    ([0.25, 0.5, 0.25], [1, 1, 0], [1.5, 2.0, 0.5])
    """
    x = np.concatenate([scores, scores]).astype(dtype)
    y = np.repeat(np.array([1, 0], dtype=np.uint8), scores.shape[0])
    w = np.concatenate([positives, negatives]).astype(np.float64)
    keep = w > 0
    return x[keep], y[keep], w[keep]


def _histogram(base, x, kept, pos, neg, first, dtype):
    """Weighted histogram binning from a group's table."""
    n_bins = None if base.bin_size is not None else int(base.n_bins)
    bin_size = None if base.bin_size is None else int(base.bin_size)
    has = kept > 0
    x, kept, total, first = x[has], kept[has], (pos + neg)[has], first[has]
    # Each score as two points: its first entry of positive weight, the rest.
    rest = kept > 1
    xv = np.repeat(x, 1 + rest)
    wv = np.repeat(first, 1 + rest)
    wv[np.cumsum(1 + rest)[rest] - 1] = (total - first)[rest]
    starts = weighted_bin_starts(np.cumsum(wv), int(kept.sum()), n_bins, bin_size)
    bins = BinStats(np.diff(starts), None, None, xv[starts[:-1]], xv[starts[1:] - 1])
    cal = clone(base)
    xs, y, w = binary_rows(x, pos[has], neg[has], dtype)
    cal.boundaries_, cal.bin_rates_ = lookup_bin_means(xs, y.astype(np.float64), w,
                                                       bins.boundaries())
    return cal


def _pooled_pav(base, x, kept, pos, neg, first, dtype):
    """Weighted isotonic regression: pooled PAV of a group's table."""
    has = kept > 0
    cal = clone(base)
    total = pos[has] + neg[has]
    cal.x_knots_, cal.y_knots_ = isotonic_fit_pooled(x[has], pos[has] / total, total)
    return cal


def _rows(base, x, kept, pos, neg, first, dtype):
    """The base's own fit on a group's table as weighted rows."""
    return clone(base).fit(*binary_rows(x, pos, neg, dtype))


#: each way of :data:`~sparsecal.calibration.registry.DISTRIBUTED_FITS` that
#: takes ``sample_weight`` -> one group's calibrator from its weighted table
#: ``(base, x, kept, pos, neg, first, dtype)``
WEIGHTED_FITS = {"pooled-pav": _pooled_pav, "equal-mass-bins": _histogram,
                 "weighted-rows": _rows}


def fit_weighted(model, entries, sample_weight, method, *, progress=None):
    """Fit a :class:`~sparsecal.GroupedCalibrator` on distributed dev entries
    with per-token weights (``model.fit(entries, sample_weight=w)`` calls this).

    The rule of the single-machine fit (``min_entries`` counts entries,
    ``fallback``, warnings) on ``entries`` weighted by ``w[entries.token]``.

    Parameters
    ----------
    model : GroupedCalibrator
    entries : DaskEntries
    sample_weight : dask.array.Array or array_like, shape (n_tokens,)
        Per-token weights, finite, non-negative, not zero on every entry of a
        group that is fitted.
    method : Method
        The base's registry entry; its distributed fit takes weights
        (:meth:`~sparsecal.calibration.registry.Method.check_distributed_fit`).
    progress : callable, optional

    Returns
    -------
    GroupedCalibrator
        ``model``, fitted.

    Raises
    ------
    TypeError, ValueError
        For ``sample_weight`` (one error naming it), a method whose weighted
        fit is not a function of the weighted tables (scaling-binning), no
        entries, or the base's own errors.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Sections 2.2 and 3.3; Nguyen & O'Connor
    2015, Algorithm 1 (equal-mass bins); docs/scale.md ("weights").

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> from sparsecal.distributed import threshold
    >>> dev = make_tagger_outputs(500, split_seed=1)
    >>> w = np.random.default_rng(0).integers(0, 3, 500).astype(float)
    >>> entries = threshold(da.from_array(dev.scores, chunks=(128, -1)), dev.gold)
    >>> model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(
    ...     dev.scores.shape[1])).fit(entries, sample_weight=w)
    >>> one = sc.threshold(dev.scores, dev.gold)
    >>> ref = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(
    ...     dev.scores.shape[1])).fit(one, sample_weight=w[one.token])
    >>> bool((model.calibrators_[0].x_knots_ == ref.calibrators_[0].x_knots_).all())
    True
    """
    method.check_distributed_fit(weighted=True)
    fit_table = WEIGHTED_FITS[method.distributed_fit]
    groupings = [model.groups] + ([] if model.fallback is None else [model.fallback])
    tables, tag_counts = weighted_score_tables(entries, groupings, sample_weight)
    if not tag_counts.any():
        raise ValueError("no dev entries to fit on")

    def grouping(groups):
        table = tables[0 if groups is model.groups else 1]

        def fit_group(g):
            if not table[g][2].any():
                raise ValueError(f"sample_weight is zero on every dev entry of "
                                 f"{groups.kind} group {g}")
            x, _, kept, pos, neg, first = table[g]
            return fit_table(model.base, x, kept, pos, neg, first, entries.dtype)
        return np.array([t[1].sum() for t in table]), fit_group

    return model.fit_groups(grouping, np.flatnonzero(tag_counts), entries.threshold,
                            progress=progress)
