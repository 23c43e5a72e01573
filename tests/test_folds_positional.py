"""The positional fold rule (sparsecal.calibration.folds.positional_folds)
against a pure-Python reading of its definition (SplitMix64 on Python
integers), and its guarantees: balance per (stratum, fold), a token's entries
in one fold, seeded, a uniformly random permutation per block, and the same
folds from split runs with per-stratum offsets (what a cluster computes)."""
import itertools

import numpy as np
import pytest
from scipy import stats

from sparsecal import Entries, TagGroups
from sparsecal.calibration.folds import positional_folds, stratified_token_folds

MASK = 2 ** 64 - 1


def splitmix(x):
    """SplitMix64's finaliser of ``x + golden ratio`` on a Python int."""
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def reference_folds(stratum, n_folds, seed):
    """The definition, token by token: rank in stratum, block, slot, and the
    permutation sorting the block's K hashes."""
    seen, out = {}, []
    for s in stratum:
        r = seen.get(s, 0)
        seen[s] = r + 1
        b, j = divmod(r, n_folds)
        base = splitmix(splitmix(splitmix(seed) ^ s) ^ b)
        h = [splitmix(base ^ i) for i in range(n_folds)]
        out.append(sorted(range(n_folds), key=lambda i: h[i])[j])
    return np.array(out, dtype=np.int64)


@pytest.mark.parametrize("n, n_strata, n_folds, seed", [
    (1, 1, 2, 0), (2, 2, 2, 5), (2, 1, 3, 1), (13, 3, 5, 7), (500, 4, 7, 2 ** 40),
    (997, 1, 6, 3)])
def test_matches_definition(n, n_strata, n_folds, seed):
    stratum = np.random.default_rng(n).integers(0, n_strata, n)
    got = positional_folds(stratum, np.zeros(n_strata, np.int64), n_folds, seed)
    np.testing.assert_array_equal(got, reference_folds(stratum.tolist(), n_folds, seed))


@pytest.mark.parametrize("n_folds", range(2, 8))
def test_balanced_per_stratum_and_fold(n_folds):
    rng = np.random.default_rng(n_folds)
    for n in (1, 2, 7, 1000, 100_000):
        n_strata = int(rng.integers(1, 12))
        stratum = rng.integers(0, n_strata, n)
        fold = positional_folds(stratum, np.zeros(n_strata, np.int64), n_folds, n)
        counts = np.zeros((n_strata, n_folds), np.int64)
        np.add.at(counts, (stratum, fold), 1)
        per = np.bincount(stratum, minlength=n_strata)
        # floor or ceil of n_s / K in every cell
        assert (counts >= (per // n_folds)[:, None]).all()
        assert (counts <= -(-per // n_folds)[:, None]).all()
        assert (counts.sum(axis=1) == per).all()


def test_offsets_reproduce_the_whole_run():
    """Any split of the tokens into runs, each given the per-stratum counts of
    the runs before it, gives the whole run's folds."""
    rng = np.random.default_rng(3)
    stratum = rng.integers(0, 5, 3000)
    whole = positional_folds(stratum, np.zeros(5, np.int64), 4, 11)
    cuts = np.sort(np.r_[0, rng.integers(0, 3000, 6), 1500, 1500, 3000])
    parts = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        offsets = np.bincount(stratum[:a], minlength=5)
        parts.append(positional_folds(stratum[a:b], offsets, 4, 11))
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    # a wrong offset (one token off) moves folds
    shifted = positional_folds(stratum[1500:], np.bincount(stratum[:1500], minlength=5) + 1,
                               4, 11)
    assert not np.array_equal(shifted, whole[1500:])


def test_seeded():
    stratum = np.random.default_rng(0).integers(0, 3, 2000)
    zeros = np.zeros(3, np.int64)
    a = positional_folds(stratum, zeros, 5, 9)
    np.testing.assert_array_equal(a, positional_folds(stratum, zeros, 5, 9))
    for other in (0, 8, 10):
        assert (a != positional_folds(stratum, zeros, 5, other)).mean() > 0.5


@pytest.mark.parametrize("n_folds", [2, 3, 4])
def test_uniform_permutation_per_block(n_folds):
    """Over 6000 blocks of one stratum: each permutation of the K folds as often
    as the others, and each (slot, fold) pair 1/K of the blocks (chi-square)."""
    n_blocks = 6000
    fold = positional_folds(np.zeros(n_blocks * n_folds, np.int64), np.zeros(1, np.int64),
                            n_folds, 1).reshape(n_blocks, n_folds)
    assert (np.sort(fold, axis=1) == np.arange(n_folds)).all()
    perms = {p: i for i, p in enumerate(itertools.permutations(range(n_folds)))}
    seen = np.bincount([perms[tuple(row)] for row in fold.tolist()], minlength=len(perms))
    assert stats.chisquare(seen).pvalue > 1e-4
    slot_fold = np.zeros((n_folds, n_folds), np.int64)
    np.add.at(slot_fold, (np.tile(np.arange(n_folds), n_blocks), fold.ravel()), 1)
    assert stats.chisquare(slot_fold.ravel()).pvalue > 1e-4
    # the test can fail: a fixed deal (fold = slot) is far from uniform
    assert stats.chisquare(np.bincount([0] * n_blocks, minlength=len(perms))).pvalue < 1e-4


def test_entries_folds_follow_the_rule():
    """stratified_token_folds: a token's stratum (its gold entry's group, or
    n_groups), then the rule; every entry of a token in its token's fold."""
    rng = np.random.default_rng(4)
    n_tokens, n_tags = 400, 9
    token = np.repeat(np.arange(n_tokens), rng.integers(0, 4, n_tokens))
    tag = rng.integers(0, n_tags, token.size)
    first = np.r_[True, token[1:] != token[:-1]] if token.size else token.astype(bool)
    label = (first & (rng.random(token.size) < 0.7)).astype(np.uint8)
    entries = Entries(rng.integers(0, 4, token.size) / 3.0, tag, label, token,
                      n_tags=n_tags, n_tokens=n_tokens)
    groups = TagGroups(rng.integers(0, 3, n_tags), 3)
    stratum = [3] * n_tokens
    for t, g, y in zip(token, tag, label):
        if y:
            stratum[t] = int(groups.tag_to_group[g])
    fold = stratified_token_folds(entries, groups, 4, 6)
    np.testing.assert_array_equal(fold, reference_folds(stratum, 4, 6)[token])


def test_empty_run():
    assert positional_folds(np.empty(0, np.int64), np.zeros(2, np.int64), 3, 0).shape == (0,)


def test_errors_name_the_argument():
    s, z = np.array([0, 1]), np.zeros(2, np.int64)
    with pytest.raises(ValueError, match="n_folds must be at least 2"):
        positional_folds(s, z, 1, 0)
    with pytest.raises(ValueError, match="seed"):
        positional_folds(s, z, 2, -1)
    with pytest.raises(ValueError, match="stratum must be"):
        positional_folds(np.array([0.5]), z, 2, 0)
    with pytest.raises(ValueError, match="offsets must be"):
        positional_folds(s, np.array([-1, 0]), 2, 0)
    with pytest.raises(ValueError, match="offsets has 1 strata"):
        positional_folds(s, z[:1], 2, 0)
