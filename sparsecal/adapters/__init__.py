"""Taggers where they live: the outputs of tagging libraries as sparsecal inputs.

One module per library, each needing its own optional extra (never imported by
``import sparsecal``; a missing one raises an ImportError naming its ``pip
install``):

- :mod:`.huggingface` (``sparsecal[hf]``): word-level tag probabilities from a
  transformers token-classification model's logits and the tokenizer's
  ``word_ids()`` (:func:`word_probabilities`), its labels (:func:`label_names`),
  and a corpus run in batches straight into entries (:func:`stream_word_entries`);
- :mod:`.pytorch_crf` (``sparsecal[crf]``): marginals and ``log Z`` of a
  ``torchcrf.CRF`` layer through :mod:`sparsecal.crf`
  (:func:`marginals_from_torchcrf`, :func:`log_partition_from_torchcrf`);
- :mod:`.crfsuite` (``sparsecal[crfsuite]``): sklearn-crfsuite's
  ``predict_marginals`` output as a dense matrix (:func:`crfsuite_scores`) or
  entries (:func:`entries_from_crfsuite`);
- :mod:`.labels`: gold from per-sentence label lists (:func:`gold_ids`), shared
  by all.

Names are loaded on first use (PEP 562), so importing this package imports no
library.
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
