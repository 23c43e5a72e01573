"""Structured calibration: events of interest, sampling-based inference, tag pairs.

Calibrating more than single tags (docs/structured.md): the events of
Jagannatha & Yu (2020), whole top-k sequences and the spans inside them, with
their probability and exact-match correctness, as :class:`Events` whose
``entries`` every metric and calibrator takes; the tag-pair marginals and the
sampling-based inference of Nguyen & O'Connor (2015, Sections 4.2.3 and 5);
confidence features from several score samples (MC dropout, ensembles).

``import sparsecal.structured`` imports neither torch nor scipy: the functions
that need a CRF import :mod:`sparsecal.crf` (torch) when called.

Modules: ``schemes`` (BIO / BIOES / IO span decoding), ``events`` (the
:class:`Events` container, event probabilities under a CRF or per-token
scores), ``sequences`` and ``spans`` (the events of the top-k sequences),
``sampling`` (forward-filtering backward-sampling), ``estimates`` (event
frequencies over samples with intervals), ``pairs`` (tag-pair entries),
``ensembles`` (mean / percentiles over samples, MC dropout), ``reranking`` (the top k re-ranked by calibrated confidence, span F1 and exact
match before and after), ``hmm`` (a supervised HMM tagger whose log potentials
are a CRF's), ``coreference`` (N&O's antecedent model: sampled entities,
pairwise coreference probabilities), ``event_files`` (events saved as entries
with their features, read back checked).
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
    "coreference_entries": "coreference",
    "save_events": "event_files", "load_events": "event_files",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
