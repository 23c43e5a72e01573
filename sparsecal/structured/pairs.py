"""Tag-pair entries (Nguyen & O'Connor 2015, Section 4.2.3): each adjacent
position is a row of ``p(y_t = a, y_{t+1} = b | x)`` (column ``a * C + b``),
thresholded like token scores; :func:`most_frequent_pairs` and
:func:`pair_groups` give the GMCE of N&O's top pairs (Figure 4(b)).
"""
import numpy as np

from ..core.dispatch import SENTENCE_EVENTS, takes_data
from ..core.entries import Entries, threshold as threshold_entries
from ..core.groups import TagGroups
from ..core.validation import (MAX_TAGS, TAG_BYTES, as_float_array, check_allocation,
                               check_lengths, check_positive_int, check_probabilities,
                               check_tag_matrix, check_unit_interval)
from .._docs import fill_doc

__all__ = ["pair_entries", "most_frequent_pairs", "pair_groups"]


def check_pair_tags(n_tags):
    """``n_tags`` C whose ``C * C`` pair tags are below 2**31 and fit in memory."""
    C = check_positive_int(n_tags, "n_tags")
    if C * C > MAX_TAGS:
        raise ValueError(f"n_tags={C} makes {C * C} pair tags, more than 2**31 - 1")
    check_allocation(TAG_BYTES * C * C, f"n_tags={C} ({C * C} pair tags)")
    return C


def _gold_pairs(gold, n_tags, lengths):
    """Gold pair ``a * C + b`` of every adjacent real position (-1 where a tag is -1)."""
    g = check_tag_matrix(gold, n_tags, "gold")
    B, N = g.shape
    L = check_lengths(lengths, B, N)
    real = np.arange(N - 1)[None] < (L - 1)[:, None]                 # [B, N-1]
    a, b = g[:, :-1][real], g[:, 1:][real]
    return np.where((a >= 0) & (b >= 0), a * n_tags + b, -1), real


@takes_data(refuse=SENTENCE_EVENTS)
@fill_doc
def pair_entries(pair_marginals, gold, lengths=None, threshold=0.01):
    """Thresholded tag-pair entries: ``tag = a * C + b``, ``n_tags = C * C``,
    ``token`` the pair's row.

    Parameters
    ----------
    pair_marginals : array_like of float32 or float64, shape (B, N-1, C, C)
        ``p(y_t = a, y_{t+1} = b | x)`` (a CPU tensor is read without a copy).
    {gold_matrix}
    {lengths}
    threshold : float, default 0.01

    Returns
    -------
    Entries

    Examples
    --------
    >>> import numpy as np
    >>> ent = pair_entries(np.array([[[[0.6, 0.1], [0.3, 0.0]]]]), [[0, 0]])
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
@fill_doc
def most_frequent_pairs(gold, n_tags, n=5, lengths=None):
    """The ``n`` most frequent gold tag pairs ``a * C + b`` (ties: lower index first)
    and their counts.

    Parameters
    ----------
    {gold_matrix}
    n_tags : int
    n : int, default 5
    {lengths}

    Returns
    -------
    pairs, counts : ndarray of int64

    Examples
    --------
    See :func:`pair_groups`.
    """
    C = check_pair_tags(n_tags)
    n = check_positive_int(n, "n")
    pairs, _ = _gold_pairs(gold, C, lengths)
    counts = np.bincount(pairs[pairs >= 0], minlength=C * C)
    order = np.argsort(-counts, kind="stable")[:n]
    order = order[counts[order] > 0]
    return order.astype(np.int64), counts[order].astype(np.int64)


def pair_groups(pairs, n_tags, tag_names=None):
    """Tag groups of the ``C * C`` pairs: each of ``pairs`` alone, the others in a
    last group (``tag_names`` name the pairs ``"a b"``).

    Parameters
    ----------
    pairs : array_like of int
    n_tags : int
    tag_names : sequence of str, optional

    Returns
    -------
    TagGroups

    Examples
    --------
    >>> pairs, counts = most_frequent_pairs([[0, 1, 0, 1], [1, 1, -1, -1]], 2, n=2)
    >>> pairs.tolist(), counts.tolist(), pair_groups(pairs, 2).tag_to_group.tolist()
    ([1, 2], [2, 1], [2, 0, 1, 2])
    """
    C = check_pair_tags(n_tags)
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
