"""K-fold splits of dev entries by token, stratified by tag group and label, as
scikit-learn's ``StratifiedKFold`` does by class. A token's fold depends only on
the seed, its stratum and its rank in the stratum (:func:`positional_folds`), so
a worker holding some rows computes the same folds
(:mod:`sparsecal.distributed.folds`).
"""
import numpy as np

from ..core.entries import check_entries
from ..core.groups import check_groups
from ..core.hashing import splitmix64
from ..core.validation import check_allocation, check_positive_int
from .._docs import fill_doc
from ..core.dispatch import takes_data

__all__ = ["positional_folds", "stratified_token_folds"]


def check_n_folds(n_folds):
    n_folds = check_positive_int(n_folds, "n_folds")
    if n_folds < 2:
        raise ValueError(f"n_folds must be at least 2, got {n_folds}")
    return n_folds


def token_strata(entries, groups, first_token, n_tokens):
    """Per token from ``first_token``: its gold entry's group, or ``groups.n_groups``."""
    stratum = np.full(n_tokens, groups.n_groups, dtype=np.int64)
    gold = entries.label == 1
    stratum[entries.token[gold] - first_token] = groups.tag_to_group[entries.tag[gold]]
    return stratum


def positional_folds(stratum, offsets, n_folds, seed):
    """The fold of each token of a run, from its stratum and its rank in the stratum.

    Rank ``r`` (``offsets[s]`` plus the rank in the run) is slot ``r % K`` of
    block ``r // K``; block ``(s, b)`` deals the K folds by the permutation that
    sorts K SplitMix64 hashes of ``(seed, s, b, i)``, so each fold holds
    ``floor(n_s / K)`` or ``ceil(n_s / K)`` of a stratum's tokens.

    Parameters
    ----------
    stratum : ndarray of int, shape (n,)
        The stratum of each token of the run, in token order.
    offsets : ndarray of int
        Per stratum, its tokens before the run.
    n_folds : int
        K, at least 2.
    seed : int
        At least 0.

    Returns
    -------
    ndarray of int64, shape (n,)

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
    # each block's K hashes and their order
    check_allocation(16 * pairs.shape[1] * n_folds, f"n_folds={n_folds}")
    key = splitmix64(np.array([seed % 2 ** 64], dtype=np.uint64))
    per_block = splitmix64(splitmix64(key ^ pairs[0].astype(np.uint64))
                           ^ pairs[1].astype(np.uint64))
    hashes = splitmix64(per_block[:, None] ^ np.arange(n_folds, dtype=np.uint64)[None, :])
    permutation = np.argsort(hashes, axis=1, kind="stable")
    return permutation[inverse.reshape(-1), slot]


@takes_data
@fill_doc
def stratified_token_folds(entries, groups, n_folds=5, seed=0):
    """The fold of every entry: each token's stratum (the group of its gold entry, or
    one more for tokens without one) dealt to the folds by :func:`positional_folds`.

    Parameters
    ----------
    entries : Entries
        With their tokens.
    groups : TagGroups
        Over the tagset of ``entries`` (SCW stratifies by label only).
    {folds}

    Returns
    -------
    ndarray of int64, shape (len(entries),)

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
