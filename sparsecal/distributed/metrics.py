"""Calibration errors of distributed entries: the single-machine result types
and values, from exact distributed bins (:mod:`~sparsecal.distributed.equal_mass`).

CE_p is computed by :func:`sparsecal.metrics.ce.ce_from_bins` from the merged
bins, on the client: bins bit-identical in counts, label sums and score ranges,
score sums exact, so values agree with the single-machine ones to float
rounding (well within 1e-12 relative) and repeated runs are bit-identical.
Intervals (any ``ci``), fixed-width bins and the debiased CE:
:func:`~sparsecal.distributed.measures.binned_errors`.
"""
import numpy as np

from ..metrics.ce import ce_from_bins, check_norm
from .checks import check_dask_entries
from .entries import from_arrays
from .equal_mass import equal_mass_bin_stats
from .marginal import error_of_bins as _result

__all__ = ["calibration_error", "gmce", "smce"]




def _pooled(entries, norm, n_bins, bin_size):
    """CE_p over all of ``entries`` (one group); an error when there are none."""
    (bins,) = equal_mass_bin_stats(entries, n_bins=n_bins, bin_size=bin_size)
    if bins is None:
        raise ValueError("cannot compute a calibration error of no points")
    return _result(bins, norm)


def calibration_error(scores, labels, *, norm=2, n_bins=None, bin_size=None):
    """Binned calibration error CE_p of distributed binary predictions,
    with equal-mass bins: :func:`sparsecal.calibration_error` on a cluster.

    Parameters
    ----------
    scores : dask.array.Array of float32 or float64, shape (n,)
        Probabilities in [0, 1].
    labels : dask.array.Array or array_like of {0, 1}, shape (n,)
    norm : {2, 1, inf}, default=2
    n_bins, bin_size : int, optional
        Equal-mass bins (default 10 bins).

    Returns
    -------
    CalibrationError
        Without an interval.

    Raises
    ------
    TypeError
        If ``scores`` is not a float dask array.
    ValueError
        For no scores, an invalid ``norm``, ``n_bins`` or ``bin_size``, or
        labels of another length; invalid scores or labels raise when their
        chunk is computed.

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 1; Kranzlein, Liu & Schneider 2021, eq. 2.

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
    return _pooled(from_arrays(scores, labels), check_norm(norm), n_bins, bin_size)


def smce(entries, *, n_bins=None, bin_size=None):
    """Shared marginal calibration error (SMCE) of distributed entries:
    :func:`sparsecal.smce` on a cluster.

    Parameters
    ----------
    entries : DaskEntries
        From :func:`sparsecal.distributed.threshold`.
    n_bins, bin_size : int, optional
        Equal-mass bins (default 10 bins).

    Returns
    -------
    CalibrationError
        As :func:`calibration_error`: no interval.

    Raises
    ------
    TypeError
        If ``entries`` is not ``DaskEntries``.
    ValueError
        No entries, or both or invalid ``n_bins``/``bin_size``.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.2, eq. 2; binning: Nguyen &
    O'Connor 2015, Algorithm 1.

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
    return _pooled(check_dask_entries(entries), 2.0, n_bins, bin_size)


def gmce(entries, groups, *, n_bins=None, bin_size=None):
    """Grouped marginal calibration error (GMCE) per tag group of distributed
    entries: :func:`sparsecal.gmce` on a cluster (all groups in the same passes).

    Parameters
    ----------
    entries : DaskEntries
    groups : TagGroups
        Over the same tagset as ``entries``.
    n_bins, bin_size : int, optional
        Equal-mass bins per group (default 10 bins).

    Returns
    -------
    list of CalibrationError or None
        One per group; None for a group with no entries.

    Raises
    ------
    TypeError
        If ``entries`` is not ``DaskEntries`` or ``groups`` not ``TagGroups``.
    ValueError
        ``groups`` of another tagset, or invalid bins.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.3, eq. 3.

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
    check_dask_entries(entries, groups)
    bins = equal_mass_bin_stats(entries, np.asarray(groups.tag_to_group, dtype=np.int64),
                                groups.n_groups, n_bins=n_bins, bin_size=bin_size)
    return [_result(b, 2.0) for b in bins]
