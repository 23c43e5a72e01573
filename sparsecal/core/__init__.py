"""The compiled core and its thin validated wrappers: dense scores -> entries -> bins.

One compiled kernel module per family (Cython, no validation, GIL-free loops),
each used by one wrapper below: ``_threshold`` (entries), ``_sort`` (radix
argsort) and ``_binning`` (bin statistics, bin lookup) (binning), ``_isotonic``
(isotonic), ``_partition`` (groups); shared declarations in ``_types.pxd``.

- :mod:`~sparsecal.core.entries`: :class:`Entries` and :func:`threshold`.
- :mod:`~sparsecal.core.binning`: the one home of binning (sort, equal-mass and
  fixed-width bins, bin lookup, weighted variants).
- :mod:`~sparsecal.core.isotonic`: pool adjacent violators and interpolation.
- :mod:`~sparsecal.core.groups`: :class:`TagGroups` (SCW, TFG, per tag).
- :mod:`~sparsecal.core.threads`, :mod:`~sparsecal.core.validation`: thread count
  and argument checks shared by every layer above.
"""
from .._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {
    "Entries": "entries", "threshold": "entries",
    "TagGroups": "groups", "load_train_counts": "groups",
    "BinStats": "binning", "equal_mass_bins": "binning", "fixed_width_bins": "binning",
    "isotonic_fit": "isotonic", "isotonic_predict": "isotonic",
    "DegenerateDataError": "validation",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
