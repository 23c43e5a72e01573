"""The one import of the optional ``dask`` extra."""

__all__ = ["require_dask"]

from .._extras import require


def require_dask():
    """The ``dask`` module (with :mod:`dask.array`), or an ImportError naming
    ``pip install "sparsecal[dask]"``."""
    dask = require("dask", "dask", "sparsecal.distributed")
    require("dask.array", "dask", "sparsecal.distributed")   # the array collection
    return dask
