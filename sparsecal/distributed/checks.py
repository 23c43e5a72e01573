"""The one check of a distributed ``entries`` argument, by its attributes."""
from ..core.groups import check_groups

__all__ = ["check_dask_entries"]


def check_dask_entries(entries, groups=None):
    """``entries`` if it is ``DaskEntries`` and ``groups`` (if given) covers its tagset."""
    if getattr(entries, "blocks", None) is None or not hasattr(entries, "n_tags"):
        raise TypeError(f"entries must be DaskEntries (see sparsecal.distributed.threshold), "
                        f"got {type(entries).__name__}")
    if groups is not None:
        check_groups(groups, entries.n_tags)
    return entries
