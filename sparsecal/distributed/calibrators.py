"""Every registered calibrator with a distributed fit, fitted per tag group on
distributed entries.

Each method's registry entry declares how
(:attr:`sparsecal.calibration.registry.Method.distributed_fit`); this module
implements each way of :data:`~sparsecal.calibration.registry.DISTRIBUTED_FITS`
(:data:`FITS`). Each group's dev entries are summed up, exactly, by the merged
per-group distinct-score tables that the isotonic fit builds
(:func:`~sparsecal.distributed.isotonic.score_tables`: distinct score, count,
label sum), then:

- ``"pooled-pav"`` (isotonic): :func:`sparsecal.distributed.isotonic.fit_grouped`
  (pooled PAV on the table; the same knots bit for bit);
- ``"equal-mass-bins"`` (histogram binning): its equal-mass cuts need the ranks
  of the entries, so they come from the distributed equal-mass bins
  (:func:`~sparsecal.distributed.equal_mass.equal_mass_bin_stats`, score ranges
  bit-identical), and each bin's rate from the table (integer sums): the same
  boundaries and rates bit for bit;
- ``"weighted-rows"`` (Platt, beta, prior-weighted logistic, Gaussian): the
  base's own ``fit`` on the table as weighted rows (each distinct score once as
  a positive with weight = its label sum, once as a negative with weight =
  count - label sum). Their objectives are the same functions of the data, but
  their sums run in another order than over repeated rows, so the fitted
  parameters agree with the single-machine fit to float rounding, not bit for
  bit (docs/scale.md: predictions within 1e-10);
- ``"split-halves"`` (scaling-binning): each chunk's workers compute their
  entries' sides of each group's positional split and tabulate the halves
  apart (:func:`sparsecal.distributed.scaling_binning.fit_scaling_binning`).
"""
import numpy as np

from ..calibration.base import clone
from ..calibration.grouped import EntryTransformer, GroupedCalibrator
from ..calibration.registry import METHODS
from ..core.binning import lookup_bin_means
from ..core.dispatch import implements
from ._dask import require_dask
from .checks import check_dask_entries
from .equal_mass import equal_mass_bin_stats
from .isotonic import fit_from_tables
from .isotonic import fit_grouped as fit_isotonic
from .scaling_binning import fit_scaling_binning
from .weights import binary_rows, fit_weighted

__all__ = ["FITS", "distributed_method", "fit_grouped", "transform", "weighted_rows"]


def weighted_rows(scores, counts, positives, dtype):
    """A distinct-score table as weighted binary points.

    Parameters
    ----------
    scores : ndarray of float64, shape (m,)
        Distinct scores.
    counts, positives : ndarray of int64, shape (m,)
        Entries and positive entries at each score.
    dtype : numpy dtype
        The entries' score dtype (the scores are cast back to it: exact).

    Returns
    -------
    x, y, w : ndarray
        :func:`sparsecal.distributed.weights.binary_rows` with negatives
        ``counts - positives``.

    Examples
    --------
    >>> import numpy as np
    >>> x, y, w = weighted_rows(np.array([0.25, 0.5]), np.array([3, 2]),
    ...                         np.array([1, 2]), np.float32)
    >>> x.tolist(), y.tolist(), w.tolist()
    ([0.25, 0.5, 0.25], [1, 1, 0], [1.0, 2.0, 2.0])
    """
    return binary_rows(scores, positives, counts - positives, dtype)


def distributed_method(base):
    """The registered method of a calibrator that can be fitted on distributed
    entries (its :attr:`~sparsecal.calibration.registry.Method.distributed_fit`).

    Parameters
    ----------
    base : BaseCalibrator

    Returns
    -------
    str
        Its name in :data:`sparsecal.calibration.registry.METHODS`.

    Raises
    ------
    TypeError
        For a class that is not a registered method (a subclass included), or
        a method without a distributed fit (named).

    Examples
    --------
    >>> import sparsecal as sc
    >>> distributed_method(sc.PlattCalibrator())
    'platt'
    >>> distributed_method(sc.ScalingBinning())
    'scaling-binning'
    """
    names = {m.class_name: name for name, m in METHODS.items()}
    name = names.get(type(base).__name__)
    if name is None or type(base) is not METHODS[name].cls:
        raise TypeError(f"on distributed entries the base must be a registered method "
                        f"({', '.join(sorted(METHODS))}), got {type(base).__name__}")
    METHODS[name].check_distributed_fit()
    return name


def _histogram_fit(base, table, bins, dtype):
    """A histogram calibrator from a group's equal-mass bins and its table."""
    cal = clone(base)
    x, y, w = weighted_rows(*table, dtype)
    cal.boundaries_, cal.bin_rates_ = lookup_bin_means(x, y.astype(np.float64), w,
                                                       bins.boundaries())
    return cal


@implements(GroupedCalibrator.fit)
def fit_grouped(model, entries, sample_weight=None, *, progress=None):
    """Fit a :class:`~sparsecal.GroupedCalibrator` of any registered method on
    distributed dev entries (``model.fit(entries)`` calls this).

    The rule of the single-machine fit (``min_entries``, ``fallback``,
    warnings). Isotonic and histogram fits equal the single-machine ones bit for
    bit; Platt, beta, prior-weighted logistic and Gaussian fits agree to float
    rounding (their sums run over weighted distinct scores, not repeated rows);
    scaling-binning has the same split, knots and boundaries, and bin values
    within float rounding (:func:`~.scaling_binning.fit_scaling_binning`).

    Parameters
    ----------
    model : GroupedCalibrator
        With a base of a registered method.
    entries : DaskEntries
    sample_weight : dask.array.Array or array_like, shape (n_tokens,), optional
        Per-TOKEN weights (rows of the score matrix, rechunked like them): each
        entry is weighted by its token's weight, i.e. the single-machine
        ``sample_weight=w[entries.token]``
        (:func:`~sparsecal.distributed.weights.fit_weighted`; every method but
        scaling-binning).
    progress : callable, optional
        As in :meth:`sparsecal.GroupedCalibrator.fit`.

    Returns
    -------
    GroupedCalibrator
        ``model``, fitted: an ordinary fitted calibrator (save it, or apply it
        with :func:`sparsecal.distributed.apply_to_store`).

    Raises
    ------
    TypeError
        If ``entries`` is not ``DaskEntries``, or the base is not a registered
        method.
    ValueError
        For ``sample_weight`` (shape, negative, NaN, zero on a fitted group;
        with scaling-binning), groups of another tagset, or no entries; the
        base's own errors (e.g. a group with one label only for a
        prior-weighted method).

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Sections 2.2 and 3.3 (recalibration per
    TFG group); Nguyen & O'Connor 2015, Algorithm 1 (equal-mass bins).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> dev = make_tagger_outputs(1000, split_seed=1)
    >>> groups = sc.TagGroups.from_counts(dev.train_counts, 3)
    >>> entries = threshold(da.from_array(dev.scores, chunks=(256, -1)), dev.gold)
    >>> model = sc.GroupedCalibrator(sc.HistogramBinning(), groups).fit(entries)
    >>> one = sc.GroupedCalibrator(sc.HistogramBinning(), groups).fit(
    ...     sc.threshold(dev.scores, dev.gold))
    >>> all((a.bin_rates_ == b.bin_rates_).all()
    ...     for a, b in zip(model.calibrators_, one.calibrators_))
    True
    """
    model._check_params()
    method = METHODS[distributed_method(model.base)]
    if sample_weight is None:
        return FITS[method.distributed_fit](model, entries, progress=progress)
    check_dask_entries(entries, model.groups)
    model.base._check_params()   # before any pass over the entries
    return fit_weighted(model, entries, sample_weight, method, progress=progress)


def _from_tables(fitter):
    """An unweighted fit from the merged distinct-score tables, where
    ``fitter(model, entries)(groups, table)`` fits group ``g``."""
    def fit(model, entries, *, progress=None):
        model.base._check_params()   # before any pass over the entries
        return fit_from_tables(model, entries, None, fitter(model, entries),
                               progress=progress)
    return fit


def _rows(model, entries):
    """Each group: the base's own fit on its table as weighted rows."""
    return lambda groups, table: lambda g: clone(model.base).fit(
        *weighted_rows(*table[g], entries.dtype))


def _equal_mass(model, entries):
    """Each group: histogram binning from the distributed equal-mass cuts."""
    base = model.base

    def fitter(groups, table):
        bins = equal_mass_bin_stats(
            entries, np.asarray(groups.tag_to_group, dtype=np.int64), groups.n_groups,
            n_bins=None if base.bin_size is not None else int(base.n_bins),
            bin_size=None if base.bin_size is None else int(base.bin_size))
        return lambda g: _histogram_fit(base, table[g], bins[g], entries.dtype)
    return fitter


#: each way of :data:`~sparsecal.calibration.registry.DISTRIBUTED_FITS` ->
#: its unweighted fit ``fit(model, entries, *, progress)`` (the weighted ones:
#: :data:`sparsecal.distributed.weights.WEIGHTED_FITS`)
FITS = {"pooled-pav": fit_isotonic, "equal-mass-bins": _from_tables(_equal_mass),
        "weighted-rows": _from_tables(_rows), "split-halves": fit_scaling_binning}


@implements(EntryTransformer.transform)
def transform(model, entries):
    """Calibrated distributed entries, chunk by chunk on the workers
    (``model.transform(entries)`` calls this).

    Parameters
    ----------
    model : GroupedCalibrator or CrossFittedCalibrator
        Fitted.
    entries : DaskEntries

    Returns
    -------
    DaskEntries
        Lazy: same chunks, tags, labels and tokens, calibrated scores.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> x = np.random.default_rng(0).dirichlet(np.ones(3), size=40)
    >>> one = sc.threshold(x, np.arange(40) % 3)
    >>> model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(3)).fit(one)
    >>> got = transform(model, threshold(da.from_array(x, chunks=(16, 3)), np.arange(40) % 3))
    >>> bool((got.compute().score == model.transform(one).score).all())
    True
    """
    model._check_fitted()
    dask = require_dask()
    task = dask.delayed(model.transform, pure=True)
    return entries._with_blocks([task(b) for b in entries.blocks])
