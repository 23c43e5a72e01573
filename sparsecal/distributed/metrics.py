"""Calibration errors of distributed entries: the single-machine result types
and options, from exact distributed bins
(:func:`~sparsecal.distributed.measures.binned_errors`); bins bit for bit,
values within 1e-12 relative, repeated runs bit-identical."""
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
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> rng = np.random.default_rng(0)
    >>> q = rng.random(2000).round(3)
    >>> y = (rng.random(2000) < q ** 2).astype(np.uint8)
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
    >>> import dask.array as da
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> from sparsecal.datasets.synthetic import make_tagger_outputs
    >>> data = make_tagger_outputs(2000, n_tags=40, split_seed=1)
    >>> entries = threshold(da.from_array(data.scores, chunks=(300, 40)), data.gold)
    >>> one = sc.smce(sc.threshold(data.scores, data.gold))
    >>> res = smce(entries)
    >>> res.n == one.n, bool((res.bins.count == one.bins.count).all())
    (True, True)
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
        One per group; None for a group without entries.

    Examples
    --------
    >>> import dask.array as da
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> from sparsecal.datasets.synthetic import make_tagger_outputs
    >>> data = make_tagger_outputs(2000, n_tags=40, split_seed=1)
    >>> groups = sc.TagGroups.from_counts(data.train_counts, 3, n_tags=40)
    >>> entries = threshold(da.from_array(data.scores, chunks=(300, 40)), data.gold)
    >>> [g.n for g in gmce(entries, groups)] == [
    ...     g.n for g in sc.gmce(sc.threshold(data.scores, data.gold), groups)]
    True
    """
    if groups is None:
        raise TypeError("groups must be TagGroups, got None")
    return binned_errors(entries, groups, n_bins=n_bins, bin_size=bin_size, binning=binning,
                         norm=norm, debias=debias, ci=ci, pooled=False)[1]
