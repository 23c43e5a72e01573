"""The top-label view of distributed entries: a token's entries all lie in its
row's chunk, so each chunk's top-label entries are the whole's."""
import numpy as np

from .._docs import fill_doc
from ..core.dispatch import implements
from ..metrics.toplabel import top_label as _one_machine
from ._dask import require_dask
from .checks import check_dask_entries

__all__ = ["top_label"]


def _chunk(block):
    return _one_machine(block) if len(block) else (block.score, block.label)


@implements(_one_machine)
@fill_doc
def top_label(entries):
    """:func:`sparsecal.top_label` of distributed entries, chunk by chunk.

    Parameters
    ----------
    {dask_entries}

    Returns
    -------
    confidence, correct : dask.array.Array
        Lazy, one chunk per chunk of ``entries``; no entries give empty arrays.

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> s = np.array([[0.6, 0.4, 0.0], [0.005, 0.005, 0.99], [0.2, 0.7, 0.1]])
    >>> conf, correct = top_label(sc.threshold(da.from_array(s, chunks=(2, 3)), [0, 1, 1]))
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
