"""Sorting and binning of scores: the statistics every metric is computed from.

Equal-mass (adaptive) binning follows Nguyen & O'Connor 2015, Algorithm 1: sort
by score ascending (stable: ties keep entry order), cut into bins of ``bin_size``
points and merge a short last bin into the one before it; or, given ``n_bins``,
bin ``i`` holds sorted ranks ``[floor(i*n/B), floor((i+1)*n/B))``. Binning is by
rank, so tied scores may fall in different bins. Fixed-width bins split [0, 1]
into ``n_bins`` equal intervals ``[i/B, (i+1)/B)``, the last one closed.
"""
from dataclasses import dataclass
import weakref

import numpy as np

from .._docs import fill_doc
from . import _binning, _sort
from .threads import get_n_threads
from .validation import (as_array, as_float_array, check_allocation, check_choice,
                          check_labels, check_positive_int, check_probabilities)
from .dispatch import BUILDING_BLOCK, GLOBAL_SORT, takes_data

__all__ = ["BinStats", "argsort_scores", "bin_statistics", "equal_mass_bin_starts",
           "equal_mass_bins", "equal_mass_bins_sorted", "fixed_width_bins", "histogram_counts",
           "lookup_bin_means", "lookup_bins",
           "segment_bin_starts", "weighted_bin_starts", "weighted_equal_mass_bins"]


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

    def __repr__(self):
        kind = "equal-mass" if self.edges is None else "fixed-width"
        return f"BinStats(n_bins={self.n_bins}, n={int(self.count.sum())}, {kind})"

    @property
    def n_bins(self):
        """Number of bins."""
        return self.count.shape[0]

    @property
    def mean_score(self):
        """Mean score per bin; NaN when empty."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.sum_score / self.count

    @property
    def mean_label(self):
        """Fraction of positive labels per bin."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.sum_label / self.count

    def boundaries(self):
        """Inner boundaries for :func:`lookup_bins`, covering [0, 1] without gaps: the
        edges of fixed-width bins; for equal-mass bins, halfway between one bin's
        largest score and the next one's smallest (at the latter when halfway rounds
        onto the former).
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
@fill_doc
def argsort_scores(scores, *, n_threads=None):
    """Stable ascending argsort of float scores, and the sorted scores.

    A parallel LSD radix sort on the float bit patterns; the order of
    ``np.argsort(scores, kind="stable")`` (-0.0 and 0.0 count as equal). The
    sort of an :class:`~sparsecal.Entries`' scores is remembered
    (:func:`remember_sort`): later calls return the same read-only arrays.

    Parameters
    ----------
    scores : array_like of float32 or float64, shape (n,)
        No NaN.
    {n_threads}

    Returns
    -------
    perm : ndarray of int64, shape (n,)
    sorted_scores : ndarray, shape (n,), same dtype as ``scores``

    Examples
    --------
    >>> from sparsecal.core.binning import argsort_scores
    >>> perm, sorted_scores = argsort_scores([0.9, 0.1, 0.4, 0.1, 0.7])
    >>> perm
    array([1, 3, 2, 4, 0])
    >>> sorted_scores
    array([0.1, 0.1, 0.4, 0.7, 0.9])
    """
    memo = _MEMOS.get(id(scores))
    if memo is not None and memo.ref() is scores:
        if memo.order is None:
            order = None if memo.carried is None else _carried(scores, memo.carried())
            memo.order = order or _argsort(scores, n_threads)
            memo.carried = None
            for a in memo.order:
                a.flags.writeable = False
        return memo.order
    x = np.ascontiguousarray(as_float_array(scores, "scores"))
    if np.isnan(x).any():
        raise ValueError("scores contains NaN, which has no place in a sort order")
    return _argsort(x, n_threads)


def _argsort(x, n_threads):
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


# The remembered sorts, by the id of the score array (:func:`remember_sort`).
_MEMOS = {}


class _Memo:
    """The sort of one score array, once computed, or ``carried``: a function
    giving a candidate order (an int64 permutation, or None), checked before use.
    """

    __slots__ = ("ref", "order", "carried")

    def __init__(self, scores, carried):
        key = id(scores)   # the callback holds the key, not the memo (no cycle)
        self.ref = weakref.ref(scores, lambda ref: _MEMOS.pop(key, None)
                               if getattr(_MEMOS.get(key), "ref", None) is ref else None)
        self.order, self.carried = None, carried


def remember_sort(scores, carried=None):
    """Remember the sort of ``scores`` from the first :func:`argsort_scores` of it
    for as long as it lives, if nothing can change it (it and the arrays under
    it are read-only): 8 bytes per value for the order and the value's own size
    for the sorted values (12 bytes per float32 value, 16 per float64).

    ``carried`` (optional, see :func:`carry`) is a function returning a candidate
    order, e.g. that of an array ``scores`` was derived from: it is used instead
    of a sort if it is exactly the stable order of ``scores`` (checked in one
    pass, which stops at the first rank out of order).
    """
    if (scores.ndim == 1 and scores.dtype in (np.float32, np.float64)
            and scores.flags.c_contiguous and immutable(scores)
            and remembered_sort(scores) is None):
        _MEMOS[id(scores)] = _Memo(scores, carried)


def carry(parent, derive=None):
    """A ``carried`` function for :func:`remember_sort`: the order remembered for
    the array ``parent`` (held weakly until its order exists), through
    ``derive(perm)`` if given."""
    order = remembered_sort(parent)
    if order is not None:
        perm = order[0]
        return lambda: perm if derive is None else derive(perm)
    ref = weakref.ref(parent)

    def carried():
        p = ref()
        order = None if p is None else remembered_sort(p)
        return None if order is None else order[0] if derive is None else derive(order[0])
    return carried


def remembered_sort(scores):
    """The order :func:`argsort_scores` remembered for ``scores``, or None."""
    memo = _MEMOS.get(id(scores))
    return memo.order if memo is not None and memo.ref() is scores else None


def immutable(a):
    """Whether nothing can change ``a``: it and every array and buffer under it are
    read-only."""
    while isinstance(a, np.ndarray):
        if a.flags.writeable:
            return False
        a = a.base
    if a is None:
        return True
    try:
        return memoryview(a).readonly
    except TypeError:
        return False


def _carried(x, perm):
    """``(perm, x[perm])`` if ``perm`` is the stable order of ``x``, else None."""
    if perm is None or perm.shape != x.shape:
        return None
    sorted_x = np.empty_like(x)
    return (perm, sorted_x) if _sort.carried_order(x, perm, sorted_x) else None


def equal_mass_bin_starts(n, n_bins=None, bin_size=None):
    """Sorted-rank boundaries of equal-mass bins: bin ``b`` holds ranks
    ``starts[b]:starts[b + 1]``.

    Exactly one of ``n_bins`` and ``bin_size`` is given (see the module). With
    ``n < n_bins`` the empty bins are dropped (one rank per bin).

    Parameters
    ----------
    n : int
        Number of sorted scores.
    n_bins, bin_size : int

    Returns
    -------
    ndarray of int64, shape (n_bins_used + 1,)

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


def segment_bin_starts(sizes, n_bins=None, bin_size=None):
    """:func:`equal_mass_bin_starts` of consecutive segments of ranks (one tag's
    sorted entries each, ``sizes`` of them, all > 0), each segment binned alone.

    Returns
    -------
    starts : ndarray of int64
        Bin ``b`` holds ranks ``starts[b]:starts[b + 1]`` (the last ends at ``sum(sizes)``).
    first : ndarray of int64, shape (len(sizes) + 1,)
        Segment ``s`` has bins ``first[s]:first[s + 1]``.

    Examples
    --------
    >>> from sparsecal.core.binning import segment_bin_starts
    >>> segment_bin_starts([5, 3], n_bins=2)
    (array([0, 2, 5, 6, 8]), array([0, 2, 4]))
    """
    n = np.asarray(sizes, dtype=np.int64)
    k = np.minimum(n_bins, n) if n_bins is not None else np.maximum(n // bin_size, 1)
    first = np.concatenate(([0], np.cumsum(k)))
    seg = np.repeat(np.arange(n.shape[0]), k)
    j = np.arange(first[-1]) - first[seg]
    step = j * n[seg] // k[seg] if n_bins is not None else j * bin_size
    offsets = np.concatenate(([0], np.cumsum(n)))
    return np.append(offsets[seg] + step, offsets[-1]), first


@takes_data(refuse=GLOBAL_SORT)
@fill_doc
def equal_mass_bins(scores, labels, *, n_bins=None, bin_size=None, n_threads=None):
    """Statistics of equal-mass bins (Nguyen & O'Connor 2015, Algorithm 1).

    Parameters
    ----------
    {scores_labels}
    n_bins, bin_size : int
        Exactly one (:func:`equal_mass_bin_starts`); default ``n_bins=10``.
    {n_threads}

    Returns
    -------
    BinStats

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
    """Statistics of the equal-mass bins ``starts`` over the output of
    :func:`argsort_scores` (``labels`` in the original order), unvalidated, so
    that one sort serves several binnings.
    """
    k = starts.shape[0] - 1
    count = np.empty(k, dtype=np.int64)
    sums = [np.empty(k) for _ in range(4)]
    _binning.equal_mass_bin_stats(sorted_scores, labels, perm, starts, count, *sums)
    return BinStats(count, *sums)


def check_fixed_bins(n_bins, n_sets=1, name="n_bins"):
    """``n_bins`` (the argument ``name``) as a positive int whose fixed-width bins
    (count and four sums, for each of ``n_sets`` sets) fit in memory."""
    n_bins = check_positive_int(n_bins, name)
    check_allocation(48 * n_bins * n_sets, f"{name}={n_bins} fixed-width bins")
    return n_bins


@takes_data(refuse=BUILDING_BLOCK)
@fill_doc
def fixed_width_bins(scores, labels, *, n_bins=10):
    """Statistics of ``n_bins`` equal-width bins ``[i/B, (i+1)/B)`` of [0, 1], the
    last one closed; empty bins are kept (count 0, NaN bounds).

    Parameters
    ----------
    {scores_labels}
    n_bins : int, default=10

    Returns
    -------
    BinStats
        With ``edges``.

    Examples
    --------
    >>> from sparsecal.core.binning import fixed_width_bins
    >>> stats = fixed_width_bins([0.9, 0.1, 0.4, 0.1, 0.7], [1, 0, 0, 1, 1], n_bins=4)
    >>> stats.count, stats.edges
    (array([2, 1, 1, 1]), array([0.  , 0.25, 0.5 , 0.75, 1.  ]))
    """
    n_bins = check_fixed_bins(n_bins)
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
@fill_doc
def lookup_bins(scores, boundaries, *, n_threads=None):
    """Bin index of each score: the number of ``boundaries`` ``<=`` it
    (``np.searchsorted(boundaries, scores, side="right")``).

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Probabilities in [0, 1].
    boundaries : array_like of float, shape (m,)
        Sorted ascending, no NaN (e.g. :meth:`BinStats.boundaries`).
    {n_threads}

    Returns
    -------
    ndarray of int64, shape (n,)
        Values in ``[0, m]``.

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


@fill_doc
def bin_statistics(scores, labels, *, binning="equal-mass", n_bins=None, bin_size=None,
                   n_threads=None):
    """Bin statistics of one binary problem, with the validated inputs and the sort.

    Parameters
    ----------
    {scores_labels}
    {binning}
    {n_threads}

    Returns
    -------
    stats : BinStats
    scores, labels : ndarray
        The validated inputs.
    sort : tuple or None
        ``(perm, sorted_scores)`` of equal-mass bins, for reuse; None for
        fixed-width bins.
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
    return equal_mass_bins_sorted(sorted_x, y, perm, starts), x, y, (perm, sorted_x)


def weighted_equal_mass_bins(sorted_x, y, w, perm, n_bins, bin_size):
    """Equal-mass bin statistics of sorted scores, bins of equal total weight ``w``
    (None: unit weights, the rank bins); zero-weight points are dropped.

    Bins start as :func:`weighted_bin_starts` says. ``count`` counts points; with
    weights, ``sum_score`` and ``sum_label`` are the weighted means times ``count``.
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
    """Indices into cumulative weights ``cum`` where weighted equal-mass bins start
    (0 first, ``len(cum)`` last).

    Bin ``j`` starts at the first point whose cumulative weight, itself included,
    exceeds ``j * W / n_bins`` (``j * bin_size * W / n_kept`` given ``bin_size``),
    ``W = cum[-1]``; ``n_kept`` counts the points of positive weight (more than
    ``len(cum)`` when a point of ``cum`` stands for several).
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
    """Unique ``searchsorted(cum, j * step * W / denom, side="right")`` for
    ``j = 1 .. k-1``, with 0 and ``len(cum)``, found by bisection over ``j``:
    O(n log k) however large ``k`` is.
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
    """Per-bin (weighted) mean of ``values`` over the bins of ``boundaries`` that
    :func:`lookup_bins` puts ``keys`` in, after dropping each boundary below an
    empty bin (so tied keys are never split and every bin has a value).

    Returns the boundaries kept and the ``len(kept) + 1`` means.
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
    """Scores per bin ``[edges[j], edges[j + 1])`` (the last one closed), scores
    outside counted in the first or last bin: the score histogram of the
    reliability diagram. Counts of parts add up to those of the whole.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
    edges : ndarray of float64, shape (m + 1,)
        Increasing.

    Returns
    -------
    ndarray of int64, shape (m,)

    Examples
    --------
    >>> import numpy as np
    >>> histogram_counts(np.array([0.0, 0.2, 0.5, 0.9, 1.0]), np.array([0.1, 0.5, 0.9]))
    array([2, 3])
    """
    x = np.asarray(scores, dtype=np.float64)
    return np.histogram(np.clip(x, edges[0], edges[-1]), bins=edges)[0].astype(np.int64)
