"""Files: score matrices, gold tags, tag indexes, entries, saved calibrators, and
atomic replacement of outputs."""
from .arrays import load_entries, load_gold, load_scores, load_tag_index, save_entries

__all__ = ["load_entries", "load_gold", "load_scores", "load_tag_index", "save_entries"]
