"""Sorting and binning of scores: the statistics every metric is computed from.

Equal-mass (adaptive) binning follows Nguyen & O'Connor 2015, Algorithm 1: sort
by score ascending (stable: ties keep entry order), cut into bins of ``bin_size``
points and merge a short last bin into the one before it; or, given ``n_bins``,
bin ``i`` holds sorted ranks ``[floor(i*n/B), floor((i+1)*n/B))``. Binning is by
rank, so tied scores may fall in different bins. Fixed-width bins split [0, 1]
into ``n_bins`` equal intervals.
"""
from dataclasses import dataclass

import numpy as np

from . import _binning, _sort
from .threads import get_n_threads
from .validation import (as_array, as_float_array, check_allocation, check_choice,
                          check_labels, check_positive_int, check_probabilities)
from .dispatch import BUILDING_BLOCK, GLOBAL_SORT, takes_data

__all__ = ["BinStats", "argsort_scores", "bin_statistics", "equal_mass_bin_starts",
           "equal_mass_bins", "equal_mass_bins_sorted", "fixed_width_bins", "lookup_bin_means",
           "lookup_bins", "replicated_bin_sums", "weighted_equal_mass_bins"]
__all__ += ["replicated_cuts"]
__all__ += ["histogram_counts"]
__all__ += ["weighted_bin_starts"]


@dataclass(frozen=True)
class BinStats:
    """Per-bin sufficient statistics (mergeable: sums and counts).

    Attributes
    ----------
    count : ndarray of int64
    sum_score, sum_label : ndarray of float64
    lower, upper : ndarray of float64
        Smallest and largest score in each bin (NaN for an empty fixed-width bin).
    edges : ndarray of float64 or None
        The bin edges for fixed-width bins, None for equal-mass bins.

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 1, step 4 (per-bin mean prediction and
    label frequency); Kranzlein, Liu & Schneider 2021, Section 3.2 (fixed-width
    and equal-mass bins).

    Examples
    --------
    >>> from sparsecal.core.binning import equal_mass_bins
    >>> stats = equal_mass_bins([0.9, 0.1, 0.4, 0.1, 0.7], [1, 0, 0, 1, 1], n_bins=2)
    >>> stats.n_bins, stats.count
    (2, array([2, 3]))
    >>> stats.mean_label
    array([0.5       , 0.66666667])
    """

    count: np.ndarray
    sum_score: np.ndarray
    sum_label: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    edges: np.ndarray = None

    @property
    def n_bins(self):
        """Number of bins."""
        return self.count.shape[0]

    @property
    def mean_score(self):
        """Mean score per bin (q-hat of Algorithm 1, step 4); NaN when empty."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.sum_score / self.count

    @property
    def mean_label(self):
        """Empirical positive rate per bin (p-hat of Algorithm 1, step 4)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.sum_label / self.count

    def boundaries(self):
        """Inner boundaries for :func:`lookup_bins`, so that the bins cover [0, 1]
        with no gap.

        Fixed-width bins use their edges; equal-mass bins cut halfway between
        one bin's largest score and the next bin's smallest (at the latter when
        halfway rounds onto the former), so a score lying in one bin only is
        looked up in that bin.

        Returns
        -------
        ndarray of float64, shape (n_bins - 1,)

        References
        ----------
        Kranzlein, Liu & Schneider 2021, Section 2.2 ("Histogram Binning"): a
        test score is calibrated by the bin it falls in; docs/architecture.md, Semantics 7.

        Examples
        --------
        >>> from sparsecal.core.binning import equal_mass_bins
        >>> equal_mass_bins([0.9, 0.1, 0.4, 0.1, 0.7], [1, 0, 0, 1, 1],
        ...                 n_bins=2).boundaries()
        array([0.25])
        """
        if self.edges is not None:
            return self.edges[1:-1].copy()
        below, above = self.upper[:-1], self.lower[1:]
        half = (below + above) / 2.0
        # Between adjacent floats halfway rounds to one of them; if it rounds down
        # onto ``below``, cut at ``above`` so that ``below`` stays in its own bin.
        return np.where(half > below, half, above)


#: The most float32 values whose indices fit beside their keys in 64-bit words.
_PACKED_MAX = 0xFFFFFFFF


@takes_data(refuse=GLOBAL_SORT)
def argsort_scores(scores, *, n_threads=None):
    """Stable ascending argsort of float scores, and the sorted scores.

    An LSD radix sort on the float bit patterns (11-bit digits, trivial digits
    skipped), parallel over threads; the same order as
    ``np.argsort(scores, kind="stable")`` (-0.0 and 0.0 count as equal).

    Parameters
    ----------
    scores : array_like of float32 or float64, shape (n,)
        No NaN; any other finite or infinite value is allowed.
    n_threads : int, optional
        Threads for the kernel (see :func:`sparsecal.core.threads.get_n_threads`).

    Returns
    -------
    perm : ndarray of int64, shape (n,)
    sorted_scores : ndarray, shape (n,), same dtype as ``scores``

    Raises
    ------
    TypeError
        If ``scores`` does not hold real numbers.
    ValueError
        If ``scores`` is not 1-D or contains NaN.

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 1, step 1 (sort pairs by prediction,
    ascending); docs/architecture.md, Semantics 2 (ties broken by entry order).

    Examples
    --------
    >>> from sparsecal.core.binning import argsort_scores
    >>> perm, sorted_scores = argsort_scores([0.9, 0.1, 0.4, 0.1, 0.7])
    >>> perm
    array([1, 3, 2, 4, 0])
    >>> sorted_scores
    array([0.1, 0.1, 0.4, 0.7, 0.9])
    """
    x = np.ascontiguousarray(as_float_array(scores, "scores"))
    if np.isnan(x).any():
        raise ValueError("scores contains NaN, which has no place in a sort order")
    n = x.shape[0]
    perm = np.empty(n, dtype=np.int64)
    # float32: the keys are packed with their indices, and ``sorted_x`` is the
    # sort's second buffer until the kernel leaves the values in its first half
    packed = x.dtype == np.float32 and 0 < n <= _PACKED_MAX
    sorted_x = np.empty(2 * n if packed else n, dtype=x.dtype)
    _sort.argsort_floats(x, perm, sorted_x, get_n_threads(n_threads, n))
    if packed:
        sorted_x.resize(n, refcheck=False)   # gives the second half back
    return perm, sorted_x


def equal_mass_bin_starts(n, n_bins=None, bin_size=None):
    """Sorted-rank boundaries of equal-mass bins (Nguyen & O'Connor, Algorithm 1).

    Exactly one of ``n_bins`` and ``bin_size`` is given. With ``bin_size=k`` bins
    hold ``k`` ranks and a last bin shorter than ``k`` is merged into the one
    before it (a single bin when ``n < k``). With ``n_bins=B`` bin ``i`` holds ranks
    ``[floor(i*n/B), floor((i+1)*n/B))``; with ``n < B`` the empty bins are dropped,
    which leaves one rank per bin: ``B`` is clamped to ``n`` (the same bins, with
    memory and time O(n) however large ``B`` is).

    Parameters
    ----------
    n : int
        Number of sorted scores.
    n_bins, bin_size : int
        Exactly one of them.

    Returns
    -------
    starts : ndarray of int64, shape (n_bins_used + 1,)
        Bin ``b`` holds ranks ``starts[b]:starts[b + 1]``.

    Raises
    ------
    ValueError
        If both or neither of ``n_bins`` and ``bin_size`` are given, if ``n``
        is not positive, or if the one given is not a positive integer.

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 1, step 2 (bin label of the k-th sorted
    pair from the target bin size) and Section 3.1; Kranzlein, Liu & Schneider
    2021, Section 3.2 (10 bins).

    Examples
    --------
    >>> from sparsecal.core.binning import equal_mass_bin_starts
    >>> equal_mass_bin_starts(5, n_bins=2)
    array([0, 2, 5])
    >>> equal_mass_bin_starts(10, bin_size=4)   # the short last bin is merged
    array([ 0,  4, 10])
    """
    if (n_bins is None) == (bin_size is None):
        raise ValueError("give exactly one of n_bins and bin_size")
    n = int(n)
    if n <= 0:
        raise ValueError("cannot bin an empty set of scores")
    if n_bins is not None:
        # More bins than ranks: every bin holds one rank (the empty ones are dropped).
        # With n_bins <= n the starts strictly increase: no bin is empty.
        n_bins = min(check_positive_int(n_bins, "n_bins"), n)
        return np.arange(n_bins + 1, dtype=np.int64) * n // n_bins
    bin_size = check_positive_int(bin_size, "bin_size")
    n_full = max(n // bin_size, 1)
    starts = np.arange(n_full + 1, dtype=np.int64) * bin_size
    starts[-1] = n   # the short remainder joins the last full bin
    return starts


@takes_data(refuse=GLOBAL_SORT)
def equal_mass_bins(scores, labels, *, n_bins=None, bin_size=None, n_threads=None):
    """Statistics of equal-mass bins (Nguyen & O'Connor 2015, Algorithm 1).

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Probabilities in [0, 1].
    labels : array_like of {0, 1} or bool, shape (n,)
    n_bins, bin_size : int
        Exactly one: see :func:`equal_mass_bin_starts`. Default ``n_bins=10``.
    n_threads : int, optional
        Threads for the sort (see :func:`sparsecal.core.threads.get_n_threads`).

    Returns
    -------
    BinStats
        Independent of input order up to ties, which are broken by input order.

    Raises
    ------
    TypeError
        If ``scores`` or ``labels`` has a non-numeric dtype.
    ValueError
        If ``scores`` is empty, not in [0, 1] or NaN, if ``labels`` is not 0/1
        or of another length, or if the binning arguments are invalid.

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 1 (steps 1-4) and Section 3.1;
    Kranzlein, Liu & Schneider 2021, Section 3.2 (equal-mass bins for sparse
    tagsets).

    Examples
    --------
    >>> from sparsecal.core.binning import equal_mass_bins
    >>> stats = equal_mass_bins([0.9, 0.1, 0.4, 0.1, 0.7], [1, 0, 0, 1, 1], n_bins=2)
    >>> stats.count, stats.lower, stats.upper
    (array([2, 3]), array([0.1, 0.4]), array([0.1, 0.9]))
    """
    if n_bins is None and bin_size is None:
        n_bins = 10
    x = check_probabilities(scores, "scores")
    if x.shape[0] == 0:
        raise ValueError("cannot bin an empty set of scores")
    y = check_labels(labels, "labels", x.shape[0])
    starts = equal_mass_bin_starts(x.shape[0], n_bins=n_bins, bin_size=bin_size)
    perm, sorted_x = argsort_scores(x, n_threads=n_threads)
    return equal_mass_bins_sorted(sorted_x, y, perm, starts)


def equal_mass_bins_sorted(sorted_scores, labels, perm, starts):
    """Statistics of the equal-mass bins ``starts`` of scores already sorted.

    No validation: the arguments come from :func:`argsort_scores` and
    :func:`equal_mass_bin_starts`, so that one sort serves several binnings.

    Parameters
    ----------
    sorted_scores : ndarray of float32 or float64, shape (n,)
        Scores in ascending order (``sorted_scores`` of :func:`argsort_scores`).
    labels : ndarray of uint8, shape (n,)
        Labels in the original order.
    perm : ndarray of int64, shape (n,)
        The rank-to-index permutation of :func:`argsort_scores`.
    starts : ndarray of int64, shape (n_bins + 1,)
        From :func:`equal_mass_bin_starts`.

    Returns
    -------
    BinStats

    Raises
    ------
    ValueError
        If an array has the wrong dtype or is not contiguous (from the kernel's
        typed arguments); other invalid input is not detected.

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 1, steps 3-4 (per-bin means over the
    sorted pairs).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.core.binning import (argsort_scores, equal_mass_bin_starts,
    ...                                     equal_mass_bins_sorted)
    >>> perm, sorted_scores = argsort_scores([0.9, 0.1, 0.4, 0.1, 0.7])
    >>> labels = np.array([1, 0, 0, 1, 1], dtype=np.uint8)
    >>> equal_mass_bins_sorted(sorted_scores, labels, perm,
    ...                        equal_mass_bin_starts(5, n_bins=2)).sum_label
    array([1., 2.])
    """
    k = starts.shape[0] - 1
    count = np.empty(k, dtype=np.int64)
    sums = [np.empty(k) for _ in range(4)]
    _binning.equal_mass_bin_stats(sorted_scores, labels, perm, starts, count, *sums)
    return BinStats(count, *sums)


def replicated_cuts(multiplicity, starts):
    """Where ranks ``starts`` of a replicated sorted sample fall: the point ``k``
    holding each rank (``cw[k] <= r < cw[k + 1]``, ``cw`` the cumulative
    multiplicities) and the copies of it before the rank.

    Parameters
    ----------
    multiplicity : ndarray of int, shape (n,)
        Copies of each point, in sorted order (non-negative, not all zero).
    starts : ndarray of int64, shape (n_bins + 1,)
        Rank cuts, from 0 to ``multiplicity.sum()``.

    Returns
    -------
    k, partial : ndarray of int64, shape (n_bins + 1,)

    Examples
    --------
    >>> import numpy as np
    >>> [c.tolist() for c in replicated_cuts(np.array([2, 0, 1]), np.array([0, 1, 3]))]
    [[0, 0, 2], [0, 1, 1]]
    """
    cw = np.concatenate(([0], np.cumsum(multiplicity)))
    k = np.minimum(np.searchsorted(cw, starts, side="right") - 1, multiplicity.shape[0] - 1)
    return k, starts - cw[k]


def replicated_bin_sums(multiplicity, starts, *values, cuts=None):
    """Bin sums of a sorted sample in which point ``k`` appears ``multiplicity[k]``
    times, cut at ranks ``starts`` of the replicated sample.

    In sorted order the copies of a point are consecutive, so the replicated
    sample need not be built (nor re-sorted): the sum over ranks ``[0, r)`` is a
    cumulative sum over whole points plus ``r - cw[k]`` copies of the point ``k``
    that straddles rank ``r`` (``cw`` = cumulative multiplicities). O(n) per call.
    This is how a bootstrap replicate (a multinomial count per point) is re-binned
    into equal-mass bins.

    Parameters
    ----------
    multiplicity : ndarray of int, shape (n,)
        Copies of each point, in sorted order (non-negative, not all zero).
    starts : ndarray of int64, shape (n_bins + 1,)
        Rank cuts of the replicated sample, from 0 to ``multiplicity.sum()``
        (e.g. :func:`equal_mass_bin_starts` of that sum).
    *values : ndarray of float64, shape (n,)
        Per-point values in sorted order (e.g. scores and labels).
    cuts : (ndarray, ndarray), optional
        :func:`replicated_cuts` of ``multiplicity`` and ``starts``, if the
        caller has them already.

    Returns
    -------
    list of ndarray of float64, shape (n_bins,)
        For each of ``values``, its sum over the replicated ranks of each bin.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([0.1, 0.2, 0.7])
    >>> replicated_bin_sums(np.array([2, 0, 1]), np.array([0, 1, 3]), x)   # 0.1 0.1 | 0.7
    [array([0.1, 0.8])]
    """
    k, partial = replicated_cuts(multiplicity, starts) if cuts is None else cuts
    sums = []
    for v in values:
        cv = np.concatenate(([0.0], np.cumsum(multiplicity * v)))
        sums.append(np.diff(cv[k] + partial * v[k]))
    return sums


@takes_data(refuse=BUILDING_BLOCK)
def fixed_width_bins(scores, labels, *, n_bins=10):
    """Statistics of ``n_bins`` equal-width bins ``[i/B, (i+1)/B)`` over [0, 1].

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Probabilities in [0, 1]; the last bin includes 1.0.
    labels : array_like of {0, 1} or bool, shape (n,)
    n_bins : int, default=10

    Returns
    -------
    BinStats
        With ``edges``; empty bins are kept, with count 0 and NaN bounds (so
        ``n_bins`` may exceed the number of scores).

    Raises
    ------
    TypeError
        If ``scores`` or ``labels`` has a non-numeric dtype.
    ValueError
        If ``n_bins`` is not a positive integer or its statistics (48 bytes a
        bin) would not fit in this machine's memory, ``scores`` is empty, not
        in [0, 1] or NaN, or ``labels`` is not 0/1 or of another length.

    References
    ----------
    Nguyen & O'Connor 2015, Section 3.1 (evenly spaced bins, the procedure
    adaptive binning replaces); Kranzlein, Liu & Schneider 2021, Section 3.2.

    Examples
    --------
    >>> from sparsecal.core.binning import fixed_width_bins
    >>> stats = fixed_width_bins([0.9, 0.1, 0.4, 0.1, 0.7], [1, 0, 0, 1, 1], n_bins=4)
    >>> stats.count, stats.edges
    (array([2, 1, 1, 1]), array([0.  , 0.25, 0.5 , 0.75, 1.  ]))
    """
    n_bins = check_positive_int(n_bins, "n_bins")
    check_allocation(48 * n_bins, f"n_bins={n_bins} fixed-width bins")
    x = check_probabilities(scores, "scores")
    if x.shape[0] == 0:
        raise ValueError("cannot bin an empty set of scores")
    y = check_labels(labels, "labels", x.shape[0])
    edges = np.arange(n_bins + 1) / n_bins   # i/B exactly rounded: 0.3 is in [0.3, 0.4)
    count = np.empty(n_bins, dtype=np.int64)
    sums = [np.empty(n_bins) for _ in range(4)]
    _binning.fixed_bin_stats(x, y, edges, count, *sums)
    return BinStats(count, *sums, edges=edges)


@takes_data(refuse=BUILDING_BLOCK)
def lookup_bins(scores, boundaries, *, n_threads=None):
    """Bin index of each score: the number of ``boundaries`` ``<=`` it.

    Same as ``np.searchsorted(boundaries, scores, side="right")``: with the
    inner boundaries of :meth:`BinStats.boundaries`, every score in [0, 1] (1.0
    and scores outside the fitted range included) gets a bin.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Probabilities in [0, 1].
    boundaries : array_like of float, shape (m,)
        Sorted ascending, no NaN.
    n_threads : int, optional
        Threads for the kernel (see :func:`sparsecal.core.threads.get_n_threads`).

    Returns
    -------
    ndarray of int64, shape (n,)
        Values in ``[0, m]``.

    Raises
    ------
    TypeError
        If ``scores`` or ``boundaries`` has a non-numeric dtype.
    ValueError
        If ``scores`` is not in [0, 1] or NaN, ``boundaries`` is not 1-D,
        not sorted or holds NaN, or ``n_threads`` is invalid.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 2.2 ("Histogram Binning": a test
    score is calibrated by finding the bin it belongs to); docs/architecture.md, Semantics 7.

    Examples
    --------
    >>> from sparsecal.core.binning import lookup_bins
    >>> lookup_bins([0.05, 0.5, 1.0], [0.25, 0.5, 0.75])
    array([0, 2, 3])
    """
    x = check_probabilities(scores, "scores")
    b = as_array(boundaries, "boundaries")
    if b.dtype.kind not in "biuf":
        raise TypeError(f"boundaries must hold real numbers, got dtype {b.dtype}")
    b = np.ascontiguousarray(b, dtype=np.float64)
    if b.ndim != 1:
        raise ValueError(f"boundaries must be 1-dimensional, got shape {b.shape}")
    if b.size and (np.isnan(b).any() or (np.diff(b) < 0).any()):
        raise ValueError("boundaries must be sorted ascending and not NaN")
    out = np.empty(x.shape[0], dtype=np.int64)
    _binning.lookup_bins(x, b, out, get_n_threads(n_threads, x.shape[0]))
    return out


def bin_statistics(scores, labels, *, binning="equal-mass", n_bins=None, bin_size=None,
                   n_threads=None):
    """Bin statistics of one binary problem (equal-mass or fixed-width).

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Probabilities in [0, 1].
    labels : array_like of {0, 1} or bool, shape (n,)
    binning : {"equal-mass", "fixed"}, default="equal-mass"
        ``"equal-mass"`` takes ``n_bins`` (default 10) or ``bin_size``;
        ``"fixed"`` takes ``n_bins`` (default 10).
    n_bins, bin_size : int, optional
    n_threads : int, optional
        Threads for the sort (see :func:`sparsecal.core.threads.get_n_threads`).

    Returns
    -------
    stats : BinStats
    scores : ndarray of float32 or float64, shape (n,)
        The validated scores.
    labels : ndarray of uint8, shape (n,)
        The validated labels.
    sort : tuple or None
        ``(perm, sorted_scores, starts)`` for equal-mass bins, so that callers
        can reuse the sort; None for fixed-width bins.

    Raises
    ------
    TypeError
        If ``scores`` or ``labels`` has a non-numeric dtype.
    ValueError
        If ``binning`` is unknown, ``bin_size`` is given with fixed-width bins,
        ``scores`` is empty or invalid, or ``labels`` is invalid.

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 1; Kranzlein, Liu & Schneider 2021,
    Section 3.2 (fixed-width or equal-mass bins, 10 of them).

    Examples
    --------
    >>> from sparsecal.core.binning import bin_statistics
    >>> stats, x, y, sort = bin_statistics([0.9, 0.1, 0.4, 0.1, 0.7], [1, 0, 0, 1, 1],
    ...                                    n_bins=2)
    >>> stats.count, sort[2]
    (array([2, 3]), array([0, 2, 5]))
    >>> bin_statistics([0.9, 0.1], [1, 0], binning="fixed", n_bins=2)[3] is None
    True
    """
    check_choice(binning, "binning", {"equal-mass", "fixed"})
    x = check_probabilities(scores, "scores")
    if x.shape[0] == 0:
        raise ValueError("cannot compute a calibration error of no points")
    y = check_labels(labels, "labels", x.shape[0])
    if binning == "fixed":
        if bin_size is not None:
            raise ValueError("bin_size applies to equal-mass binning only")
        return fixed_width_bins(x, y, n_bins=10 if n_bins is None else n_bins), x, y, None
    if n_bins is None and bin_size is None:
        n_bins = 10
    starts = equal_mass_bin_starts(x.shape[0], n_bins=n_bins, bin_size=bin_size)
    perm, sorted_x = argsort_scores(x, n_threads=n_threads)
    return equal_mass_bins_sorted(sorted_x, y, perm, starts), x, y, (perm, sorted_x, starts)


def weighted_equal_mass_bins(sorted_x, y, w, perm, n_bins, bin_size):
    """Equal-mass bin statistics; with weights, bins hold equal total weight.

    With weights (zero-weight points dropped), bin ``j`` starts at the first
    point whose cumulative weight, itself included, exceeds ``j * W / B``
    (``j * bin_size * W / n`` given ``bin_size``): with unit weights these are
    exactly the unweighted rank bins.

    Parameters
    ----------
    sorted_x : ndarray of float32 or float64, shape (n,)
        Scores in ascending order (from :func:`argsort_scores`).
    y : ndarray of uint8 or float, shape (n,)
        Labels in the original order.
    w : ndarray of float64, shape (n,), or None
        Non-negative weights in the original order; None for unit weights.
    perm : ndarray of int64, shape (n,)
        The rank-to-index permutation of :func:`argsort_scores`.
    n_bins, bin_size : int or None
        Exactly one is not None.

    Returns
    -------
    BinStats
        ``count`` is the number of points per bin; with weights, ``sum_score``
        and ``sum_label`` are the weighted means times ``count``.

    Raises
    ------
    ValueError
        If ``n_bins`` or ``bin_size`` (the one given) is not a positive
        integer, or weighted ``n_bins`` exceeds 2**53; the arrays are not
        validated.

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 1 (equal-mass bins), with sample weights
    as in the weighted recalibrators of docs/architecture.md, Semantics 7.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.core.binning import argsort_scores, weighted_equal_mass_bins
    >>> perm, sx = argsort_scores([0.9, 0.1, 0.4, 0.1, 0.7])
    >>> y = np.array([1, 0, 0, 1, 1], dtype=np.uint8)
    >>> w = np.array([1.0, 1.0, 2.0, 0.0, 1.0])
    >>> weighted_equal_mass_bins(sx, y, w, perm, 2, None).count
    array([1, 3])
    >>> weighted_equal_mass_bins(sx, y, None, perm, 2, None).count
    array([2, 3])
    """
    n = sorted_x.shape[0]
    if w is None:
        starts = equal_mass_bin_starts(n, n_bins=n_bins, bin_size=bin_size)
        return equal_mass_bins_sorted(sorted_x, y, perm, starts)
    ws = w[perm]
    keep = ws > 0
    sx, ws, ys = sorted_x[keep].astype(np.float64), ws[keep], y[perm][keep]
    starts = weighted_bin_starts(np.cumsum(ws), sx.shape[0], n_bins, bin_size)
    count = np.diff(starts)
    sum_w = np.add.reduceat(ws, starts[:-1])
    # Weighted bins: "count" is the number of points, means are weighted.
    return BinStats(count, np.add.reduceat(ws * sx, starts[:-1]) / sum_w * count,
                    np.add.reduceat(ws * ys, starts[:-1]) / sum_w * count,
                    sx[starts[:-1]], sx[starts[1:] - 1])


def weighted_bin_starts(cum, n_kept, n_bins, bin_size):
    """Starts of weighted equal-mass bins over points with cumulative weights
    ``cum``: bin ``j`` starts at the first point whose cumulative weight, itself
    included, exceeds ``j * W / B`` (``j * bin_size * W / n_kept`` given
    ``bin_size``), the rule of :func:`weighted_equal_mass_bins`.

    Parameters
    ----------
    cum : ndarray of float64, shape (m,)
        Cumulative positive weights in score order (``W = cum[-1]``).
    n_kept : int
        Points with positive weight (``bin_size`` counts them; ``m`` may be
        smaller when a point of ``cum`` stands for several, as in the
        distributed weighted histogram).
    n_bins, bin_size : int or None
        Exactly one is not None.

    Returns
    -------
    ndarray of int64
        Indices into ``cum`` where bins start, with 0 first and ``m`` last.

    Raises
    ------
    ValueError
        If the ``n_bins`` or ``bin_size`` given is not a positive integer, or
        ``n_bins`` exceeds 2**53.

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 1 (equal-mass bins), with sample weights
    as in docs/architecture.md, Semantics 7.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.core.binning import weighted_bin_starts
    >>> weighted_bin_starts(np.cumsum([1.0, 2.0, 1.0]), 3, 2, None)
    array([0, 1, 3])
    """
    if n_bins is not None:
        k, step, denom = check_positive_int(n_bins, "n_bins"), 1, n_bins
        if k > 2**53:   # cut j * W / k is computed in float64
            raise ValueError(f"n_bins={k} is more weighted bins than float64 can cut "
                             "(at most 2**53)")
    else:
        bin_size = check_positive_int(bin_size, "bin_size")
        k, step, denom = max(n_kept // bin_size, 1), bin_size, n_kept
    return _weighted_starts(cum, k, step, denom)


def _weighted_starts(cum, k, step, denom):
    """Bin starts of cumulative weights ``cum`` cut at ``c_j = (j*step) * W / denom``,
    ``j = 1 .. k-1`` (``W = cum[-1]``, float64 as written): the unique values of
    ``searchsorted(cum, c_j, side="right")`` with 0 and ``n`` added.

    Point ``i > 0`` starts a bin when some cut lies in ``[cum[i-1], cum[i])``. The
    cuts grow with ``j``, so the number of cuts below a value is found by bisection
    over ``j``: O(n log k) time and O(n) memory, however large ``k`` is (the cuts
    themselves are never listed), and the same bins as listing them.
    """
    n, total = cum.shape[0], cum[-1]
    lo = np.zeros(n, dtype=np.int64)          # cuts below cum[i]: in [lo, hi]
    hi = np.full(n, k - 1, dtype=np.int64)
    while (lo < hi).any():
        mid = (lo + hi + 1) // 2
        below = (mid * step).astype(np.float64) * total / denom < cum
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid - 1)
    new_bin = np.flatnonzero(lo[1:] > lo[:-1]) + 1
    return np.concatenate(([0], new_bin, [n]))


def lookup_bin_means(keys, values, w, boundaries):
    """Per-bin (weighted) mean of ``values`` over the bins that ``lookup_bins``
    puts ``keys`` in.

    The rule ``predict`` uses, after dropping every boundary below a bin that
    no (positively weighted) point falls in. So tied keys are never split
    between bins (rank cuts inside a run of ties would otherwise give the tied
    value the statistics of a bin that holds only part of the run), and every
    bin has a value.

    Parameters
    ----------
    keys : ndarray of float, shape (n,)
        Scores in [0, 1] (validated by :func:`lookup_bins`).
    values : ndarray of float, shape (n,)
        The values to average (labels, or scaled scores).
    w : ndarray of float64, shape (n,), or None
        Non-negative weights; None for unit weights.
    boundaries : array_like of float
        Candidate inner boundaries, e.g. from :meth:`BinStats.boundaries`.

    Returns
    -------
    boundaries : ndarray of float64, shape (m,)
        The boundaries kept, sorted and unique.
    means : ndarray of float64, shape (m + 1,)

    Raises
    ------
    TypeError, ValueError
        From :func:`lookup_bins`, if ``keys`` or ``boundaries`` is invalid.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 2.2 ("Histogram Binning",
    "Scaling Binning": output the mean of the bin a score falls in);
    docs/architecture.md, Semantics 7.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.core.binning import lookup_bin_means
    >>> keys = np.array([0.1, 0.1, 0.4, 0.7, 0.9])
    >>> values = np.array([0.0, 1.0, 0.0, 1.0, 1.0])
    >>> lookup_bin_means(keys, values, None, [0.1, 0.5])   # no key below 0.1
    (array([0.5]), array([0.33333333, 1.        ]))
    """
    boundaries = np.unique(boundaries)
    ww = np.ones(keys.shape[0]) if w is None else w
    mass = np.bincount(lookup_bins(keys, boundaries), weights=ww,
                       minlength=boundaries.shape[0] + 1)
    boundaries = boundaries[mass[:-1] > 0]   # the last bin always holds the top key
    idx = lookup_bins(keys, boundaries)
    k = boundaries.shape[0] + 1
    mass = np.bincount(idx, weights=ww, minlength=k)
    return boundaries, np.bincount(idx, weights=ww * values, minlength=k) / mass


@takes_data(refuse=BUILDING_BLOCK)
def histogram_counts(scores, edges):
    """Scores per histogram bin of ``edges``, scores outside the range counted
    in the first or last bin (the score histogram of the reliability diagram).

    Each score's bin depends on that score only, so the counts of parts of the
    scores add up to the counts of the whole, bit for bit (the distributed
    report adds its chunks' counts).

    Parameters
    ----------
    scores : array_like of float, shape (n,)
    edges : ndarray of float64, shape (m + 1,)
        Increasing bin edges; bins ``[edges[j], edges[j + 1])``, the last one
        closed (``np.histogram``'s rule).

    Returns
    -------
    ndarray of int64, shape (m,)

    References
    ----------
    Nguyen & O'Connor 2015, Fig. 1(d) (the score distribution under the
    calibration curve).

    Examples
    --------
    >>> import numpy as np
    >>> histogram_counts(np.array([0.0, 0.2, 0.5, 0.9, 1.0]), np.array([0.1, 0.5, 0.9]))
    array([2, 3])
    """
    x = np.asarray(scores, dtype=np.float64)
    return np.histogram(np.clip(x, edges[0], edges[-1]), bins=edges)[0].astype(np.int64)
