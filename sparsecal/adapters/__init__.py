"""Taggers where they live: the outputs of tagging libraries as sparsecal inputs,
one module per library, each needing its own optional extra (a missing one
raises an ImportError naming its ``pip install``): ``huggingface``
(``sparsecal[hf]``: word probabilities from a token-classification model, a
corpus streamed into entries), ``pytorch_crf`` (``sparsecal[crf]``: a
``torchcrf.CRF`` layer's marginals and ``log Z``), ``crfsuite``
(sklearn-crfsuite's ``predict_marginals`` as scores or entries) and ``labels``
(gold from per-sentence label lists). Names load on first use (PEP 562).
"""
from .._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {
    "gold_ids": "labels",
    "label_names": "huggingface", "stream_word_entries": "huggingface",
    "word_probabilities": "huggingface",
    "log_partition_from_torchcrf": "pytorch_crf", "marginals_from_torchcrf": "pytorch_crf",
    "crfsuite_scores": "crfsuite", "entries_from_crfsuite": "crfsuite",
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
