"""Stratified K-fold by token (sparsecal.calibration.folds) against a brute-force
dealing of tokens by the positional rule, and its balance, determinism and errors."""
import numpy as np
import pytest

from sparsecal import Entries, TagGroups
from sparsecal.calibration.folds import stratified_token_folds

from test_folds_positional import reference_folds


def random_entries(rng, n_tokens, n_tags, per_token=3):
    """Entries of ``n_tokens`` tokens, up to ``per_token`` tags each, one gold
    entry on most tokens, tied scores."""
    token = np.repeat(np.arange(n_tokens), rng.integers(1, per_token + 1, n_tokens))
    tag = rng.integers(0, n_tags, token.size)
    first = np.r_[True, token[1:] != token[:-1]]
    label = (first & (rng.random(token.size) < 0.8)).astype(np.uint8)
    score = rng.integers(0, 5, token.size) / 4.0
    return Entries(score, tag, label, token, n_tags=n_tags, n_tokens=n_tokens)


def brute_force_folds(entries, groups, n_folds, seed):
    """Token by token: the stratum of its gold entry, then the positional rule
    read from its definition (test_folds_positional.reference_folds)."""
    stratum = [groups.n_groups] * entries.n_tokens
    for t, g, y in zip(entries.token, entries.tag, entries.label):
        if y == 1:
            stratum[t] = int(groups.tag_to_group[g])
    return reference_folds(stratum, n_folds, seed)[entries.token]


@pytest.mark.parametrize("n_tokens, n_tags, n_groups, n_folds, seed", [
    (1, 3, 2, 2, 0), (2, 3, 2, 2, 1), (2, 5, 5, 5, 2), (50, 8, 3, 5, 3),
    (401, 30, 4, 7, 4), (1000, 12, 1, 3, 5)])
def test_folds_match_brute_force(n_tokens, n_tags, n_groups, n_folds, seed):
    rng = np.random.default_rng(seed)
    entries = random_entries(rng, n_tokens, n_tags)
    groups = TagGroups(rng.integers(0, n_groups, n_tags), n_groups)
    fold = stratified_token_folds(entries, groups, n_folds, seed)
    np.testing.assert_array_equal(fold, brute_force_folds(entries, groups, n_folds, seed))
    assert fold.dtype == np.int64 and fold.min() >= 0 and fold.max() < n_folds


def test_folds_are_balanced_per_group_and_label():
    rng = np.random.default_rng(7)
    entries = random_entries(rng, 3001, 20)
    groups = TagGroups(rng.integers(0, 4, 20), 4)
    fold = stratified_token_folds(entries, groups, 5, 0)
    gold = entries.label == 1
    for g in range(4):
        counts = np.bincount(fold[gold & (groups.tag_to_group[entries.tag] == g)],
                             minlength=5)
        assert counts.max() - counts.min() <= 1, (g, counts)
    tokens_per_fold = np.bincount(np.unique(np.c_[entries.token, fold], axis=0)[:, 1])
    # every stratum (4 groups + no gold) adds floor or ceil of its share to a fold
    assert tokens_per_fold.max() - tokens_per_fold.min() <= 5
    # never splits a token
    assert all(np.unique(fold[entries.token == t]).size == 1 for t in range(50))


def test_folds_seeded_and_input_unchanged():
    rng = np.random.default_rng(1)
    entries = random_entries(rng, 200, 10)
    groups = TagGroups.scw(10)
    before = entries.token.copy()
    a = stratified_token_folds(entries, groups, 4, 9)
    np.testing.assert_array_equal(a, stratified_token_folds(entries, groups, 4, 9))
    assert not np.array_equal(a, stratified_token_folds(entries, groups, 4, 10))
    np.testing.assert_array_equal(entries.token, before)


def test_folds_errors():
    rng = np.random.default_rng(2)
    entries = random_entries(rng, 20, 4)
    with pytest.raises(ValueError, match="n_folds must be at least 2, got 1"):
        stratified_token_folds(entries, TagGroups.scw(4), 1)
    with pytest.raises(ValueError, match="n_folds"):
        stratified_token_folds(entries, TagGroups.scw(4), 0)
    with pytest.raises(ValueError, match="tokens"):
        stratified_token_folds(Entries(entries.score, entries.tag, entries.label, n_tags=4),
                               TagGroups.scw(4), 3)
    with pytest.raises(ValueError):
        stratified_token_folds(entries, TagGroups.scw(5), 3)
    with pytest.raises(TypeError, match="groups"):
        stratified_token_folds(entries, None, 3)
