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
from .binning import (BinStats, argsort_scores, equal_mass_bin_starts, equal_mass_bins,
                      fixed_width_bins, lookup_bins)
from .entries import Entries, threshold
from .groups import TagGroups, load_train_counts, partition_by_group
from .isotonic import isotonic_fit, isotonic_fit_pooled, isotonic_predict
from .validation import DegenerateDataError
from .binning import histogram_counts

__all__ = ["BinStats", "DegenerateDataError", "Entries", "TagGroups", "argsort_scores", "equal_mass_bin_starts",
           "equal_mass_bins", "fixed_width_bins", "isotonic_fit", "isotonic_fit_pooled",
           "isotonic_predict",
           "load_train_counts", "lookup_bins", "partition_by_group", "threshold"]
__all__ += ["histogram_counts"]
