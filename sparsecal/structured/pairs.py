"""Tag-pair entries: the calibration of two consecutive tags.

Nguyen & O'Connor (2015), Section 4.2.3 and Figure 4(b): a tagger's posterior
over two consecutive words, ``p(y_t = a, y_{t+1} = b | x)``
(:func:`sparsecal.crf.pair_marginals`), is calibrated like a single tag. Each
adjacent position ``(t, t+1)`` of a sentence is one row of a dense
``[n_pairs, C*C]`` matrix whose column ``a * C + b`` is the pair ``(a, b)``; it
is thresholded into :class:`~sparsecal.Entries` (Kranzlein et al. 2021,
Section 3.1) exactly like token scores, the gold pair labelling its entry. N&O
report the top 5 and the top 100 pairs by frequency:
:func:`most_frequent_pairs` selects them, :func:`pair_groups` makes each its own
group, so :func:`~sparsecal.gmce` gives the calibration error per pair.
"""
import numpy as np

from ..core.dispatch import SENTENCE_EVENTS, takes_data
from ..core.entries import Entries, threshold as threshold_entries
from ..core.groups import TagGroups
from ..core.validation import (as_float_array, check_lengths, check_positive_int,
                               check_probabilities, check_tag_matrix,
                               check_unit_interval)

__all__ = ["pair_entries", "most_frequent_pairs", "pair_groups"]


def _gold_pairs(gold, n_tags, lengths):
    """Gold pair index ``a * C + b`` of every adjacent real position, in row-major
    order (-1 where a tag is -1), from a checked gold matrix."""
    g = check_tag_matrix(gold, n_tags, "gold")
    B, N = g.shape
    L = check_lengths(lengths, B, N)
    real = np.arange(N - 1)[None] < (L - 1)[:, None]                 # [B, N-1]
    a, b = g[:, :-1][real], g[:, 1:][real]
    return np.where((a >= 0) & (b >= 0), a * n_tags + b, -1), real


@takes_data(refuse=SENTENCE_EVENTS)
def pair_entries(pair_marginals, gold, lengths=None, threshold=0.01):
    """Thresholded tag-pair entries of a batch of sentences.

    Parameters
    ----------
    pair_marginals : array_like of float32 or float64, shape (B, N-1, C, C)
        ``p(y_t = a, y_{t+1} = b | x)`` (a CPU tensor from
        :func:`sparsecal.crf.pair_marginals` is read without a copy).
    gold : array_like of int, shape (B, N)
        Gold tags (``-1``: padding or no gold tag; a pair with such a token has
        no gold pair and gives negative entries only).
    lengths : array_like of int, shape (B,), optional
        Sentence lengths in ``1..N`` (default all ``N``); a sentence of length
        ``L`` has ``L - 1`` pairs.
    threshold : float, default 0.01
        Keep entries with ``score >= threshold``.

    Returns
    -------
    Entries
        ``tag = a * C + b``, ``n_tags = C * C``, ``token`` the pair's row (the
        pairs of sentence 0 first, in position order).

    Raises
    ------
    TypeError
        If ``pair_marginals`` does not hold real numbers or ``gold`` integers.
    ValueError
        On shapes that disagree, ``gold`` outside ``[-1, C)``, invalid
        ``lengths``, or scores outside [0, 1] or NaN (as
        :func:`sparsecal.threshold`).

    References
    ----------
    Nguyen & O'Connor (2015), Section 4.2.3 (two-consecutive-word tags);
    Kranzlein, Liu & Schneider (2021), Section 3.1 (thresholding).

    Examples
    --------
    >>> import numpy as np
    >>> pm = np.zeros((1, 1, 2, 2))
    >>> pm[0, 0] = [[0.6, 0.1], [0.3, 0.0]]
    >>> ent = pair_entries(pm, [[0, 0]])
    >>> ent.tag.tolist(), ent.label.tolist(), ent.n_tags
    ([0, 1, 2], [1, 0, 0], 4)
    """
    pm = as_float_array(pair_marginals, "pair_marginals", ndim=4)
    B, n, C, C2 = pm.shape
    if C != C2:
        raise ValueError(f"pair_marginals must be [B, N-1, C, C], got shape {pm.shape}")
    check_probabilities(pm.reshape(-1), "pair_marginals")
    g = check_tag_matrix(gold, C, "gold")
    if g.shape != (B, n + 1):
        raise ValueError(f"gold has shape {g.shape}, expected ({B}, {n + 1}) for "
                         f"pair_marginals of shape {pm.shape}")
    pairs, real = _gold_pairs(g, C, lengths)
    if pairs.size == 0:                      # sentences of one token: no pair
        threshold = check_unit_interval(threshold, "threshold")
        return Entries(np.empty(0, pm.dtype), np.empty(0, np.int32), np.empty(0, np.uint8),
                       np.empty(0, np.int64), n_tags=C * C, n_tokens=0, threshold=threshold)
    return threshold_entries(pm.reshape(B, n, C * C)[real], pairs, threshold)


@takes_data(refuse=SENTENCE_EVENTS)
def most_frequent_pairs(gold, n_tags, n=5, lengths=None):
    """The ``n`` most frequent gold tag pairs (N&O Figure 4(b): top 5 and 100).

    Parameters
    ----------
    gold : array_like of int, shape (B, N)
        Gold tags (``-1``: padding or no gold tag, in no pair).
    n_tags : int
        C, the size of the tag inventory.
    n : int, default 5
        How many pairs (fewer if fewer pairs occur).
    lengths : array_like of int, shape (B,), optional

    Returns
    -------
    pairs : ndarray of int64
        Pair indices ``a * C + b``, by descending count (ties: lower index first).
    counts : ndarray of int64
        Their gold counts.

    Raises
    ------
    TypeError, ValueError
        On an invalid ``gold``, ``lengths``, ``n_tags`` or ``n``.

    References
    ----------
    Nguyen & O'Connor (2015), Section 4.2.3 and Figure 4(b).

    Examples
    --------
    >>> pairs, counts = most_frequent_pairs([[0, 1, 0, 1], [1, 1, -1, -1]], 2, n=2)
    >>> pairs.tolist(), counts.tolist()
    ([1, 2], [2, 1])
    """
    C = check_positive_int(n_tags, "n_tags")
    n = check_positive_int(n, "n")
    pairs, _ = _gold_pairs(gold, C, lengths)
    counts = np.bincount(pairs[pairs >= 0], minlength=C * C)
    order = np.argsort(-counts, kind="stable")[:n]
    order = order[counts[order] > 0]
    return order.astype(np.int64), counts[order].astype(np.int64)


def pair_groups(pairs, n_tags, tag_names=None):
    """Tag groups with each of ``pairs`` alone and every other pair in a last group.

    Parameters
    ----------
    pairs : array_like of int
        Distinct pair indices ``a * C + b`` (e.g. from :func:`most_frequent_pairs`).
    n_tags : int
        C; the groups cover the ``C * C`` pairs.
    tag_names : sequence of str, optional
        Names of the C tags; pairs are then named ``"a b"`` in the groups.

    Returns
    -------
    TagGroups
        Group ``i`` is ``pairs[i]``; group ``len(pairs)`` holds the rest.

    Raises
    ------
    TypeError, ValueError
        If ``pairs`` is not integers in ``[0, C*C)`` without repeats, or
        ``tag_names`` does not have C names.

    References
    ----------
    Nguyen & O'Connor (2015), Figure 4(b) (calibration error per tag pair).

    Examples
    --------
    >>> g = pair_groups([2, 1], 2)
    >>> g.tag_to_group.tolist(), g.n_groups
    ([2, 1, 0, 2], 3)
    """
    C = check_positive_int(n_tags, "n_tags")
    p = check_tag_matrix(np.reshape(pairs, (1, -1)), C * C, "pairs")[0]
    if p.size and (p.min() < 0 or np.unique(p).size != p.size):
        raise ValueError("pairs must be distinct pair indices in [0, C*C)")
    mapping = np.full(C * C, p.size, np.int64)
    mapping[p] = np.arange(p.size)
    names = None
    if tag_names is not None:
        if len(tag_names) != C:
            raise ValueError(f"tag_names has {len(tag_names)} names, expected {C}")
        names = [f"{a} {b}" for a in tag_names for b in tag_names]
    return TagGroups(mapping, p.size + 1, kind="custom", tag_names=names)
