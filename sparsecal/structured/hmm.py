"""A supervised hidden Markov model tagger whose log potentials are a CRF's
(Nguyen & O'Connor 2015, Section 4.2, compare an HMM's calibration with a
CRF's): ``log p(x, y) = log pi(y_0) + sum_t log A(y_{t-1}, y_t) + log
A(y_{L-1}, STOP) + sum_t log B(y_t, x_t)``, so :mod:`sparsecal.crf` gives its
exact posteriors. Unknown words fall in the classes of :func:`word_classes`,
counted from the training words seen once (as Brants 2000, TnT).
"""
import numpy as np

from ..core.validation import (as_array, check_allocation, check_lengths, check_n_tags,
                               check_positive_real)
from ..io.tables import plural, summary

__all__ = ["SupervisedHMM", "WORD_CLASSES", "word_classes"]

#: the classes of unknown words, in the order :func:`word_classes` tests them
WORD_CLASSES = ("number", "hyphenated", "capitalised", "-ing", "-ed", "-ly", "-tion",
                "-s", "other")


def word_classes(words):
    """The class of each word, an index into :data:`WORD_CLASSES`: the first that
    applies of ``number`` (digits once ``,.-/`` are removed), ``hyphenated``,
    ``capitalised``, the suffixes ``-ing``, ``-ed``, ``-ly``, ``-tion``, ``-s``,
    and ``other``.

    Parameters
    ----------
    words : array_like of str, shape (n,)

    Returns
    -------
    ndarray of int64, shape (n,)

    Examples
    --------
    >>> [WORD_CLASSES[c] for c in word_classes(["1,000", "Obama", "running", "xyz"])]
    ['number', 'capitalised', '-ing', 'other']
    """
    w = _strings(words, "words")
    if w.size == 0:                     # np.char.replace fails on empty arrays
        return np.zeros(0, dtype=np.int64)
    digits = np.char.isdigit(_strip(w, ",.-/"))
    tests = [digits, np.char.find(w, "-") >= 0, np.char.lower(w) != w]
    tests += [np.char.endswith(w, s) for s in ("ing", "ed", "ly", "tion", "s")]
    out = np.full(w.shape[0], len(WORD_CLASSES) - 1, dtype=np.int64)
    for i in range(len(tests) - 1, -1, -1):        # the first test that holds wins
        out[tests[i]] = i
    return out


def _strip(w, chars):
    for c in chars:
        w = np.char.replace(w, c, "")
    return w


def _strings(words, name):
    w = as_array(words, name)
    if w.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional (every token of every sentence, one "
                         f"after the other), got shape {w.shape}")
    if w.size == 0:
        return np.array([], dtype=str)
    if w.dtype.kind == "O":
        w = np.array(w.tolist())
    if w.dtype.kind != "U":
        raise TypeError(f"{name} must hold strings, got dtype {w.dtype}")
    return w


class SupervisedHMM:
    """A first-order HMM tagger estimated by counting with add-k smoothing (N&O
    2015, Section 4.2.1); posteriors by the CRF forward-backward.

    Parameters
    ----------
    transition_pseudocount, emission_pseudocount : float, default=1.0
        Added to every start, transition and stop count, and to every (tag,
        word) and (tag, word class) count.

    Attributes
    ----------
    vocabulary_ : ndarray of str, shape (V,)
    log_start_, log_end_, log_transitions_, log_emissions_ : ndarray of float64
        ``log_emissions_`` has shape (C, V + K): column ``V + k`` is word class ``k``.

    Examples
    --------
    >>> from sparsecal import crf
    >>> words = ["the", "dog", "runs", "a", "cat", "sleeps"]
    >>> hmm = SupervisedHMM().fit(words, [0, 1, 2, 0, 1, 2], lengths=[3, 3], n_tags=3)
    >>> crf.marginals(**hmm.potentials(["the", "cat", "jumps"], lengths=[3])).argmax(-1).tolist()
    [[0, 1, 2]]
    """

    def __init__(self, transition_pseudocount=1.0, emission_pseudocount=1.0):
        self.transition_pseudocount = transition_pseudocount
        self.emission_pseudocount = emission_pseudocount

    def __repr__(self):
        fitted = hasattr(self, "n_tags_") and (
            f"fitted: {plural(self.n_tags_, 'tag')}, "
            f"{plural(self.vocabulary_.shape[0], 'word type')}")
        return summary(self, f"transition_pseudocount={self.transition_pseudocount!r}",
                       f"emission_pseudocount={self.emission_pseudocount!r}", fitted)

    def fit(self, words, tags, lengths, n_tags=None):
        """Count the starts, transitions, stops and emissions of tagged sentences
        (``words`` and ``tags`` one sentence after the other, ``lengths`` each).
        """
        a = check_positive_real(self.transition_pseudocount, "transition_pseudocount")
        b = check_positive_real(self.emission_pseudocount, "emission_pseudocount")
        w = _strings(words, "words")
        y = as_array(tags, "tags")
        if y.ndim != 1 or y.shape[0] != w.shape[0] or y.shape[0] == 0:
            raise ValueError(f"tags must be 1-D with one tag per word ({w.shape[0]}), got "
                             f"shape {y.shape}" if w.shape[0] else "cannot fit on no tokens")
        if y.dtype.kind not in "iu":
            raise TypeError(f"tags must hold integer tag indices, got dtype {y.dtype}")
        C = check_n_tags(int(y.max()) + 1 if n_tags is None else n_tags)
        check_allocation(16 * C * C, f"n_tags={C}")   # the transitions, counts and logs
        if y.min() < 0 or y.max() >= C:
            i = int(np.flatnonzero((y < 0) | (y >= C))[0])
            raise ValueError(f"tags[{i}] = {y[i]} is outside [0, {C})")
        L = _lengths(lengths, w.shape[0])
        y = y.astype(np.int64)
        first = np.concatenate([[0], np.cumsum(L)[:-1]])
        last = first + L - 1
        follows = np.ones(y.shape[0], bool)
        follows[last] = False                     # a token followed by a tag, not STOP
        n_start = np.bincount(y[first], minlength=C)
        n_stop = np.bincount(y[last], minlength=C)
        idx = np.flatnonzero(follows)
        n_pair = np.bincount(y[idx] * C + y[idx + 1], minlength=C * C).reshape(C, C)
        n_tag = np.bincount(y, minlength=C)
        vocab, word_id, word_count = np.unique(w, return_inverse=True, return_counts=True)
        V, K = vocab.shape[0], len(WORD_CLASSES)
        check_allocation(16 * C * (V + K), f"n_tags={C}")   # the emissions, counts and logs
        n_emit = np.zeros((C, V + K))
        np.add.at(n_emit, (y, word_id), 1.0)
        hapax = word_count[word_id] == 1
        np.add.at(n_emit, (y[hapax], V + word_classes(w[hapax])), 1.0)
        self.n_tags_, self.vocabulary_ = C, vocab
        self.log_start_ = np.log((n_start + a) / (L.shape[0] + C * a))
        row = (n_tag + (C + 1) * a)[:, None]
        self.log_transitions_ = np.log((n_pair + a) / row)
        self.log_end_ = np.log((n_stop + a) / row[:, 0])
        self.log_emissions_ = np.log((n_emit + b) / (n_emit.sum(1, keepdims=True) + (V + K) * b))
        return self

    def emission_columns(self, words):
        """The column of ``log_emissions_`` of each word (``V + class`` for an unseen word)."""
        if not hasattr(self, "log_emissions_"):
            raise ValueError("this SupervisedHMM is not fitted: call fit first")
        w = _strings(words, "words")
        V = self.vocabulary_.shape[0]
        pos = np.minimum(np.searchsorted(self.vocabulary_, w), max(V - 1, 0))
        known = self.vocabulary_[pos] == w
        out = np.where(known, pos, V)
        out[~known] += word_classes(w[~known])
        return out.astype(np.int64)

    def potentials(self, words, lengths):
        """The HMM as the CRF potentials (keywords of :func:`crf.marginals`) of ``words``."""
        col = self.emission_columns(words)
        L = _lengths(lengths, col.shape[0])
        N = int(L.max())
        sentence = np.repeat(np.arange(L.shape[0]), L)
        position = np.arange(col.shape[0]) - np.repeat(np.cumsum(L) - L, L)
        em = np.zeros((L.shape[0], N, self.n_tags_))
        em[sentence, position] = self.log_emissions_[:, col].T
        return {"emissions": em, "transitions": self.log_transitions_.copy(),
                "start": self.log_start_.copy(), "end": self.log_end_.copy(), "lengths": L}


def _lengths(lengths, n_tokens):
    L = as_array(lengths, "lengths")
    if L.ndim != 1 or L.shape[0] == 0:
        raise ValueError(f"lengths must be a non-empty 1-D array, got shape {L.shape}")
    if L.dtype.kind not in "iu":
        raise TypeError(f"lengths must hold integers, got dtype {L.dtype}")
    L = check_lengths(L, L.shape[0], max(int(L.max()), 1))
    if int(L.sum()) != n_tokens:
        raise ValueError(f"lengths sum to {int(L.sum())} but there are {n_tokens} words")
    return L
