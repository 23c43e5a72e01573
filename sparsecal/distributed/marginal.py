"""SMCE and every GMCE of distributed entries from one selection of their bins."""
from .._docs import fill_doc
from ..core.dispatch import implements
from ..metrics import marginal as single
from .measures import binned_errors

__all__ = ["smce_and_gmce"]


@implements(single.smce_and_gmce)
@fill_doc
def smce_and_gmce(entries, groups, *, n_bins=None, bin_size=None, ci=None, pooled=True,
                  binning="equal-mass", norm=2, debias=False):
    """:func:`sparsecal.smce_and_gmce` of distributed entries (but ``progress``).

    Parameters
    ----------
    {dask_entries}
    {groups}
    n_bins, bin_size, ci, pooled, binning, norm, debias
        As :func:`sparsecal.smce_and_gmce`.

    Returns
    -------
    smce : CalibrationError or None
    gmce : list of CalibrationError or None

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x = np.random.default_rng(0).dirichlet(np.ones(6), size=300)
    >>> entries = sc.threshold(da.from_array(x, chunks=(70, 6)), np.arange(300) % 6)
    >>> pooled, per_group = smce_and_gmce(entries, sc.TagGroups.scw(6))
    >>> pooled.value == per_group[0].value
    True
    """
    if groups is None:
        raise TypeError("groups must be TagGroups, got None")
    return binned_errors(entries, groups, n_bins=n_bins, bin_size=bin_size, binning=binning,
                         norm=norm, debias=debias, ci=ci, pooled=pooled)
