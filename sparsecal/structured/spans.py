"""Span events of the top-k sequences (Jagannatha & Yu 2020, Section 3.2): one
event per span at its best rank, correct when gold has exactly that span,
with the marginal of its tags as probability (J&Y eq. 6).
"""
import numpy as np

from ..core.dispatch import SENTENCE_EVENTS, SENTENCE_RECURSION, takes_data
from ..core.validation import check_positive_int
from .events import (check_softmax_scores, crf_event_probabilities, event_tags,
                     make_events, rescored, softmax_event_probabilities)
from .schemes import decode_spans
from .sequences import check_gold, kbest_paths, softmax_kbest
from .._docs import fill_doc

__all__ = ["crf_span_events", "softmax_span_events"]


def span_events(paths, gold, lengths, tag_names, scheme):
    """Span events of k-best ``paths`` (probability 0 until scored), at their best rank."""
    B, k, N = paths.shape
    pred = decode_spans(paths.reshape(B * k, N), tag_names, scheme, np.repeat(lengths, k))
    truth = decode_spans(gold, tag_names, scheme, lengths)
    row, rank = pred.sentence, pred.sentence % k + 1
    sentence = row // k
    keyed = pred.__class__(sentence, pred.start, pred.length, pred.type, pred.type_names)
    keys = keyed.keys(N)
    order = np.lexsort((rank, keys))
    first = np.ones(order.shape[0], bool)
    first[1:] = keys[order][1:] != keys[order][:-1]
    keep = order[first]                               # in key (sentence, start) order
    label = np.isin(keys[keep], truth.keys(N))
    tags = event_tags(paths.reshape(B * k, N), row[keep], pred.start[keep],
                      pred.length[keep])
    return make_events("span", np.zeros(keep.shape[0]), label, sentence[keep],
                       pred.start[keep], pred.length[keep], rank[keep], pred.type[keep],
                       tags, pred.type_names, B)


@takes_data(refuse=SENTENCE_RECURSION)
@fill_doc
def crf_span_events(emissions, transitions, gold, tag_names, k=1, scheme="bio",
                    lengths=None, start=None, end=None, allowed=None, mask=None,
                    normalize=False, n_threads=None):
    """Spans of a CRF's top-k sequences as events, with exact span marginals.

    Parameters
    ----------
    {crf_potentials}
    {gold_matrix}
    {tag_names}
    {k_best}
    {normalize_length}
    {torch_threads}

    Returns
    -------
    Events
        ``kind="span"`` in (sentence, start, length, type) order.

    Examples
    --------
    >>> import torch
    >>> names = ["O", "B-PER", "I-PER"]
    >>> em = torch.tensor([[[0.0, 3.0, 0.0], [0.0, 1.0, 1.2], [3.0, 0.0, 0.0]]])
    >>> ev = crf_span_events(em, torch.zeros(3, 3), [[1, 2, 0]], names, k=2)
    >>> ev.length.tolist(), ev.rank.tolist(), ev.entries.label.tolist()
    ([1, 2, 1], [2, 1, 2], [0, 1, 0])
    """
    k = check_positive_int(k, "k")
    _check_names(tag_names, np.shape(emissions)[-1])
    gold = check_gold(gold, np.shape(emissions))
    paths, _, L = kbest_paths(emissions, transitions, k, lengths, start, end, allowed,
                              mask, n_threads)
    ev = span_events(paths, gold, L, tag_names, scheme)
    return rescored(ev, crf_event_probabilities(
        ev, emissions, transitions, lengths=lengths, start=start, end=end, allowed=allowed,
        mask=mask, normalize=normalize, n_threads=n_threads))


@takes_data(refuse=SENTENCE_EVENTS)
@fill_doc
def softmax_span_events(scores, gold, tag_names, k=1, scheme="bio", lengths=None,
                        normalize=False, n_threads=None):
    """Spans of a softmax tagger's top-k sequences as events, scored by the product
    of their tokens' probabilities.

    Parameters
    ----------
    {softmax_scores}
    {gold_matrix}
    {tag_names}
    {k_best}
    {lengths}
    {normalize_length}
    {torch_threads}

    Returns
    -------
    Events

    Examples
    --------
    See :func:`rerank_spans`.
    """
    k = check_positive_int(k, "k")
    arr, L = check_softmax_scores(scores, lengths)
    _check_names(tag_names, arr.shape[2])
    gold = check_gold(gold, arr.shape)
    paths = softmax_kbest(arr, L, k, n_threads)
    ev = span_events(paths, gold, L, tag_names, scheme)
    return rescored(ev, softmax_event_probabilities(ev, arr, normalize=normalize))


def _check_names(tag_names, n_tags):
    if not isinstance(tag_names, str) and hasattr(tag_names, "__len__") \
            and len(tag_names) != n_tags:
        raise ValueError(f"tag_names has {len(tag_names)} names but the scores have "
                         f"{n_tags} tags")
