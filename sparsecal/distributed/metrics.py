"""Calibration errors of distributed entries: the single-machine result types,
options and values, from exact distributed bins (:mod:`~sparsecal.distributed.equal_mass`,
fixed-width bins of :mod:`~sparsecal.distributed.measures`).

CE_p is computed by :func:`sparsecal.metrics.ce.ce_from_bins` from the merged
bins, on the client: bins bit-identical in counts, label sums and score ranges,
score sums exact, so values agree with the single-machine ones to float
rounding (well within 1e-12 relative) and repeated runs are bit-identical.
Every function here takes its single-machine keywords (``ci``, ``binning``,
``norm``, ``debias``, ``n_bins``, ``bin_size``) and delegates to
:func:`~sparsecal.distributed.measures.binned_errors`, the one home of the
distributed binned errors.
"""
from ..core.dispatch import implements
from ..metrics import binary, marginal
from .checks import check_dask_entries
from .entries import from_arrays
from .measures import binned_errors

__all__ = ["calibration_error", "gmce", "smce"]


@implements(binary.calibration_error)
def calibration_error(scores, labels, *, norm=2, binning="equal-mass", n_bins=None,
                      bin_size=None, ci=None, debias=False):
    """Binned calibration error CE_p of distributed binary predictions:
    :func:`sparsecal.calibration_error` on a cluster (every option but
    ``n_threads``).

    Parameters
    ----------
    scores : dask.array.Array of float32 or float64, shape (n,)
        Probabilities in [0, 1].
    labels : dask.array.Array or array_like of {0, 1}, shape (n,)
    norm : {2, 1, inf}, default=2
    binning : {"equal-mass", "fixed"}, default="equal-mass"
    n_bins, bin_size : int, optional
        Default 10 bins; ``bin_size`` for equal-mass bins only.
    ci : None, {"simulation", "bootstrap", "score"} or ConfidenceInterval, default=None
        As :func:`sparsecal.calibration_error` (the bootstrap resamples the
        merged distinct-score table on the workers).
    debias : bool, default=False
        Kumar et al.'s debiased CE_2 (its interval: ``ci="score"``).

    Returns
    -------
    CalibrationError
        Bins as the single-machine ones (counts, label sums and score ranges
        bit for bit); value and interval ends within 1e-12 relative.

    Raises
    ------
    TypeError
        If ``scores`` is not a float dask array.
    ValueError
        For no scores, an invalid ``norm``, ``binning``, ``n_bins``,
        ``bin_size``, ``ci`` or ``debias`` combination, or labels of another length; invalid scores or labels raise when their
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
    return binned_errors(from_arrays(scores, labels), n_bins=n_bins, bin_size=bin_size,
                         binning=binning, norm=norm, debias=debias, ci=ci)[0]


@implements(marginal.smce)
def smce(entries, *, n_bins=None, bin_size=None, ci=None, binning="equal-mass", norm=2,
         debias=False):
    """Shared marginal calibration error (SMCE) of distributed entries:
    :func:`sparsecal.smce` on a cluster.

    Parameters
    ----------
    entries : DaskEntries
        From :func:`sparsecal.distributed.threshold`.
    n_bins, bin_size : int, optional
        Default 10 bins; ``bin_size`` for equal-mass bins only.
    ci : None, {"simulation", "bootstrap", "score"} or ConfidenceInterval, default=None
        As :func:`sparsecal.calibration_error` (the bootstrap resamples the
        merged distinct-score table on the workers).
    binning : {"equal-mass", "fixed"}, default="equal-mass"
    norm : {2, 1, inf}, default=2
    debias : bool, default=False
        Kumar et al.'s debiased CE_2 (its interval: ``ci="score"``).

    Returns
    -------
    CalibrationError
        As :func:`calibration_error`.

    Raises
    ------
    TypeError
        If ``entries`` is not ``DaskEntries``.
    ValueError
        No entries, or invalid options (as :func:`sparsecal.smce`).

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
    return binned_errors(check_dask_entries(entries), n_bins=n_bins, bin_size=bin_size,
                         binning=binning, norm=norm, debias=debias, ci=ci)[0]


@implements(marginal.gmce)
def gmce(entries, groups, *, n_bins=None, bin_size=None, ci=None, binning="equal-mass",
         norm=2, debias=False):
    """Grouped marginal calibration error (GMCE) per tag group of distributed
    entries: :func:`sparsecal.gmce` on a cluster (all groups in the same passes).

    Parameters
    ----------
    entries : DaskEntries
    groups : TagGroups
        Over the same tagset as ``entries``.
    n_bins, bin_size : int, optional
        Bins per group (default 10 bins); ``bin_size`` for equal-mass bins only.
    ci, binning, norm, debias : optional
        As :func:`smce`, per group (intervals drawn group by group, as on one
        machine).

    Returns
    -------
    list of CalibrationError or None
        One per group; None for a group with no entries.

    Raises
    ------
    TypeError
        If ``entries`` is not ``DaskEntries`` or ``groups`` not ``TagGroups``.
    ValueError
        ``groups`` of another tagset, or invalid options (as :func:`sparsecal.gmce`).

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
    if groups is None:
        raise TypeError("groups must be TagGroups, got None")
    return binned_errors(entries, groups, n_bins=n_bins, bin_size=bin_size, binning=binning,
                         norm=norm, debias=debias, ci=ci, pooled=False)[1]
