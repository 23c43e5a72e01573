"""Files: score matrices, gold tags (``.npy``, ``.txt``, CoNLL-U, CoNLL columns),
coreference (CorefUD), tag indexes, entries, saved calibrators, and atomic
replacement of outputs."""
from .._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {
    "load_scores": "arrays", "load_gold": "arrays", "load_tag_index": "arrays",
    "load_entries": "arrays", "save_entries": "arrays",
    "load_gold_sentences": "arrays", "load_lengths": "arrays",
    "CorpusTags": "corpora", "read_conllu": "corpora", "read_conll_columns": "corpora",
    "to_arrow": "parquet", "write_parquet": "parquet", "read_parquet": "parquet",
    "load_potentials": "sentences", "pad_sentences": "sentences",
    "load_entry_shards": "entry_shards",
    "CorefCorpus": "coref", "read_coref": "coref",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
