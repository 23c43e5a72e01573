"""The one check of distributed entries' arguments.

By their attributes, not their class: the modules that :class:`DaskEntries`'
methods call for the estimators (``fit_grouped``, ``cross_fit_members``,
``cross_fit_scores``) check their ``entries`` without importing
:mod:`~sparsecal.distributed.entries`, so the import graph has no cycle
(tests/test_architecture.py).
"""
from ..core.groups import check_groups

__all__ = ["check_dask_entries"]


def check_dask_entries(entries, groups=None):
    """``entries`` as :class:`~sparsecal.distributed.DaskEntries` (and
    ``groups`` over its tagset).

    Parameters
    ----------
    entries : DaskEntries
    groups : TagGroups, optional

    Returns
    -------
    DaskEntries
        ``entries``, unchanged.

    Raises
    ------
    TypeError
        If ``entries`` has no row-chunk blocks (not ``DaskEntries``) or
        ``groups`` is not ``TagGroups``.
    ValueError
        If ``groups`` covers another number of tags.

    Examples
    --------
    >>> check_dask_entries([0.5])
    Traceback (most recent call last):
    ...
    TypeError: entries must be DaskEntries (see sparsecal.distributed.threshold), got list
    """
    if getattr(entries, "blocks", None) is None or not hasattr(entries, "n_tags"):
        raise TypeError(f"entries must be DaskEntries (see sparsecal.distributed.threshold), "
                        f"got {type(entries).__name__}")
    if groups is not None:
        check_groups(groups, entries.n_tags)
    return entries
