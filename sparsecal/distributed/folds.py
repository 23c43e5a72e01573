"""Stratified token folds of distributed entries, and what is cross-fitted on
them: the members of :class:`~sparsecal.CrossFittedCalibrator` and the scores
of :func:`sparsecal.select`.

The folds are those of :func:`~sparsecal.calibration.folds.stratified_token_folds`,
entry by entry: a token's fold depends only on the seed, its stratum and its
rank among its stratum's tokens (:func:`~sparsecal.calibration.folds.positional_folds`).
A token's entries all lie in its row's chunk, so one pass of per-chunk stratum
counts (``n_groups + 1`` integers per chunk) gives each chunk its ranks'
offsets, and each worker then computes its entries' folds. Every member is
fitted by :func:`~sparsecal.distributed.calibrators.fit_grouped` on the
entries outside its fold, filtered chunk by chunk on the workers; the
out-of-fold scores are each fold's member applied to the fold's entries of each
chunk, in entry order, and scored by the distributed SMCE/GMCE (docs/scale.md).
"""
import numpy as np

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
    """The stratum of each token (row) of the chunk (on a worker)."""
    return token_strata(block, groups, rows[0], rows[1] - rows[0])


def _stratum_counts(block, rows, groups):
    """Tokens per stratum in the chunk's rows, then its entries (on a worker)."""
    return np.append(np.bincount(_chunk_strata(block, rows, groups),
                                 minlength=groups.n_groups + 1), len(block))


def _chunk_folds(block, rows, groups, offsets, n_folds, seed):
    """The fold of each entry of the chunk (on a worker)."""
    stratum = _chunk_strata(block, rows, groups)
    return positional_folds(stratum, offsets, n_folds, seed)[block.token - rows[0]]


def _fold_counts(fold, n_folds):
    """Entries per fold of a chunk."""
    return np.bincount(fold, minlength=n_folds)


def _add(parts):
    """Sum of integer count vectors (exact)."""
    return np.sum(parts, axis=0)


def token_folds(entries, groups, n_folds=5, seed=0):
    """The stratified token folds of distributed entries, chunk by chunk.

    Parameters
    ----------
    entries : DaskEntries
        With their rows (from :func:`~sparsecal.distributed.threshold` or
        entry shards).
    groups : TagGroups
        The strata's groups, over the tagset of ``entries``.
    n_folds : int, default=5
        K, at least 2.
    seed : int, default=0

    Returns
    -------
    folds : list of dask.delayed.Delayed
        Per chunk, the fold (int64) of each of its entries: equal, chunk after
        chunk, to :func:`~sparsecal.calibration.folds.stratified_token_folds`
        of the whole entries. Kept in the workers' memory if the entries are
        (``persist()``), else lazy.
    per_fold : ndarray of int64, shape (n_folds,)
        Entries per fold.

    Raises
    ------
    TypeError
        If ``entries`` is not DaskEntries or ``groups`` not TagGroups.
    ValueError
        For ``n_folds`` below 2, a negative ``seed``, ``groups`` of another
        tagset, or entries without rows (:func:`~sparsecal.distributed.from_arrays`).

    References
    ----------
    Score-calibration lecture notes (``004``), "K-fold"; docs/scale.md.

    Examples
    --------
    >>> import dask, dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> from sparsecal.calibration.folds import stratified_token_folds
    >>> x = np.random.default_rng(0).dirichlet(np.ones(4), size=40)
    >>> gold = np.arange(40) % 4
    >>> folds, per_fold = token_folds(threshold(da.from_array(x, chunks=(9, 4)), gold),
    ...                               sc.TagGroups.scw(4), 3)
    >>> one = stratified_token_folds(sc.threshold(x, gold), sc.TagGroups.scw(4), 3)
    >>> bool((np.concatenate(dask.compute(*folds)) == one).all())
    True
    >>> per_fold.tolist() == np.bincount(one, minlength=3).tolist()
    True
    """
    return _folds(entries, groups, n_folds, seed)[:2]


def _folds(entries, groups, n_folds, seed):
    """:func:`token_folds`, and the entries of each chunk (from the same pass)."""
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
def stratified_token_folds(entries, groups, n_folds=5, seed=0):
    """:func:`sparsecal.calibration.stratified_token_folds` of distributed entries: the
    fold of every entry as one dask array.

    The per-chunk folds of :func:`token_folds` concatenated; their chunk sizes
    are known (the entries per chunk come from the same pass as the stratum
    counts).

    Parameters
    ----------
    entries : DaskEntries
        With their rows (:func:`~sparsecal.distributed.threshold` or entry
        shards).
    groups : TagGroups
    n_folds : int, default=5
    seed : int, default=0

    Returns
    -------
    dask.array.Array of int64, shape (n_entries,)
        One chunk per non-empty chunk of ``entries`` (dask's ``concatenate``
        drops empty ones), of known sizes; computed, equal entry by entry to
        :func:`sparsecal.calibration.stratified_token_folds` of the whole entries.

    Raises
    ------
    TypeError, ValueError
        As :func:`token_folds`.

    References
    ----------
    Score-calibration lecture notes (``004``), "K-fold"; docs/scale.md.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> x = np.random.default_rng(0).dirichlet(np.ones(4), size=40)
    >>> gold = np.arange(40) % 4
    >>> fold = stratified_token_folds(threshold(da.from_array(x, chunks=(9, 4)), gold),
    ...                               sc.TagGroups.scw(4), 3)
    >>> one = sc.calibration.stratified_token_folds(sc.threshold(x, gold), sc.TagGroups.scw(4), 3)
    >>> fold.shape == one.shape, bool((fold.compute() == one).all())
    (True, True)
    """
    dask = require_dask()
    folds, _, sizes = _folds(entries, groups, n_folds, seed)
    return dask.array.concatenate(
        [dask.array.from_delayed(f, shape=(int(n),), dtype=np.int64)
         for f, n in zip(folds, sizes)])


def _take(block, fold, k, held):
    """The chunk's entries of fold ``k`` (``held``) or outside it."""
    return block.take(fold == k if held else fold != k)


def _fold_members(calibrator, entries, folds, per_fold):
    """``(k, member)`` for every fold holding entries: a clone of
    ``calibrator`` fitted on the entries outside fold ``k``."""
    dask = require_dask()
    task = dask.delayed(_take, pure=True)
    return [(k, clone(calibrator).fit(entries._with_blocks(
                [task(b, f, k, False) for b, f in zip(entries.blocks, folds)])))
            for k in np.flatnonzero(per_fold).tolist()]


@implements(single_ensemble.cross_fit_members)
def cross_fit_members(calibrator, entries, n_folds=5, seed=0):
    """The members of a :class:`~sparsecal.CrossFittedCalibrator` fitted on
    distributed dev entries (what its ``fit`` calls for DaskEntries).

    Parameters
    ----------
    calibrator : GroupedCalibrator
        The set-up; folds stratified by its groups.
    entries : DaskEntries
    n_folds : int, default=5
    seed : int, default=0

    Returns
    -------
    list of GroupedCalibrator
        One per fold holding entries, in fold order, each fitted by
        :func:`~sparsecal.distributed.calibrators.fit_grouped` on the entries of
        the other folds: the single-machine members (bit for bit for isotonic
        and histogram; docs/scale.md for the others).

    Raises
    ------
    TypeError, ValueError
        As :func:`token_folds` and the members' ``fit``.

    References
    ----------
    scikit-learn's ``CalibratedClassifierCV(ensemble=True)``; score-calibration
    lecture notes (``004``), "K-fold".

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> x = np.random.default_rng(2).dirichlet(np.ones(4), size=200).round(2)
    >>> gold = np.arange(200) % 4
    >>> setup = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(4))
    >>> members = cross_fit_members(setup, threshold(da.from_array(x, chunks=(64, 4)), gold), 3)
    >>> one = sc.CrossFittedCalibrator(setup, n_folds=3).fit(sc.threshold(x, gold))
    >>> [m.get_state()[0] for m in members] == [m.get_state()[0] for m in one.calibrators_]
    True
    """
    folds, per_fold = token_folds(entries, calibrator.groups, n_folds, seed)
    return [m for _, m in _fold_members(calibrator, entries, folds, per_fold)]


def _out_of_fold(block, fold, members):
    """The chunk's entries with each fold's scores from its member (on a worker)."""
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
def cross_fit_predict(calibrator, entries, *, n_folds=5, seed=0):
    """:func:`sparsecal.calibration.cross_fit_predict` of distributed dev entries: the
    pooled out-of-fold calibrated entries.

    The folds are :func:`token_folds` stratified by ``calibrator.groups``;
    each fold's member is fitted on the cluster
    (:func:`~sparsecal.distributed.calibrators.fit_grouped`, on the entries
    outside the fold) when this is called, and applied lazily to each chunk's
    entries of its fold.

    Parameters
    ----------
    calibrator : GroupedCalibrator
        The set-up (it need not be fitted).
    entries : DaskEntries
        Dev entries, with their rows.
    n_folds : int, default=5
    seed : int, default=0

    Returns
    -------
    DaskEntries
        Same chunks, tags, labels and tokens; computed, equal to the single
        machine's result entry by entry (bit for bit for isotonic and
        histogram members; the others as their fit, docs/scale.md).

    Raises
    ------
    TypeError
        If ``calibrator`` is not a GroupedCalibrator, or as :func:`token_folds`.
    ValueError
        As :func:`token_folds` and the members' ``fit``.

    References
    ----------
    Score-calibration lecture notes (``004``), "K-fold".

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> scores = np.random.default_rng(3).dirichlet(np.ones(3), size=150).round(2)
    >>> tags = np.arange(150) % 3
    >>> model = sc.GroupedCalibrator(sc.HistogramBinning(), sc.TagGroups.per_tag(3))
    >>> dev = threshold(da.from_array(scores, chunks=(50, 3)), tags)
    >>> got = cross_fit_predict(model, dev, n_folds=3)
    >>> one = sc.calibration.cross_fit_predict(model, sc.threshold(scores, tags), n_folds=3)
    >>> bool((got.compute().score == one.score).all())
    True
    """
    check_grouped(calibrator, "calibrator")
    folds, per_fold = token_folds(entries, calibrator.groups, n_folds, seed)
    return _out_of_fold_entries(calibrator, entries, folds, per_fold)


@implements(single_selection.cross_fit_scores)
def cross_fit_scores(setups, entries, groups, n_folds=5, seed=0, metric="smce"):
    """The scores of :func:`sparsecal.select`'s candidates on distributed dev
    entries (what it computes for DaskEntries): each set-up cross-fitted on
    the folds stratified by ``groups``, its pooled out-of-fold scores measured
    by ``metric`` (10 equal-mass bins).

    Parameters
    ----------
    setups : list of GroupedCalibrator
        Unfitted candidates.
    entries : DaskEntries
    groups : TagGroups
        Strata of the folds and the groups of GMCE.
    n_folds : int, default=5
    seed : int, default=0
    metric : {"smce", "gmce"}, default="smce"

    Returns
    -------
    list of float
        One per set-up: the single-machine scores within 1e-12 relative
        (docs/scale.md).

    Raises
    ------
    TypeError, ValueError
        As :func:`token_folds` and the set-ups' ``fit``.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, eqs. 2-3 (SMCE, GMCE); score-calibration
    lecture notes (``004``), "K-fold".

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> x = np.random.default_rng(1).dirichlet(np.ones(5), size=300).round(2)
    >>> gold = np.arange(300) % 5
    >>> setup = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(5))
    >>> from sparsecal.distributed import threshold
    >>> entries = threshold(da.from_array(x, chunks=(80, 5)), gold)
    >>> [score] = cross_fit_scores([setup], entries, sc.TagGroups.scw(5), 3)
    >>> one = sc.select(sc.threshold(x, gold), methods=["isotonic"], n_groups=[1],
    ...                 n_folds=3)
    >>> abs(score - one.best_score) <= 1e-12 * one.best_score
    True
    """
    folds, per_fold = token_folds(entries, groups, n_folds, seed)
    return [metric_value(metric, *smce_and_gmce(
                _out_of_fold_entries(setup, entries, folds, per_fold), groups, n_bins=10))
            for setup in setups]
