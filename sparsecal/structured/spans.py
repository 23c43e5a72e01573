"""Span events (entities, chunks) of the top-k sequences, with exact-match labels.

Jagannatha & Yu (2020), Section 3.2: the events of interest of a named-entity
tagger are the spans predicted in its ``argmax(k)`` label sequences; a span is
correct when gold has exactly the same span (start, end and type). A span that
appears in several of the k sequences is one event, of the best rank.

Its probability is the marginal of the span's tags,
``p(y_s .. y_{s+l-1} = tags | x)`` (J&Y Appendix A.3, eq. 6 without the MC
average): exact for a CRF (:func:`sparsecal.crf.span_marginals`); for a softmax
tagger the product of the span's token probabilities, which is exact too since
its tokens are independent given ``x``. It does not condition on the tokens
around the span (the next token could extend it), as in J&Y.
"""
import numpy as np

from ..core.dispatch import SENTENCE_EVENTS, SENTENCE_RECURSION, takes_data
from ..core.validation import check_positive_int
from .events import (check_softmax_scores, crf_event_probabilities, event_tags,
                     make_events, rescored, softmax_event_probabilities)
from .schemes import decode_spans
from .sequences import check_gold, kbest_paths, softmax_kbest

__all__ = ["crf_span_events", "softmax_span_events"]


def span_events(paths, gold, lengths, tag_names, scheme):
    """Span events of k-best ``paths`` [B, k, N] (probability 0 until scored),
    deduplicated to their best rank, labelled against the spans of ``gold``."""
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
def crf_span_events(emissions, transitions, gold, tag_names, k=1, scheme="bio",
                    lengths=None, start=None, end=None, allowed=None, mask=None,
                    normalize=False, n_threads=None):
    """Spans of a CRF's top-k sequences as events, with exact span marginals.

    Parameters
    ----------
    emissions, transitions
        CRF potentials, as in :func:`sparsecal.crf.marginals`.
    gold : array_like of int, shape (B, N)
        Gold tag per token (``-1``: padding or no tag, outside every span).
    tag_names : sequence of str
        ``"O"`` or ``"<prefix>-<type>"`` per tag index (C names).
    k : int, default 1
        Sequences per sentence whose spans are events.
    scheme : {"bio", "bioes", "io"}, default "bio"
        Span decoding rules (:mod:`sparsecal.structured.schemes`).
    lengths, start, end, allowed, mask, n_threads
        As in :func:`sparsecal.crf.kbest`.
    normalize : bool, default False
        Score spans by ``p ** (1 / length)`` (J&Y eq. 6).

    Returns
    -------
    Events
        ``kind="span"``, in (sentence, start, length, type) order; type the
        entity type, rank the best rank of the sequences holding the span.

    Raises
    ------
    ImportError
        Without PyTorch.
    TypeError, ValueError
        As :func:`sparsecal.crf.kbest`, :func:`~sparsecal.structured.decode_spans`
        (tag names of another scheme, ``len(tag_names) != C``), or an invalid
        ``gold``.

    References
    ----------
    Jagannatha & Yu (2020), Section 3.2 (span events of the top-k sequences)
    and Appendix A.3, eq. 6.

    Examples
    --------
    >>> import torch
    >>> names = ["O", "B-PER", "I-PER"]
    >>> em = torch.tensor([[[0.0, 3.0, 0.0], [0.0, 1.0, 1.2], [3.0, 0.0, 0.0]]])
    >>> ev = crf_span_events(em, torch.zeros(3, 3), [[1, 2, 0]], names, k=2)
    >>> ev.start.tolist(), ev.length.tolist(), ev.rank.tolist(), ev.entries.label.tolist()
    ([0, 0, 1], [1, 2, 1], [2, 1, 2], [0, 1, 0])
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
def softmax_span_events(scores, gold, tag_names, k=1, scheme="bio", lengths=None,
                        normalize=False, n_threads=None):
    """Spans of a softmax tagger's top-k sequences as events.

    The probability of a span is the product of its tokens' probabilities (the
    tokens are independent given ``x``), or its geometric mean with
    ``normalize=True``.

    Parameters
    ----------
    scores : array_like of float, shape (B, N, C)
        Per-token tag probabilities.
    gold, tag_names, k, scheme, normalize
        As in :func:`crf_span_events`.
    lengths : array_like of int, shape (B,), optional
        Sentence lengths in ``1..N`` (default all ``N``).
    n_threads : int, optional
        As in :func:`sparsecal.crf.kbest` (the k-best search).

    Returns
    -------
    Events
        As :func:`crf_span_events`.

    Raises
    ------
    ImportError
        Without PyTorch (the k-best search).
    TypeError, ValueError
        As :func:`~sparsecal.structured.softmax_sequence_events` and
        :func:`~sparsecal.structured.decode_spans`.

    References
    ----------
    Jagannatha & Yu (2020), Section 3.2 and Appendix A.3, eq. 6.

    Examples
    --------
    >>> import numpy as np
    >>> names = ["O", "B-LOC", "I-LOC"]
    >>> probs = np.array([[[0.1, 0.8, 0.1], [0.3, 0.1, 0.6]]])
    >>> ev = softmax_span_events(probs, [[1, 0]], names)
    >>> ev.length.tolist(), ev.entries.score.round(2).tolist(), ev.entries.label.tolist()
    ([2], [0.48], [0])
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
