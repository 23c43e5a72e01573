"""Optional dependencies (extras) imported on first use, with one error naming
the ``pip install`` that provides them."""
import importlib

__all__ = ["import_extra"]


def import_extra(module, extra, purpose):
    """Import ``module`` of the optional extra ``extra``.

    Parameters
    ----------
    module : str
        The module to import, e.g. ``"pandas"``.
    extra : str
        The sparsecal extra that installs it, e.g. ``"pandas"``.
    purpose : str
        What needs it, for the message, e.g. ``"to_frame()"``.

    Returns
    -------
    module

    Raises
    ------
    ImportError
        If ``module`` is not installed; the message names
        ``pip install "sparsecal[extra]"``.

    Examples
    --------
    >>> from sparsecal._extras import import_extra
    >>> import_extra("json", "none", "this example").__name__
    'json'
    >>> import_extra("no_such_module_xyz", "pandas", "to_frame()")
    Traceback (most recent call last):
    ...
    ImportError: to_frame() needs no_such_module_xyz: pip install "sparsecal[pandas]"
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f'{purpose} needs {module}: pip install "sparsecal[{extra}]"') \
            from None
