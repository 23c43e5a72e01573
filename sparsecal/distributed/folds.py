"""Stratified token folds of distributed entries, the single machine's entry by
entry, and the cross-fitted members and ``select`` scores on them."""
import numpy as np

from .._docs import fill_doc
from ..core.dispatch import implements
from ..calibration import (ensemble as single_ensemble, folds as single_folds,
                           grouped as single_grouped, selection as single_selection)
from ..calibration.base import clone
from ..calibration.grouped import check_grouped
from ..calibration.folds import check_n_folds, positional_folds, token_strata
from ..calibration.selection import metric_value
from ..core.validation import check_positive_int
from ._dask import require_dask
from .checks import check_dask_entries
from .marginal import smce_and_gmce
from .reduce import persist_with, tree

__all__ = ["cross_fit_members", "cross_fit_predict", "cross_fit_scores",
           "stratified_token_folds", "token_folds"]


def _chunk_strata(block, rows, groups):
    return token_strata(block, groups, rows[0], rows[1] - rows[0])


def _stratum_counts(block, rows, groups):
    """Tokens per stratum in the chunk's rows, then its entries (on a worker)."""
    return np.append(np.bincount(_chunk_strata(block, rows, groups),
                                 minlength=groups.n_groups + 1), len(block))


def _chunk_folds(block, rows, groups, offsets, n_folds, seed):
    stratum = _chunk_strata(block, rows, groups)
    return positional_folds(stratum, offsets, n_folds, seed)[block.token - rows[0]]


def _fold_counts(fold, n_folds):
    return np.bincount(fold, minlength=n_folds)


def _add(parts):
    return np.sum(parts, axis=0)


@fill_doc
def token_folds(entries, groups, n_folds=5, seed=0):
    """The stratified token folds of distributed entries, chunk by chunk.

    Parameters
    ----------
    {dask_entries}
    {groups}
    n_folds, seed : int, default 5 and 0

    Returns
    -------
    folds : list of dask.delayed.Delayed
        Per chunk, the fold of each entry.
    per_fold : ndarray of int64, shape (n_folds,)

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x = da.from_array(np.random.default_rng(0).dirichlet(np.ones(4), size=40), chunks=9)
    >>> entries = sc.threshold(x, np.arange(40) % 4)
    >>> folds, per_fold = token_folds(entries, sc.TagGroups.scw(4), n_folds=4)
    >>> len(folds), int(per_fold.sum()) == len(entries.compute())
    (5, True)
    """
    return _folds(entries, groups, n_folds, seed)[:2]


def _folds(entries, groups, n_folds, seed):
    dask = require_dask()
    check_dask_entries(entries, groups)
    n_folds = check_n_folds(n_folds)
    seed = check_positive_int(seed, "seed", allow_zero=True)
    if entries.row_starts is None:
        raise ValueError("folds split by token: entries need their rows "
                         "(sparsecal.distributed.threshold or entry shards)")
    rows = list(zip(entries.row_starts[:-1], entries.row_starts[1:]))
    count = dask.delayed(_stratum_counts, pure=True)
    per_chunk = np.array(dask.compute(*[count(b, r, groups)
                                        for b, r in zip(entries.blocks, rows)]),
                         dtype=np.int64).reshape(len(rows), groups.n_groups + 2)
    per_chunk, sizes = per_chunk[:, :-1], per_chunk[:, -1]
    offsets = np.cumsum(per_chunk, axis=0) - per_chunk
    task = dask.delayed(_chunk_folds, pure=True)
    folds = [task(b, r, groups, o, n_folds, seed)
             for b, r, o in zip(entries.blocks, rows, offsets)]
    counts = dask.delayed(_fold_counts, pure=True)
    return (*persist_with(entries.blocks, folds, tree([counts(f, n_folds) for f in folds],
                                                      _add)), sizes)


@implements(single_folds.stratified_token_folds)
@fill_doc
def stratified_token_folds(entries, groups, n_folds=5, seed=0):
    """:func:`sparsecal.calibration.stratified_token_folds` of distributed entries.

    Parameters
    ----------
    {dask_entries}
    groups, n_folds, seed
        As :func:`token_folds`.

    Returns
    -------
    dask.array.Array of int64, shape (n_entries,)

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x, gold = np.random.default_rng(0).dirichlet(np.ones(4), size=40), np.arange(40) % 4
    >>> scw = sc.TagGroups.scw(4)
    >>> got = stratified_token_folds(sc.threshold(da.from_array(x, chunks=9), gold), scw)
    >>> one = sc.calibration.stratified_token_folds(sc.threshold(x, gold), scw)
    >>> bool((got.compute() == one).all())
    True
    """
    dask = require_dask()
    folds, _, sizes = _folds(entries, groups, n_folds, seed)
    return dask.array.concatenate(
        [dask.array.from_delayed(f, shape=(int(n),), dtype=np.int64)
         for f, n in zip(folds, sizes)])


def _take(block, fold, k, held):
    return block.take(fold == k if held else fold != k)


def _fold_members(calibrator, entries, folds, per_fold):
    """``(k, member)`` for each fold with entries, fitted outside fold ``k``."""
    dask = require_dask()
    task = dask.delayed(_take, pure=True)
    return [(k, clone(calibrator).fit(entries._with_blocks(
                [task(b, f, k, False) for b, f in zip(entries.blocks, folds)])))
            for k in np.flatnonzero(per_fold).tolist()]


@implements(single_ensemble.cross_fit_members)
@fill_doc
def cross_fit_members(calibrator, entries, n_folds=5, seed=0):
    """A :class:`~sparsecal.CrossFittedCalibrator`'s members fitted on distributed entries.

    Parameters
    ----------
    calibrator : GroupedCalibrator
    {dask_entries}
    n_folds, seed
        As :func:`token_folds`.

    Returns
    -------
    list of GroupedCalibrator

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x = da.from_array(np.random.default_rng(2).dirichlet(np.ones(4), size=200), chunks=64)
    >>> setup = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(4))
    >>> len(cross_fit_members(setup, sc.threshold(x, np.arange(200) % 4), n_folds=3))
    3
    """
    folds, per_fold = token_folds(entries, calibrator.groups, n_folds, seed)
    return [m for _, m in _fold_members(calibrator, entries, folds, per_fold)]


def _out_of_fold(block, fold, members):
    score = block.score.copy()
    for k, member in members:
        held = fold == k
        score[held] = member.transform(block.take(held)).score
    return block.with_scores(score)


def _out_of_fold_entries(setup, entries, folds, per_fold):
    """The entries with each fold's scores from the member fitted outside it."""
    dask = require_dask()
    members = dask.delayed(_fold_members(setup, entries, folds, per_fold), pure=True)
    task = dask.delayed(_out_of_fold, pure=True)
    return entries._with_blocks([task(b, f, members) for b, f in zip(entries.blocks, folds)])


@implements(single_grouped.cross_fit_predict)
@fill_doc
def cross_fit_predict(calibrator, entries, *, n_folds=5, seed=0):
    """:func:`sparsecal.calibration.cross_fit_predict` of distributed dev entries.

    Parameters
    ----------
    calibrator : GroupedCalibrator
    {dask_entries}
    n_folds, seed
        As :func:`token_folds`.

    Returns
    -------
    DaskEntries

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x, tags = np.random.default_rng(3).dirichlet(np.ones(3), size=150), np.arange(150) % 3
    >>> model = sc.GroupedCalibrator(sc.HistogramBinning(), sc.TagGroups.per_tag(3))
    >>> got = cross_fit_predict(model, sc.threshold(da.from_array(x, chunks=(50, 3)), tags))
    >>> one = sc.calibration.cross_fit_predict(model, sc.threshold(x, tags))
    >>> bool((got.compute().score == one.score).all())
    True
    """
    check_grouped(calibrator, "calibrator")
    folds, per_fold = token_folds(entries, calibrator.groups, n_folds, seed)
    return _out_of_fold_entries(calibrator, entries, folds, per_fold)


@implements(single_selection.cross_fit_scores)
@fill_doc
def cross_fit_scores(setups, entries, groups, n_folds=5, seed=0, metric="smce"):
    """:func:`sparsecal.select`'s cross-fitted scores of ``setups`` on distributed entries.

    Parameters
    ----------
    setups : list of GroupedCalibrator
    {dask_entries}
    {groups}
    n_folds, seed
        As :func:`token_folds`.
    metric : {"smce", "gmce"}, default="smce"

    Returns
    -------
    list of float

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x, gold = np.random.default_rng(1).dirichlet(np.ones(5), size=300), np.arange(300) % 5
    >>> scw = sc.TagGroups.scw(5)
    >>> setup = sc.GroupedCalibrator(sc.IsotonicCalibrator(), scw)
    >>> got = cross_fit_scores([setup], sc.threshold(da.from_array(x, chunks=80), gold), scw)
    >>> one = sc.select(sc.threshold(x, gold), methods=["isotonic"], n_groups=[1])
    >>> abs(got[0] - one.best_score) < 1e-12
    True
    """
    folds, per_fold = token_folds(entries, groups, n_folds, seed)
    return [metric_value(metric, *smce_and_gmce(
                _out_of_fold_entries(setup, entries, folds, per_fold), groups, n_bins=10))
            for setup in setups]
