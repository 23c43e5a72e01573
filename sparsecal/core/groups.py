"""Tag groups: a map from tag index to group index (SCW, TFG, per tag, custom).

Kranzlein, Liu & Schneider 2021, Section 3.3: shared class-wise (SCW) pools all
tags in one group; tag frequency grouping (TFG) sorts tags by descending training
frequency and fills groups of roughly equal training mass.
"""
import os
from collections.abc import Mapping

import numpy as np

from . import _partition
from .binning import remembered_sort
from .jsonfile import read_json
from .threads import get_n_threads
from .validation import (MAX_TAGS, TAG_BYTES, as_array, check_n_tags,
                         check_size)
from .dispatch import BUILDING_BLOCK, takes_data

__all__ = ["TagGroups", "check_groups", "check_tag_index", "load_train_counts",
           "partition_by_group", "split_sorted_by_group"]

#: Training counts, and their total, are at most 2**53: exact in float64, in
#: which TFG's per-group quota is computed.
MAX_COUNT = 2 ** 53


def load_train_counts(train_counts, n_tags=None, tag_index=None):
    """Training count per tag index, as an int64 array of length ``n_tags``.

    Parameters
    ----------
    train_counts : mapping, str or path, or array_like of int
        ``{tag: count}`` (tags as column indices, or as names with ``tag_index``),
        a JSON file of such a mapping, or one count per tag index (length
        ``n_tags``; per-token training gold tags: :meth:`TagGroups.from_gold`).
    n_tags : int, optional
        Size of the tag inventory; defaults to the largest index + 1 (the array's
        length).
    tag_index : mapping or str or path, optional
        ``{tag name: column index}`` (or a JSON file of it), needed for counts
        keyed by name; names at index >= ``n_tags`` with no count (padding) are
        ignored.

    Returns
    -------
    ndarray of int64, shape (n_tags,)

    Examples
    --------
    >>> from sparsecal.core.groups import load_train_counts
    >>> load_train_counts({"0": 5, "2": 1}, n_tags=3)
    array([5, 0, 1])
    >>> load_train_counts([2, 0, 1])
    array([2, 0, 1])
    """
    if isinstance(train_counts, (str, os.PathLike)):
        train_counts = read_json(train_counts, "train counts")
    tag_index = _resolve_tag_index(tag_index)
    if isinstance(train_counts, Mapping):
        index, counts = _counts_from_mapping(train_counts, tag_index)
        if n_tags is None:
            top = max(tag_index.values()) if tag_index else (index.max() if index.size else -1)
            n_tags = int(top) + 1
        n_tags = check_n_tags(n_tags)
        if index.size and index.max() >= n_tags:
            i = int(np.argmax(index))
            raise ValueError(f"tag index {index[i]} has a training count but n_tags is "
                             f"{n_tags}")
        out = np.zeros(n_tags, dtype=np.int64)
        np.add.at(out, index, counts)
        return out
    counts = _integer_vector(train_counts, "train_counts", "a mapping, a JSON file, "
                             "or a 1-D integer array of per-tag counts")
    n_tags = check_n_tags(counts.shape[0] if n_tags is None else n_tags)
    if counts.shape[0] != n_tags:
        raise ValueError(f"train_counts has {counts.shape[0]} counts but n_tags={n_tags}: "
                         "an array holds one training count per tag index; for the "
                         "training gold tag of every token use TagGroups.from_gold("
                         f"train_gold, n_groups, n_tags={n_tags})")
    if counts.size and counts.min() < 0:
        i = int(np.argmin(counts))
        raise ValueError(f"train_counts[{i}] = {counts[i]}: training counts must be "
                         "non-negative")
    if counts.size and counts.max() > MAX_COUNT:
        raise ValueError("training counts must be at most 2**53")
    if counts.sum(dtype=np.float64) > MAX_COUNT:
        raise ValueError("the training counts add up to more than 2**53 tokens")
    return counts.astype(np.int64)


def _integer_vector(values, name, expected):
    """``values`` as a 1-D integer array, else TypeError: ``name`` must be ``expected``."""
    array = as_array(values, name)
    if array.ndim != 1 or array.dtype.kind not in "iu":
        got = f"shape {array.shape}" if array.ndim != 1 else f"dtype {array.dtype}"
        raise TypeError(f"{name} must be {expected}, got {got}")
    return array


def _gold_counts(train_gold, n_tags):
    """Training count per tag of the training gold tag of every token."""
    gold = _integer_vector(train_gold, "train_gold", "a 1-D integer array of training "
                           "gold tags")
    if gold.size and gold.min() < 0:
        raise ValueError("train_gold must hold non-negative tag indices (leave tokens "
                         "without a gold tag out)")
    if n_tags is None:
        n_tags = int(gold.max()) + 1 if gold.size else 0
    if gold.size and gold.max() >= min(n_tags, MAX_TAGS):
        raise ValueError(f"training gold tag {int(gold.max())} is out of range for "
                         f"n_tags={n_tags}")
    n_tags = check_n_tags(n_tags)
    return np.bincount(gold.astype(np.int64, copy=False), minlength=n_tags).astype(np.int64)




def check_tag_index(index, name="tag_index"):
    """``index`` as a dict of tag name -> distinct column below ``2**31``; ``name``
    says where it came from.
    """
    if not isinstance(index, Mapping):
        raise ValueError(f"{name} must map tag strings to column indices, got "
                         f"{type(index).__name__}")
    out, owner = {}, {}
    for tag, column in index.items():
        if not isinstance(tag, str):
            raise ValueError(f"{name}: tag {tag!r} is not a string")
        if not _is_int(column) or not 0 <= column < MAX_TAGS:
            raise ValueError(f"{name}: the column of tag {tag!r} must be an integer in "
                             f"[0, {MAX_TAGS}), got {column!r}")
        column = int(column)
        if column in owner:
            raise ValueError(f"{name}: tags {owner[column]!r} and {tag!r} share column "
                             f"{column}")
        owner[column] = tag
        out[tag] = column
    return out


def _resolve_tag_index(tag_index):
    """A checked tag index from a mapping or a JSON file (None stays None)."""
    if isinstance(tag_index, (str, os.PathLike)):
        return check_tag_index(read_json(tag_index, "tag index"),
                               f"tag index {os.fspath(tag_index)!r}")
    return None if tag_index is None else check_tag_index(tag_index)


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _counts_from_mapping(counts, tag_index):
    keys = list(counts)
    for key in keys:
        value = counts[key]
        if not _is_int(value) or not 0 <= value <= MAX_COUNT:
            raise ValueError(f"the training count of tag {key!r} must be a non-negative "
                             f"integer (at most 2**53), got {value!r}")
    values = np.array([int(counts[k]) for k in keys], dtype=np.int64)
    if values.sum(dtype=np.float64) > MAX_COUNT:
        raise ValueError("the training counts add up to more than 2**53 tokens")
    if tag_index is not None:
        unknown = [k for k in keys if k not in tag_index]
        if unknown:
            raise ValueError(f"unknown tag {unknown[0]!r}: it has a training count but "
                             "is not in tag_index")
        index = np.array([tag_index[k] for k in keys], dtype=np.int64)
    else:
        index = np.empty(len(keys), dtype=np.int64)
        for i, key in enumerate(keys):
            column = _column_key(key)
            if column is None:
                raise ValueError(f"training counts are keyed by tag names ({key!r}): pass "
                                 "tag_index ({name: column index}) to place them")
            index[i] = column
        index_sorted = np.sort(index)   # (np.unique would import numpy.ma: 10 ms)
        if (index_sorted[1:] == index_sorted[:-1]).any():
            raise ValueError("training counts give a count twice for one column (keys "
                             "such as '1' and '01')")
    return index, values


def _column_key(key):
    """The column a count's key spells (``3``, ``"3"``); None for a tag name."""
    if _is_int(key):
        column = int(key)
    elif isinstance(key, str) and key.isascii() and key.lstrip("-").isdigit():
        column = int(key)
    else:
        return None
    if not 0 <= column < MAX_TAGS:
        raise ValueError(f"tag index {key!r} must be a non-negative integer below "
                         "2**31 - 1")
    return column


class TagGroups:
    """An assignment of every tag to one group (groups may be empty).

    Build the paper's schemes with :meth:`scw`, :meth:`tfg` / :meth:`from_counts`
    (:meth:`from_gold`) and :meth:`per_tag`.

    Parameters
    ----------
    tag_to_group : array_like of int, shape (n_tags,)
        Group index (0-based) of each tag.
    n_groups : int, optional
        Defaults to ``max(tag_to_group) + 1``.
    kind : str, default="custom"
        "scw", "tfg", "per-tag" or "custom", for display.
    train_counts : ndarray of int, shape (n_tags,), optional
        Training count per tag, kept for :meth:`summary`.
    tag_names : sequence of str, optional
        Name of each tag index, for reports.

    Examples
    --------
    >>> from sparsecal.core.groups import TagGroups
    >>> TagGroups([0, 1, 1])
    TagGroups(kind='custom', n_tags=3, n_groups=2, tags_per_group=[1, 2])
    >>> TagGroups.scw(3).n_groups, TagGroups.per_tag(3).n_groups
    (1, 3)
    """

    def __init__(self, tag_to_group, n_groups=None, *, kind="custom", train_counts=None,
                 tag_names=None):
        mapping = as_array(tag_to_group, "tag_to_group")
        if mapping.ndim != 1 or mapping.shape[0] == 0:
            raise ValueError("tag_to_group must be a non-empty 1-D array")
        if mapping.dtype.kind not in "iu":
            raise TypeError(f"tag_to_group must hold integers, got {mapping.dtype}")
        if n_groups is None:
            n_groups = max(int(mapping.max()) + 1, 1)
        n_groups = _check_n_groups(n_groups)
        mapping = mapping.astype(np.int64)   # copied: the groups never share the input
        if mapping.min() < 0 or mapping.max() >= n_groups:
            raise ValueError(f"group indices must lie in [0, {n_groups})")
        self.tag_to_group = mapping
        self.tag_to_group.flags.writeable = False
        self.n_groups = n_groups
        self.kind = kind
        if train_counts is not None:
            train_counts = np.asarray(train_counts, dtype=np.int64)
            if train_counts.shape != mapping.shape:
                raise ValueError("train_counts must have one count per tag")
        self.train_counts = train_counts
        if tag_names is not None and len(tag_names) != mapping.shape[0]:
            raise ValueError("tag_names must have one name per tag")
        self.tag_names = None if tag_names is None else list(tag_names)

    @property
    def n_tags(self):
        """Number of tags covered."""
        return self.tag_to_group.shape[0]

    def __repr__(self):
        text = f"TagGroups(kind={self.kind!r}, n_tags={self.n_tags}, n_groups={self.n_groups}"
        sizes = np.bincount(self.tag_to_group, minlength=self.n_groups).tolist()
        if min(sizes) == max(sizes):   # n_tags / n_groups each: said already
            return text + ")"
        if len(sizes) > 6:   # the first and last groups
            sizes = sizes[:3] + ["..."] + sizes[-2:]
        return text + f", tags_per_group=[{', '.join(map(str, sizes))}])"

    def __eq__(self, other):
        return (isinstance(other, TagGroups) and self.n_groups == other.n_groups
                and np.array_equal(self.tag_to_group, other.tag_to_group))

    __hash__ = None

    # -- constructors ----------------------------------------------------- #
    @classmethod
    def scw(cls, n_tags, **kwargs):
        """Shared class-wise (SCW): all ``n_tags`` tags in one group."""
        return cls(np.zeros(check_n_tags(n_tags), dtype=np.int64), 1, kind="scw",
                   **kwargs)

    @classmethod
    def per_tag(cls, n_tags, **kwargs):
        """One group per tag (``kwargs`` as for :class:`TagGroups`)."""
        n_tags = check_n_tags(n_tags)
        return cls(np.arange(n_tags), n_tags, kind="per-tag", **kwargs)

    @classmethod
    def from_counts(cls, train_counts, n_groups=5, *, n_tags=None, tag_index=None):
        """Tag frequency grouping (TFG), Kranzlein et al. 2021, Section 3.3: tags by
        descending training count (ties by index) fill each group, whole, until it
        reaches ``total / n_groups``; the last takes the rest, unseen tags included.
        The arguments are those of :func:`load_train_counts`.

        Examples
        --------
        >>> TagGroups.from_counts({"0": 6, "1": 3, "2": 1}, 2).tag_to_group
        array([0, 1, 1])
        """
        n_groups = _check_n_groups(n_groups)
        tag_index = _resolve_tag_index(tag_index)
        counts = load_train_counts(train_counts, n_tags=n_tags, tag_index=tag_index)
        if counts.sum() == 0:
            raise ValueError("training counts are all zero: nothing to group by")
        order = np.lexsort((np.arange(counts.shape[0]), -counts))
        cum = np.cumsum(counts[order])
        quota = counts.sum() / n_groups
        # Sorted position at which each group after the first starts (the loop
        # runs over groups, not tags).
        group_starts = []
        start_cum = 0
        for _ in range(n_groups - 1):
            k = int(np.searchsorted(cum, start_cum + quota, side="left"))
            if k + 1 >= counts.shape[0]:
                break
            group_starts.append(k + 1)
            start_cum = cum[k]
        mapping = np.empty(counts.shape[0], dtype=np.int64)
        mapping[order] = np.searchsorted(group_starts, np.arange(counts.shape[0]),
                                         side="right")
        mapping[counts == 0] = n_groups - 1
        names = None
        if tag_index is not None:
            names = [""] * counts.shape[0]
            for name, i in tag_index.items():
                if 0 <= i < counts.shape[0]:
                    names[i] = name
        return cls(mapping, n_groups, kind="tfg", train_counts=counts, tag_names=names)

    tfg = from_counts

    @classmethod
    def from_gold(cls, train_gold, n_groups=5, *, n_tags=None):
        """TFG (:meth:`from_counts`) from the training gold tag index of every token;
        ``n_tags`` defaults to the largest tag + 1.

        Examples
        --------
        >>> from sparsecal.core.groups import TagGroups
        >>> TagGroups.from_gold([0, 0, 0, 1, 2, 0], 2, n_tags=4).train_counts
        array([4, 1, 1, 0])
        """
        return cls.from_counts(_gold_counts(train_gold, n_tags), n_groups)

    # -- queries ---------------------------------------------------------- #
    def group_of(self, tags):
        """Group index of each tag index in ``tags`` (same shape)."""
        tags = np.asarray(tags)
        if tags.size and (tags.min() < 0 or tags.max() >= self.n_tags):
            bad = tags[(tags < 0) | (tags >= self.n_tags)].ravel()[0]
            raise ValueError(f"unknown tag {bad}: the groups cover tags 0..{self.n_tags - 1}")
        return self.tag_to_group[tags]

    def members(self, group):
        """Tag indices in ``group`` (empty for an empty or unknown group)."""
        return np.flatnonzero(self.tag_to_group == group)

    def partition(self, entries):
        """``(perm, offsets)`` of :func:`partition_by_group` for ``entries``."""
        if entries.n_tags is not None and entries.n_tags != self.n_tags:
            raise ValueError(f"entries have n_tags={entries.n_tags} but the groups "
                             f"cover {self.n_tags} tags")
        return partition_by_group(entries.tag, self.tag_to_group, self.n_groups)

    def summary(self, entries=None):
        """One dict per group (Kranzlein et al. 2021, Table 1): 1-based ``group``, tag
        types, the min/max training share of its tags and, given ``entries``, its
        entries and the tokens with any entry in it.
        """
        sizes = np.bincount(self.tag_to_group, minlength=self.n_groups)
        rows = [{"group": g + 1, "tag_types": int(sizes[g])} for g in range(self.n_groups)]
        if self.train_counts is not None:
            share = self.train_counts / self.train_counts.sum()
            for g, row in enumerate(rows):
                s = share[self.tag_to_group == g]
                row["train_share_min"] = float(s.min()) if s.size else float("nan")
                row["train_share_max"] = float(s.max()) if s.size else float("nan")
                row["train_count"] = int(self.train_counts[self.tag_to_group == g].sum())
        if entries is not None:
            perm, offsets = self.partition(entries)
            for g, row in enumerate(rows):
                row["entries"] = int(offsets[g + 1] - offsets[g])
                if entries.token is not None:
                    tok = entries.token[perm[offsets[g]:offsets[g + 1]]]
                    steps = np.diff(tok)
                    if (steps < 0).any():   # not in token order (hand-built entries)
                        row["tokens"] = int(np.unique(tok).size)
                    else:   # the usual case: count distinct runs, O(n)
                        row["tokens"] = int(np.count_nonzero(steps) + 1) if tok.size else 0
        return rows


def check_groups(groups, n_tags=None, name="groups"):
    """``groups`` if it is a :class:`TagGroups` over ``n_tags`` tags."""
    if not isinstance(groups, TagGroups):
        raise TypeError(f"{name} must be a TagGroups (TagGroups.from_counts, .scw or "
                        f".per_tag), got {type(groups).__name__}")
    if n_tags is not None and groups.n_tags != n_tags:
        raise ValueError(f"the entries have n_tags={n_tags} but {name} cover "
                         f"{groups.n_tags} tags")
    return groups


def _check_n_groups(n_groups):
    """A positive group count whose per-group arrays (offsets, sizes) fit in memory."""
    return check_size(n_groups, "n_groups", TAG_BYTES)


@takes_data(refuse=BUILDING_BLOCK)
def partition_by_group(tag, tag_to_group, n_groups=None):
    """``(perm, offsets)``: group g's entries, stably, are ``perm[offsets[g]:offsets[g + 1]]``."""
    tag = as_array(tag, "tag")
    if tag.ndim != 1:
        raise ValueError(f"tag must be 1-dimensional, got shape {tag.shape}")
    if tag.dtype.kind not in "iu":
        raise TypeError(f"tag must hold integers, got dtype {tag.dtype}")
    mapping = as_array(tag_to_group, "tag_to_group")
    if mapping.ndim != 1 or mapping.shape[0] == 0:
        raise ValueError("tag_to_group must be a non-empty 1-D array")
    if mapping.dtype.kind not in "iu":
        raise TypeError(f"tag_to_group must hold integers, got {mapping.dtype}")
    mapping = np.ascontiguousarray(mapping, dtype=np.int64)
    if tag.dtype != np.int32 and tag.size:
        # Range-check before narrowing to int32, so no tag wraps onto a valid one.
        unknown = (tag < 0) | (tag >= mapping.shape[0])
        if unknown.any():
            i = int(np.flatnonzero(unknown)[0])
            raise ValueError(f"tag[{i}] = {tag[i]} is an unknown tag: tag_to_group "
                             f"covers tags 0..{mapping.shape[0] - 1}")
    tag = np.ascontiguousarray(tag, dtype=np.int32)
    n_groups = _check_n_groups(max(int(mapping.max()) + 1, 1) if n_groups is None
                               else n_groups)
    if mapping.min() < 0 or mapping.max() >= n_groups:
        raise ValueError(f"tag_to_group values must lie in [0, {n_groups})")
    perm = np.empty(tag.shape[0], dtype=np.int64)
    offsets = np.empty(n_groups + 1, dtype=np.int64)
    bad = _partition.partition_by_group(tag, mapping, perm, offsets)
    if bad >= 0:
        raise ValueError(f"tag[{bad}] = {tag[bad]} is an unknown tag: tag_to_group "
                         f"covers tags 0..{mapping.shape[0] - 1}")
    return perm, offsets


def split_sorted_by_group(entries, groups, perm, sorted_scores, *, n_threads=None):
    """``(labels, group scores, group labels, offsets)`` of entries sorted by score
    (``perm, sorted_scores``), by group; one stable sort serves every group's binning.
    Entries remember the split of their remembered sort by their last groupings."""
    splits = getattr(entries, "_splits", None)
    order = remembered_sort(entries.score)
    if splits is None or order is None or order[0] is not perm:
        return _split_sorted(entries, groups.tag_to_group, groups.n_groups, perm,
                             sorted_scores, n_threads)
    for i, (mapping, split) in enumerate(splits):
        if split[3].shape[0] == groups.n_groups + 1 and np.array_equal(
                mapping, groups.tag_to_group):
            splits.append(splits.pop(i))
            return split
    split = _split_sorted(entries, groups.tag_to_group, groups.n_groups, perm,
                          sorted_scores, n_threads)
    for a in split:
        a.flags.writeable = False
    splits.append((np.array(groups.tag_to_group), split))
    del splits[:-_SPLITS_KEPT]
    return split


#: Splits an :class:`~sparsecal.Entries` remembers (the last groupings used).
_SPLITS_KEPT = 2


def _split_sorted(entries, tag_to_group, n_groups, perm, sorted_scores, n_threads):
    n = perm.shape[0]
    sorted_labels = np.empty(n, dtype=np.uint8)
    group_scores = np.empty_like(sorted_scores)
    group_labels = np.empty(n, dtype=np.uint8)
    offsets = np.empty(n_groups + 1, dtype=np.int64)
    # the kernel's per-entry code 2 * group + label: one byte when it fits
    code = np.empty(n, dtype=np.uint8 if n_groups <= 128 else
                    np.int32 if n_groups <= 2**30 else np.int64)
    _partition.split_sorted_by_group(
        perm, sorted_scores, entries.label, np.ascontiguousarray(entries.tag, np.int32),
        np.ascontiguousarray(tag_to_group, np.int64), code, sorted_labels,
        group_scores, group_labels, offsets, get_n_threads(n_threads, n))
    return sorted_labels, group_scores, group_labels, offsets
