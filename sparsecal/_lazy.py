"""The one export rule of sparsecal and every subpackage: a package's public
names are the keys of its ``_EXPORTS`` table (``__all__`` is derived from it),
each loaded from the module the table names on first use (PEP 562), so that
importing a package, or one module of it, imports no other module."""
import functools
import importlib
import sys

__all__ = ["lazy_exports"]


def lazy_exports(package, exports):
    """The ``__all__``, ``__getattr__`` and ``__dir__`` of ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : dict of str to str
        Public name -> the submodule of the package that defines it.

    Returns
    -------
    (list, callable, callable)
        ``__all__`` (the sorted names), ``__getattr__``, which imports a
        name's module (or a submodule asked for by name), stores the value in
        the package (later look-ups skip it) and returns it, and ``__dir__``.
        A name spelled as its own module (``cli.main``) is loaded at once:
        importing the module by its path would otherwise bind the module over
        the name.
    """
    namespace = vars(sys.modules[package])

    @functools.cache
    def submodules():
        import pkgutil
        return {m.name for m in pkgutil.iter_modules(namespace["__path__"])
                if not m.name.startswith("_")}

    def __getattr__(name):
        if name in exports:
            value = getattr(importlib.import_module(f".{exports[name]}", package), name)
        elif not name.startswith("_") and name in submodules():
            value = importlib.import_module(f".{name}", package)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value   # later look-ups skip __getattr__
        return value

    def __dir__():
        return sorted(set(namespace) | set(exports) | submodules())

    for name, module in exports.items():
        if name == module:
            __getattr__(name)
    return sorted(exports), __getattr__, __dir__
