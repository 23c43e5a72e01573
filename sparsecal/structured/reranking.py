"""Re-ranking the top k by calibrated confidence, and what it does to sequence
exact match and span F1 (Jagannatha & Yu 2020, Section 4, Tables 2 and 4).
"""
from dataclasses import dataclass

import numpy as np

from ..core.dispatch import SENTENCE_EVENTS, takes_data
from ..core.validation import as_array, check_probabilities, check_unit_interval
from ..io.tables import number, summary
from .events import Events
from .schemes import Spans, decode_spans
from .._docs import fill_doc

__all__ = ["SpanScores", "Reranking", "span_f1", "rerank_sequences", "rerank_spans"]


@dataclass(frozen=True)
class SpanScores:
    """Micro-averaged exact span match: ``precision``, ``recall``, ``f1`` (0 when a
    denominator is 0, as seqeval's ``zero_division=0``) and the counts.

    Examples
    --------
    See :func:`span_f1`.
    """

    precision: float
    recall: float
    f1: float
    n_pred: int
    n_gold: int
    n_correct: int

    def to_dict(self):
        return dict(self.__dict__)


@dataclass(frozen=True)
class Reranking:
    """The output before and after re-ranking: the ``chosen`` events (sequences: one
    per sentence; spans: those at or above the cutoff), ``n_changed`` sentences or
    spans, the sequences' ``exact_match_before`` / ``_after`` and the
    ``spans_before`` / ``_after`` :class:`SpanScores`.

    Examples
    --------
    See :func:`rerank_sequences`.
    """

    chosen: np.ndarray
    n_changed: int
    exact_match_before: float = None
    exact_match_after: float = None
    spans_before: SpanScores = None
    spans_after: SpanScores = None

    def __repr__(self):
        def change(name, before, after):
            return None if before is None else f"{name} {number(before)} -> {number(after)}"
        return summary(self, f"{self.chosen.size} chosen", f"n_changed={self.n_changed}",
                       change("exact match", self.exact_match_before, self.exact_match_after),
                       self.spans_before and change("span F1", self.spans_before.f1,
                                                    self.spans_after.f1))

    def to_dict(self):
        out = {"n_changed": self.n_changed, "exact_match_before": self.exact_match_before,
               "exact_match_after": self.exact_match_after}
        for when in ("before", "after"):
            s = getattr(self, f"spans_{when}")
            out[f"f1_{when}"] = None if s is None else s.f1
        return out


@takes_data(refuse=SENTENCE_EVENTS)
def span_f1(pred, gold, n_positions):
    """Micro-averaged exact-match precision, recall and F1 of predicted spans
    (duplicates count once; ``n_positions``: the padded sentence length).

    Parameters
    ----------
    pred, gold : Spans
        With the same type names.
    n_positions : int

    Returns
    -------
    SpanScores

    Examples
    --------
    >>> from sparsecal.structured import decode_spans
    >>> names = ["O", "B-PER", "I-PER"]
    >>> span_f1(decode_spans([[1, 2, 0, 0]], names), decode_spans([[1, 2, 0, 1]], names), 4).recall
    0.5
    """
    for name, s in (("pred", pred), ("gold", gold)):
        if not isinstance(s, Spans):
            raise TypeError(f"{name} must be a Spans, got {type(s).__name__}")
    if tuple(pred.type_names) != tuple(gold.type_names):
        raise ValueError(f"pred and gold have different type names: {pred.type_names} "
                         f"and {gold.type_names}")
    p, g = np.unique(pred.keys(n_positions)), np.unique(gold.keys(n_positions))
    c = np.intersect1d(p, g, assume_unique=True).shape[0]
    n_p, n_g = p.shape[0], g.shape[0]
    return SpanScores(c / n_p if n_p else 0.0, c / n_g if n_g else 0.0,
                      2 * c / (n_p + n_g) if n_p + n_g else 0.0, n_p, n_g, c)


def _check(events, confidence, kind):
    if not isinstance(events, Events):
        raise TypeError(f"events must be an Events, got {type(events).__name__}")
    if events.kind != kind:
        raise ValueError(f"events must be {kind} events, got {events.kind} events")
    conf = check_probabilities(as_array(confidence, "confidence"), "confidence")
    if conf.shape[0] != len(events):
        raise ValueError(f"confidence has {conf.shape[0]} values, expected one per event "
                         f"({len(events)})")
    return conf


def _gold_spans(gold, tag_names, scheme, n_sentences):
    gold = as_array(gold, "gold")
    if gold.ndim != 2 or gold.shape[0] != n_sentences:
        raise ValueError(f"gold must have shape ({n_sentences}, N), one row per sentence "
                         f"of the events, got {gold.shape}")
    return decode_spans(gold, tag_names, scheme), gold.shape[1]


def _output_spans(events, idx, tag_names, scheme, n_sentences, N):
    tags = np.full((n_sentences, N), -1, np.int64)
    width = min(events.tags.shape[1], N)
    tags[events.sentence[idx]] = np.pad(events.tags[idx, :width], ((0, 0), (0, N - width)),
                                        constant_values=-1)
    return decode_spans(tags, tag_names, scheme)


@takes_data(refuse=SENTENCE_EVENTS)
@fill_doc
def rerank_sequences(events, confidence, gold=None, tag_names=None, scheme="bio"):
    """Choose each sentence's sequence by calibrated confidence (ties: the better
    rank); exact match, and span F1 given ``gold`` and ``tag_names``, before and
    after.

    Parameters
    ----------
    {events_confidence}
    gold : array_like of int, shape (n_sentences, N), optional
        Gold tags (``-1``: padding).
    {tag_names}

    Returns
    -------
    Reranking

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.structured import softmax_sequence_events
    >>> ev = softmax_sequence_events(np.array([[[0.6, 0.4], [0.9, 0.1]]]), [[1, 0]], k=2)
    >>> r = rerank_sequences(ev, [0.3, 0.7])                  # gold is the 2nd best
    >>> r.exact_match_before, r.exact_match_after, r.n_changed
    (0.0, 1.0, 1)
    """
    conf = _check(events, confidence, "sequence")
    if (gold is None) != (tag_names is None):
        raise ValueError("give gold and tag_names together (span F1 needs both)")
    order = np.lexsort((events.rank, -conf.astype(np.float64), events.sentence))
    first = np.ones(order.shape[0], bool)
    first[1:] = events.sentence[order][1:] != events.sentence[order][:-1]
    chosen = order[first]
    top = np.flatnonzero(events.rank == 1)
    top = top[np.argsort(events.sentence[top], kind="stable")]
    label = events.entries.label
    result = dict(chosen=chosen, n_changed=int((events.rank[chosen] != 1).sum()),
                  exact_match_before=float(label[top].mean()) if top.size else 0.0,
                  exact_match_after=float(label[chosen].mean()) if chosen.size else 0.0)
    if gold is not None:
        n = events.entries.n_tokens
        truth, N = _gold_spans(gold, tag_names, scheme, n)
        for when, idx in (("before", top), ("after", chosen)):
            pred = _output_spans(events, idx, tag_names, scheme, n, N)
            result[f"spans_{when}"] = span_f1(pred, truth, N)
    return Reranking(**result)


@takes_data(refuse=SENTENCE_EVENTS)
@fill_doc
def rerank_spans(events, confidence, gold, tag_names, scheme="bio", cutoff=0.5):
    """Keep the spans of the top k with ``confidence >= cutoff``; span F1 before (the
    rank-1 sequence's spans) and after.

    Parameters
    ----------
    {events_confidence}
    gold : array_like of int, shape (n_sentences, N)
    {tag_names}
    cutoff : float in [0, 1], default 0.5

    Returns
    -------
    Reranking

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.structured import softmax_span_events
    >>> names, probs = ["O", "B-PER", "I-PER"], np.array([[[0.1, 0.8, 0.1], [0.1, 0.3, 0.6]]])
    >>> ev = softmax_span_events(probs, [[1, 1]], names, k=2)
    >>> r = rerank_spans(ev, [0.9, 0.2, 0.9], [[1, 1]], names)   # rank 1: one 2-token span
    >>> r.spans_before.f1, r.spans_after.f1
    (0.0, 1.0)
    """
    conf = _check(events, confidence, "span")
    cutoff = check_unit_interval(cutoff, "cutoff")
    truth, N = _gold_spans(gold, tag_names, scheme, events.entries.n_tokens)
    chosen = np.flatnonzero(conf >= cutoff)
    top = np.flatnonzero(events.rank == 1)
    scores = {}
    for when, idx in (("before", top), ("after", chosen)):
        pred = Spans(events.sentence[idx], events.start[idx], events.length[idx],
                     events.type[idx], events.type_names)
        scores[when] = span_f1(pred, truth, N)
    n_changed = np.setxor1d(top, chosen).shape[0]
    return Reranking(chosen, int(n_changed), spans_before=scores["before"],
                     spans_after=scores["after"])
