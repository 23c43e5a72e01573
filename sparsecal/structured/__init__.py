"""Structured calibration: events of interest, sampling-based inference, tag pairs
(docs/structured.md).

The events of Jagannatha & Yu (2020), whole top-k sequences and the spans in
them, as :class:`Events` whose entries every metric and calibrator takes
(``events``, ``sequences``, ``spans``, ``schemes`` for span decoding,
``reranking``, ``event_files``); the tag-pair marginals and the sampling-based
inference of Nguyen & O'Connor (2015; ``pairs``, ``sampling``, ``estimates``,
``hmm``, ``coreference``, ``coref_scores``); confidence features from several score samples
(``ensembles``). Importing it imports neither torch nor scipy.
"""
from .._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {
    "Spans": "schemes", "decode_spans": "schemes", "parse_tag_names": "schemes",
    "Events": "events", "crf_event_probabilities": "events",
    "softmax_event_probabilities": "events",
    "crf_sequence_events": "sequences", "softmax_sequence_events": "sequences",
    "crf_span_events": "spans", "softmax_span_events": "spans",
    "sample_sequences": "sampling",
    "SampleEstimate": "estimates", "sample_frequency": "estimates",
    "sample_percentiles": "estimates",
    "pair_entries": "pairs", "most_frequent_pairs": "pairs", "pair_groups": "pairs",
    "EventConfidence": "ensembles", "sample_confidence": "ensembles",
    "mc_dropout_samples": "ensembles",
    "SpanScores": "reranking", "Reranking": "reranking", "span_f1": "reranking",
    "rerank_sequences": "reranking", "rerank_spans": "reranking",
    "SupervisedHMM": "hmm", "WORD_CLASSES": "hmm", "word_classes": "hmm",
    "sample_entities": "coreference", "coreference_probabilities": "coreference",
    "coreference_entries": "coreference", "coreference_scores": "coref_scores",
    "save_events": "event_files", "load_events": "event_files",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
