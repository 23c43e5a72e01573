"""Recalibration per tag group: SCW, TFG or per tag (with fallback), and K-fold.

Kranzlein, Liu & Schneider 2021, Sections 2.2 and 3.3: one binary calibrator is fit
on the pooled dev entries of each group (SCW: one group; TFG: one per frequency
group) and applied to test entries of the same group. Per-tag calibration falls
back to a coarser grouping (e.g. the tag's TFG group) where a tag has too few dev
entries. K-fold cross-fitting (lecture notes ``004``, "K-fold") gives calibrated
dev scores for an honest evaluation of a recalibration set-up.
"""
import os
import warnings

import numpy as np

from ..core.entries import Entries, threshold as threshold_entries
from ..core.groups import TagGroups, partition_by_group
from ..core.validation import check_positive_int
from ..io.atomic import atomic_path
from ..io.calibrators import load_state, save_state
from .base import BaseCalibrator, Estimator, clone
from .registry import calibrator_class

__all__ = ["GroupedCalibrator", "cross_fit_predict"]


class GroupedCalibrator(Estimator):
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
    min_entries : int, default=1
        Dev entries a group needs to get its own calibrator. A group (or
        fallback group) with fewer keeps its scores unchanged, with a warning.
    renormalize : bool, default=False
        In :meth:`transform_dense`, rescale each row to sum to 1 after
        calibration. Off by default: the paper evaluates unnormalised scores
        (Section 3.1) and leaves normalisation open (Section 6).

    Attributes
    ----------
    calibrators_ : list of BaseCalibrator or None
        Primary group calibrators, then fallback group calibrators (None where a
        group had too little dev data).
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
    (3, 1)
    >>> calibrated = model.transform(sc.threshold(test.scores, test.gold))
    >>> model.transform_dense(test.scores).shape == test.scores.shape
    True
    """

    def __init__(self, base, groups, *, fallback=None, min_entries=1, renormalize=False):
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
        if not isinstance(self.groups, TagGroups):
            raise TypeError("groups must be a TagGroups")
        if self.fallback is not None and self.fallback.n_tags != self.groups.n_tags:
            raise ValueError("fallback must cover the same tags as groups")
        check_positive_int(self.min_entries, "min_entries")

    def fit(self, entries, sample_weight=None):
        """Fit one calibrator per group on dev ``entries``.

        Parameters
        ----------
        entries : Entries
            Thresholded dev entries (see :func:`sparsecal.threshold`).
        sample_weight : array_like of float, shape (len(entries),), optional

        Returns
        -------
        self : GroupedCalibrator

        Raises
        ------
        TypeError
            For a ``base`` that is not a calibrator, ``groups`` that are not
            :class:`TagGroups`, or ``entries`` that are not :class:`Entries`.
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
        calibrators, tag_map = [], np.full(self.groups.n_tags, -1, dtype=np.int64)
        weak = self._fit_grouping(self.groups, entries, w, calibrators, tag_map,
                                  np.ones(self.groups.n_tags, dtype=bool))
        if self.fallback is not None and weak.any():
            self._fit_grouping(self.fallback, entries, w, calibrators, tag_map, weak)
        left = np.flatnonzero(tag_map < 0)
        if left.size:
            # Also tags with no dev entry at all: their test scores are left
            # unchanged just the same, which the caller must know about.
            with_dev = np.intersect1d(left, np.unique(entries.tag)).size
            warnings.warn(f"{left.size} tags ({with_dev} of them with dev entries) are in "
                          f"groups with fewer than min_entries={self.min_entries} dev "
                          "entries and have no fallback calibrator: their scores are left "
                          "unchanged", stacklevel=2)
        self.calibrators_ = calibrators
        self.tag_to_calibrator_ = tag_map
        self.threshold_ = entries.threshold
        return self

    def _fit_grouping(self, groups, entries, w, calibrators, tag_map, tags_wanted):
        """Fit a calibrator for every group of ``groups`` holding a wanted tag;
        returns the wanted tags whose group had too few entries."""
        perm, offsets = groups.partition(entries)
        weak = np.zeros(groups.n_tags, dtype=bool)
        for g in range(groups.n_groups):
            members = tags_wanted & (groups.tag_to_group == g)
            if not members.any():
                continue
            idx = perm[offsets[g]:offsets[g + 1]]
            if idx.size < self.min_entries:
                weak |= members
                continue
            cal = clone(self.base).fit(entries.score[idx], entries.label[idx],
                                       None if w is None else w[idx])
            tag_map[members] = len(calibrators)
            calibrators.append(cal)
        return weak

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

    def transform(self, entries):
        """Entries with calibrated scores (same order, tags, labels, tokens)."""
        self._check_fitted()
        if not isinstance(entries, Entries):
            raise TypeError("transform takes Entries (see sparsecal.threshold)")
        return entries.with_scores(self._calibrate(entries.score, entries.tag))

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
        if not hasattr(scores, "dtype") or not hasattr(scores, "shape"):
            scores = np.asarray(scores)
        if scores.ndim != 2 or scores.shape[1] != self.groups.n_tags:
            raise ValueError(f"scores must have shape [n_tokens, {self.groups.n_tags}], "
                             f"got {scores.shape}")
        if out is None:
            out = np.empty(scores.shape, dtype=scores.dtype)
        elif out.shape != scores.shape or out.dtype != scores.dtype:
            raise ValueError(f"out must have shape {scores.shape} and dtype {scores.dtype}")
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
            out[r0:r0 + rows] = result
            if progress is not None:
                progress(r0 + rows, scores.shape[0])
        return out

    def transform_file(self, scores_path, out_path, *, chunk_rows=None, progress=None):
        """Calibrate a ``.npy`` score matrix into a new ``.npy`` file, streaming
        both (memory maps); written atomically (temporary file + rename), so a
        failure leaves no partial output."""
        scores = np.load(scores_path, mmap_mode="r")
        with atomic_path(out_path, suffix=".npy") as tmp:
            out = np.lib.format.open_memmap(tmp, mode="w+", dtype=scores.dtype,
                                            shape=scores.shape)
            self.transform_dense(scores, out, chunk_rows=chunk_rows, progress=progress)
            out.flush()
            del out
        return out_path

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
    def from_state(cls, meta, arrays):
        """Rebuild a fitted model from :meth:`get_state`'s output; classes are
        looked up in the registry (:mod:`sparsecal.calibration.registry`).

        Raises
        ------
        ValueError
            When the state is incomplete or inconsistent.
        """
        n_tags = meta["n_tags"]

        def groups_from(key, info):
            if info is None:
                return None
            mapping = arrays.get(key)
            if mapping is None or mapping.shape != (n_tags,):
                raise ValueError(f"saved calibrator: {key} must have shape ({n_tags},)")
            return TagGroups(mapping, info["n_groups"], kind=info["kind"])

        groups = groups_from("groups_tag_to_group", meta["groups"])
        fallback = groups_from("fallback_tag_to_group", meta["fallback"])
        base_cls = calibrator_class(meta["base"]["class"])
        model = cls(base_cls(**meta["base"]["params"]), groups, fallback=fallback,
                    min_entries=meta["min_entries"], renormalize=meta["renormalize"])
        calibrators = []
        for i, info in enumerate(meta["calibrators"]):
            prefix = f"c{i}."
            cal_arrays = {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
            calibrators.append(calibrator_class(info["class"]).from_state(info, cal_arrays))
        tag_map = arrays.get("tag_to_calibrator")
        if (tag_map is None or tag_map.shape != (n_tags,) or tag_map.dtype.kind not in "iu"
                or tag_map.max() >= len(calibrators) or tag_map.min() < -1):
            raise ValueError("saved calibrator: tag_to_calibrator is missing or inconsistent")
        model.calibrators_ = calibrators
        model.tag_to_calibrator_ = tag_map.astype(np.int64)
        model.threshold_ = float(meta["threshold"])
        return model

    def save(self, path):
        """Save to directory ``path``, atomically (see :mod:`sparsecal.io.calibrators`)."""
        save_state(path, *self.get_state())

    @classmethod
    def load(cls, path):
        """Load a model saved by :meth:`save`; every error names the file.

        Raises
        ------
        ValueError
            For a directory that is not a complete, valid saved calibrator.
        """
        meta, arrays = load_state(path)
        try:
            return cls.from_state(meta, arrays)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{os.path.join(os.fspath(path), 'calibrator.json')!r} is "
                             f"malformed ({type(exc).__name__}: {exc})") from None


def _groups_meta(groups):
    return None if groups is None else {"kind": groups.kind, "n_groups": groups.n_groups}


def _plain(params):
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in params.items()}


def cross_fit_predict(calibrator, entries, *, n_folds=5, seed=0):
    """Calibrated dev scores by K-fold cross-fitting (lecture notes ``004``, K-fold).

    Tokens are shuffled (seeded) into ``n_folds`` folds; for each fold a clone of
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
    >>> honest = sc.cross_fit_predict(model, entries, n_folds=5)
    >>> len(honest) == len(entries)
    True
    """
    n_folds = check_positive_int(n_folds, "n_folds")
    if n_folds < 2:
        raise ValueError("n_folds must be at least 2")
    if entries.token is None:
        raise ValueError("cross-fitting splits by token: entries need their tokens")
    n_tokens = entries.n_tokens if entries.n_tokens is not None else int(entries.token.max()) + 1
    fold_of_token = np.random.default_rng(seed).permutation(n_tokens) % n_folds
    fold = fold_of_token[entries.token]
    out = entries.score.copy()
    for k in range(n_folds):
        held = fold == k
        if not held.any():
            continue
        model = GroupedCalibrator(clone(calibrator.base), calibrator.groups,
                                  fallback=calibrator.fallback,
                                  min_entries=calibrator.min_entries)
        model.fit(entries.take(~held))
        out[held] = model.transform(entries.take(held)).score
    return entries.with_scores(out)
