"""Optional extras: import one on first use, or say which ``pip install`` gives it.

Modules that need a library outside the core dependencies import it through
:func:`require` inside the function that needs it, so that ``import sparsecal``
never imports it and a missing library is one ``ImportError`` naming the extra.
"""
import importlib

__all__ = ["require"]


def require(module, extra, purpose):
    """Import ``module``, or raise an ImportError naming ``pip install sparsecal[extra]``.

    Parameters
    ----------
    module : str
        The import name (``"transformers"``, ``"torchcrf"``).
    extra : str
        The sparsecal extra that installs it (``"hf"``, ``"crf"``, ``"crfsuite"``).
    purpose : str
        What needs it, for the message (a function's name).

    Returns
    -------
    module

    Raises
    ------
    ImportError
        If ``module`` cannot be imported (not installed, or hidden by
        ``sys.modules[module] = None``), with the command that installs it.

    Examples
    --------
    >>> from sparsecal._extras import require
    >>> require("json", "none", "an example").__name__
    'json'
    >>> require("no_such_module_xyz", "hf", "word_probabilities")
    Traceback (most recent call last):
    ...
    ImportError: word_probabilities needs no_such_module_xyz: pip install "sparsecal[hf]"
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f'{purpose} needs {module}: pip install "sparsecal[{extra}]"'
                          ) from exc
