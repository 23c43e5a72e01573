"""Every registered calibrator fitted per tag group on distributed entries from the
merged distinct-score tables, one fit per way of ``DISTRIBUTED_FITS`` (:data:`FITS`)."""
import numpy as np

from .._docs import fill_doc
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
    """A distinct-score table as weighted binary points ``x, y, w``."""
    return binary_rows(scores, positives, counts - positives, dtype)


def distributed_method(base):
    """The registry name of ``base``'s method, which must have a distributed fit."""
    names = {m.class_name: name for name, m in METHODS.items()}
    name = names.get(type(base).__name__)
    if name is None or type(base) is not METHODS[name].cls:
        raise TypeError(f"on distributed entries the base must be a registered method "
                        f"({', '.join(sorted(METHODS))}), got {type(base).__name__}")
    METHODS[name].check_distributed_fit()
    return name


def _histogram_fit(base, table, bins, dtype):
    cal = clone(base)
    x, y, w = weighted_rows(*table, dtype)
    cal.boundaries_, cal.bin_rates_ = lookup_bin_means(x, y.astype(np.float64), w,
                                                       bins.boundaries())
    return cal


@implements(GroupedCalibrator.fit)
@fill_doc
def fit_grouped(model, entries, sample_weight=None, *, progress=None):
    """:meth:`sparsecal.GroupedCalibrator.fit` on distributed entries, any registered
    method: isotonic and histogram bit for bit, the others to float rounding.

    Parameters
    ----------
    model : GroupedCalibrator
    {dask_entries}
    sample_weight : dask.array.Array or array_like, shape (n_tokens,), optional
        Per TOKEN: the single machine's ``sample_weight=w[entries.token]``.
    progress : callable, optional

    Returns
    -------
    GroupedCalibrator
        ``model``, fitted.

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x, gold = np.random.default_rng(0).dirichlet(np.ones(4), size=300), np.arange(300) % 4
    >>> model = sc.GroupedCalibrator(sc.HistogramBinning(), sc.TagGroups.scw(4))
    >>> one = sc.calibration.clone(model).fit(sc.threshold(x, gold))
    >>> got = fit_grouped(model, sc.threshold(da.from_array(x, chunks=64), gold))
    >>> bool((got.transform_dense(x) == one.transform_dense(x)).all())
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
    def fit(model, entries, *, progress=None):
        model.base._check_params()   # before any pass over the entries
        return fit_from_tables(model, entries, None, fitter(model, entries),
                               progress=progress)
    return fit


def _rows(model, entries):
    return lambda groups, table: lambda g: clone(model.base).fit(
        *weighted_rows(*table[g], entries.dtype))


def _equal_mass(model, entries):
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
    """``model.transform`` of distributed entries, lazily, chunk by chunk on the workers."""
    model._check_fitted()
    dask = require_dask()
    task = dask.delayed(model.transform, pure=True)
    return entries._with_blocks([task(b) for b in entries.blocks])
