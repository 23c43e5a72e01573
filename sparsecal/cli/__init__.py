"""The ``sparsecal`` command."""
from .._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {"main": "main"}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
