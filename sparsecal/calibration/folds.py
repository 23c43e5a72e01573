"""K-fold splits of dev entries by token, stratified by tag group and label.

Cross-fitting (lecture notes ``004``, "K-fold") holds out whole tokens, so no
token's entries are on both sides. Stratifying the tokens by the group of
their gold entry (and whether they have one above the threshold) gives every
fold about 1/K of each group's positives, as scikit-learn's ``StratifiedKFold``
does for class labels; a rare tag group is then never missing from a fold's
training part by chance.

The folds are positional (:func:`positional_folds`): a token's fold depends
only on the seed, its stratum and its rank among the stratum's tokens in token
order, through a counter-based hash (:func:`~sparsecal.core.hashing.splitmix64`),
not on one random stream over all tokens. A worker holding some rows of the
data and the count of each stratum in the rows before them computes the same
folds (:mod:`sparsecal.distributed.folds`, docs/scale.md).
"""
import numpy as np

from ..core.entries import check_entries
from ..core.groups import check_groups
from ..core.hashing import splitmix64
from ..core.validation import check_positive_int
from ..core.dispatch import takes_data

__all__ = ["positional_folds", "stratified_token_folds"]


def check_n_folds(n_folds):
    """``n_folds`` as an int of at least 2 (ValueError naming it otherwise)."""
    n_folds = check_positive_int(n_folds, "n_folds")
    if n_folds < 2:
        raise ValueError(f"n_folds must be at least 2, got {n_folds}")
    return n_folds


def token_strata(entries, groups, first_token, n_tokens):
    """The stratum of tokens ``first_token .. first_token + n_tokens - 1``:
    the group of the token's gold entry (label 1) among ``entries`` (which hold
    every entry of those tokens), or ``groups.n_groups`` for a token without one.

    Parameters
    ----------
    entries : Entries
        With tokens in the range.
    groups : TagGroups
    first_token, n_tokens : int

    Returns
    -------
    ndarray of int64, shape (n_tokens,)

    Examples
    --------
    >>> import sparsecal as sc
    >>> e = sc.Entries([0.9, 0.5], [1, 0], [1, 0], token=[1, 2], n_tags=2)
    >>> token_strata(e, sc.TagGroups.per_tag(2), 0, 3).tolist()
    [2, 1, 2]
    """
    stratum = np.full(n_tokens, groups.n_groups, dtype=np.int64)
    gold = entries.label == 1
    stratum[entries.token[gold] - first_token] = groups.tag_to_group[entries.tag[gold]]
    return stratum


def positional_folds(stratum, offsets, n_folds, seed):
    """The fold of each token of a run of consecutive tokens, from its stratum
    and its rank in the stratum: the one rule of the folds, on one machine and
    on a cluster.

    A token's rank ``r`` is ``offsets[s]`` (the tokens of its stratum ``s``
    before the run) plus its rank among the run's tokens of ``s`` in token
    order. The stratum's tokens are dealt in blocks of K: rank ``r`` is slot
    ``j = r % K`` of block ``b = r // K``, and block ``(s, b)`` deals the folds
    by the permutation that sorts the K hashes
    ``h_i = splitmix64(splitmix64(splitmix64(splitmix64(seed) ^ s) ^ b) ^ i)``,
    ``i = 0 .. K-1``: slot ``j`` gets fold ``argsort(h)[j]``. Each block's K
    tokens go to K different folds (a uniformly random permutation, the hashes
    being independent draws), so each fold holds ``floor(n_s / K)`` or
    ``ceil(n_s / K)`` of stratum ``s``'s ``n_s`` tokens.

    Parameters
    ----------
    stratum : ndarray of int, shape (n,)
        Stratum (>= 0) of each token of the run, in token order.
    offsets : ndarray of int
        Per stratum, its tokens before the run (zeros for a whole data set).
    n_folds : int
        K, at least 2.
    seed : int
        At least 0.

    Returns
    -------
    ndarray of int64, shape (n,)
        The fold of each token, in ``[0, K)``.

    Raises
    ------
    ValueError
        For ``n_folds`` below 2, a negative ``seed``, ``stratum`` or ``offsets``
        that are not 1-D non-negative integers, or a stratum without an offset.

    References
    ----------
    Score-calibration lecture notes (``004``), "K-fold"; Steele, Lea & Flood
    2014 (SplitMix64); stratification as in scikit-learn's ``StratifiedKFold``.

    Examples
    --------
    >>> import numpy as np
    >>> fold = positional_folds(np.zeros(6, np.int64), np.zeros(1, np.int64), 3, 0)
    >>> sorted(fold[:3].tolist()), sorted(fold[3:].tolist())
    ([0, 1, 2], [0, 1, 2])
    """
    n_folds = check_n_folds(n_folds)
    seed = check_positive_int(seed, "seed", allow_zero=True)
    stratum, offsets = np.asarray(stratum), np.asarray(offsets)
    for name, a in (("stratum", stratum), ("offsets", offsets)):
        if a.ndim != 1 or a.dtype.kind not in "iu" or (a.size and a.min() < 0):
            raise ValueError(f"{name} must be a 1-D array of non-negative integers")
    if stratum.shape[0] == 0:
        return np.empty(0, dtype=np.int64)
    if stratum.max() >= offsets.shape[0]:
        raise ValueError(f"offsets has {offsets.shape[0]} strata but stratum holds "
                         f"{int(stratum.max())}")
    stratum = stratum.astype(np.int64)
    order = np.argsort(stratum, kind="stable")
    in_order = stratum[order]
    rank = np.empty(stratum.shape[0], dtype=np.int64)
    rank[order] = (np.asarray(offsets, dtype=np.int64)[in_order]
                   + np.arange(in_order.shape[0]) - np.searchsorted(in_order, in_order))
    block, slot = np.divmod(rank, n_folds)
    pairs, inverse = np.unique(np.stack((stratum, block)), axis=1, return_inverse=True)
    key = splitmix64(np.array([seed % 2 ** 64], dtype=np.uint64))
    per_block = splitmix64(splitmix64(key ^ pairs[0].astype(np.uint64))
                           ^ pairs[1].astype(np.uint64))
    hashes = splitmix64(per_block[:, None] ^ np.arange(n_folds, dtype=np.uint64)[None, :])
    permutation = np.argsort(hashes, axis=1, kind="stable")
    return permutation[inverse.reshape(-1), slot]


@takes_data
def stratified_token_folds(entries, groups, n_folds=5, seed=0):
    """The fold of every entry: each stratum's tokens, in token order, dealt to
    the folds in blocks of K by seeded random permutations.

    A token's stratum is the group (in ``groups``) of its gold entry, the entry
    with label 1, or one more stratum for tokens without one (gold below the
    threshold or missing). The stratum's r-th token (in token order) is slot
    ``r % K`` of block ``r // K``, and each block's K slots get a seeded random
    permutation of the K folds (:func:`positional_folds`): each stratum's tokens
    are spread over the folds as evenly as possible (counts differ by at most
    one). Until issue 15 the tokens were shuffled by one
    ``numpy.random.default_rng(seed).permutation`` over all tokens; that global
    stream cannot be reproduced on a cluster without gathering every token,
    whereas a token's fold here depends only on the seed, its stratum and its
    rank, which a worker gets from per-chunk stratum counts: the distributed
    folds (:mod:`sparsecal.distributed.folds`) are these, entry by entry.

    Parameters
    ----------
    entries : Entries
        With their tokens.
    groups : TagGroups
        Over the tagset of ``entries`` (e.g. the calibrator's groups; SCW
        stratifies by label only).
    n_folds : int, default=5
        K, at least 2.
    seed : int, default=0
        Seed of the permutations (an integer >= 0).

    Returns
    -------
    ndarray of int64, shape (len(entries),)
        The fold of each entry, in ``[0, n_folds)``; all entries of a token
        share one fold.

    Raises
    ------
    TypeError
        For ``entries`` that are not Entries or ``groups`` that are not TagGroups.
    ValueError
        For ``n_folds`` below 2, a negative ``seed``, entries without tokens, or
        ``groups`` of another tagset.

    References
    ----------
    Score-calibration lecture notes (``004``), "K-fold"; stratification as in
    scikit-learn's ``StratifiedKFold``.

    Examples
    --------
    >>> import numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.calibration.folds import stratified_token_folds
    >>> entries = sc.Entries([0.9, 0.2, 0.8, 0.7, 0.6, 0.5], [0, 1, 1, 0, 1, 0],
    ...                      [1, 0, 1, 1, 1, 1], token=[0, 0, 1, 2, 3, 4], n_tags=2)
    >>> fold = stratified_token_folds(entries, sc.TagGroups.per_tag(2), n_folds=2)
    >>> bool(fold[0] == fold[1]), sorted(np.bincount(fold[entries.label == 1]).tolist())
    (True, [2, 3])
    """
    entries = check_entries(entries)
    check_groups(groups, entries.n_tags)
    n_folds = check_n_folds(n_folds)
    seed = check_positive_int(seed, "seed", allow_zero=True)
    if entries.token is None:
        raise ValueError("folds split by token: entries need their tokens")
    n_tokens = (entries.n_tokens if entries.n_tokens is not None
                else int(entries.token.max()) + 1)
    stratum = token_strata(entries, groups, 0, n_tokens)
    offsets = np.zeros(groups.n_groups + 1, dtype=np.int64)
    return positional_folds(stratum, offsets, n_folds, seed)[entries.token]
