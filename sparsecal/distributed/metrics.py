"""Calibration errors of distributed entries from exact distributed bins: bins bit
for bit, values within 1e-12 relative."""
from .._docs import fill_doc
from ..core.dispatch import implements
from ..metrics import binary, marginal
from .checks import check_dask_entries
from .entries import from_arrays
from .measures import binned_errors

__all__ = ["calibration_error", "gmce", "smce"]


@implements(binary.calibration_error)
@fill_doc
def calibration_error(scores, labels, *, norm=2, binning="equal-mass", n_bins=None,
                      bin_size=None, ci=None, debias=False):
    """:func:`sparsecal.calibration_error` of dask arrays (every option but
    ``n_threads``).

    Parameters
    ----------
    {dask_binary}
    norm, binning, n_bins, bin_size, ci, debias
        As :func:`sparsecal.calibration_error`.

    Returns
    -------
    CalibrationError

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> q = np.random.default_rng(0).random(2000).round(3)
    >>> y = (np.random.default_rng(1).random(2000) < q ** 2).astype(np.uint8)
    >>> ce = calibration_error(da.from_array(q, chunks=300), y)
    >>> abs(ce.value - sc.calibration_error(q, y).value) <= 1e-12 * ce.value
    True
    """
    return binned_errors(from_arrays(scores, labels), n_bins=n_bins, bin_size=bin_size,
                         binning=binning, norm=norm, debias=debias, ci=ci)[0]


@implements(marginal.smce)
@fill_doc
def smce(entries, *, n_bins=None, bin_size=None, ci=None, binning="equal-mass", norm=2,
         debias=False):
    """:func:`sparsecal.smce` of distributed entries.

    Parameters
    ----------
    {dask_entries}
    n_bins, bin_size, ci, binning, norm, debias
        As :func:`sparsecal.smce`.

    Returns
    -------
    CalibrationError

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x = np.random.default_rng(0).dirichlet(np.ones(6), size=300)
    >>> gold = np.arange(300) % 6
    >>> got = smce(sc.threshold(da.from_array(x, chunks=(70, 6)), gold))
    >>> bool((got.bins.count == sc.smce(sc.threshold(x, gold)).bins.count).all())
    True
    """
    return binned_errors(check_dask_entries(entries), n_bins=n_bins, bin_size=bin_size,
                         binning=binning, norm=norm, debias=debias, ci=ci)[0]


@implements(marginal.gmce)
@fill_doc
def gmce(entries, groups, *, n_bins=None, bin_size=None, ci=None, binning="equal-mass",
         norm=2, debias=False):
    """:func:`sparsecal.gmce` of distributed entries (all groups in the same passes).

    Parameters
    ----------
    {dask_entries}
    {groups}
    n_bins, bin_size, ci, binning, norm, debias
        As :func:`sparsecal.gmce`.

    Returns
    -------
    list of CalibrationError or None

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x = np.random.default_rng(0).dirichlet(np.ones(6), size=300)
    >>> gold, groups = np.arange(300) % 6, sc.TagGroups([0, 0, 1, 1, 2, 2], 3)
    >>> got = gmce(sc.threshold(da.from_array(x, chunks=(70, 6)), gold), groups)
    >>> [g.n for g in got] == [g.n for g in sc.gmce(sc.threshold(x, gold), groups)]
    True
    """
    if groups is None:
        raise TypeError("groups must be TagGroups, got None")
    return binned_errors(entries, groups, n_bins=n_bins, bin_size=bin_size, binning=binning,
                         norm=norm, debias=debias, ci=ci, pooled=False)[1]
