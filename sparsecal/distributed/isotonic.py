"""Isotonic recalibration per tag group fitted on distributed entries.

Pool adjacent violators depends on the data only through the weight and the
label sum of each distinct score (ties are pooled first): each chunk sorts its
entries once per grouping and tabulates them per group and distinct score
(count, label sum: integers: one pass over the sorted keys), the
tables are merged in a tree by adding (exact, so order-free), and the client
fits each group with :func:`sparsecal.core.isotonic.isotonic_fit_pooled`. The
knots are those of the single-machine fit, bit for bit. What travels is one row
per distinct score per group (docs/scale.md).
"""
import numpy as np

from ..calibration.base import clone
from ..calibration.isotonic import IsotonicCalibrator
from ..core.isotonic import isotonic_fit_pooled
from .checks import check_dask_entries
from .chunks import add_tables, key_scores, runs, sorted_sets
from .reduce import tree_merge

__all__ = ["fit_from_tables", "fit_grouped", "score_tables"]


def _tables(block, index, groupings, n_tags):
    """Per grouping and group: the chunk's distinct score keys with their
    counts and label sums (from the group's entries sorted by score); and the
    chunk's entries per tag."""
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
    """Union of the tables, adding counts and label sums (exact)."""
    merged = [[add_tables(*zip(*tables)) for tables in zip(*per_grouping)]
              for per_grouping in zip(*[p[0] for p in parts])]
    return merged, sum(p[1] for p in parts)


def score_tables(entries, groupings):
    """Per grouping and group, the distinct scores of distributed entries with
    their counts and label sums, merged exactly; and the entries per tag.

    Parameters
    ----------
    entries : DaskEntries
    groupings : list of TagGroups

    Returns
    -------
    tables : list of list of (ndarray, ndarray, ndarray)
        ``tables[i][g]``: sorted distinct scores (float64) of group ``g`` of
        grouping ``i``, their counts and label sums (int64).
    tag_counts : ndarray of int64, shape (n_tags,)

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 2.2 (isotonic regression per
    group, Section 3.3).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> x = np.array([[0.5, 0.5], [0.25, 0.75], [0.5, 0.5]])
    >>> entries = threshold(da.from_array(x, chunks=(2, 2)), [0, 1, 1])
    >>> (((scores, counts, positives),),), per_tag = score_tables(
    ...     entries, [sc.TagGroups.scw(2)])
    >>> scores.tolist(), counts.tolist(), positives.tolist(), per_tag.tolist()
    ([0.25, 0.5, 0.75], [1, 4, 1], [0, 2, 1], [3, 3])
    """
    spec = [(np.asarray(g.tag_to_group, dtype=np.int64), g.n_groups) for g in groupings]
    tables, tag_counts = tree_merge(_tables, _merge_tables, entries.blocks, spec,
                                    entries.n_tags)
    return ([[(key_scores(k.astype(np.uint64), entries.dtype), c, y) for k, c, y in t]
             for t in tables], tag_counts)


def fit_grouped(model, entries, sample_weight=None, *, progress=None):
    """Fit a :class:`~sparsecal.GroupedCalibrator` of isotonic calibrators on
    distributed dev entries (``model.fit(entries)`` calls this).

    The same rule as the single-machine fit (``min_entries``, ``fallback``,
    warnings), and the same knots bit for bit: each group's isotonic fit from
    its merged per-distinct-score table.

    Parameters
    ----------
    model : GroupedCalibrator
        With an :class:`~sparsecal.IsotonicCalibrator` base.
    entries : DaskEntries
    sample_weight : None
        Unweighted here; weighted fits: ``GroupedCalibrator.fit(entries,
        sample_weight=w)`` (:func:`sparsecal.distributed.weights.fit_weighted`).
    progress : callable, optional
        As in :meth:`sparsecal.GroupedCalibrator.fit`.

    Returns
    -------
    GroupedCalibrator
        ``model``, fitted.

    Raises
    ------
    TypeError
        If ``entries`` is not ``DaskEntries`` or the base is not an
        ``IsotonicCalibrator``.
    ValueError
        For ``sample_weight``, groups of another tagset, or no entries.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Sections 2.2 and 3.3; Zadrozny & Elkan 2002.

    Examples
    --------
    >>> import dask.array as da
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> dev = make_tagger_outputs(1000, split_seed=1)
    >>> groups = sc.TagGroups.from_counts(dev.train_counts, 3)
    >>> entries = threshold(da.from_array(dev.scores, chunks=(256, -1)), dev.gold)
    >>> model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups).fit(entries)
    >>> one = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups).fit(
    ...     sc.threshold(dev.scores, dev.gold))
    >>> all((a.x_knots_ == b.x_knots_).all() and (a.y_knots_ == b.y_knots_).all()
    ...     for a, b in zip(model.calibrators_, one.calibrators_))
    True
    """
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
    """Fit a :class:`~sparsecal.GroupedCalibrator` on distributed dev entries
    from their merged per-group distinct-score tables (:func:`score_tables`),
    by the rule of the single-machine fit (``GroupedCalibrator.fit_groups``).

    Parameters
    ----------
    model : GroupedCalibrator
    entries : DaskEntries
    sample_weight : None
        Unweighted here; weighted fits: ``GroupedCalibrator.fit(entries,
        sample_weight=w)`` (:func:`sparsecal.distributed.weights.fit_weighted`).
    fitter : callable
        ``fitter(groups, tables)`` for ``groups`` (then ``model.fallback``) and
        their tables returns ``fit_group(g)``, the fitted calibrator of group
        ``g``.
    progress : callable, optional

    Returns
    -------
    GroupedCalibrator
        ``model``, fitted.

    Raises
    ------
    TypeError
        If ``entries`` is not ``DaskEntries``.
    ValueError
        For ``sample_weight``, groups of another tagset, or no entries.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> x = np.array([[0.5, 0.5], [0.25, 0.75], [0.5, 0.5]])
    >>> entries = threshold(da.from_array(x, chunks=(2, 2)), [0, 1, 1])
    >>> def fitter(groups, tables):   # the positive rate of each group
    ...     return lambda g: sc.HistogramBinning(n_bins=1).fit([0.5, 0.5], [1, 0])
    >>> model = sc.GroupedCalibrator(sc.HistogramBinning(), sc.TagGroups.scw(2),
    ...                              min_entries=1)
    >>> fit_from_tables(model, entries, None, fitter).calibrators_[0].bin_rates_
    array([0.5])
    """
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
    """The arguments of a grouped fit on distributed entries (model
    parameters, entries, groups over their tagset, no weights)."""
    model._check_params()
    check_dask_entries(entries, model.groups)
    if sample_weight is not None:
        raise ValueError("sample_weight is not taken by this unweighted fit: pass it to "
                         "GroupedCalibrator.fit (sparsecal.distributed.weights.fit_weighted)")
