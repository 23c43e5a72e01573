"""Tag groups: a map from tag index to group index (SCW, TFG, per tag, custom).

Kranzlein, Liu & Schneider 2021, Section 3.3: shared class-wise (SCW) pools all
tags in one group; tag frequency grouping (TFG) sorts tags by descending training
frequency and fills groups of roughly equal training mass.
"""
import json
import os
from collections.abc import Mapping

import numpy as np

from . import _partition
from .validation import check_positive_int

__all__ = ["TagGroups", "load_train_counts", "partition_by_group"]


def load_train_counts(train_counts, n_tags=None, tag_index=None):
    """Training count per tag index, as an int64 array of length ``n_tags``.

    Parameters
    ----------
    train_counts : mapping, str or path, or array_like of int
        ``{tag: count}`` (tags as column indices, or as names with
        ``tag_index``), a JSON file holding such a mapping, or the array of
        training gold tag indices (one per training token).
    n_tags : int, optional
        Size of the tag inventory; defaults to the largest index + 1.
    tag_index : mapping or str or path, optional
        ``{tag name: column index}`` (or a JSON file of it), needed when the
        counts are keyed by name. Names in it with index >= ``n_tags`` and no
        training count (e.g. a padding symbol) are ignored.
    """
    if isinstance(train_counts, (str, os.PathLike)):
        train_counts = _read_json(train_counts, "train_counts")
    if isinstance(tag_index, (str, os.PathLike)):
        tag_index = _read_json(tag_index, "tag_index")
    if isinstance(train_counts, Mapping):
        index, counts = _counts_from_mapping(train_counts, tag_index)
        if n_tags is None:
            top = max(tag_index.values()) if tag_index else (index.max() if index.size else -1)
            n_tags = int(top) + 1
        n_tags = check_positive_int(n_tags, "n_tags")
        if index.size and index.max() >= n_tags:
            i = int(np.argmax(index))
            raise ValueError(f"tag index {index[i]} has a training count but n_tags is "
                             f"{n_tags}")
        out = np.zeros(n_tags, dtype=np.int64)
        np.add.at(out, index, counts)
        return out
    gold = np.asarray(train_counts)
    if gold.ndim != 1 or gold.dtype.kind not in "iu":
        raise TypeError("train_counts must be a mapping, a JSON file, or a 1-D integer "
                        "array of training gold tags")
    if gold.size and gold.min() < 0:
        raise ValueError("training gold tags must be non-negative tag indices")
    if n_tags is None:
        n_tags = int(gold.max()) + 1 if gold.size else 0
    n_tags = check_positive_int(n_tags, "n_tags")
    if gold.size and gold.max() >= n_tags:
        raise ValueError(f"training gold tag {int(gold.max())} is out of range for "
                         f"n_tags={n_tags}")
    return np.bincount(gold, minlength=n_tags).astype(np.int64)


def _read_json(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise ValueError(f"cannot read {what} file {os.fspath(path)!r}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} file {os.fspath(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(data, Mapping):
        raise ValueError(f"{what} file {os.fspath(path)!r} must hold a JSON object")
    return data


def _counts_from_mapping(counts, tag_index):
    keys = list(counts)
    values = np.array([counts[k] for k in keys])
    if values.size and (values.dtype.kind not in "iu" or values.min() < 0):
        raise ValueError("training counts must be non-negative integers")
    if tag_index is not None:
        unknown = [k for k in keys if k not in tag_index]
        if unknown:
            raise ValueError(f"unknown tag {unknown[0]!r}: it has a training count but "
                             "is not in tag_index")
        index = np.array([tag_index[k] for k in keys], dtype=np.int64)
    else:
        try:
            index = np.array([int(k) for k in keys], dtype=np.int64)
        except (TypeError, ValueError):
            raise ValueError("training counts are keyed by tag names: pass tag_index "
                             "({name: column index}) to place them") from None
    if index.size and index.min() < 0:
        raise ValueError("tag indices must be non-negative")
    return index, values.astype(np.int64)


class TagGroups:
    """An assignment of every tag to one group.

    Parameters
    ----------
    tag_to_group : array_like of int, shape (n_tags,)
        Group index (0-based) of each tag. Groups may be empty.
    n_groups : int, optional
        Defaults to ``max(tag_to_group) + 1``.
    kind : str, default="custom"
        "scw", "tfg", "per-tag" or "custom", for display.
    train_counts : ndarray of int, shape (n_tags,), optional
        Training count per tag, kept for the group summary.
    tag_names : sequence of str, optional
        Name of each tag index, for reports.

    Use the constructors :meth:`scw`, :meth:`tfg` / :meth:`from_counts` and
    :meth:`per_tag` for the paper's schemes.
    """

    def __init__(self, tag_to_group, n_groups=None, *, kind="custom", train_counts=None,
                 tag_names=None):
        mapping = np.asarray(tag_to_group)
        if mapping.ndim != 1 or mapping.shape[0] == 0:
            raise ValueError("tag_to_group must be a non-empty 1-D array")
        if mapping.dtype.kind not in "iu":
            raise TypeError(f"tag_to_group must hold integers, got {mapping.dtype}")
        mapping = mapping.astype(np.int64)
        if n_groups is None:
            n_groups = int(mapping.max()) + 1
        n_groups = check_positive_int(n_groups, "n_groups")
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
        return self.tag_to_group.shape[0]

    def __repr__(self):
        sizes = np.bincount(self.tag_to_group, minlength=self.n_groups)
        return (f"TagGroups(kind={self.kind!r}, n_tags={self.n_tags}, "
                f"n_groups={self.n_groups}, tags_per_group={sizes.tolist()})")

    def __eq__(self, other):
        return (isinstance(other, TagGroups) and self.n_groups == other.n_groups
                and np.array_equal(self.tag_to_group, other.tag_to_group))

    __hash__ = None

    # -- constructors ----------------------------------------------------- #
    @classmethod
    def scw(cls, n_tags, **kwargs):
        """Shared class-wise: all tags in one group."""
        return cls(np.zeros(check_positive_int(n_tags, "n_tags"), dtype=np.int64), 1,
                   kind="scw", **kwargs)

    @classmethod
    def per_tag(cls, n_tags, **kwargs):
        """One group per tag."""
        n_tags = check_positive_int(n_tags, "n_tags")
        return cls(np.arange(n_tags), n_tags, kind="per-tag", **kwargs)

    @classmethod
    def from_counts(cls, train_counts, n_groups=5, *, n_tags=None, tag_index=None):
        """Tag frequency grouping (TFG), Kranzlein et al. 2021, Section 3.3.

        Tags sorted by descending training count (ties by tag index) are added,
        whole, to the current group until its count reaches ``total / n_groups``;
        then the next group starts. The last group takes the rest, including tags
        never seen in training. Accepts what :func:`load_train_counts` accepts.
        """
        n_groups = check_positive_int(n_groups, "n_groups")
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
            index = (_read_json(tag_index, "tag_index")
                     if isinstance(tag_index, (str, os.PathLike)) else tag_index)
            names = [""] * counts.shape[0]
            for name, i in index.items():
                if 0 <= i < counts.shape[0]:
                    names[i] = name
        return cls(mapping, n_groups, kind="tfg", train_counts=counts, tag_names=names)

    tfg = from_counts

    # -- queries ---------------------------------------------------------- #
    def group_of(self, tags):
        """Group index of each tag index in ``tags`` (unknown tags raise)."""
        tags = np.asarray(tags)
        if tags.size and (tags.min() < 0 or tags.max() >= self.n_tags):
            bad = tags[(tags < 0) | (tags >= self.n_tags)].ravel()[0]
            raise ValueError(f"unknown tag {bad}: the groups cover tags 0..{self.n_tags - 1}")
        return self.tag_to_group[tags]

    def members(self, group):
        """Tag indices in ``group``."""
        return np.flatnonzero(self.tag_to_group == group)

    def partition(self, entries):
        """Stable partition of entries by group: ``(perm, offsets)`` as in
        :func:`partition_by_group`."""
        if entries.n_tags is not None and entries.n_tags != self.n_tags:
            raise ValueError(f"entries have n_tags={entries.n_tags} but the groups "
                             f"cover {self.n_tags} tags")
        return partition_by_group(entries.tag, self.tag_to_group, self.n_groups)

    def summary(self, entries=None):
        """Per-group table like the bottom of Kranzlein et al.'s Table 1.

        Returns a list of dicts (one per group, 1-based ``group``) with the tag
        types, the min/max training share of the group's tags (when training
        counts are known), and, given ``entries``, the thresholded entries and
        the tokens with any entry in the group.
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


def partition_by_group(tag, tag_to_group, n_groups=None):
    """Stable order of entries by the group of their tag (counting sort).

    Parameters
    ----------
    tag : array_like of int, shape (n,)
        Tag index per entry.
    tag_to_group : array_like of int, shape (n_tags,)
        Group index in ``[0, n_groups)`` of each tag.
    n_groups : int, optional
        Defaults to ``max(tag_to_group) + 1``.

    Returns
    -------
    perm : ndarray of int64, shape (n,)
        Entries of group ``g`` are ``perm[offsets[g]:offsets[g + 1]]``, in their
        original order.
    offsets : ndarray of int64, shape (n_groups + 1,)
    """
    tag = np.asarray(tag)
    if tag.ndim != 1:
        raise ValueError(f"tag must be 1-dimensional, got shape {tag.shape}")
    if tag.dtype.kind not in "iu":
        raise TypeError(f"tag must hold integers, got dtype {tag.dtype}")
    mapping = np.ascontiguousarray(tag_to_group, dtype=np.int64)
    if mapping.ndim != 1 or mapping.shape[0] == 0:
        raise ValueError("tag_to_group must be a non-empty 1-D array")
    if tag.dtype != np.int32 and tag.size:
        # Range-check before narrowing to int32, so no tag wraps onto a valid one.
        unknown = (tag < 0) | (tag >= mapping.shape[0])
        if unknown.any():
            i = int(np.flatnonzero(unknown)[0])
            raise ValueError(f"tag[{i}] = {tag[i]} is an unknown tag: tag_to_group "
                             f"covers tags 0..{mapping.shape[0] - 1}")
    tag = np.ascontiguousarray(tag, dtype=np.int32)
    if n_groups is None:
        n_groups = int(mapping.max()) + 1
    if mapping.min() < 0 or mapping.max() >= n_groups:
        raise ValueError(f"tag_to_group values must lie in [0, {n_groups})")
    perm = np.empty(tag.shape[0], dtype=np.int64)
    offsets = np.empty(n_groups + 1, dtype=np.int64)
    bad = _partition.partition_by_group(tag, mapping, perm, offsets)
    if bad >= 0:
        raise ValueError(f"tag[{bad}] = {tag[bad]} is an unknown tag: tag_to_group "
                         f"covers tags 0..{mapping.shape[0] - 1}")
    return perm, offsets
