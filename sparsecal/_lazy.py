"""Public names of a package loaded from its modules on first use (PEP 562),
so that importing a package, or one module of it, imports no other module."""
import importlib
import sys

__all__ = ["lazy_exports"]


def lazy_exports(package, exports, submodules=()):
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : dict of str to str
        Public name -> the module of the package that defines it.
    submodules : sequence of str, optional
        Submodules also loaded on first use as attributes.

    Returns
    -------
    (callable, callable)
        ``__getattr__``, which imports a name's module, stores the name in the
        package (later look-ups skip it) and returns it, and ``__dir__``.
    """
    def __getattr__(name):
        if name in exports:
            value = getattr(importlib.import_module(f".{exports[name]}", package), name)
        elif name in submodules:
            value = importlib.import_module(f".{name}", package)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        vars(sys.modules[package])[name] = value   # later look-ups skip __getattr__
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(exports) | set(submodules))

    return __getattr__, __dir__
