"""Files: score matrices, gold tags (``.npy``, ``.txt``, CoNLL-U, CoNLL columns),
tag indexes, entries, saved calibrators, and atomic replacement of outputs."""
from .arrays import load_entries, load_gold, load_scores, load_tag_index, save_entries
from .corpora import CorpusTags, read_conll_columns, read_conllu
from .parquet import read_parquet, to_arrow, write_parquet
from .arrays import load_gold_sentences, load_lengths
from .sentences import load_potentials, pad_sentences
from .entry_shards import load_entry_shards

__all__ = ["load_entries", "load_gold", "load_scores", "load_tag_index", "save_entries",
           "CorpusTags", "read_conll_columns", "read_conllu", "read_parquet", "to_arrow",
           "write_parquet", "load_gold_sentences", "load_lengths", "load_potentials",
           "pad_sentences", "load_entry_shards"]
