"""The exact score histogram of distributed entries: per-chunk counts over fixed
edges, added in a tree."""
import numpy as np

from .._docs import fill_doc
from ..core.binning import histogram_counts
from ..core.validation import as_float_array
from .checks import check_dask_entries
from .reduce import tree_merge

__all__ = ["score_histogram"]


def _chunk_counts(block, index, edges):
    return histogram_counts(block.score, edges)


def _add(parts):
    return np.sum(parts, axis=0, dtype=np.int64)


@fill_doc
def score_histogram(entries, edges):
    """Entries per bin of ``edges`` (the outer bins open): the report's score histogram.

    Parameters
    ----------
    {dask_entries}
    edges : array_like of float, shape (m + 1,)
        Increasing, e.g. ``ReliabilityDisplay.from_results(...).hist_edges``.

    Returns
    -------
    ndarray of int64, shape (m,)
        :func:`sparsecal.core.binning.histogram_counts` of every score.

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x = np.random.default_rng(0).dirichlet(np.ones(4), size=200)
    >>> entries = sc.threshold(da.from_array(x, chunks=(60, 4)), np.arange(200) % 4)
    >>> int(score_histogram(entries, np.linspace(0, 1, 6)).sum()) == len(entries.compute())
    True
    """
    check_dask_entries(entries)
    edges = as_float_array(edges, "edges").astype(np.float64)
    if edges.shape[0] < 2 or not np.isfinite(edges).all() or (np.diff(edges) <= 0).any():
        raise ValueError(f"edges must be at least two finite, increasing values, got "
                         f"{edges!r:.80}")
    return tree_merge(_chunk_counts, _add, entries.blocks, edges)
