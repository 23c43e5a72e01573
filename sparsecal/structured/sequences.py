"""Top-k sequence events of a CRF or a softmax tagger (Jagannatha & Yu 2020,
Sections 2.4 and 3.1): "the k-th best sequence is the output", correct when
it equals gold on every token; its type is the rank.
"""
import numpy as np

from ..core.dispatch import SENTENCE_EVENTS, SENTENCE_RECURSION, takes_data
from ..core.validation import check_positive_int, check_tag_matrix
from .events import (check_softmax_scores, event_tags, make_events, rescored,
                     softmax_event_probabilities)
from .._docs import fill_doc

__all__ = ["check_gold", "crf_sequence_events", "kbest_paths", "softmax_kbest",
           "softmax_sequence_events"]


def check_gold(gold, shape):
    B, N, C = shape
    gold = check_tag_matrix(gold, C, "gold")
    if gold.shape != (B, N):
        raise ValueError(f"gold has shape {gold.shape}, expected ({B}, {N}) like the "
                         "scores")
    return gold


def sequence_events(paths, probs, gold, lengths):
    """Events of k-best ``paths`` [B, k, N] and their ``probs``, labelled by exact match."""
    B, k, N = paths.shape
    b, r = np.nonzero(paths[:, :, 0] >= 0)
    length = lengths[b]
    real = np.arange(N)[None] < length[:, None]
    label = ((paths[b, r] == gold[b]) | ~real).all(1)
    flat = paths[b, r]
    tags = event_tags(flat, np.arange(b.shape[0]), np.zeros_like(b), length)
    return make_events("sequence", probs[b, r], label, b.astype(np.int64),
                       np.zeros(b.shape[0], np.int64), length, r.astype(np.int64) + 1,
                       r.astype(np.int64), tags, [f"rank {i + 1}" for i in range(k)], B)


def kbest_paths(emissions, transitions, k, lengths=None, start=None, end=None,
                allowed=None, mask=None, n_threads=None):
    """``(paths, probs, lengths)`` by :func:`sparsecal.crf.kbest` (torch imported here)."""
    from .. import crf
    from ..crf.potentials import prepare

    paths, probs = crf.kbest(emissions, transitions, k, lengths=lengths, start=start,
                             end=end, allowed=allowed, mask=mask, n_threads=n_threads)
    L = prepare(emissions, transitions, lengths, start, end, allowed, mask).L
    return (paths.cpu().numpy(), probs.double().cpu().numpy(),
            L.cpu().numpy().astype(np.int64))


@takes_data(refuse=SENTENCE_RECURSION)
@fill_doc
def crf_sequence_events(emissions, transitions, gold, k=1, lengths=None, start=None,
                        end=None, allowed=None, mask=None, n_threads=None):
    """The top-k tag sequences of a CRF as events, with exact probabilities.

    Parameters
    ----------
    {crf_potentials}
    {gold_matrix}
    {k_best}
    {torch_threads}

    Returns
    -------
    Events
        ``kind="sequence"`` in (sentence, rank) order.

    Examples
    --------
    See :func:`crf_event_probabilities`.
    """
    k = check_positive_int(k, "k")
    paths, probs, L = kbest_paths(emissions, transitions, k, lengths, start, end, allowed,
                                  mask, n_threads)
    return sequence_events(paths, probs, check_gold(gold, np.shape(emissions)), L)


@takes_data(refuse=SENTENCE_EVENTS)
@fill_doc
def softmax_sequence_events(scores, gold, k=1, lengths=None, n_threads=None):
    """The top-k tag sequences of a softmax tagger as events, scored by the product
    of their tokens' probabilities.

    Parameters
    ----------
    {softmax_scores}
    {gold_matrix}
    {k_best}
    {lengths}
    {torch_threads}

    Returns
    -------
    Events

    Examples
    --------
    >>> import numpy as np
    >>> probs = np.array([[[0.9, 0.1], [0.4, 0.6]], [[0.2, 0.8], [0.5, 0.5]]])
    >>> ev = softmax_sequence_events(probs, [[0, 1], [1, -1]], lengths=[2, 1])
    >>> ev.entries.score.round(2).tolist(), ev.entries.label.tolist()
    ([0.54, 0.8], [1, 1])
    """
    k = check_positive_int(k, "k")
    arr, L = check_softmax_scores(scores, lengths)
    gold = check_gold(gold, arr.shape)
    paths = softmax_kbest(arr, L, k, n_threads)
    ev = sequence_events(paths, np.zeros(paths.shape[:2]), gold, L)
    return rescored(ev, softmax_event_probabilities(ev, arr))


def softmax_kbest(scores, lengths, k, n_threads):
    """The k best paths of independent tokens (a CRF with emissions ``log scores``)."""
    with np.errstate(divide="ignore"):
        log_scores = np.log(scores.astype(np.float64))
    C = scores.shape[2]
    return kbest_paths(log_scores, np.zeros((C, C)), k, lengths, n_threads=n_threads)[0]
