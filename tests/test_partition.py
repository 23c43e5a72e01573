"""Tests of ``partition_by_group``: a stable counting sort of entries by the group
of their tag, against ``np.argsort(tag_to_group[tag], kind="stable")``."""
import numpy as np
import pytest

from sparsecal.core.groups import partition_by_group


def reference(tag, tag_to_group, n_groups=None):
    tag = np.asarray(tag).astype(np.int64)
    mapping = np.asarray(tag_to_group).astype(np.int64)
    if n_groups is None:
        n_groups = int(mapping.max()) + 1
    g = mapping[tag]
    perm = np.argsort(g, kind="stable")
    offsets = np.concatenate(([0], np.cumsum(np.bincount(g, minlength=n_groups))))
    return perm, offsets


def check(tag, tag_to_group, n_groups=None):
    perm, offsets = partition_by_group(tag, tag_to_group, n_groups)
    ref_perm, ref_offsets = reference(tag, tag_to_group, n_groups)
    assert perm.dtype == np.int64 and offsets.dtype == np.int64
    np.testing.assert_array_equal(perm, ref_perm)
    np.testing.assert_array_equal(offsets, ref_offsets)
    # group g holds exactly its entries, in their original order
    mapping = np.asarray(tag_to_group)
    tag = np.asarray(tag)
    for g in range(offsets.shape[0] - 1):
        members = perm[offsets[g]:offsets[g + 1]]
        assert (np.diff(members) > 0).all()
        assert (mapping[tag[members]] == g).all()
    return perm, offsets


@pytest.mark.parametrize("n", [1, 2, 17, 1000, 100_003])
@pytest.mark.parametrize("n_tags, n_groups", [(1, 1), (5, 1), (5, 5), (426, 5),
                                              (600, 600), (600, 37)])
def test_matches_stable_argsort(n, n_tags, n_groups):
    rng = np.random.default_rng(n + n_tags + n_groups)
    mapping = rng.integers(0, n_groups, size=n_tags)
    # long-tailed tag distribution, as for supertags
    p = 1.0 / np.arange(1, n_tags + 1)
    tag = rng.choice(n_tags, size=n, p=p / p.sum())
    check(tag.astype(np.int32), mapping)
    check(tag.astype(np.int32), mapping, n_groups + 3)   # trailing empty groups


def test_empty_groups_in_the_middle():
    mapping = np.array([0, 3, 3, 5, 0])      # groups 1, 2, 4 have no tags
    tag = np.array([1, 0, 3, 2, 4, 4, 1, 3])
    perm, offsets = check(tag, mapping)
    np.testing.assert_array_equal(offsets, [0, 3, 3, 3, 6, 6, 8])
    np.testing.assert_array_equal(perm, [1, 4, 5, 0, 3, 6, 2, 7])


def test_tags_present_but_groups_unused():
    mapping = np.array([2, 0, 1])
    tag = np.array([0, 0, 0])                # only group 2 is used
    perm, offsets = check(tag, mapping)
    np.testing.assert_array_equal(offsets, [0, 0, 0, 3])
    np.testing.assert_array_equal(perm, [0, 1, 2])


@pytest.mark.parametrize("tag_dtype", [np.int8, np.uint8, np.int16, np.int32,
                                       np.int64, np.uint32])
@pytest.mark.parametrize("map_dtype", [np.int32, np.int64, np.uint8])
def test_integer_dtypes(tag_dtype, map_dtype):
    rng = np.random.default_rng(1)
    mapping = rng.integers(0, 4, size=100).astype(map_dtype)
    tag = rng.integers(0, 100, size=500).astype(tag_dtype)
    check(tag, mapping)


def test_scw_and_per_tag():
    rng = np.random.default_rng(2)
    tag = rng.integers(0, 50, size=999)
    perm, offsets = check(tag, np.zeros(50, dtype=np.int64))      # one group
    np.testing.assert_array_equal(perm, np.arange(999))
    np.testing.assert_array_equal(offsets, [0, 999])
    check(tag, np.arange(50))                                      # per tag


def test_non_contiguous_and_unmodified():
    rng = np.random.default_rng(3)
    tag_base = rng.integers(0, 30, size=4000)
    map_base = rng.integers(0, 6, size=60)
    copies = tag_base.copy(), map_base.copy()
    tag_base.flags.writeable = False
    map_base.flags.writeable = False
    check(tag_base[::3], map_base[::2])
    check(tag_base[::-1], map_base[:30])
    np.testing.assert_array_equal(tag_base, copies[0])
    np.testing.assert_array_equal(map_base, copies[1])


def test_empty_tag_array():
    perm, offsets = partition_by_group(np.array([], dtype=np.int32), [0, 1, 1])
    assert perm.shape == (0,)
    np.testing.assert_array_equal(offsets, [0, 0, 0])
    perm, offsets = partition_by_group(np.array([], dtype=np.int32), [0], n_groups=4)
    np.testing.assert_array_equal(offsets, [0, 0, 0, 0, 0])


@pytest.mark.parametrize("bad_pos", [0, 3, 9])
@pytest.mark.parametrize("bad_tag", [5, 6, 1000, -1, -7])
def test_unknown_tag_named(bad_pos, bad_tag):
    tag = np.array([0, 1, 2, 3, 4, 0, 1, 2, 3, 4], dtype=np.int64)
    tag[bad_pos] = bad_tag
    with pytest.raises(ValueError, match=rf"tag\[{bad_pos}\] = {bad_tag}\b.*unknown"):
        partition_by_group(tag, [0, 1, 1, 0, 2])


def test_first_unknown_tag_reported():
    tag = np.array([0, 9, 1, -1, 8])
    with pytest.raises(ValueError, match=r"tag\[1\] = 9"):
        partition_by_group(tag, [0, 1, 1])


def test_unknown_tag_beyond_int32_named():
    tag = np.array([0, 2**32 + 1], dtype=np.int64)    # wraps to 1 in int32
    with pytest.raises(ValueError, match=r"tag\[1\]"):
        partition_by_group(tag, [0, 1])


@pytest.mark.parametrize("mapping, n_groups", [([0, -1, 1], None), ([0, 3, 1], 3),
                                               ([0, 1], 1)])
def test_bad_mapping_values(mapping, n_groups):
    with pytest.raises(ValueError, match="tag_to_group"):
        partition_by_group([0, 1], mapping, n_groups)


@pytest.mark.parametrize("mapping", [[], [[0, 1]]])
def test_bad_mapping_shape(mapping):
    with pytest.raises(ValueError, match="tag_to_group"):
        partition_by_group([0], mapping)


def test_tag_not_1d():
    with pytest.raises(ValueError, match="1-dimensional"):
        partition_by_group([[0, 1]], [0, 1])


# --------------------------------------------------------------------------- #
# split_sorted_by_group: the sorted entries split by group, against brute force #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("n", [0, 1, 2, 17, 1000, 100_003])
@pytest.mark.parametrize("n_tags, n_groups", [(1, 1), (426, 5), (600, 128), (600, 129),
                                              (3000, 3000)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_split_sorted_by_group_matches_brute_force(n, n_tags, n_groups, dtype):
    """Each group's scores and labels in the order of a stable sort of its own
    entries, for every thread count; 128 and 129 groups straddle the kernel's
    one-byte and four-byte codes."""
    from sparsecal import Entries, TagGroups
    from sparsecal.core.binning import argsort_scores
    from sparsecal.core.groups import split_sorted_by_group
    rng = np.random.default_rng(n + n_groups)
    mapping = np.concatenate([np.arange(n_groups), rng.integers(0, n_groups,
                                                                n_tags - n_groups)])
    groups = TagGroups(mapping)
    score = rng.integers(1, 50, n).astype(dtype) / 50   # many ties
    tag = rng.integers(0, n_tags, n)
    label = rng.integers(0, 2, n)
    e = Entries(score, tag, label, n_tags=n_tags)
    perm, sx = argsort_scores(e.score)
    g_of = mapping[tag]
    results = [split_sorted_by_group(e, groups, perm, sx, n_threads=k) for k in (1, 2, 3)]
    for y, gx, gy, offsets in results:
        np.testing.assert_array_equal(y, label[np.argsort(score, kind="stable")])
        np.testing.assert_array_equal(
            offsets, np.concatenate(([0], np.cumsum(np.bincount(g_of, minlength=n_groups)))))
        order = np.lexsort((score, g_of))     # by group, then score; stable
        np.testing.assert_array_equal(gx, score[order])
        np.testing.assert_array_equal(gy, label[order])
        assert gx.dtype == dtype
