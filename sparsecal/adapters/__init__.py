"""Taggers where they live: the outputs of Hugging Face transformers
(``huggingface``), pytorch-crf (``pytorch_crf``) and sklearn-crfsuite
(``crfsuite``) as sparsecal inputs, each module needing its library's extra,
gold from per-sentence label lists (``labels``), and the loops taggers are
trained in: spaCy pipelines (``spacy``), the transformers ``Trainer``'s
``compute_metrics`` (``trainer``) and torchmetrics ``Metric`` classes (``torchmetrics``).
"""
from .._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {
    "gold_ids": "labels",
    "label_names": "huggingface", "stream_word_entries": "huggingface",
    "word_probabilities": "huggingface",
    "log_partition_from_torchcrf": "pytorch_crf", "marginals_from_torchcrf": "pytorch_crf",
    "crfsuite_scores": "crfsuite", "entries_from_crfsuite": "crfsuite",
    "SMCEMetric": "torchmetrics", "GMCEMetric": "torchmetrics",
    "TopLabelECEMetric": "torchmetrics",
    "trainer_compute_metrics": "trainer", "eval_word_scores": "trainer",
    "spacy_scores": "spacy", "entries_from_spacy": "spacy", "spancat_entries": "spacy",
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
