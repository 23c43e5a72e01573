"""SMCE and every GMCE of distributed entries from one selection of their
equal-mass bins (:mod:`~sparsecal.distributed.equal_mass`), and the
calibration error of merged bins: shared by
:mod:`~sparsecal.distributed.metrics` and the cross-fitted scores of
:mod:`~sparsecal.distributed.folds` (which the entries' own methods call, so
this module does not import :mod:`~sparsecal.distributed.entries`).
"""
import numpy as np

from ..metrics.binary import CalibrationError
from ..metrics.ce import ce_from_bins
from .checks import check_dask_entries
from .equal_mass import equal_mass_bin_stats

__all__ = ["error_of_bins", "smce_and_gmce"]


def error_of_bins(bins, norm):
    """:class:`~sparsecal.metrics.CalibrationError` CE_p of merged bins (None
    for None: a set without entries).

    Parameters
    ----------
    bins : BinStats or None
    norm : float
        From :func:`~sparsecal.metrics.ce.check_norm`.

    Returns
    -------
    CalibrationError or None

    Examples
    --------
    >>> from sparsecal.core.binning import fixed_width_bins
    >>> round(error_of_bins(fixed_width_bins([0.2, 0.8], [0, 1], n_bins=2), 2.0).value, 12)
    0.2
    """
    return None if bins is None else CalibrationError(ce_from_bins(bins, norm), norm,
                                                      int(bins.count.sum()), bins)


def smce_and_gmce(entries, groups, *, n_bins=None, bin_size=None):
    """SMCE and every GMCE of distributed entries (as
    :func:`sparsecal.smce_and_gmce`).

    Parameters
    ----------
    entries : DaskEntries
    groups : TagGroups
    n_bins, bin_size : int, optional

    Returns
    -------
    smce : CalibrationError
    gmce : list of CalibrationError or None

    Raises
    ------
    TypeError, ValueError
        As :func:`smce` and :func:`gmce`.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Sections 3.2-3.3, eqs. 2-3.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> x = np.random.default_rng(0).dirichlet(np.ones(6), size=300)
    >>> entries = threshold(da.from_array(x, chunks=(70, 6)), np.arange(300) % 6)
    >>> pooled, per_group = smce_and_gmce(entries, sc.TagGroups.scw(6))
    >>> pooled.value == per_group[0].value
    True
    """
    check_dask_entries(entries, groups)
    pooled, *per_group = equal_mass_bin_stats(
        entries, np.asarray(groups.tag_to_group, dtype=np.int64), groups.n_groups,
        n_bins=n_bins, bin_size=bin_size, pooled=True)   # all cuts in the same rounds
    if pooled is None:
        raise ValueError("cannot compute a calibration error of no points")
    return error_of_bins(pooled, 2.0), [error_of_bins(b, 2.0) for b in per_group]
