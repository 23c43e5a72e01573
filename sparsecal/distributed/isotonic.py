"""Isotonic recalibration per tag group fitted on distributed entries, from the
merged per-group distinct-score tables: the single-machine knots bit for bit."""
import numpy as np

from ..calibration.base import clone
from ..calibration.isotonic import IsotonicCalibrator
from ..core.isotonic import isotonic_fit_pooled
from .checks import check_dask_entries
from .chunks import add_tables, key_scores, runs, sorted_sets
from ._dask import require_dask
from .reduce import per_block, tree, tree_merge

__all__ = ["fit_from_tables", "fit_grouped", "score_tables"]


def _tables(block, index, groupings, n_tags):
    """Per grouping and group, the chunk's distinct-score table; and its entries per tag."""
    out = []
    for tag_to_group, n_groups in groupings:
        per_group = []
        for keys, label in sorted_sets(block, False, tag_to_group, n_groups):
            distinct, starts, counts = runs(keys)
            positives = np.concatenate(([0], np.cumsum(label, dtype=np.int64)))
            per_group.append((distinct, counts, positives[starts + counts] - positives[starts]))
        out.append(per_group)
    return out, np.bincount(block.tag, minlength=n_tags)


def _merge_tables(parts):
    merged = [[add_tables(*zip(*tables)) for tables in zip(*per_grouping)]
              for per_grouping in zip(*[p[0] for p in parts])]
    return merged, sum(p[1] for p in parts)


def _table_spec(groupings):
    return [(np.asarray(g.tag_to_group, dtype=np.int64), g.n_groups) for g in groupings]


def score_tables(entries, groupings):
    """``tables[i][g]``: the distinct scores of group ``g`` of ``groupings[i]`` with
    their counts and label sums, merged exactly; and the entries per tag."""
    tables, tag_counts = tree_merge(_tables, _merge_tables, entries.blocks,
                                    _table_spec(groupings), entries.n_tags)
    return [[_scores(t, entries.dtype) for t in per] for per in tables], tag_counts


def _scores(table, dtype):
    keys, count, positives = table
    return key_scores(keys.astype(np.uint64), dtype), count, positives


def _fit_tables(merged, dtype):
    """Each group's isotonic knots (None for an empty group) and entries, fitted
    where the merged tables are: only the knots travel to the client."""
    tables, tag_counts = merged
    fits = [[isotonic_fit_pooled(x, y.astype(np.float64) / c, c.astype(np.float64))
             if c.size else None for x, c, y in (_scores(t, dtype) for t in per)]
            for per in tables]
    return fits, [np.array([t[1].sum() for t in per]) for per in tables], tag_counts


def fit_grouped(model, entries, sample_weight=None, *, progress=None):
    """Fit a ``GroupedCalibrator`` of isotonic calibrators on distributed dev entries."""
    if type(model.base) is not IsotonicCalibrator:
        model._check_params()
        raise TypeError("on distributed entries only an IsotonicCalibrator base can be "
                        f"fitted here, got {type(model.base).__name__} (see "
                        "sparsecal.distributed.calibrators.fit_grouped)")
    _check_fit(model, entries, sample_weight)
    groupings = _groupings(model)
    merged = tree(per_block(_tables, entries.blocks, _table_spec(groupings), entries.n_tags),
                  _merge_tables)
    fits, sizes, tag_counts = require_dask().compute(
        require_dask().delayed(_fit_tables, pure=True)(merged, entries.dtype))[0]

    def grouping(groups):
        i = 0 if groups is model.groups else 1

        def fit_group(g):
            cal = clone(model.base)
            cal.x_knots_, cal.y_knots_ = fits[i][g]
            return cal
        return sizes[i], fit_group

    return _fit_groups(model, entries, grouping, tag_counts, progress)


def fit_from_tables(model, entries, sample_weight, fitter, *, progress=None):
    """Fit ``model`` by the single-machine rule from the merged distinct-score
    tables, where ``fitter(groups, tables)`` returns ``fit_group(g)``."""
    _check_fit(model, entries, sample_weight)
    groupings = _groupings(model)
    tables, tag_counts = score_tables(entries, groupings)

    def grouping(groups):
        table = tables[0 if groups is model.groups else 1]
        return np.array([t[1].sum() for t in table]), fitter(groups, table)

    return _fit_groups(model, entries, grouping, tag_counts, progress)


def _groupings(model):
    return [model.groups] + ([] if model.fallback is None else [model.fallback])


def _fit_groups(model, entries, grouping, tag_counts, progress):
    if not tag_counts.any():
        raise ValueError("no dev entries to fit on")
    return model.fit_groups(grouping, np.flatnonzero(tag_counts), entries.threshold,
                            progress=progress)


def _check_fit(model, entries, sample_weight):
    model._check_params()
    check_dask_entries(entries, model.groups)
    if sample_weight is not None:
        raise ValueError("sample_weight is not taken by this unweighted fit: pass it to "
                         "GroupedCalibrator.fit (sparsecal.distributed.weights.fit_weighted)")
