"""Isotonic recalibration per tag group fitted on distributed entries, from the
merged per-group distinct-score tables: the single-machine knots bit for bit."""
import numpy as np

from ..calibration.base import clone
from ..calibration.isotonic import IsotonicCalibrator
from ..core.isotonic import isotonic_fit_pooled
from .checks import check_dask_entries
from .chunks import add_tables, key_scores, runs, sorted_sets
from .reduce import tree_merge

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


def score_tables(entries, groupings):
    """``tables[i][g]``: the distinct scores of group ``g`` of ``groupings[i]`` with
    their counts and label sums, merged exactly; and the entries per tag."""
    spec = [(np.asarray(g.tag_to_group, dtype=np.int64), g.n_groups) for g in groupings]
    tables, tag_counts = tree_merge(_tables, _merge_tables, entries.blocks, spec,
                                    entries.n_tags)
    return ([[(key_scores(k.astype(np.uint64), entries.dtype), c, y) for k, c, y in t]
             for t in tables], tag_counts)


def fit_grouped(model, entries, sample_weight=None, *, progress=None):
    """Fit a ``GroupedCalibrator`` of isotonic calibrators on distributed dev entries."""
    if type(model.base) is not IsotonicCalibrator:
        model._check_params()
        raise TypeError("on distributed entries only an IsotonicCalibrator base can be "
                        f"fitted here, got {type(model.base).__name__} (see "
                        "sparsecal.distributed.calibrators.fit_grouped)")

    def fitter(groups, table):
        def fit_group(g):
            x, count, positives = table[g]
            cal = clone(model.base)
            cal.x_knots_, cal.y_knots_ = isotonic_fit_pooled(
                x, positives.astype(np.float64) / count, count.astype(np.float64))
            return cal
        return fit_group

    return fit_from_tables(model, entries, sample_weight, fitter, progress=progress)


def fit_from_tables(model, entries, sample_weight, fitter, *, progress=None):
    """Fit ``model`` by the single-machine rule from the merged distinct-score
    tables, where ``fitter(groups, tables)`` returns ``fit_group(g)``."""
    _check_fit(model, entries, sample_weight)
    groupings = [model.groups] + ([] if model.fallback is None else [model.fallback])
    tables, tag_counts = score_tables(entries, groupings)
    if not tag_counts.any():
        raise ValueError("no dev entries to fit on")

    def grouping(groups):
        table = tables[0 if groups is model.groups else 1]
        return np.array([t[1].sum() for t in table]), fitter(groups, table)

    return model.fit_groups(grouping, np.flatnonzero(tag_counts), entries.threshold,
                            progress=progress)


def _check_fit(model, entries, sample_weight):
    model._check_params()
    check_dask_entries(entries, model.groups)
    if sample_weight is not None:
        raise ValueError("sample_weight is not taken by this unweighted fit: pass it to "
                         "GroupedCalibrator.fit (sparsecal.distributed.weights.fit_weighted)")
