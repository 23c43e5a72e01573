"""Recalibration per tag group: SCW, TFG or per tag (with fallback), and K-fold.

Kranzlein, Liu & Schneider 2021, Sections 2.2 and 3.3: one binary calibrator is fit
on the pooled dev entries of each group (SCW: one group; TFG: one per frequency
group) and applied to test entries of the same group. Per-tag calibration falls
back to a coarser grouping (e.g. the tag's TFG group) where a tag has too few dev
entries. K-fold cross-fitting (lecture notes ``004``, "K-fold") gives calibrated
dev scores for an honest evaluation of a recalibration set-up.
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
from ..core.dispatch import takes_data

__all__ = ["EntryTransformer", "GroupedCalibrator", "cross_fit_predict"]


class EntryTransformer:
    """Applying a fitted per-entry calibration to entries, dense matrices and
    ``.npy`` files; a subclass defines ``_calibrate(scores, tags)``,
    ``_tagset_size()``, ``threshold_`` and ``renormalize``."""

    @property
    def n_tags(self):
        """The size of the tagset it calibrates (columns of a dense matrix)."""
        return self._tagset_size()

    @takes_data
    def transform(self, entries):
        """Entries with calibrated scores (same order, tags, labels, tokens)."""
        self._check_fitted()
        if not isinstance(entries, Entries):
            raise TypeError("transform takes Entries (see sparsecal.threshold)")
        return entries._with_scores(self._calibrate(entries.score, entries.tag), owned=True)

    def transform_dense(self, scores, out=None, *, chunk_rows=None, progress=None):
        """Calibrate a dense score matrix: entries ``>= threshold_`` get their
        group's calibrated score, the rest are left as they are.

        Streams over row chunks, so ``scores`` may be a memory map larger than
        memory; pass ``out`` (an array or memory map of the same shape and dtype,
        e.g. from ``np.lib.format.open_memmap``) to write there; ``progress`` is
        called as ``progress(rows_done, n_tokens)`` after each chunk.

        Returns
        -------
        ndarray, the calibrated matrix (``out`` if given)
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

        The scores are read through a memory map and the output is written chunk
        by chunk with ordinary writes (never through a writable memory map, which
        turns a full disk into SIGBUS), to a temporary file that replaces
        ``out_path`` only when complete (:func:`~sparsecal.io.atomic.atomic_path`).

        Parameters
        ----------
        scores_path : str or os.PathLike
            A ``.npy`` matrix ``[n_tokens, n_tags]`` (float32 or float64, any
            byte order).
        out_path : str or os.PathLike
            The output ``.npy`` (same shape and dtype).
        chunk_rows : int, optional
            Rows per chunk (default: about 32 MiB of scores).
        progress : callable, optional
            Called as ``progress(rows_done, n_tokens)`` after each chunk.

        Returns
        -------
        str or os.PathLike
            ``out_path``.

        Raises
        ------
        ValueError
            For a scores file that is not a float matrix of this model's tags.
        OSError
            A failure to write (a full disk, a file-size limit), naming
            ``out_path``; no output or temporary file is left then.

        Examples
        --------
        >>> import numpy as np
        >>> import sparsecal as sc
        >>> from sparsecal.datasets import make_tagger_outputs
        >>> data = make_tagger_outputs(300, n_tags=20, split_seed=1)
        >>> model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(20))
        >>> model = model.fit(sc.threshold(data.scores, data.gold))
        >>> np.save("scores.npy", data.scores)
        >>> _ = model.transform_file("scores.npy", "calibrated.npy", chunk_rows=64)
        >>> np.array_equal(np.load("calibrated.npy"), model.transform_dense(data.scores))
        True
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
        The calibrator to clone per group (e.g. ``IsotonicCalibrator()``).
    groups : TagGroups
        The grouping to calibrate by (SCW, TFG, per-tag, custom).
    fallback : TagGroups, optional
        For a group with fewer than ``min_entries`` dev entries, each of its tags
        uses the calibrator of its ``fallback`` group instead (fit on all dev
        entries of that group), e.g. per-tag with TFG fallback.
    min_entries : int, default=200
        Dev entries a group needs to get its own calibrator
        (:data:`~sparsecal.metrics.marginal.DEFAULT_BIN_SIZE`: one bin of
        Nguyen & O'Connor 2015, Section 3.2; it was 1 before, which let per-tag
        calibrators of a handful of entries triple the test SMCE,
        docs/recalibration.md, "Defaults"). A group with fewer uses its
        ``fallback`` group's calibrator; a fallback group (or, without
        ``fallback``, a group) with fewer keeps its scores unchanged, with a
        warning naming it. A smaller value warns naming the groups fit on
        fewer than 200 entries. A group whose dev data ``base`` refuses
        (:class:`~sparsecal.core.validation.DegenerateDataError`: one class
        or zero variance, for the logistic and Gaussian methods) is handled
        as one with too few entries, with one warning naming the groups and
        the reason; the methods that fit such data (binning, isotonic, Beta:
        to about 0 or 1) fit it.
    renormalize : bool, default=False
        In :meth:`transform_dense`, rescale each row to sum to 1 after
        calibration. Off by default: the paper evaluates unnormalised scores
        (Section 3.1) and leaves normalisation open (Section 6).

    Attributes
    ----------
    calibrators_ : list of BaseCalibrator
        Primary group calibrators, then fallback group calibrators (only for
        groups with at least ``min_entries`` dev entries).
    tag_to_calibrator_ : ndarray of int64, shape (n_tags,)
        Index into ``calibrators_`` used for each tag (-1: left unchanged).
    threshold_ : float
        Threshold of the dev entries; :meth:`transform_dense` calibrates the
        scores at or above it.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Sections 2.2 and 3.3 (SCW, TFG);
    docs/architecture.md, Semantics 7-8.

    Examples
    --------
    >>> import sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> dev, test = (make_tagger_outputs(2000, split_seed=s) for s in (1, 2))
    >>> tfg = sc.TagGroups.from_counts(dev.train_counts, 3)
    >>> model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), tfg)
    >>> model = model.fit(sc.threshold(dev.scores, dev.gold))
    >>> len(model.calibrators_), model.get_params()["min_entries"]
    (3, 200)
    >>> calibrated = model.transform(sc.threshold(test.scores, test.gold))
    >>> model.transform_dense(test.scores).shape == test.scores.shape
    True
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

        Parameters
        ----------
        entries : Entries
            Thresholded dev entries (see :func:`sparsecal.threshold`).
        sample_weight : array_like of float, shape (len(entries),), optional
            One weight per entry. For :class:`~sparsecal.distributed.DaskEntries`
            one weight per TOKEN instead: a dask array (or array_like) of shape
            ``(n_tokens,)`` (rows of the score matrix, rechunked like them),
            each entry weighted by its token's weight, i.e.
            ``sample_weight=w[entries.token]`` on one machine (docs/scale.md,
            "weights"; every method but scaling-binning).
        progress : callable, optional
            Called as ``progress(groups_done, n_groups)`` after each group of
            ``groups`` and then of ``fallback`` (whose groups all count as done
            at once when no tag needs them); ``n_groups`` counts both.

        Returns
        -------
        self : GroupedCalibrator

        Raises
        ------
        TypeError
            For a ``base`` that is not a calibrator, ``groups`` that are not
            :class:`TagGroups`, ``entries`` that are not :class:`Entries`, or a
            ``progress`` that is not callable.
        ValueError
            For no entries, a mismatched ``sample_weight`` or ``fallback``, or an
            invalid ``min_entries``.
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
        """Fit from per-group sizes and fits: the rule of :meth:`fit` (groups
        with fewer than ``min_entries`` dev entries, fallback, warnings), for
        any source of dev data (in-memory entries, or a cluster's in
        :mod:`sparsecal.distributed`).

        Parameters
        ----------
        grouping : callable
            ``grouping(groups)`` for ``groups`` (then ``fallback``) returns
            ``(sizes, fit_group)``: dev entries per group and a function
            returning the fitted calibrator of group ``g``.
        dev_tags : ndarray of int
            The tags with at least one dev entry (for the warning).
        threshold : float
            The dev entries' threshold (``threshold_``).
        progress : callable, optional
            As in :meth:`fit`.

        Returns
        -------
        self : GroupedCalibrator
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
        """Fit a calibrator for every group of ``groups`` holding a wanted tag,
        counting each group; returns the wanted tags whose group had too few
        entries or dev data the method refuses (:class:`DegenerateDataError`:
        one class, zero variance), and the latter alone, warning once naming
        their groups."""
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
        """The fitted model as ``(meta, arrays)``: JSON values and NumPy arrays
        (the layout is described in :mod:`sparsecal.io.calibrators`)."""
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
        """Rebuild a fitted model from :meth:`get_state`'s output, checking every
        field (the layout is described in :mod:`sparsecal.io.calibrators`).

        The container is checked here: exactly the documented fields, of their
        JSON types (``renormalize`` a boolean, ``threshold`` in [0, 1], counts
        positive integers), classes that are registered methods
        (:mod:`sparsecal.calibration.registry`; nothing else is ever imported or
        run), parameters checked as ``fit`` checks them, every calibrator of the
        base's class and parameters, and the tag maps (one integer per tag, group
        and calibrator indices in range). Each calibrator checks its own fitted
        values and arrays (:meth:`BaseCalibrator.from_state`).

        Parameters
        ----------
        meta : dict
            JSON values; ``format`` and ``version`` may be present (they are
            checked by :func:`~sparsecal.io.calibrators.load_state`).
        arrays : dict of str to ndarray
        fields : StateFields, optional
            How errors name the files (see
            :class:`~sparsecal.io.calibrators.StateFields`).

        Returns
        -------
        GroupedCalibrator
            Fitted.

        Raises
        ------
        ValueError
            A :class:`~sparsecal.io.calibrators.StateError` naming the file and
            the field for a missing, unknown, inconsistent or invalid value.

        Examples
        --------
        >>> import sparsecal as sc
        >>> from sparsecal.datasets import make_tagger_outputs
        >>> dev = make_tagger_outputs(500, split_seed=1)
        >>> model = sc.GroupedCalibrator(sc.HistogramBinning(n_bins=5),
        ...                              sc.TagGroups.scw(426))
        >>> meta, arrays = model.fit(sc.threshold(dev.scores, dev.gold)).get_state()
        >>> sc.GroupedCalibrator.from_state(meta, arrays).calibrators_
        [HistogramBinning(bin_size=None, n_bins=5)]
        >>> meta["calibrators"][0]["params"]["n_bins"] = "5"
        >>> sc.GroupedCalibrator.from_state(meta, arrays)
        Traceback (most recent call last):
        ...
        sparsecal.io.calibrators.StateError: calibrators[0].params.n_bins must be a positive integer, got '5'
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
        """Load a model saved by :meth:`save`, checking every field; nothing in
        the files is executed or unpickled.

        Parameters
        ----------
        path : str or path
            The directory :meth:`save` wrote.

        Returns
        -------
        GroupedCalibrator
            Fitted.

        Raises
        ------
        ValueError
            A :class:`~sparsecal.io.calibrators.StateError` naming the file
            (``calibrator.json`` or ``arrays.npz``) and the field, for a
            directory that is not a complete, valid saved calibrator (see
            :func:`~sparsecal.io.calibrators.load_state` and :meth:`from_state`).
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
    """The arrays of each calibrator (``c{i}.{name}`` -> ``{name}``); any other
    array must be one of the tag maps."""
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
def cross_fit_predict(calibrator, entries, *, n_folds=5, seed=0):
    """Calibrated dev scores by K-fold cross-fitting (lecture notes ``004``, K-fold).

    Tokens are dealt (seeded) into ``n_folds`` folds stratified by the group of
    their gold entry in ``calibrator.groups``
    (:func:`~sparsecal.calibration.folds.stratified_token_folds`); for each fold a clone of
    ``calibrator`` (a :class:`GroupedCalibrator`) is fit on the entries of the
    other folds and calibrates the entries of this fold. The calibrated scores of
    all folds are pooled, so every dev entry is calibrated by a model that did
    not see its token. Evaluate the pooled scores (not an average over folds).

    Parameters
    ----------
    calibrator : GroupedCalibrator
        The set-up to cross-fit (its parameters; it need not be fitted).
    entries : Entries
        Dev entries, with their tokens.
    n_folds : int, default=5
        K, at least 2.
    seed : int, default=0
        Seed of the token shuffle.

    Returns
    -------
    Entries
        ``entries`` with the pooled, cross-fitted calibrated scores.

    Raises
    ------
    ValueError
        For fewer than 2 folds or entries without tokens.

    References
    ----------
    Score-calibration lecture notes (``004``), "K-fold".

    Examples
    --------
    >>> import sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> dev = make_tagger_outputs(2000, split_seed=1)
    >>> entries = sc.threshold(dev.scores, dev.gold)
    >>> model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(426))
    >>> honest = sc.calibration.cross_fit_predict(model, entries, n_folds=5)
    >>> len(honest) == len(entries)
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
    """Yield ``(held, model)`` for every fold holding entries: the mask of its
    entries and a clone of ``calibrator`` fit on all the other entries."""
    for k in np.unique(fold):
        held = fold == k
        yield held, clone(calibrator).fit(entries.take(~held))
