"""Per-chunk work on the workers and exact tree merges of its results: neither
the tree's shape nor the arrival order changes a bit."""
from ._dask import require_dask

__all__ = ["per_block", "persist_with", "tree", "tree_merge"]

#: partial results merged by one task
SPLIT_EVERY = 8


def per_block(func, blocks, *args):
    """``func(block, i, *args)`` of every block, as lazy tasks."""
    dask = require_dask()
    task = dask.delayed(func, pure=True)
    return [task(b, i, *args) for i, b in enumerate(blocks)]


def tree(parts, merge, split_every=SPLIT_EVERY):
    """``merge`` of lazy partial results in a tree, ``split_every`` per task; lazy."""
    step = require_dask().delayed(merge, pure=True)
    while True:   # every part merged at least once (none: merge([])), the root once
        parts = [step(parts[i:i + split_every])
                 for i in range(0, max(len(parts), 1), split_every)]
        if len(parts) == 1:
            return parts[0]


def tree_merge(func, merge, blocks, *args, split_every=SPLIT_EVERY):
    """``merge`` of ``func(block, i, *args)`` over all blocks, reduced in a tree on
    the workers."""
    return require_dask().compute(tree(per_block(func, blocks, *args), merge,
                                       split_every))[0]


def _persisted(blocks):
    try:
        from distributed import futures_of
    except ImportError:
        return False
    return any(futures_of(b) for b in blocks)


def persist_with(blocks, derived, result):
    """Compute ``result``; keep the lazy ``derived`` blocks in the workers' memory if
    ``blocks`` are kept there, else leave them lazy."""
    dask = require_dask()
    if _persisted(blocks):
        *derived, result = dask.persist(*derived, result)
    return list(derived), dask.compute(result)[0]
