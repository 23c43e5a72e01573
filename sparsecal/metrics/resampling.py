"""Resampling from a set's distinct-score table (the bootstrap interval and the
calibration test), the same numbers on one machine and on a cluster: the data
enter only through the mergeable table of sorted distinct scores with counts
and label sums, and replicate ``r`` draws only from the ``r``-th generator
spawned from ``random_state``. A replicate is binned as the data, a cut inside
one score's copies splitting its positives hypergeometrically.
"""
import numpy as np

from ..core.binning import (BinStats, argsort_scores, lookup_bins, replicated_bin_sums,
                            replicated_cuts)
from .ce import ce_from_bins, ce_of_gaps
from ..core.dispatch import BUILDING_BLOCK, takes_data
from ..core.validation import check_size

__all__ = ["bin_layout", "check_random_state", "check_resamples", "data_table", "p_value",
           "percentile_interval", "replicate_errors", "replicate_generators",
           "table_bootstrap_interval"]

# Index draws (one per point) instead of a multinomial over the cells when the
# cells are at least n / _INDEX_DRAW_RATIO: both are exact, the index draw is
# faster with few ties and needs a rank-to-cell map of n ints, at most
# _INDEX_DRAW_RATIO times the table.
_INDEX_DRAW_RATIO = 4


@takes_data(refuse=BUILDING_BLOCK)
def score_table(sorted_scores, sorted_labels):
    """The distinct-score table ``(scores, counts, positives)`` of sorted scores and labels."""
    x = sorted_scores.astype(np.float64)
    first = np.flatnonzero(np.r_[True, x[1:] != x[:-1]])
    counts = np.diff(np.r_[first, x.shape[0]]).astype(np.int64)
    positives = np.add.reduceat(sorted_labels.astype(np.int64), first)
    return x[first], counts, positives


def data_table(scores, labels, order):
    """:func:`score_table` of data binned by :func:`~sparsecal.core.binning.bin_statistics`."""
    perm, sorted_x = argsort_scores(scores) if order is None else order[:2]
    return score_table(sorted_x, labels[perm])


def bin_layout(bins):
    """The binning of ``bins`` as :func:`replicate_errors` takes it (``starts`` or ``n_bins``)."""
    if bins.edges is not None:
        return {"n_bins": bins.edges.shape[0] - 1}
    return {"starts": np.r_[0, np.cumsum(bins.count)].astype(np.int64)}


def check_random_state(random_state):
    """The numpy Generator of a ``random_state`` argument (a Generator as it is)."""
    try:
        return np.random.default_rng(random_state)   # returns a Generator unchanged
    except (TypeError, ValueError) as err:
        raise ValueError(f"random_state must be None, a non-negative int, a SeedSequence "
                         f"or a numpy Generator, got {random_state!r}") from err


#: Bytes of one resample: its spawned generator (about 1 KiB) and its statistic.
RESAMPLE_BYTES = 1032


def check_resamples(n_resamples, name="n_resamples"):
    """``n_resamples`` as a positive int whose generators and statistics fit in
    memory (:func:`~sparsecal.core.validation.check_size`), else one error naming
    ``name``.

    Examples
    --------
    >>> check_resamples(999)
    999
    """
    return check_size(n_resamples, name, RESAMPLE_BYTES)


def replicate_generators(random_state, n_resamples):
    """One independent generator per replicate, spawned from ``random_state``."""
    return check_random_state(random_state).spawn(check_resamples(n_resamples))


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
    """Positives among the first ``offset[i]`` copies of run ``run[i]`` (hypergeometric draws)."""
    if run.shape[0] and (run.shape[0] == 1 or (run[1:] != run[:-1]).all()):
        # no two cuts in one run (the usual case): the one draw of _splits_by_depth
        good = positives[run]
        return rng.hypergeometric(good, copies[run] - good, offset)
    return _splits_by_depth(rng, copies, positives, run, offset)


def _splits_by_depth(rng, copies, positives, run, offset):
    """:func:`_split_positives` of any cuts: one draw per depth of cuts within a run."""
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


def percentile_interval(values, spec):
    """The ``spec.percentiles`` of replicate values (the percentile bootstrap)."""
    lo, hi = np.percentile(values, spec.percentiles)
    return float(lo), float(hi)


def p_value(null, statistic):
    """``(1 + #{T* >= T}) / (1 + R)`` of ``R`` null statistics."""
    return float((1.0 + np.count_nonzero(null >= statistic)) / (1.0 + null.shape[0]))


def table_bootstrap_interval(table, bins, norm, spec):
    """The percentile bootstrap interval of CE_p of one set from its table."""
    generators = replicate_generators(spec.random_state, spec.n_resamples)
    return percentile_interval(replicate_errors(table, generators, **bin_layout(bins),
                                                norm=norm), spec)
