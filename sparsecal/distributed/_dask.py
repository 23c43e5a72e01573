"""The one import of the optional ``dask`` extra."""

__all__ = ["require_dask"]

from .._extras import require


def require_dask():
    """The ``dask`` module, or an ImportError naming the extra."""
    dask = require("dask", "dask", "sparsecal.distributed")
    require("dask.array", "dask", "sparsecal.distributed")   # the array collection
    return dask
