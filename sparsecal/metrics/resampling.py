"""Resampling from a set's distinct-score table (the bootstrap interval and the
calibration test), the same numbers on one machine and on a cluster: the data
enter only through the mergeable table of sorted distinct scores with counts
and label sums, and replicate ``r`` draws only from the ``r``-th generator
spawned from ``random_state``. A replicate is binned as the data, a cut inside
one score's copies splitting its positives hypergeometrically. The replicates
run in the compiled core (:mod:`sparsecal.core._resample`), in parallel.
"""
import contextlib

import numpy as np

from ..core import _resample
from ..core.binning import BinStats, argsort_scores, lookup_bins
from ..core.dispatch import BUILDING_BLOCK, takes_data
from ..core.threads import get_n_threads
from ..core.validation import check_size
from .ce import ce_from_bins, ce_of_gaps

__all__ = ["bin_layout", "check_random_state", "check_resamples", "data_table", "p_value",
           "percentile_interval", "replicate_bins", "replicate_errors", "replicate_generators",
           "table_bootstrap_interval"]

# Index draws (one per point) instead of a multinomial over the cells when the
# cells are at least n / _INDEX_DRAW_RATIO: both are exact, the index draw is
# faster with few ties and needs a rank-to-cell map of n ints, at most
# _INDEX_DRAW_RATIO times the table.
_INDEX_DRAW_RATIO = 4

#: Bin sums of at most this many bytes per block of replicates.
_BLOCK_BYTES = 1 << 25
#: Threads beyond the first only while their scratch (one draw buffer each, of
#: up to n ranks) stays within this many bytes.
_SCRATCH_BYTES = 1 << 28


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


def _rank_map(counts, n):
    """False: one item per rank; the item of each rank: rank draws; None: one multinomial."""
    if counts.shape[0] == n:
        return False
    if _INDEX_DRAW_RATIO * counts.shape[0] >= n:
        return np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts)
    return None


class _Draws:
    """How the kernel draws the replicates of one table: its mode, cells and maps."""

    def __init__(self, table, null):
        self.scores, counts, positives = (np.ascontiguousarray(a) for a in table)
        self.n = int(counts.sum())
        if null:   # a cell per score: Multinomial copies, Binomial positives
            self.cell_index, cells = np.empty(0, np.int64), counts
        else:   # a cell per score and label (cell_index 2 * score + label)
            both = np.column_stack((counts - positives, positives)).ravel()
            self.cell_index = np.flatnonzero(both).astype(np.int64)
            cells = both[self.cell_index]
        self.n_cells = cells.shape[0]
        rank_map = _rank_map(cells, self.n)
        multinomial = rank_map is None
        self.mode = (_resample.Draw.NULL_MULTINOMIAL if multinomial else
                     _resample.Draw.NULL_RANKS) if null else (
                     _resample.Draw.MULTINOMIAL if multinomial else _resample.Draw.RANKS)
        self.pvals = cells / self.n if multinomial else np.empty(0)
        self.rank_map = rank_map if isinstance(rank_map, np.ndarray) else np.empty(0, np.int64)


def _score_bins(scores, n_bins):
    return lookup_bins(scores, np.arange(1, n_bins) / n_bins)


def replicate_bins(table, generators, *, starts=None, n_bins=None, null=False, n_threads=None):
    """``(count, sum_score, sum_label)`` of replicates of the set of ``table``,
    one row per generator (``null``: consistency resamples instead of bootstrap
    replicates), in equal-mass bins cut at ranks ``starts`` or in ``n_bins``
    fixed-width bins; the replicates run in the compiled core, in parallel.
    """
    d = _Draws(table, null)
    J, R = d.scores.shape[0], len(generators)
    if starts is not None:
        starts = np.ascontiguousarray(starts, dtype=np.int64)
        S, n_bins, score_bin = starts.shape[0], starts.shape[0] - 1, np.empty(0, np.int64)
    else:
        S, score_bin = 0, _score_bins(d.scores, n_bins)
    count, sum_score, sum_label = (np.empty((R, n_bins)) for _ in range(3))
    bit_generators = [g.bit_generator for g in generators]
    distinct = len({id(b) for b in bit_generators}) == R
    widths = (d.n_cells, d.n if d.mode == _resample.Draw.NULL_RANKS else 0, J, J, 5 * S + 1)
    per_thread = 8 * (sum(widths) + 3 * (J + 1))
    threads = get_n_threads(n_threads, R * (d.n + J + S)) if distinct else 1
    threads = max(1, min(threads, _SCRATCH_BYTES // per_thread))
    scratch = [np.empty((threads, k), np.int64) for k in widths]
    with contextlib.ExitStack() as locks:
        for b in dict.fromkeys(bit_generators):
            locks.enter_context(b.lock)
        _resample.replicate_bins(bit_generators, d.mode, d.n, d.scores, d.cell_index,
                                 d.pvals, d.rank_map, starts if S else np.empty(0, np.int64),
                                 score_bin, count, sum_score, sum_label, *scratch,
                                 np.empty((threads, J + 1)),
                                 np.empty((threads, 2 * (J + 1)), np.int64), threads)
    if S:
        count[:] = np.diff(starts)
    return count, sum_score, sum_label


def replicate_errors(table, generators, *, starts=None, n_bins=None, norm=2.0, null=False,
                     n_threads=None):
    """CE_p of replicates of the set of ``table``, one per generator (``null``:
    consistency resamples instead of bootstrap replicates).
    """
    out = np.empty(len(generators))
    block = max(1, _BLOCK_BYTES // (24 * (n_bins or starts.shape[0])))
    for i in range(0, len(generators), block):
        count, sum_score, sum_label = replicate_bins(table, generators[i:i + block],
                                                     starts=starts, n_bins=n_bins, null=null,
                                                     n_threads=n_threads)
        if starts is not None:
            out[i:i + block] = ce_of_gaps(np.diff(starts) / starts[-1],
                                          np.abs(sum_score - sum_label) / count, norm)
        else:
            out[i:i + block] = [ce_from_bins(BinStats(*sums, None, None), norm)
                                for sums in zip(count, sum_score, sum_label)]
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
