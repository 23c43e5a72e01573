"""Re-ranking the top k by calibrated confidence, and what it does to span F1 and
sequence exact match (Jagannatha & Yu 2020, Section 4, Tables 2, 4 and 6).

- Sequences (J&Y POS, Table 2): each sentence's output becomes the sequence
  event with the highest calibrated confidence (ties: the better rank), instead
  of the rank-1 sequence; :func:`rerank_sequences` reports exact match and,
  with gold tags, the span F1 of the chosen sequences before and after.
- Spans (J&Y NER, Table 4): the output becomes every span of the top-k
  sequences whose calibrated confidence is at least a cutoff (0.5 in J&Y),
  instead of the spans of the rank-1 sequence; :func:`rerank_spans`.

F1 is micro-averaged exact span match (:func:`span_f1`): a predicted span is
correct when gold has a span with the same sentence, start, length and type.
"""
from dataclasses import dataclass

import numpy as np

from ..core.dispatch import SENTENCE_EVENTS, takes_data
from ..core.validation import as_array, check_probabilities, check_unit_interval
from .events import Events
from .schemes import Spans, decode_spans

__all__ = ["SpanScores", "Reranking", "span_f1", "rerank_sequences", "rerank_spans"]


@dataclass(frozen=True)
class SpanScores:
    """Micro-averaged exact span match.

    Attributes
    ----------
    precision, recall, f1 : float
        ``c / n_pred``, ``c / n_gold``, ``2 c / (n_pred + n_gold)``, each 0
        when its denominator is 0 (as seqeval's ``zero_division=0``).
    n_pred, n_gold, n_correct : int

    Examples
    --------
    >>> SpanScores(1.0, 0.5, 2 / 3, 1, 2, 1).to_dict()["n_gold"]
    2
    """

    precision: float
    recall: float
    f1: float
    n_pred: int
    n_gold: int
    n_correct: int

    def to_dict(self):
        """The fields as a dict."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class Reranking:
    """The output before and after re-ranking.

    Attributes
    ----------
    chosen : ndarray of int64
        Indices of the chosen events (sequences: one per sentence that has
        events, in sentence order; spans: those at or above the cutoff).
    n_changed : int
        Sentences whose chosen sequence is not the rank-1 one (sequences), or
        spans that differ from the rank-1 sequence's (spans).
    exact_match_before, exact_match_after : float or None
        Fraction of sentences whose chosen sequence equals gold (sequences only).
    spans_before, spans_after : SpanScores or None
        Span F1 (sequences: only with ``gold`` and ``tag_names``).

    Examples
    --------
    >>> import numpy as np
    >>> Reranking(np.array([0]), 0, 1.0, 1.0).to_dict()["exact_match_after"]
    1.0
    """

    chosen: np.ndarray
    n_changed: int
    exact_match_before: float = None
    exact_match_after: float = None
    spans_before: SpanScores = None
    spans_after: SpanScores = None

    def to_dict(self):
        """The scores as a dict (no ``chosen``)."""
        out = {"n_changed": self.n_changed, "exact_match_before": self.exact_match_before,
               "exact_match_after": self.exact_match_after}
        for when in ("before", "after"):
            s = getattr(self, f"spans_{when}")
            out[f"f1_{when}"] = None if s is None else s.f1
        return out


@takes_data(refuse=SENTENCE_EVENTS)
def span_f1(pred, gold, n_positions):
    """Micro-averaged exact-match precision, recall and F1 of predicted spans.

    Parameters
    ----------
    pred, gold : Spans
        Spans (e.g. from :func:`~sparsecal.structured.decode_spans`) whose type
        indices refer to the same type names; duplicates count once.
    n_positions : int
        The padded sentence length N (positions lie in ``[0, N)``).

    Returns
    -------
    SpanScores

    Raises
    ------
    TypeError
        If ``pred`` or ``gold`` is not a :class:`Spans`.
    ValueError
        If their type names differ.

    References
    ----------
    Jagannatha & Yu (2020), Section 4 and Table 4 (micro-averaged F-score of
    named-entity spans); Tjong Kim Sang & De Meulder (2003), CoNLL exact match.

    Examples
    --------
    >>> from sparsecal.structured import decode_spans, span_f1
    >>> names = ["O", "B-PER", "I-PER"]
    >>> gold = decode_spans([[1, 2, 0, 1]], names)
    >>> pred = decode_spans([[1, 2, 0, 0]], names)
    >>> s = span_f1(pred, gold, 4)
    >>> s.precision, s.recall, round(s.f1, 3)
    (1.0, 0.5, 0.667)
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
    """The spans of the sequence events ``idx`` (at most one per sentence)."""
    tags = np.full((n_sentences, N), -1, np.int64)
    width = min(events.tags.shape[1], N)
    tags[events.sentence[idx]] = np.pad(events.tags[idx, :width], ((0, 0), (0, N - width)),
                                        constant_values=-1)
    return decode_spans(tags, tag_names, scheme)


@takes_data(refuse=SENTENCE_EVENTS)
def rerank_sequences(events, confidence, gold=None, tag_names=None, scheme="bio"):
    """Choose each sentence's sequence by calibrated confidence; exact match
    (and span F1) before and after.

    Parameters
    ----------
    events : Events
        Sequence events of the top k
        (:func:`~sparsecal.structured.crf_sequence_events`, ...).
    confidence : array_like of float, shape (n_events,)
        Calibrated probability of each event (e.g. :meth:`Forecaster.predict
        <sparsecal.calibration.Forecaster.predict>`), in [0, 1].
    gold : array_like of int, shape (n_sentences, N), optional
        Gold tags, for span F1 (``-1``: padding).
    tag_names : sequence of str, optional
        With ``gold``: the tag names of the span scheme.
    scheme : {"bio", "bioes", "io"}, default "bio"

    Returns
    -------
    Reranking
        ``chosen``: per sentence with events, the event of highest confidence
        (ties: the lowest rank); before is the rank-1 event.

    Raises
    ------
    TypeError
        If ``events`` is not an :class:`Events`.
    ValueError
        For span events, a ``confidence`` of another length or outside [0, 1],
        ``gold`` without ``tag_names`` (or the other way round), or a ``gold``
        that does not have one row per sentence.

    References
    ----------
    Jagannatha & Yu (2020), Section 4.1 and Table 2 (re-ranking the top-k
    sequences of POS tagging by the forecaster's confidence).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.structured import softmax_sequence_events, rerank_sequences
    >>> probs = np.array([[[0.6, 0.4], [0.9, 0.1]]])
    >>> ev = softmax_sequence_events(probs, [[1, 0]], k=2)   # gold is the 2nd best
    >>> r = rerank_sequences(ev, [0.3, 0.7])
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
def rerank_spans(events, confidence, gold, tag_names, scheme="bio", cutoff=0.5):
    """Keep the spans of the top k whose calibrated confidence reaches a cutoff;
    span F1 before (the rank-1 sequence's spans) and after.

    Parameters
    ----------
    events : Events
        Span events of the top k (:func:`~sparsecal.structured.crf_span_events`, ...).
    confidence : array_like of float, shape (n_events,)
        Calibrated probability of each span, in [0, 1].
    gold : array_like of int, shape (n_sentences, N)
        Gold tags (``-1``: padding).
    tag_names : sequence of str
    scheme : {"bio", "bioes", "io"}, default "bio"
    cutoff : float in [0, 1], default 0.5
        J&Y's threshold: spans with ``confidence >= cutoff`` are output.

    Returns
    -------
    Reranking
        ``chosen``: the spans output after; ``n_changed``: spans in one output
        and not the other; no exact match.

    Raises
    ------
    TypeError
        If ``events`` is not an :class:`Events`.
    ValueError
        For sequence events, a ``confidence`` of another length or outside
        [0, 1], a ``cutoff`` outside [0, 1], or a ``gold`` without one row per
        sentence.

    References
    ----------
    Jagannatha & Yu (2020), Section 4.2 and Table 4 (spans of the top-3
    sequences re-scored by the forecaster, cutoff 0.5, micro F-score).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.structured import softmax_span_events, rerank_spans
    >>> names = ["O", "B-PER", "I-PER"]
    >>> probs = np.array([[[0.1, 0.8, 0.1], [0.1, 0.3, 0.6]]])
    >>> ev = softmax_span_events(probs, [[1, 1]], names, k=2)
    >>> [(int(s), int(l)) for s, l in zip(ev.start, ev.length)], ev.rank.tolist()
    ([(0, 1), (0, 2), (1, 1)], [2, 1, 2])
    >>> r = rerank_spans(ev, [0.9, 0.2, 0.9], [[1, 1]], names)   # gold: two 1-token spans
    >>> round(r.spans_before.f1, 2), r.spans_after.f1
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
