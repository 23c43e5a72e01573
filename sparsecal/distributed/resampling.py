"""The bootstrap interval and the calibration test of distributed entries, bit for
bit: the single-machine replicates of the merged tables, run on the workers."""
import numpy as np

from ..core.groups import TagGroups
from ..metrics.resampling import (bin_layout, p_value, percentile_interval,
                                  replicate_errors, replicate_generators)
from ..metrics.toplabel import top_label
from ._dask import require_dask
from .chunks import add_tables, key_scores, native_keys, runs
from .isotonic import score_tables
from .reduce import tree_merge

__all__ = ["TASK_WORK", "bootstrap_ends", "cluster_replicate_errors", "set_tables",
           "table_bootstrap_intervals", "table_calibration_tests", "top_label_table"]

#: replicate work per task (points drawn, table rows and bins, summed over its replicates)
TASK_WORK = 1 << 22


def set_tables(entries, groups):
    """Merged distinct-score tables of all entries, then of each group."""
    (pooled,), per_group = score_tables(entries, [TagGroups.scw(entries.n_tags), groups])[0]
    return [pooled] + per_group


def _top_table(block, index):
    score, label = top_label(block) if len(block) else (block.score, block.label)
    keys = native_keys(score)
    order = np.argsort(keys, kind="stable")
    distinct, starts, counts = runs(keys[order])
    positives = np.concatenate(([0], np.cumsum(label[order], dtype=np.int64)))
    return distinct, counts, positives[starts + counts] - positives[starts]


def _add(parts):
    return add_tables(*zip(*parts))


def top_label_table(entries):
    """The merged distinct-score table of the top-label entries."""
    keys, counts, positives = tree_merge(_top_table, _add, entries.blocks)
    return key_scores(keys.astype(np.uint64), entries.dtype), counts, positives


def _replicate_pieces(pieces, norm, null):
    return [replicate_errors(table, generators, **layout, norm=norm, null=null, n_threads=1)
            for table, layout, generators in pieces]


def _work(table, bins):
    """A replicate's work: the points drawn, the table's rows and the bins."""
    layout = bin_layout(bins)
    return int(table[1].sum()) + table[0].shape[0] + layout.get(
        "n_bins", len(layout.get("starts", ())))


def _plan(jobs):
    """Tasks of about ``TASK_WORK``, each a list of ``(job, first, stop)``
    replicate ranges: a large set's replicates in blocks, small sets together."""
    tasks, current, work = [], [], 0
    for j, (table, bins, generators) in enumerate(jobs):
        each = max(1, _work(table, bins))
        step = max(1, TASK_WORK // each)
        for i in range(0, len(generators), step):
            current.append((j, i, min(i + step, len(generators))))
            work += each * (current[-1][2] - i)
            if work >= TASK_WORK:
                tasks.append(current)
                current, work = [], 0
    return tasks + ([current] if current else [])


def cluster_replicate_errors(jobs, norm=2.0, null=False):
    """``replicate_errors`` of each ``(table, bins, generators)`` job, as Dask
    tasks of about ``TASK_WORK`` each (:func:`_plan`)."""
    dask = require_dask()
    shared = [dask.delayed(t, traverse=False) for t, _, _ in jobs]   # one copy per set
    plan = _plan(jobs)
    tasks = [dask.delayed(_replicate_pieces)(
        [(shared[j], bin_layout(jobs[j][1]), jobs[j][2][a:b]) for j, a, b in task], norm, null)
        for task in plan]
    values = [[] for _ in jobs]
    for task, result in zip(plan, dask.compute(tasks)[0]):
        for (j, _, _), v in zip(task, result):
            values[j].append(v)
    return [np.concatenate(v) if v else np.empty(0) for v in values]


def table_bootstrap_intervals(tables, bins, norm, spec):
    """Bootstrap intervals of CE_p of several sets from their tables (None: empty)."""
    live = [(t, b, replicate_generators(spec.random_state, spec.n_resamples))
            for t, b in zip(tables, bins) if b is not None]
    values = iter(cluster_replicate_errors(live, norm))
    return [None if b is None else percentile_interval(next(values), spec) for b in bins]


def table_calibration_tests(tables, bins, statistics, n_resamples=999, random_state=0):
    """Calibration-test p-values of several sets from their tables (None: empty)."""
    live = [(t, b, replicate_generators(random_state, n_resamples))
            for t, b in zip(tables, bins) if b is not None]
    null = iter(cluster_replicate_errors(live, 2.0, null=True))
    return [None if b is None else p_value(next(null), s) for b, s in zip(bins, statistics)]


def bootstrap_ends(entries, groups, sets, norm, spec):
    """The bootstrap interval of each set if ``spec`` is a bootstrap, else Nones."""
    if spec is None or spec.method != "bootstrap":
        return [None] * len(sets)
    return table_bootstrap_intervals(set_tables(entries, groups), sets, norm, spec)
