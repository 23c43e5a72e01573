"""The one import of the optional ``dask`` extra, with the error that names it."""

__all__ = ["require_dask"]

from .._extras import require


def require_dask():
    """The ``dask`` module, or an ImportError naming the extra to install.

    Returns
    -------
    module
        :mod:`dask` (with :mod:`dask.array` imported).

    Raises
    ------
    ImportError
        If ``dask[array]`` is not installed; the message names
        ``pip install "sparsecal[dask]"`` (:func:`sparsecal._extras.require`).

    Examples
    --------
    >>> require_dask().__name__
    'dask'
    """
    dask = require("dask", "dask", "sparsecal.distributed")
    require("dask.array", "dask", "sparsecal.distributed")   # the array collection
    return dask
