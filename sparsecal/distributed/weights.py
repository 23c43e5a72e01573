"""Per-token ``sample_weight`` on distributed entries: weighted distinct-score
tables and the fits that need only them (:data:`WEIGHTED_FITS`)."""
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
    """Per-token weights as lazy blocks aligned with the entries' row chunks."""
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
    """Sum the rows of each run; the first positive ``first`` of each."""
    if starts.size == 0:
        return count[:0], kept[:0], pos[:0], neg[:0], first[:0]
    at = np.where(first > 0, np.arange(first.shape[0]), first.shape[0])
    return (np.add.reduceat(count, starts), np.add.reduceat(kept, starts),
            np.add.reduceat(pos, starts), np.add.reduceat(neg, starts),
            np.append(first, 0.0)[np.minimum.reduceat(at, starts)])


def _chunk_tables(block, index, weights, row0, groupings, n_tags):
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
    keys, *columns = (np.concatenate(c) for c in zip(*tables))
    order = np.argsort(keys, kind="stable")
    distinct, starts, _ = runs(keys[order])
    return (distinct, *_run_sums(starts, *(c[order] for c in columns)))


def _merge(parts):
    merged = [[_add(tables) for tables in zip(*per_grouping)]
              for per_grouping in zip(*[p[0] for p in parts])]
    return merged, sum(p[1] for p in parts)


def weighted_score_tables(entries, groupings, sample_weight):
    """``tables[i][g]``: ``(scores, count, kept, pos, neg, first)`` per distinct score
    of group ``g`` of ``groupings[i]``; and the entries per tag."""
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
    """Each distinct score as a positive and a negative weighted point: ``x, y, w``."""
    x = np.concatenate([scores, scores]).astype(dtype)
    y = np.repeat(np.array([1, 0], dtype=np.uint8), scores.shape[0])
    w = np.concatenate([positives, negatives]).astype(np.float64)
    keep = w > 0
    return x[keep], y[keep], w[keep]


def _histogram(base, x, kept, pos, neg, first, dtype):
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
    has = kept > 0
    cal = clone(base)
    total = pos[has] + neg[has]
    cal.x_knots_, cal.y_knots_ = isotonic_fit_pooled(x[has], pos[has] / total, total)
    return cal


def _rows(base, x, kept, pos, neg, first, dtype):
    return clone(base).fit(*binary_rows(x, pos, neg, dtype))


#: each way of :data:`~sparsecal.calibration.registry.DISTRIBUTED_FITS` that
#: takes ``sample_weight`` -> one group's calibrator from its weighted table
#: ``(base, x, kept, pos, neg, first, dtype)``
WEIGHTED_FITS = {"pooled-pav": _pooled_pav, "equal-mass-bins": _histogram,
                 "weighted-rows": _rows}


def fit_weighted(model, entries, sample_weight, method, *, progress=None):
    """Fit ``model`` on distributed dev entries weighted by their tokens' weights."""
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
