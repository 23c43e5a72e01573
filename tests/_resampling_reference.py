"""The replicate draws of sparsecal.metrics.resampling as numpy Generator calls,
one replicate at a time (the package's implementation before the compiled
kernel, kept as the reference the kernel must equal bit for bit: the same
calls, in the same order, on each replicate's own generator)."""
import numpy as np

from sparsecal.core.binning import BinStats, lookup_bins
from sparsecal.metrics.ce import ce_from_bins, ce_of_gaps

_INDEX_DRAW_RATIO = 4


def replicated_cuts(multiplicity, starts):
    """Where the rank cuts ``starts`` of a replicated sorted sample fall: for each, the
    point ``k`` holding that rank and the copies of it before the rank.
    """
    cw = np.concatenate(([0], np.cumsum(multiplicity)))
    k = np.minimum(np.searchsorted(cw, starts, side="right") - 1, multiplicity.shape[0] - 1)
    return k, starts - cw[k]


def replicated_bin_sums(multiplicity, starts, *values, cuts=None):
    """Per-bin sums of ``values`` over a sorted sample in which point ``k`` appears
    ``multiplicity[k]`` times, cut at ranks ``starts`` of that sample.

    How a bootstrap replicate is re-binned without building or sorting it: in
    sorted order the copies of a point are consecutive, so each bin sum is a
    cumulative sum over whole points plus the copies of the point that straddles the
    cut (O(n)). ``cuts`` are :func:`replicated_cuts` if the caller has them.
    """
    k, partial = replicated_cuts(multiplicity, starts) if cuts is None else cuts
    sums = []
    for v in values:
        cv = np.concatenate(([0.0], np.cumsum(multiplicity * v)))
        sums.append(np.diff(cv[k] + partial * v[k]))
    return sums


class _Draws:
    """What the draws from one table need, computed once per block of replicates."""

    def __init__(self, table):
        self.scores, counts, positives = table
        both = np.column_stack((counts - positives, positives)).ravel()
        self.index = np.flatnonzero(both)
        self.cells, self.counts = both[self.index], counts
        # one cell per score (no score with both labels): no interleaving needed
        self.label = (positives > 0).astype(np.int64) if self.index.shape[0] == counts.shape[
            0] else None
        self.n = int(counts.sum())
        self.cell_of_rank = _rank_map(self.cells, self.n)
        self.score_of_rank = _rank_map(counts, self.n)


def _rank_map(counts, n):
    """False: one item per rank; the item of each rank: index draws; None: one multinomial."""
    if counts.shape[0] == n:
        return False
    if _INDEX_DRAW_RATIO * counts.shape[0] >= n:
        return np.repeat(np.arange(counts.shape[0]), counts)
    return None


def _items(rng, rank_map, n):
    ranks = rng.integers(0, n, n)
    return ranks if rank_map is False else rank_map[ranks]


def _multinomial(rng, counts, rank_map, n):
    """``Multinomial(n, counts / n)`` exactly (index draws when the items are many)."""
    if rank_map is None:
        return rng.multinomial(n, counts / n)
    return np.bincount(_items(rng, rank_map, n), minlength=counts.shape[0])


def _bootstrap(rng, d):
    """A bootstrap replicate's copies and positives per distinct score."""
    if d.label is not None:
        copies = _multinomial(rng, d.cells, d.cell_of_rank, d.n)
        return copies, copies * d.label
    both = np.zeros(2 * d.scores.shape[0], dtype=np.int64)
    both[d.index] = _multinomial(rng, d.cells, d.cell_of_rank, d.n)
    return both[0::2] + both[1::2], both[1::2]


def _null(rng, d):
    """A consistency resample's copies and ``Binomial(m_j, s_j)`` positives per distinct score."""
    if d.score_of_rank is None:   # few distinct scores: one binomial each
        copies = _multinomial(rng, d.counts, None, d.n)
        return copies, rng.binomial(copies, d.scores)
    # many: a Bernoulli label per drawn copy (the same law)
    item = _items(rng, d.score_of_rank, d.n)
    label = rng.random(d.n) < d.scores[item]
    J = d.counts.shape[0]
    return (np.bincount(item, minlength=J),
            np.bincount(item, weights=label, minlength=J).astype(np.int64))


def _split_positives(rng, copies, positives, run, offset):
    """Positives among the first ``offset[i]`` copies of run ``run[i]``: one
    hypergeometric draw per depth of cuts within a run."""
    i = np.arange(run.shape[0])
    first = np.maximum.accumulate(np.where(np.r_[True, run[1:] != run[:-1]], i, 0))
    depth = i - first
    left = np.zeros(run.shape[0], dtype=np.int64)
    prev_offset = np.zeros(run.shape[0], dtype=np.int64)
    prev_left = np.zeros(run.shape[0], dtype=np.int64)
    for d in range(int(depth.max()) + 1 if depth.size else 0):
        at = np.flatnonzero(depth == d)
        if d:
            prev_offset[at], prev_left[at] = offset[at - 1], left[at - 1]
        good = positives[run[at]] - prev_left[at]
        bad = copies[run[at]] - prev_offset[at] - good
        left[at] = prev_left[at] + rng.hypergeometric(good, bad, offset[at] - prev_offset[at])
    return left


def replicate_bin_sums(rng, scores, copies, positives, *, starts=None, n_bins=None,
                       score_bins=None):
    """``(count, sum_score, sum_label)`` per bin of a replicate: equal-mass rank
    ``starts`` or ``n_bins`` fixed-width bins.
    """
    if starts is None:
        b = _score_bins(scores, n_bins) if score_bins is None else score_bins
        return tuple(np.bincount(b, weights=w, minlength=n_bins).astype(np.float64)
                     for w in (copies, copies * scores, positives))
    run, offset = replicated_cuts(copies, starts)
    left = np.concatenate(([0], np.cumsum(positives)))[run] + _split_positives(
        rng, copies, positives, run, offset)
    (sum_score,) = replicated_bin_sums(copies, starts, scores, cuts=(run, offset))
    return np.diff(starts).astype(np.float64), sum_score, np.diff(left).astype(np.float64)


def _score_bins(scores, n_bins):
    return lookup_bins(scores, np.arange(1, n_bins) / n_bins)


def replicate_errors(table, generators, *, starts=None, n_bins=None, norm=2.0, null=False):
    """CE_p of replicates of the set of ``table``, one per generator (``null``:
    consistency resamples instead of bootstrap replicates).
    """
    draw, d = _null if null else _bootstrap, _Draws(table)
    weights = None if starts is None else np.diff(starts) / starts[-1]
    score_bins = None if starts is not None else _score_bins(table[0], n_bins)
    out = np.empty(len(generators))
    for r, rng in enumerate(generators):
        copies, positives = draw(rng, d)
        count, sum_score, sum_label = replicate_bin_sums(rng, table[0], copies, positives,
                                                         starts=starts, n_bins=n_bins,
                                                         score_bins=score_bins)
        out[r] = (ce_of_gaps(weights, np.abs(sum_score - sum_label) / count, norm)
                  if starts is not None else
                  ce_from_bins(BinStats(count, sum_score, sum_label, None, None), norm))
    return out
