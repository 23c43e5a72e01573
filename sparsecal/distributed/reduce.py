"""Running per-chunk work on the workers and merging its results, in a tree.

Every merge in :mod:`sparsecal.distributed` is exact (integer sums, minima,
maxima, unions of tables), so the tree's shape and the order in which partial
results arrive cannot change a result: repeated runs, and runs over other
chunkings, give the same bits.
"""
from ._dask import require_dask

__all__ = ["compute_per_block", "tree_merge"]

#: partial results merged by one task
SPLIT_EVERY = 8


def compute_per_block(func, blocks, *args):
    """``[func(block, i, *args) for i, block in enumerate(blocks)]``, run on
    the workers.

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
    list
        The results, in block order.

    Examples
    --------
    >>> import dask
    >>> def size(block, i):
    ...     return i, len(block)
    >>> compute_per_block(size, [dask.delayed([1, 2]), dask.delayed([3])])
    [(0, 2), (1, 1)]
    """
    dask = require_dask()
    task = dask.delayed(func, pure=True)
    return list(dask.compute(*[task(b, i, *args) for i, b in enumerate(blocks)]))


def tree_merge(func, merge, blocks, *args):
    """``merge`` of ``func(block, i, *args)`` over all blocks, reduced in a tree on
    the workers (``SPLIT_EVERY`` partial results per task); only the final
    result comes back.

    Parameters
    ----------
    func : callable
        Per-block statistic (module-level), called with a block, its index and
        ``args``.
    merge : callable
        ``merge(list_of_partials)``; exact and order-free.
    blocks : list of dask.delayed.Delayed
    *args
        Small arguments sent with every task.

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
    dask = require_dask()
    task = dask.delayed(func, pure=True)
    step = dask.delayed(merge, pure=True)
    parts = [task(b, i, *args) for i, b in enumerate(blocks)]
    while len(parts) > 1:
        parts = [step(parts[i:i + SPLIT_EVERY]) for i in range(0, len(parts), SPLIT_EVERY)]
    return dask.compute(step(parts))[0]
