"""K-fold splits of dev entries by token, stratified by tag group and label.

Cross-fitting (lecture notes ``004``, "K-fold") holds out whole tokens, so no
token's entries are on both sides. Stratifying the tokens by the group of
their gold entry (and whether they have one above the threshold) gives every
fold about 1/K of each group's positives, as scikit-learn's ``StratifiedKFold``
does for class labels; a rare tag group is then never missing from a fold's
training part by chance.
"""
import numpy as np

from ..core.entries import check_entries
from ..core.groups import check_groups
from ..core.validation import check_positive_int

__all__ = ["stratified_token_folds"]


def stratified_token_folds(entries, groups, n_folds=5, seed=0):
    """The fold of every entry: tokens shuffled (seeded) within strata, then
    dealt round-robin to the folds.

    A token's stratum is the group (in ``groups``) of its gold entry, the entry
    with label 1, or one more stratum for tokens without one (gold below the
    threshold or missing). Tokens are shuffled by a seeded permutation, sorted
    stably by stratum, and token ``i`` of that order goes to fold ``i % K``: each
    stratum's tokens are spread over the folds as evenly as possible (counts
    differ by at most one), and so are all tokens.

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
        Seed of the token shuffle (``numpy.random.default_rng``).

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
        For ``n_folds`` below 2, entries without tokens, or ``groups`` of
        another tagset.

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
    >>> bool(fold[0] == fold[1]), np.bincount(fold[entries.label == 1]).tolist()
    (True, [3, 2])
    """
    entries = check_entries(entries)
    check_groups(groups, entries.n_tags)
    n_folds = check_positive_int(n_folds, "n_folds")
    if n_folds < 2:
        raise ValueError(f"n_folds must be at least 2, got {n_folds}")
    if entries.token is None:
        raise ValueError("folds split by token: entries need their tokens")
    n_tokens = (entries.n_tokens if entries.n_tokens is not None
                else int(entries.token.max()) + 1)
    stratum = np.full(n_tokens, groups.n_groups, dtype=np.int64)
    gold = entries.label == 1
    stratum[entries.token[gold]] = groups.tag_to_group[entries.tag[gold]]
    shuffled = np.random.default_rng(seed).permutation(n_tokens)
    dealt = shuffled[np.argsort(stratum[shuffled], kind="stable")]
    fold_of_token = np.empty(n_tokens, dtype=np.int64)
    fold_of_token[dealt] = np.arange(n_tokens) % n_folds
    return fold_of_token[entries.token]
