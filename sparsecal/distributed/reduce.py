"""Running per-chunk work on the workers and merging its results, in a tree.

Every merge in :mod:`sparsecal.distributed` is exact (integer sums, minima,
maxima, unions of tables, lists in chunk order), so the tree's shape and the
order in which partial results arrive cannot change a result: repeated runs,
and runs over other chunkings, give the same bits.
"""
from ._dask import require_dask

__all__ = ["per_block", "persist_with", "tree", "tree_merge"]

#: partial results merged by one task
SPLIT_EVERY = 8


def per_block(func, blocks, *args):
    """``[func(block, i, *args) for i, block in enumerate(blocks)]`` as lazy
    tasks (one per chunk, run on the workers).

    Parameters
    ----------
    func : callable
        A module-level function (it is sent to the workers), called with a
        block, its index and ``args``.
    blocks : list of dask.delayed.Delayed
        One per chunk (``DaskEntries.blocks``).
    *args
        Small arguments sent with every task.

    Returns
    -------
    list of dask.delayed.Delayed

    Examples
    --------
    >>> import dask
    >>> def size(block, i):
    ...     return i, len(block)
    >>> dask.compute(*per_block(size, [dask.delayed([1, 2]), dask.delayed([3])]))
    ((0, 2), (1, 1))
    """
    dask = require_dask()
    task = dask.delayed(func, pure=True)
    return [task(b, i, *args) for i, b in enumerate(blocks)]


def tree(parts, merge, split_every=SPLIT_EVERY):
    """``merge`` of lazy partial results, reduced in a tree (``split_every``
    partials per task, in order); lazy.

    Parameters
    ----------
    parts : list of dask.delayed.Delayed
    merge : callable
        ``merge(list_of_partials)``; exact and order-free.
    split_every : int, default=SPLIT_EVERY
        Partials merged by one task (at least 2): fewer for wide partials
        bound a merge task's memory.

    Returns
    -------
    dask.delayed.Delayed

    Examples
    --------
    >>> import dask
    >>> tree([dask.delayed(1), dask.delayed(2)], sum).compute()
    3
    """
    step = require_dask().delayed(merge, pure=True)
    while len(parts) > 1:
        parts = [step(parts[i:i + split_every]) for i in range(0, len(parts), split_every)]
    return step(parts)


def tree_merge(func, merge, blocks, *args, split_every=SPLIT_EVERY):
    """``merge`` of ``func(block, i, *args)`` over all blocks, reduced in a
    tree on the workers; only the final result comes back.

    Parameters
    ----------
    func, blocks, *args
        As :func:`per_block`.
    merge, split_every
        As :func:`tree`.

    Returns
    -------
    The merged statistic.

    Examples
    --------
    >>> import dask
    >>> def size(block, i):
    ...     return len(block)
    >>> tree_merge(size, sum, [dask.delayed([1, 2]), dask.delayed([3])])
    3
    """
    return require_dask().compute(tree(per_block(func, blocks, *args), merge,
                                       split_every))[0]


def _persisted(blocks):
    """Whether the blocks are held by a cluster's workers (``persist()``)."""
    try:
        from distributed import futures_of
    except ImportError:
        return False
    return any(futures_of(b) for b in blocks)


def persist_with(blocks, derived, result):
    """Compute ``result`` (lazy, depending on the lazy ``derived`` blocks);
    keep ``derived`` in the workers' memory if ``blocks`` are kept there,
    computed once with ``result``; otherwise leave them lazy (recomputed by
    each later pass, so memory stays bounded by the chunks of one pass).

    Parameters
    ----------
    blocks : list of dask.delayed.Delayed
        The blocks ``derived`` come from (``DaskEntries.blocks``).
    derived : list of dask.delayed.Delayed
    result : dask.delayed.Delayed

    Returns
    -------
    derived : list of dask.delayed.Delayed
    result : object
        Computed.

    Examples
    --------
    >>> import dask
    >>> blocks = [dask.delayed([1, 2])]
    >>> derived = [dask.delayed(len)(b) for b in blocks]
    >>> persist_with(blocks, derived, dask.delayed(sum)(derived))[1]
    2
    """
    dask = require_dask()
    if _persisted(blocks):
        *derived, result = dask.persist(*derived, result)
    return list(derived), dask.compute(result)[0]
