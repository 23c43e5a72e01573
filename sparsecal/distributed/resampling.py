"""The bootstrap interval and the calibration test of distributed entries, bit
for bit the single-machine ones.

Both depend on a set's entries only through its merged distinct-score table
(scores, counts, label sums: :func:`~sparsecal.distributed.isotonic.score_tables`)
and its bins, and replicate ``r`` draws only from the ``r``-th generator
spawned from ``random_state`` (:mod:`sparsecal.metrics.resampling`). So the
client spawns the generators (in the single-machine order of the sets), the
table goes to the workers once (one delayed per set) and the replicates run
there in blocks of :data:`BLOCK` (:func:`~sparsecal.metrics.resampling.replicate_errors`,
the single-machine function); the values come back in replicate order, and the
interval (percentiles) or p-value is computed from them as on one machine.
Nothing but the tables, the generators and ``R`` floats per set travels.
"""
import numpy as np

from ..core.groups import TagGroups
from ..metrics.resampling import (bin_layout, p_value, percentile_interval,
                                  replicate_errors, replicate_generators)
from ..metrics.toplabel import top_label
from ._dask import require_dask
from .chunks import add_tables, key_scores, native_keys, runs
from .isotonic import score_tables
from .reduce import tree_merge

__all__ = ["BLOCK", "bootstrap_ends", "cluster_replicate_errors", "set_tables",
           "table_bootstrap_intervals", "table_calibration_tests", "top_label_table"]

#: replicates per task
BLOCK = 64


def set_tables(entries, groups):
    """Merged distinct-score tables of all entries pooled, then of each group.

    Parameters
    ----------
    entries : DaskEntries
    groups : TagGroups
        The sets after the pooled one.

    Returns
    -------
    list of (ndarray, ndarray, ndarray)
        ``1 + groups.n_groups`` tables (sorted distinct scores as float64,
        counts and label sums as int64; empty for an empty group).

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Sections 3.2-3.3 (SMCE over all entries,
    GMCE per group).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import from_arrays
    >>> entries = from_arrays(da.from_array(np.array([0.5, 0.25, 0.5]), chunks=2),
    ...                       [1, 0, 0])
    >>> [t[1].tolist() for t in set_tables(entries, sc.TagGroups.scw(1))]
    [[1, 2], [1, 2]]
    """
    (pooled,), per_group = score_tables(entries, [TagGroups.scw(entries.n_tags), groups])[0]
    return [pooled] + per_group


def _top_table(block, index):
    """The distinct-score table (keys) of one chunk's top-label entries."""
    score, label = top_label(block) if len(block) else (block.score, block.label)
    keys = native_keys(score)
    order = np.argsort(keys, kind="stable")
    distinct, starts, counts = runs(keys[order])
    positives = np.concatenate(([0], np.cumsum(label[order], dtype=np.int64)))
    return distinct, counts, positives[starts + counts] - positives[starts]


def _add(parts):
    return add_tables(*zip(*parts))


def top_label_table(entries):
    """The merged distinct-score table of the top-label entries (each token's
    highest-scoring entry, :func:`sparsecal.metrics.toplabel.top_label`; a
    token's entries all lie in its row's chunk).

    Parameters
    ----------
    entries : DaskEntries

    Returns
    -------
    (ndarray, ndarray, ndarray)
        Sorted distinct scores (float64), counts and label sums (int64).

    References
    ----------
    Jagannatha & Yu 2020, Section 2 (top-label calibration).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from sparsecal.distributed import threshold
    >>> x = np.array([[0.75, 0.25], [0.5, 0.5], [0.25, 0.75]])
    >>> [t.tolist() for t in top_label_table(threshold(da.from_array(x, chunks=(2, 2)),
    ...                                                [0, 1, 1]))]
    [[0.5, 0.75], [1, 2], [0, 2]]
    """
    keys, counts, positives = tree_merge(_top_table, _add, entries.blocks)
    return key_scores(keys.astype(np.uint64), entries.dtype), counts, positives


def cluster_replicate_errors(jobs, norm=2.0, null=False):
    """:func:`~sparsecal.metrics.resampling.replicate_errors` of several sets,
    in blocks of :data:`BLOCK` replicates as Dask tasks.

    Parameters
    ----------
    jobs : list of (table, bins, generators)
        Per set: its distinct-score table, its bins and one generator per replicate.
    norm : float, default=2.0
    null : bool, default=False
        Consistency resamples instead of bootstrap replicates.

    Returns
    -------
    list of ndarray of float64
        Per set, the replicates' CE_p in the order of its generators: equal to
        :func:`~sparsecal.metrics.resampling.replicate_errors` bit for bit.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.core.binning import equal_mass_bins
    >>> from sparsecal.metrics.resampling import replicate_errors, replicate_generators
    >>> x, y = np.array([0.2, 0.2, 0.6, 0.9]), np.array([0, 1, 1, 1])
    >>> table = (np.array([0.2, 0.6, 0.9]), np.array([2, 1, 1]), np.array([1, 1, 1]))
    >>> bins = equal_mass_bins(x, y, n_bins=2)
    >>> (got,) = cluster_replicate_errors([(table, bins, replicate_generators(0, 100))])
    >>> ref = replicate_errors(table, replicate_generators(0, 100), starts=np.array([0, 2, 4]))
    >>> bool(np.array_equal(got, ref))
    True
    """
    dask = require_dask()
    tasks = []
    for table, bins, generators in jobs:
        shared = dask.delayed(table, traverse=False)   # one copy, sent where needed
        layout = bin_layout(bins)
        tasks.append([dask.delayed(replicate_errors)(shared, generators[i:i + BLOCK],
                                                     **layout, norm=norm, null=null)
                      for i in range(0, len(generators), BLOCK)])
    blocks = dask.compute(tasks)[0]
    return [np.concatenate(b) if b else np.empty(0) for b in blocks]


def table_bootstrap_intervals(tables, bins, norm, spec):
    """Bootstrap intervals of CE_p of several sets from their tables, on the
    cluster: :func:`~sparsecal.metrics.resampling.table_bootstrap_interval` of
    each set.

    Parameters
    ----------
    tables : list of (ndarray, ndarray, ndarray)
    bins : list of BinStats or None
        None for an empty set (no interval, no generators spawned).
    norm : float
    spec : ConfidenceInterval
        A bootstrap; the generators are spawned set by set, in order (as the
        single-machine metrics draw the sets' intervals one after another).

    Returns
    -------
    list of (float, float) or None

    References
    ----------
    Efron & Tibshirani 1993, Chapter 13 (the percentile interval); Nguyen &
    O'Connor 2015, Algorithm 1.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.core.binning import fixed_width_bins
    >>> from sparsecal.metrics import ConfidenceInterval
    >>> from sparsecal.metrics.resampling import table_bootstrap_interval
    >>> table = (np.array([0.2, 0.6, 0.9]), np.array([2, 1, 1]), np.array([1, 1, 1]))
    >>> bins = fixed_width_bins([0.2, 0.2, 0.6, 0.9], [0, 1, 1, 1], n_bins=2)
    >>> spec = ConfidenceInterval("bootstrap", n_resamples=200)
    >>> (got,) = table_bootstrap_intervals([table], [bins], 2.0, spec)
    >>> got == table_bootstrap_interval(table, bins, 2.0, spec)
    True
    """
    live = [(t, b, replicate_generators(spec.random_state, spec.n_resamples))
            for t, b in zip(tables, bins) if b is not None]
    values = iter(cluster_replicate_errors(live, norm))
    return [None if b is None else percentile_interval(next(values), spec) for b in bins]


def table_calibration_tests(tables, bins, statistics, n_resamples=999, random_state=0):
    """p-values of the calibration test of several sets, on the cluster: those
    of :func:`sparsecal.calibration_test` of each set.

    Parameters
    ----------
    tables : list of (ndarray, ndarray, ndarray)
    bins : list of BinStats or None
        The bins of the statistic; None for an empty set.
    statistics : list of float or None
        CE_2 of each set's bins.
    n_resamples : int, default=999
    random_state : None, int, SeedSequence or numpy Generator, default=0

    Returns
    -------
    list of float or None

    References
    ----------
    Bröcker & Smith 2007, "Increasing the reliability of reliability diagrams",
    Weather and Forecasting 22, Section 3.

    Examples
    --------
    >>> import numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.core.binning import equal_mass_bins
    >>> x, y = np.array([0.2, 0.2, 0.6, 0.9]), np.array([0, 1, 1, 1])
    >>> table = (np.array([0.2, 0.6, 0.9]), np.array([2, 1, 1]), np.array([1, 1, 1]))
    >>> bins = equal_mass_bins(x, y, n_bins=2)
    >>> ref = sc.calibration_test(x, y, n_bins=2, n_resamples=99)
    >>> table_calibration_tests([table], [bins], [ref.statistic], 99) == [ref.p_value]
    True
    """
    live = [(t, b, replicate_generators(random_state, n_resamples))
            for t, b in zip(tables, bins) if b is not None]
    null = iter(cluster_replicate_errors(live, 2.0, null=True))
    return [None if b is None else p_value(next(null), s) for b, s in zip(bins, statistics)]


def bootstrap_ends(entries, groups, sets, norm, spec):
    """The bootstrap interval of each set, pooled then each group of
    ``groups``, when ``spec`` is a bootstrap (else Nones).

    Parameters
    ----------
    entries : DaskEntries
    groups : TagGroups
    sets : list of BinStats or None
        ``1 + groups.n_groups`` bins (None: no interval for that set).
    norm : float
    spec : ConfidenceInterval or None

    Returns
    -------
    list of (float, float) or None

    Examples
    --------
    >>> bootstrap_ends(None, None, [None, None], 2.0, None)
    [None, None]
    """
    if spec is None or spec.method != "bootstrap":
        return [None] * len(sets)
    return table_bootstrap_intervals(set_tables(entries, groups), sets, norm, spec)
