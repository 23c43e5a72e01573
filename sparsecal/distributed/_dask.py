"""The one import of the optional ``dask`` extra, with the error that names it."""

__all__ = ["require_dask"]

_INSTALL = "pip install sparsecal[dask]"


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
        ``pip install sparsecal[dask]``.

    Examples
    --------
    >>> require_dask().__name__
    'dask'
    """
    try:
        import dask
        import dask.array  # noqa: F401  (the array collection)
    except ImportError as exc:
        raise ImportError("sparsecal.distributed needs the dask extra: "
                          f"{_INSTALL}") from exc
    return dask
