"""Generated data: a CCG-like synthetic tagger with frequency-dependent miscalibration."""
from .._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {"SyntheticTagger": "synthetic", "make_tagger_outputs": "synthetic"}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
