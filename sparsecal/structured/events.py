"""Events of interest: what they are, their features, and their entries.

An event (Jagannatha & Yu 2020, Section 2.4) is a set of outputs, here "the
tokens ``start .. start + length - 1`` of sentence ``sentence`` carry the tags
``tags``": a whole top-k sequence (start 0, the sentence's length) or a span.
Its probability is a marginal of the model, its label whether gold agrees
(exact match). :class:`Events` holds them, with their entries: the same
:class:`~sparsecal.Entries` every metric, plot and calibrator takes, the event
*type* in the role of the tag, so :class:`~sparsecal.TagGroups` and
:class:`~sparsecal.GroupedCalibrator` work unchanged.

:func:`crf_event_probabilities` and :func:`softmax_event_probabilities` score
given events under (other) model outputs: MC-dropout samples or ensemble
members (:mod:`sparsecal.structured.ensembles`).
"""
from dataclasses import dataclass, replace

import numpy as np

from ..core.dispatch import SENTENCE_EVENTS, SENTENCE_RECURSION, takes_data
from ..core.entries import Entries
from ..core.validation import as_float_array, check_lengths, check_probabilities

__all__ = ["Events", "crf_event_probabilities", "softmax_event_probabilities",
           "check_softmax_scores"]


@dataclass(frozen=True, eq=False)
class Events:
    """Events of interest with their probability, correctness and features.

    Attributes
    ----------
    kind : {"sequence", "span"}
    entries : Entries
        ``score`` the event's probability, ``tag`` its type, ``label`` 1 when it
        is correct, ``token`` its sentence; ``n_tags = len(type_names)``.
    sentence, start, length, rank, type : ndarray of int64, shape (n_events,)
        Where the event lies, its rank among the top k (1 = best; a span takes
        the best rank of the sequences it appears in) and its type.
    tags : ndarray of int64, shape (n_events, max length)
        The event's tags, ``-1`` past its length.
    type_names : tuple of str
        Sequences: ``"rank 1"``, ``"rank 2"``, ...; spans: the entity types.

    References
    ----------
    Jagannatha & Yu (2020), Section 2.4 (events of interest, positive events)
    and Section 2.6 (features: rank, length "ln").

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.structured import softmax_sequence_events
    >>> probs = np.array([[[0.9, 0.1], [0.4, 0.6]]])
    >>> ev = softmax_sequence_events(probs, [[0, 1]], k=2)
    >>> ev.entries.score.round(2).tolist(), ev.entries.label.tolist(), ev.rank.tolist()
    ([0.54, 0.36], [1, 0], [1, 2])
    >>> sorted(ev.features)
    ['length', 'rank', 'type']
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

    @property
    def features(self):
        """The side table of J&Y's event features: ``{"rank", "length", "type"}``
        -> int64 arrays, one value per event."""
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
    """Tags ``paths[row, start:start+length]`` of each event, ``-1``-padded
    ``[n, max(length)]``."""
    width = int(length.max(initial=1))
    pos = start[:, None] + np.arange(width)[None]
    inside = pos < (start + length)[:, None]
    return np.where(inside, paths[row[:, None], np.minimum(pos, paths.shape[1] - 1)], -1)


def check_softmax_scores(scores, lengths=None):
    """Per-token probabilities ``[B, N, C]`` in [0, 1] and lengths [B]."""
    arr = as_float_array(scores, "scores", ndim=3)
    check_probabilities(arr.reshape(-1), "scores")
    B, N, C = arr.shape
    if B == 0 or N == 0 or C == 0:
        raise ValueError(f"scores is empty (shape {arr.shape})")
    return arr, check_lengths(lengths, B, N)


def _check_events(events):
    if not isinstance(events, Events):
        raise TypeError(f"events must be an Events, got {type(events).__name__}")
    return events


@takes_data(refuse=SENTENCE_EVENTS)
def softmax_event_probabilities(events, scores, normalize=False):
    """Probability of each event under per-token probabilities: the product of
    its tokens' probabilities.

    For a softmax tagger the tokens are independent given ``x``, so the product
    is the event's exact marginal under the model; for scores that are not
    independent (e.g. CRF token marginals) it is only an approximation.

    Parameters
    ----------
    events : Events
    scores : array_like of float, shape (B, N, C)
        Per-token tag probabilities (e.g. one MC-dropout sample).
    normalize : bool, default False
        Return the length-normalised geometric mean ``p ** (1 / length)``.

    Returns
    -------
    ndarray of float64, shape (n_events,)

    Raises
    ------
    TypeError
        If ``events`` is not an :class:`Events` or ``scores`` not real numbers.
    ValueError
        If ``scores`` is not 3-D, holds values outside [0, 1] or NaN, or does
        not cover the events' sentences, positions and tags.

    References
    ----------
    Jagannatha & Yu (2020), Appendix A.3, eq. 6 (length normalisation).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.structured import softmax_sequence_events
    >>> probs = np.array([[[0.9, 0.1], [0.4, 0.6]]])
    >>> ev = softmax_sequence_events(probs, [[0, 1]], k=1)
    >>> softmax_event_probabilities(ev, probs * [1.0, 1.0]).round(2).tolist()
    [0.54]
    >>> softmax_event_probabilities(ev, probs, normalize=True).round(4).tolist()
    [0.7348]
    """
    ev = _check_events(events)
    arr, _ = check_softmax_scores(scores)
    _check_covers(ev, arr.shape)
    width = ev.tags.shape[1]
    pos = np.minimum(ev.start[:, None] + np.arange(width)[None], arr.shape[1] - 1)
    tok = arr[ev.sentence[:, None], pos, np.maximum(ev.tags, 0)].astype(np.float64)
    with np.errstate(divide="ignore"):
        logp = np.where(ev.tags >= 0, np.log(tok), 0.0).sum(1)
    if normalize:
        logp = logp / ev.length
    return np.exp(logp)


def _check_covers(ev, shape):
    """ValueError unless scores of ``shape`` [B, N, C] hold every event."""
    B, N, C = shape
    if len(ev) and (ev.sentence.max() >= B or (ev.start + ev.length).max() > N
                    or ev.tags.max() >= C):
        raise ValueError(f"scores of shape {tuple(shape)} do not cover the events "
                         "(sentence, position or tag out of range)")


@takes_data(refuse=SENTENCE_RECURSION)
def crf_event_probabilities(events, emissions, transitions, lengths=None, start=None,
                            end=None, allowed=None, mask=None, normalize=False,
                            n_threads=None):
    """Exact probability of each event under a linear-chain CRF.

    ``p(y_s = tags[0], ..., y_{s+l-1} = tags[l-1] | x)`` by
    :func:`sparsecal.crf.span_marginals` (one call per event length); for a
    whole sequence (start 0, the sentence's length) it is ``p(y | x)``.

    Parameters
    ----------
    events : Events
    emissions, transitions, lengths, start, end, allowed, mask
        The CRF potentials, as in :func:`sparsecal.crf.marginals`.
    normalize : bool, default False
        Return ``p ** (1 / length)``.
    n_threads : int, optional
        As in :func:`sparsecal.crf.marginals`.

    Returns
    -------
    ndarray of float64, shape (n_events,)

    Raises
    ------
    ImportError
        Without PyTorch.
    TypeError, ValueError
        As :func:`sparsecal.crf.span_marginals` (invalid potentials, an event
        outside a sentence), or ``events`` not an :class:`Events`.

    References
    ----------
    Jagannatha & Yu (2020), Appendix A.3, eq. 6; Nguyen & O'Connor (2015),
    Section 4.2 (forward-backward marginals).

    Examples
    --------
    >>> import torch
    >>> from sparsecal.structured import crf_sequence_events
    >>> em = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]], dtype=torch.float64)
    >>> ev = crf_sequence_events(em, torch.zeros(2, 2, dtype=torch.float64), [[0, 1]], k=2)
    >>> p = crf_event_probabilities(ev, em, torch.zeros(2, 2, dtype=torch.float64))
    >>> bool(np.allclose(p, ev.entries.score))
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
