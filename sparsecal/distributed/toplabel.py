"""The top-label view of distributed entries: :func:`sparsecal.top_label` on a
cluster.

A token's entries all lie in its row's chunk (each chunk is thresholded on its
own rows), so each chunk's top-label entries
(:func:`sparsecal.metrics.toplabel.top_label`) are the whole's, chunk after
chunk: nothing travels but the result, when it is computed.
"""
import numpy as np

from ..core.dispatch import implements
from ..metrics.toplabel import top_label as _one_machine
from ._dask import require_dask
from .checks import check_dask_entries

__all__ = ["top_label"]


def _chunk(block):
    """The chunk's top-label confidences and correctness (on a worker); a chunk
    without entries has none."""
    return _one_machine(block) if len(block) else (block.score, block.label)


@implements(_one_machine)
def top_label(entries):
    """Top-label confidence and correctness of distributed entries, per chunk.

    Parameters
    ----------
    entries : DaskEntries
        In token order, with tokens (:func:`~sparsecal.distributed.threshold`).

    Returns
    -------
    confidence : dask.array.Array (dtype of the scores)
    correct : dask.array.Array of uint8
        Lazy, one chunk per chunk of ``entries``, of unknown sizes (``nan``:
        the tokens with an entry in each chunk are known only once computed;
        ``compute_chunk_sizes()`` finds them in one pass). Computed, they equal
        :func:`sparsecal.top_label` of the whole entries, element by element.
        Entries without any entry at all give empty arrays (the single machine
        raises; telling would take a pass over the data).

    Raises
    ------
    TypeError
        If ``entries`` is not DaskEntries.
    ValueError
        When a chunk is computed: entries without tokens or out of token order.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.2 (top-label binarisation).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> s = np.array([[0.6, 0.4, 0.0], [0.005, 0.005, 0.99], [0.2, 0.7, 0.1]])
    >>> conf, correct = top_label(threshold(da.from_array(s, chunks=(2, 3)), [0, 1, 1]))
    >>> conf.compute().tolist(), correct.compute().tolist()
    ([0.6, 0.99, 0.7], [1, 0, 1])
    """
    dask = require_dask()
    check_dask_entries(entries)
    task = dask.delayed(_chunk, pure=True, nout=2)
    parts = [task(b) for b in entries.blocks]
    return tuple(dask.array.concatenate([dask.array.from_delayed(p[i], shape=(np.nan,),
                                                                dtype=dtype) for p in parts])
                 for i, dtype in enumerate((entries.dtype, np.uint8)))
