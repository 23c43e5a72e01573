"""Generated data: a CCG-like synthetic tagger with frequency-dependent miscalibration."""
from .synthetic import SyntheticTagger, make_tagger_outputs

__all__ = ["SyntheticTagger", "make_tagger_outputs"]
