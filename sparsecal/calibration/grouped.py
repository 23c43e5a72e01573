"""Recalibration per tag group (Kranzlein, Liu & Schneider 2021, Sections 2.2 and 3.3):
one binary calibrator per group (SCW, TFG, or per tag with a coarser fallback), and
K-fold cross-fitting for honest dev scores.
"""
import os
import re
import warnings

import numpy as np

from ..core.entries import Entries, check_entries, threshold as threshold_entries
from ..core.groups import TagGroups, check_groups, partition_by_group
from ..core.progress import ProgressCounter, check_progress
from ..core.validation import DegenerateDataError, check_positive_int, check_unit_interval
from ..io.atomic import atomic_path
from ..io.npyfile import open_npy
from ..metrics.marginal import DEFAULT_BIN_SIZE
from ..io.calibrators import (StateFields, check_bool, check_count, check_fields,
                              check_index_array, describe, load_state, save_state)
from .base import BaseCalibrator, Estimator, clone
from .folds import stratified_token_folds
from .registry import calibrator_class
from .._docs import fill_doc
from ..core.dispatch import takes_data

__all__ = ["EntryTransformer", "GroupedCalibrator", "cross_fit_predict"]


class EntryTransformer:
    """Applies a fitted per-entry calibration to entries, dense matrices and ``.npy``
    files; a subclass defines ``_calibrate(scores, tags)``, ``_tagset_size()``,
    ``threshold_`` and ``renormalize``.
    """

    @property
    def n_tags(self):
        """The number of tags calibrated (columns of a dense matrix)."""
        return self._tagset_size()

    @takes_data
    def transform(self, entries):
        """Entries with calibrated scores (same order, tags, labels, tokens)."""
        self._check_fitted()
        if not isinstance(entries, Entries):
            raise TypeError("transform takes Entries (see sparsecal.threshold)")
        return entries._with_scores(self._calibrate(entries.score, entries.tag), owned=True)

    def transform_dense(self, scores, out=None, *, chunk_rows=None, progress=None):
        """Calibrate a dense score matrix: scores ``>= threshold_`` get their group's
        calibrated score, the rest keep theirs.

        Streams over row chunks (``scores`` may be a memory map larger than memory),
        writes into ``out`` if given, and calls ``progress(rows_done, n_tokens)``
        after each chunk.
        """
        self._check_fitted()
        check_progress(progress)
        if not hasattr(scores, "dtype") or not hasattr(scores, "shape"):
            scores = np.asarray(scores)
        if scores.ndim != 2 or scores.shape[1] != self._tagset_size():
            raise ValueError(f"scores must have shape [n_tokens, {self._tagset_size()}], "
                             f"got {scores.shape}")
        if out is None:
            out = np.empty(scores.shape, dtype=scores.dtype)
        elif out.shape != scores.shape or out.dtype != scores.dtype:
            raise ValueError(f"out must have shape {scores.shape} and dtype {scores.dtype}")
        for r0, result in self._calibrated_chunks(scores, chunk_rows):
            out[r0:r0 + result.shape[0]] = result
            if progress is not None:
                progress(r0 + result.shape[0], scores.shape[0])
        return out

    def _calibrated_chunks(self, scores, chunk_rows):
        """Yield ``(first row, calibrated rows)`` over row chunks of ``scores``."""
        n_tags = scores.shape[1]
        if chunk_rows is None:
            chunk_rows = max(1, (32 << 20) // (n_tags * scores.dtype.itemsize))
        chunk_rows = check_positive_int(chunk_rows, "chunk_rows")
        gold = None
        for r0 in range(0, scores.shape[0], chunk_rows):
            block = np.asarray(scores[r0:r0 + chunk_rows])
            rows = block.shape[0]
            if gold is None or gold.shape[0] != rows:
                gold = np.full(rows, -1, dtype=np.int64)
            e = threshold_entries(block, gold, self.threshold_, token_offset=r0)
            flat = (e.token - r0) * n_tags + e.tag
            result = block.copy()
            result.reshape(-1)[flat] = self._calibrate(e.score, e.tag)
            if self.renormalize:
                sums = result.sum(axis=1, keepdims=True)
                np.divide(result, sums, out=result, where=sums > 0)
            yield r0, result

    def transform_file(self, scores_path, out_path, *, chunk_rows=None, progress=None):
        """Calibrate a ``.npy`` score matrix into a new ``.npy`` file, streaming.

        The output is written with ordinary writes (a writable memory map turns a full
        disk into SIGBUS) to a temporary file that replaces ``out_path`` when complete;
        a failed write raises an OSError naming ``out_path`` and leaves no file.
        """
        self._check_fitted()
        check_progress(progress)
        scores = open_npy(scores_path, "scores")
        if scores.ndim != 2 or scores.shape[1] != self._tagset_size() \
                or scores.dtype.kind != "f" or scores.dtype.itemsize not in (4, 8):
            raise ValueError(f"scores file {os.fspath(scores_path)!r} must hold a float32 "
                             f"or float64 matrix [n_tokens, {self._tagset_size()}], got "
                             f"{scores.dtype} of shape {scores.shape}")
        header = {"descr": np.lib.format.dtype_to_descr(scores.dtype),
                  "fortran_order": False, "shape": scores.shape}
        with atomic_path(out_path, suffix=".npy") as tmp:
            with open(tmp, "wb") as f:
                np.lib.format.write_array_header_1_0(f, header)
                for r0, result in self._calibrated_chunks(scores, chunk_rows):
                    f.write(np.ascontiguousarray(result, dtype=scores.dtype).data)
                    if progress is not None:
                        progress(r0 + result.shape[0], scores.shape[0])
        return out_path


class GroupedCalibrator(EntryTransformer, Estimator):
    """One clone of a binary calibrator per tag group.

    Parameters
    ----------
    base : BaseCalibrator
        Cloned per group (e.g. ``IsotonicCalibrator()``).
    groups : TagGroups
        SCW, TFG, per-tag or custom groups.
    fallback : TagGroups, optional
        The tags of a group with fewer than ``min_entries`` dev entries use the
        calibrator of their ``fallback`` group (e.g. per tag, TFG fallback).
    min_entries : int, default=200
        Dev entries a group needs for its own calibrator (one bin of Nguyen &
        O'Connor 2015; docs/recalibration.md, "Defaults"; a smaller value warns).
        A group with fewer, or whose data ``base`` refuses
        (:class:`~sparsecal.core.validation.DegenerateDataError`: one class or
        zero variance), uses its fallback group's calibrator, else keeps its
        scores, with a warning naming it.
    renormalize : bool, default=False
        Rescale each row of :meth:`transform_dense` to sum to 1 (the paper
        evaluates unnormalised scores, Section 3.1).

    Attributes
    ----------
    calibrators_ : list of BaseCalibrator
        The groups' calibrators, then the fallback groups'.
    tag_to_calibrator_ : ndarray of int64, shape (n_tags,)
        Index into ``calibrators_`` per tag (-1: left unchanged).
    threshold_ : float
        The dev entries' threshold: :meth:`transform_dense` calibrates the
        scores at or above it.

    Examples
    --------
    >>> import sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> dev, test = (make_tagger_outputs(2000, split_seed=s) for s in (1, 2))
    >>> tfg = sc.TagGroups.from_counts(dev.train_counts, 3)
    >>> model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), tfg)
    >>> model = model.fit(sc.threshold(dev.scores, dev.gold))
    >>> len(model.calibrators_), model.transform_dense(test.scores).shape == test.scores.shape
    (3, True)
    """

    def __init__(self, base, groups, *, fallback=None, min_entries=DEFAULT_BIN_SIZE,
                 renormalize=False):
        self.base = base
        self.groups = groups
        self.fallback = fallback
        self.min_entries = min_entries
        self.renormalize = renormalize

    _fitted_attributes = ("calibrators_", "tag_to_calibrator_", "threshold_")

    def __sklearn_tags__(self):
        from sklearn.utils import TransformerTags
        tags = super().__sklearn_tags__()
        tags.transformer_tags = TransformerTags(preserves_dtype=["float64", "float32"])
        return tags

    def _check_params(self):
        if not isinstance(self.base, BaseCalibrator):
            raise TypeError(f"base must be a sparsecal calibrator, got {self.base!r}")
        check_groups(self.groups)
        if self.fallback is not None:
            check_groups(self.fallback, self.groups.n_tags, "fallback")
        check_positive_int(self.min_entries, "min_entries")
        if not isinstance(self.renormalize, (bool, np.bool_)):
            raise TypeError(f"renormalize must be True or False, got {self.renormalize!r}")

    @takes_data
    def fit(self, entries, sample_weight=None, *, progress=None):
        """Fit one calibrator per group on dev ``entries``.

        ``sample_weight`` holds one weight per entry; for DaskEntries one per token,
        shape ``(n_tokens,)`` (docs/scale.md, "weights"). ``progress(groups_done,
        n_groups)`` is called after each group of ``groups``, then of ``fallback``.
        """
        self._check_params()
        if not isinstance(entries, Entries):
            raise TypeError("fit takes Entries (see sparsecal.threshold)")
        if len(entries) == 0:
            raise ValueError("no dev entries to fit on")
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        if w is not None and w.shape != (len(entries),):
            raise ValueError(f"sample_weight must have shape ({len(entries)},)")

        def grouping(groups):
            perm, offsets = groups.partition(entries)

            def fit_group(g):
                idx = perm[offsets[g]:offsets[g + 1]]
                return clone(self.base).fit(entries.score[idx], entries.label[idx],
                                            None if w is None else w[idx])
            return np.diff(offsets), fit_group

        return self.fit_groups(grouping, np.unique(entries.tag), entries.threshold,
                               progress=progress)

    def fit_groups(self, grouping, dev_tags, threshold, *, progress=None):
        """:meth:`fit`'s rule (``min_entries``, fallback, warnings) for any source of dev
        data: ``grouping(groups)`` returns ``(sizes, fit_group)``, the dev entries per
        group and a function fitting group ``g``; ``dev_tags`` are the tags with dev
        entries.
        """
        self._check_params()
        n_fallback = 0 if self.fallback is None else self.fallback.n_groups
        counter = ProgressCounter(progress, self.groups.n_groups + n_fallback)
        calibrators, tag_map = [], np.full(self.groups.n_tags, -1, dtype=np.int64)
        weak, refused = self._fit_grouping(self.groups, grouping, calibrators, tag_map,
                                           np.ones(self.groups.n_tags, dtype=bool), counter)
        if self.fallback is not None and weak.any():
            _, refused = self._fit_grouping(self.fallback, grouping, calibrators, tag_map,
                                            weak, counter)
        elif n_fallback:
            counter.advance(n_fallback)
        # (the tags of groups the method refused at the last level were warned about)
        left = np.flatnonzero((tag_map < 0) & ~refused)
        if left.size:
            # Also tags with no dev entry at all: their test scores are left
            # unchanged just the same, which the caller must know about.
            with_dev = np.intersect1d(left, dev_tags).size
            last = self.groups if self.fallback is None else self.fallback
            warnings.warn(f"{left.size} tags ({with_dev} of them with dev entries) are in "
                          f"groups with fewer than min_entries={self.min_entries} dev "
                          f"entries ({last.kind} groups {_names(last.tag_to_group[left])}) "
                          "and have no fallback calibrator: their scores are left "
                          "unchanged", stacklevel=4)
        self.calibrators_ = calibrators
        self.tag_to_calibrator_ = tag_map
        self.threshold_ = threshold
        return self

    def _fit_grouping(self, groups, grouping, calibrators, tag_map, tags_wanted, counter):
        """Fit each group of ``groups`` holding a wanted tag; return the wanted tags left
        without a calibrator and, of them, those whose data the method refused.
        """
        sizes, fit_group = grouping(groups)
        weak = np.zeros(groups.n_tags, dtype=bool)
        refused_tags = np.zeros(groups.n_tags, dtype=bool)
        small, refused = [], {}   # refused: the method's reason -> groups
        for g in range(groups.n_groups):
            members = tags_wanted & (groups.tag_to_group == g)
            if members.any() and sizes[g] < self.min_entries:
                weak |= members
            elif members.any():
                try:
                    calibrator = fit_group(g)
                except DegenerateDataError as exc:   # one class, zero variance
                    refused.setdefault(str(exc), []).append(g)
                    weak |= members
                    refused_tags |= members
                else:
                    tag_map[members] = len(calibrators)
                    calibrators.append(calibrator)
                    if sizes[g] < DEFAULT_BIN_SIZE:
                        small.append(g)
            counter.advance()
        if refused:
            bad = sorted(g for gs in refused.values() for g in gs)
            warnings.warn(f"{type(self.base).__name__} cannot fit the dev data of "
                          f"{len(bad)} {groups.kind} group(s) ({_names(bad)}): "
                          + "; ".join(f"{reason} (groups {_names(gs)})"
                                      for reason, gs in refused.items())
                          + ". Like groups under min_entries, their tags use their "
                          "fallback group's calibrator, else keep their scores",
                          UserWarning, stacklevel=5)
        if small:
            warnings.warn(f"{len(small)} {groups.kind} group(s) ({_names(small)}) got a "
                          f"calibrator fit on fewer than {DEFAULT_BIN_SIZE} dev entries, "
                          f"the default min_entries (min_entries={self.min_entries}): "
                          "such calibrators overfit (docs/recalibration.md, \"Defaults\")",
                          UserWarning, stacklevel=5)
        return weak, refused_tags

    def _tagset_size(self):
        return self.groups.n_tags

    def _calibrate(self, scores, tags):
        """Calibrated copy of ``scores`` (1-D) whose tags are ``tags``."""
        out = scores.copy()
        if tags.size and (tags.min() < 0 or tags.max() >= self.groups.n_tags):
            bad = tags[(tags < 0) | (tags >= self.groups.n_tags)][0]
            raise ValueError(f"unknown tag {bad}: the calibrator covers tags "
                             f"0..{self.groups.n_tags - 1}")
        n_cal = len(self.calibrators_)
        # Tags left unchanged go to an extra, last partition.
        mapping = np.where(self.tag_to_calibrator_ < 0, n_cal, self.tag_to_calibrator_)
        perm, offsets = partition_by_group(tags, mapping, n_cal + 1)
        for c, cal in enumerate(self.calibrators_):
            idx = perm[offsets[c]:offsets[c + 1]]
            if idx.size:
                out[idx] = cal.predict(scores[idx])
        return out

    def get_state(self):
        """The fitted model as ``(meta, arrays)`` (layout: :mod:`sparsecal.io.calibrators`)."""
        self._check_fitted()
        base = self.base
        meta = {"n_tags": self.groups.n_tags, "threshold": self.threshold_,
                "min_entries": int(self.min_entries), "renormalize": bool(self.renormalize),
                "groups": _groups_meta(self.groups), "fallback": _groups_meta(self.fallback),
                "base": {"class": type(base).__name__,
                         "params": _plain(base.get_params(deep=False))},
                "calibrators": []}
        arrays = {"groups_tag_to_group": self.groups.tag_to_group,
                  "tag_to_calibrator": self.tag_to_calibrator_}
        if self.fallback is not None:
            arrays["fallback_tag_to_group"] = self.fallback.tag_to_group
        for i, cal in enumerate(self.calibrators_):
            state, cal_arrays = cal.get_state()
            meta["calibrators"].append({"class": type(cal).__name__, **state})
            arrays.update({f"c{i}.{name}": a for name, a in cal_arrays.items()})
        return meta, arrays

    @classmethod
    def from_state(cls, meta, arrays, fields=None):
        """Rebuild a fitted model from :meth:`get_state`'s output, checking every field.

        Only registered method classes are accepted (nothing is imported or run),
        parameters are checked as ``fit`` checks them and every calibrator must be a
        clone of ``base``; an error is a :class:`~sparsecal.io.calibrators.StateError`
        naming the file and the field (``fields``).
        """
        fields = StateFields() if fields is None else fields
        with fields.in_json():
            check_fields(meta, "", _META_FIELDS, ("format", "version"))
            n_tags = check_count(meta["n_tags"], "n_tags")
            threshold_ = check_unit_interval(meta["threshold"], "threshold")
            min_entries = check_positive_int(meta["min_entries"], "min_entries")
            renormalize = check_bool(meta["renormalize"], "renormalize")
            group_infos = [_groups_info(meta["groups"], "groups")]
            if meta["fallback"] is not None:
                group_infos.append(_groups_info(meta["fallback"], "fallback"))
            check_fields(meta["base"], "base", ("class", "params"))
            base_cls = _registered(meta["base"]["class"], "base.class")
            base = base_cls.from_params(meta["base"]["params"], "base.params")
            infos = meta["calibrators"]
            if not isinstance(infos, list):
                raise ValueError(f"calibrators must be a JSON array, got {describe(infos)}")
            most = sum(n_groups for _, n_groups in group_infos)
            if len(infos) > most:
                raise ValueError(f"calibrators has {len(infos)} entries, more than the "
                                 f"{most} groups")
        with fields.in_arrays():
            cal_arrays = _split_arrays(arrays, len(infos), meta["fallback"] is not None)
            groups = [TagGroups(check_index_array(arrays, key, key, n_tags, 0, n_groups),
                                n_groups, kind=kind)
                      for key, (kind, n_groups) in zip(_MAP_KEYS, group_infos)]
        calibrators = []
        for i, info in enumerate(infos):
            where = fields.child(f"calibrators[{i}]", f"c{i}.")
            with fields.in_json():
                check_fields(info, where.field(""), ("class", "params", "fitted"))
                cal_cls = _registered(info["class"], where.field("class"))
            calibrators.append(cal_cls.from_state(
                {"params": info["params"], "fitted": info["fitted"]}, cal_arrays[i], where))
            with fields.in_json():
                if cal_cls is not base_cls or info["params"] != meta["base"]["params"]:
                    raise ValueError(f"{where.field('')} must have the class and params of "
                                     "base (every calibrator is a clone of base)")
        with fields.in_arrays():
            tag_map = check_index_array(arrays, "tag_to_calibrator", "tag_to_calibrator",
                                        n_tags, -1, len(calibrators))
        model = cls(base, groups[0], fallback=groups[1] if len(groups) > 1 else None,
                    min_entries=min_entries, renormalize=renormalize)
        model.calibrators_ = calibrators
        model.tag_to_calibrator_ = tag_map
        model.threshold_ = threshold_
        return model

    def save(self, path):
        """Save to directory ``path``, atomically (see :mod:`sparsecal.io.calibrators`)."""
        save_state(path, *self.get_state())

    @classmethod
    def load(cls, path):
        """Load a model saved by :meth:`save`, checking every field (a StateError names
        the file and the field); nothing is executed or unpickled.
        """
        meta, arrays = load_state(path)
        return cls.from_state(meta, arrays, StateFields(path))


_META_FIELDS = ("n_tags", "threshold", "min_entries", "renormalize", "groups", "fallback",
                "base", "calibrators")
_MAP_KEYS = ("groups_tag_to_group", "fallback_tag_to_group")
_CAL_KEY = re.compile(r"c(0|[1-9][0-9]*)\.(.+)")


def _groups_info(info, name):
    check_fields(info, name, ("kind", "n_groups"))
    if not isinstance(info["kind"], str):
        raise ValueError(f"{name}.kind must be a string, got {describe(info['kind'])}")
    return info["kind"], check_count(info["n_groups"], f"{name}.n_groups")


def _registered(class_name, name):
    try:
        return calibrator_class(class_name)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None


def _split_arrays(arrays, n_calibrators, has_fallback):
    """The arrays of each calibrator (``c{i}.{name}`` -> ``{name}``)."""
    maps = {"groups_tag_to_group", "tag_to_calibrator"} | (
        {"fallback_tag_to_group"} if has_fallback else set())
    out = [{} for _ in range(n_calibrators)]
    for key, a in arrays.items():
        match = _CAL_KEY.fullmatch(key)
        if match and int(match.group(1)) < n_calibrators:
            out[int(match.group(1))][match.group(2)] = a
        elif key not in maps:
            raise ValueError(f"{key} is not an array of this calibrator")
    return out


def _names(groups, most=10):
    """The first ``most`` distinct group indices of ``groups``, as text."""
    groups = np.unique(groups)
    return ", ".join(str(int(g)) for g in groups[:most]) + (", ..." if groups.size > most
                                                           else "")


def _groups_meta(groups):
    return None if groups is None else {"kind": groups.kind, "n_groups": groups.n_groups}


def _plain(params):
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in params.items()}


@takes_data
@fill_doc
def cross_fit_predict(calibrator, entries, *, n_folds=5, seed=0):
    """Calibrated dev scores by stratified K-fold cross-fitting (lecture notes ``004``).

    Each fold of tokens (:func:`~sparsecal.calibration.folds.stratified_token_folds`
    over ``calibrator.groups``) is calibrated by a clone of ``calibrator`` fit on
    the other folds; evaluate the pooled scores, not an average over folds.

    Parameters
    ----------
    calibrator : GroupedCalibrator
        The set-up (need not be fitted).
    entries : Entries
        Dev entries with their tokens.
    {folds}

    Returns
    -------
    Entries
        ``entries`` with the pooled out-of-fold scores.

    Examples
    --------
    >>> import sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> dev = make_tagger_outputs(2000, split_seed=1)
    >>> entries = sc.threshold(dev.scores, dev.gold)
    >>> model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(426))
    >>> len(sc.calibration.cross_fit_predict(model, entries, n_folds=5)) == len(entries)
    True
    """
    check_grouped(calibrator, "calibrator")
    entries = check_entries(entries)
    fold = stratified_token_folds(entries, calibrator.groups, n_folds, seed)
    out = entries.score.copy()
    for held, model in fold_models(calibrator, entries, fold):
        out[held] = model.transform(entries.take(held)).score
    return entries.with_scores(out)


def check_grouped(calibrator, name):
    """Raise a TypeError unless ``calibrator`` is a GroupedCalibrator."""
    if not isinstance(calibrator, GroupedCalibrator):
        raise TypeError(f"{name} must be a GroupedCalibrator, got "
                        f"{type(calibrator).__name__}")


def fold_models(calibrator, entries, fold):
    """Yield ``(held, model)`` per fold: its entries' mask and ``calibrator`` fit on the rest."""
    for k in np.unique(fold):
        held = fold == k
        yield held, clone(calibrator).fit(entries.take(~held))
