"""The exact score histogram of distributed entries: counts over fixed edges,
one pass.

Each chunk counts its scores per histogram bin
(:func:`sparsecal.core.binning.histogram_counts`, the single-machine rule); the
integer counts are merged by adding, in a tree on the workers, so they equal
the counts of every score on one machine bit for bit. What travels is one
integer per bin per chunk. The report draws them under the calibration curve
over ``ReliabilityDisplay.from_results(...).hist_edges`` (known once
the bins are computed: a second pass).
"""
import numpy as np

from ..core.binning import histogram_counts
from ..core.validation import as_float_array
from .checks import check_dask_entries
from .reduce import tree_merge

__all__ = ["score_histogram"]


def _chunk_counts(block, index, edges):
    """One chunk's counts per bin."""
    return histogram_counts(block.score, edges)


def _add(parts):
    """Counts of several chunks (exact integer sums)."""
    return np.sum(parts, axis=0, dtype=np.int64)


def score_histogram(entries, edges):
    """Entries per histogram bin of ``edges`` of distributed entries, scores
    outside the range counted in the first or last bin: the histogram under the
    calibration curve on a cluster.

    Parameters
    ----------
    entries : DaskEntries
    edges : array_like of float, shape (m + 1,)
        Increasing bin edges, e.g. from
        ``ReliabilityDisplay.from_results(...).hist_edges``.

    Returns
    -------
    ndarray of int64, shape (m,)
        :func:`sparsecal.core.binning.histogram_counts` of every score, bit
        for bit.

    Raises
    ------
    TypeError
        If ``entries`` is not ``DaskEntries``.
    ValueError
        Edges that are not finite, fewer than two, or not increasing.

    References
    ----------
    Nguyen & O'Connor 2015, Fig. 1(d) (the score distribution under the
    calibration curve).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.core.binning import histogram_counts
    >>> from sparsecal.distributed import threshold
    >>> x = np.random.default_rng(0).dirichlet(np.ones(4), size=200)
    >>> entries = threshold(da.from_array(x, chunks=(60, 4)), np.arange(200) % 4)
    >>> edges = np.linspace(0.0, 1.0, 6)
    >>> got = score_histogram(entries, edges)
    >>> ref = histogram_counts(sc.threshold(x, np.arange(200) % 4).score, edges)
    >>> bool((got == ref).all()), int(got.sum()) == len(sc.threshold(x, np.arange(200) % 4))
    (True, True)
    """
    check_dask_entries(entries)
    edges = as_float_array(edges, "edges").astype(np.float64)
    if edges.shape[0] < 2 or not np.isfinite(edges).all() or (np.diff(edges) <= 0).any():
        raise ValueError(f"edges must be at least two finite, increasing values, got "
                         f"{edges!r:.80}")
    return tree_merge(_chunk_counts, _add, entries.blocks, edges)
