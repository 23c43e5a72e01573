"""SMCE and every GMCE of distributed entries from one selection of their
bins, with every option of :func:`sparsecal.smce_and_gmce` (binning, norm,
debias, interval): :func:`~sparsecal.distributed.measures.binned_errors`, the
one home of the distributed binned errors. Shared by
:mod:`~sparsecal.distributed.metrics` and the cross-fitted scores of
:mod:`~sparsecal.distributed.folds` (which the entries' own methods call, so
this module does not import :mod:`~sparsecal.distributed.entries`).
"""
from ..core.dispatch import implements
from ..metrics import marginal as single
from .measures import binned_errors

__all__ = ["smce_and_gmce"]


@implements(single.smce_and_gmce)
def smce_and_gmce(entries, groups, *, n_bins=None, bin_size=None, ci=None, pooled=True,
                  binning="equal-mass", norm=2, debias=False):
    """SMCE and every GMCE of distributed entries (as
    :func:`sparsecal.smce_and_gmce`, every option but ``progress``).

    Parameters
    ----------
    entries : DaskEntries
    groups : TagGroups
    n_bins, bin_size : int, optional
        Default 10 bins; ``bin_size`` for equal-mass bins only.
    ci : None, {"simulation", "bootstrap", "score"} or ConfidenceInterval, default=None
    pooled : bool, default=True
        False: no SMCE (None), as on one machine.
    binning : {"equal-mass", "fixed"}, default="equal-mass"
    norm : {2, 1, inf}, default=2
    debias : bool, default=False

    Returns
    -------
    smce : CalibrationError or None
    gmce : list of CalibrationError or None
        Bins as the single-machine ones (counts, label sums and score ranges
        bit for bit); values and interval ends within 1e-12 relative.

    Raises
    ------
    TypeError, ValueError
        As :func:`sparsecal.smce_and_gmce`; ``entries`` not ``DaskEntries``.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Sections 3.2-3.3, eqs. 2-3; Nguyen &
    O'Connor 2015, Algorithms 1 and 2.

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
    if groups is None:
        raise TypeError("groups must be TagGroups, got None")
    return binned_errors(entries, groups, n_bins=n_bins, bin_size=bin_size, binning=binning,
                         norm=norm, debias=debias, ci=ci, pooled=pooled)
