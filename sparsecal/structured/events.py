"""Events of interest (Jagannatha & Yu 2020, Section 2.4): a top-k sequence or a
span with the model's marginal probability and whether gold agrees exactly;
their entries carry the event type as the tag, so every metric and calibrator
takes them.
"""
from dataclasses import dataclass, replace

import numpy as np

from ..core.dispatch import SENTENCE_EVENTS, SENTENCE_RECURSION, takes_data
from ..core.entries import Entries
from ..core.validation import as_float_array, check_lengths, check_probabilities
from ..io.tables import plural, summary
from .._docs import fill_doc

__all__ = ["Events", "crf_event_probabilities", "softmax_event_probabilities",
           "check_softmax_scores"]


@dataclass(frozen=True, eq=False)
class Events:
    """Events of interest: ``entries`` (``score`` the probability, ``tag`` the type,
    ``label`` 1 when correct, ``token`` the sentence), ``kind`` ("sequence" or
    "span"), the int64 arrays ``sentence``, ``start``, ``length``, ``rank`` (1 =
    best; a span takes the best rank it has) and ``type``, the ``tags`` (``-1``
    past an event's length) and the ``type_names`` ("rank 1", ... or the entity
    types).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.structured import softmax_sequence_events
    >>> ev = softmax_sequence_events(np.array([[[0.9, 0.1], [0.4, 0.6]]]), [[0, 1]], k=2)
    >>> ev.entries.score.round(2).tolist(), ev.entries.label.tolist(), sorted(ev.features)
    ([0.54, 0.36], [1, 0], ['length', 'rank', 'type'])
    """

    kind: str
    entries: Entries
    sentence: np.ndarray
    start: np.ndarray
    length: np.ndarray
    rank: np.ndarray
    type: np.ndarray
    tags: np.ndarray
    type_names: tuple

    def __len__(self):
        return self.start.shape[0]

    def __repr__(self):
        n = self.entries.n_tokens
        return summary(self, f"kind={self.kind!r}", plural(len(self), "event")
                       + ("" if n is None else f" over {plural(n, 'sentence')}"),
                       plural(len(self.type_names), "type"),
                       f"{int(self.entries.label.sum())} correct")

    @property
    def features(self):
        """J&Y's event features (Section 2.6): ``{"rank", "length", "type"}`` -> int64 arrays."""
        return {"rank": self.rank, "length": self.length, "type": self.type}


def make_events(kind, score, label, sentence, start, length, rank, type_, tags,
                type_names, n_sentences):
    """An :class:`Events` from parallel arrays (already consistent)."""
    entries = Entries(score, type_, label, sentence, n_tags=max(len(type_names), 1),
                      n_tokens=n_sentences)
    return Events(kind, entries, sentence, start, length, rank, type_, tags,
                  tuple(type_names))


def rescored(events, score):
    """``events`` with new probabilities ``score`` (validated)."""
    return replace(events, entries=events.entries.with_scores(score))


def event_tags(paths, row, start, length):
    """Tags ``paths[row, start:start+length]`` of each event, ``-1``-padded."""
    width = int(length.max(initial=1))
    pos = start[:, None] + np.arange(width)[None]
    inside = pos < (start + length)[:, None]
    return np.where(inside, paths[row[:, None], np.minimum(pos, paths.shape[1] - 1)], -1)


#: How far a real token's scores may sum from 1 (float32 rounding of a softmax
#: over many tags is far below it; logits or sigmoid outputs are far above).
SUM_TOLERANCE = 1e-3


def check_softmax_scores(scores, lengths=None):
    """Per-token probabilities ``[B, N, C]`` in [0, 1], each real token's a
    distribution (summing to 1 within :data:`SUM_TOLERANCE`), and lengths [B]."""
    arr = _probabilities(scores)
    L = check_lengths(lengths, arr.shape[0], arr.shape[1])
    _check_sums(arr, np.arange(arr.shape[1])[None] < L[:, None])
    return arr, L


def _probabilities(scores):
    arr = as_float_array(scores, "scores", ndim=3)
    check_probabilities(arr.reshape(-1), "scores")
    if 0 in arr.shape:
        raise ValueError(f"scores is empty (shape {arr.shape})")
    return arr


def _check_sums(arr, real):
    """Refuse a token of the mask ``real`` [B, N] whose scores are no distribution."""
    off = (np.abs(arr.sum(axis=2, dtype=np.float64) - 1.0) > SUM_TOLERANCE) & real
    if off.any():
        b, t = (int(i) for i in np.argwhere(off)[0])
        raise ValueError(f"scores[{b}, {t}] sums to {arr[b, t].sum(dtype=np.float64):.6g}, "
                         "not 1: per-token softmax scores are a distribution over the tags "
                         "(probabilities, not logits or independent sigmoids)")


def _check_events(events):
    if not isinstance(events, Events):
        raise TypeError(f"events must be an Events, got {type(events).__name__}")
    return events


@takes_data(refuse=SENTENCE_EVENTS)
@fill_doc
def softmax_event_probabilities(events, scores, normalize=False):
    """Probability of each event under per-token probabilities: the product of its
    tokens' (exact for a softmax tagger, an approximation for dependent scores).

    Parameters
    ----------
    events : Events
    {softmax_scores}
    {normalize_length}

    Returns
    -------
    ndarray of float64, shape (n_events,)

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.structured import softmax_sequence_events
    >>> probs = np.array([[[0.9, 0.1], [0.4, 0.6]]])
    >>> ev = softmax_sequence_events(probs, [[0, 1]], k=1)
    >>> softmax_event_probabilities(ev, probs, normalize=True).round(4).tolist()
    [0.7348]
    """
    ev = _check_events(events)
    arr = _probabilities(scores)
    _check_covers(ev, arr.shape)
    width = ev.tags.shape[1]
    pos = np.minimum(ev.start[:, None] + np.arange(width)[None], arr.shape[1] - 1)
    inside = ev.tags >= 0
    covered = np.zeros(arr.shape[:2], bool)   # the tokens of the events
    covered[np.broadcast_to(ev.sentence[:, None], pos.shape)[inside], pos[inside]] = True
    _check_sums(arr, covered)
    tok = arr[ev.sentence[:, None], pos, np.maximum(ev.tags, 0)].astype(np.float64)
    with np.errstate(divide="ignore"):
        logp = np.where(ev.tags >= 0, np.log(tok), 0.0).sum(1)
    if normalize:
        logp = logp / ev.length
    return np.exp(logp)


def _check_covers(ev, shape):
    B, N, C = shape
    if len(ev) and (ev.sentence.max() >= B or (ev.start + ev.length).max() > N
                    or ev.tags.max() >= C):
        raise ValueError(f"scores of shape {tuple(shape)} do not cover the events "
                         "(sentence, position or tag out of range)")


@takes_data(refuse=SENTENCE_RECURSION)
@fill_doc
def crf_event_probabilities(events, emissions, transitions, lengths=None, start=None,
                            end=None, allowed=None, mask=None, normalize=False,
                            n_threads=None):
    """Exact probability of each event under a linear-chain CRF
    (:func:`sparsecal.crf.span_marginals`, one call per event length).

    Parameters
    ----------
    events : Events
    {crf_potentials}
    {normalize_length}
    {torch_threads}

    Returns
    -------
    ndarray of float64, shape (n_events,)

    Examples
    --------
    >>> import torch
    >>> from sparsecal.structured import crf_sequence_events
    >>> em, T = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]]), torch.zeros(2, 2)
    >>> ev = crf_sequence_events(em, T, [[0, 1]], k=2)
    >>> bool(np.allclose(crf_event_probabilities(ev, em, T), ev.entries.score))
    True
    """
    from .. import crf     # torch: only here

    ev = _check_events(events)
    out = np.empty(len(ev), np.float64)
    for l in np.unique(ev.length):      # one call per event length
        rows = np.flatnonzero(ev.length == l)
        p = crf.span_marginals(emissions, transitions, ev.sentence[rows], ev.start[rows],
                               ev.tags[rows, :l], lengths=lengths, start=start, end=end,
                               allowed=allowed, mask=mask, normalize=normalize,
                               backend="log", n_threads=n_threads)
        out[rows] = p.double().cpu().numpy()
    return out
