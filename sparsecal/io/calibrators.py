"""Saving and loading fitted calibrators: a versioned, non-pickle format.

A saved :class:`~sparsecal.grouped.GroupedCalibrator` is a directory holding

- ``calibrator.json``: ``{"format": "sparsecal.GroupedCalibrator", "version": 1,
  "n_tags", "threshold", "min_entries", "renormalize", "groups": {"kind",
  "n_groups"}, "fallback": {...} or null, "base": {"class", "params"},
  "calibrators": [{"class", "params", "fitted"} or null, ...]}``;
- ``arrays.npz`` (no pickled objects): ``groups_tag_to_group``,
  ``fallback_tag_to_group`` (if any), ``tag_to_calibrator`` and, for calibrator
  ``i``, its fitted arrays as ``c{i}.{name}`` (e.g. ``c0.x_knots_``).

The directory is written to a temporary sibling and renamed into place, so a
failure leaves no partial calibrator. Loading checks the format name, version,
classes and array shapes.
"""
import json
import os
import zipfile

import numpy as np

from .atomic import atomic_directory
from ..calibration.binary import CALIBRATORS
from ..core.groups import TagGroups

__all__ = ["FORMAT", "VERSION", "save_grouped", "load_grouped"]

FORMAT = "sparsecal.GroupedCalibrator"
VERSION = 1


def _groups_meta(groups):
    return None if groups is None else {"kind": groups.kind, "n_groups": groups.n_groups}


def save_grouped(model, path):
    path = os.fspath(path)
    meta = {"format": FORMAT, "version": VERSION, "n_tags": model.groups.n_tags,
            "threshold": model.threshold_, "min_entries": int(model.min_entries),
            "renormalize": bool(model.renormalize),
            "groups": _groups_meta(model.groups), "fallback": _groups_meta(model.fallback),
            "base": {"class": type(model.base).__name__,
                     "params": model.base.get_state()[0]["params"]
                     if model.base.is_fitted else _plain(model.base.get_params())},
            "calibrators": []}
    arrays = {"groups_tag_to_group": model.groups.tag_to_group,
              "tag_to_calibrator": model.tag_to_calibrator_}
    if model.fallback is not None:
        arrays["fallback_tag_to_group"] = model.fallback.tag_to_group
    for i, cal in enumerate(model.calibrators_):
        state, cal_arrays = cal.get_state()
        meta["calibrators"].append({"class": type(cal).__name__, **state})
        arrays.update({f"c{i}.{name}": a for name, a in cal_arrays.items()})
    with atomic_directory(path, _is_saved_calibrator, "a saved calibrator") as tmp:
        with open(os.path.join(tmp, "calibrator.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=2)
        np.savez(os.path.join(tmp, "arrays.npz"), **arrays)


def _is_saved_calibrator(path):
    return os.path.isfile(os.path.join(path, "calibrator.json"))


def _plain(params):
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in params.items()}


def load_grouped(path):
    path = os.fspath(path)
    meta_path = os.path.join(path, "calibrator.json")
    try:
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"{path!r} is not a saved calibrator (no calibrator.json)") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{meta_path!r} is not valid JSON: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{meta_path!r} is not a {FORMAT} file")
    if meta.get("version") != VERSION:
        raise ValueError(f"{meta_path!r} has format version {meta.get('version')!r}; "
                         f"this sparsecal reads version {VERSION}")
    arrays_path = os.path.join(path, "arrays.npz")
    try:
        with np.load(arrays_path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except FileNotFoundError:
        raise ValueError(f"{path!r} is not a complete saved calibrator (no arrays.npz)") from None
    except (OSError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{arrays_path!r} is not a readable .npz file: {exc}") from None
    try:
        return _build(meta, arrays)
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{meta_path!r} is malformed ({type(exc).__name__}: {exc})") from None


def _build(meta, arrays):
    from ..calibration.grouped import GroupedCalibrator
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
    base_cls = _calibrator_class(meta["base"]["class"])
    model = GroupedCalibrator(base_cls(**meta["base"]["params"]), groups, fallback=fallback,
                              min_entries=meta["min_entries"],
                              renormalize=meta["renormalize"])
    calibrators = []
    for i, info in enumerate(meta["calibrators"]):
        cls = _calibrator_class(info["class"])
        prefix = f"c{i}."
        cal_arrays = {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
        calibrators.append(cls.from_state(info, cal_arrays))
    tag_map = arrays.get("tag_to_calibrator")
    if (tag_map is None or tag_map.shape != (n_tags,) or tag_map.dtype.kind not in "iu"
            or tag_map.max() >= len(calibrators) or tag_map.min() < -1):
        raise ValueError("saved calibrator: tag_to_calibrator is missing or inconsistent")
    model.calibrators_ = calibrators
    model.tag_to_calibrator_ = tag_map.astype(np.int64)
    model.threshold_ = float(meta["threshold"])
    return model


def _calibrator_class(name):
    try:
        return CALIBRATORS[name]
    except KeyError:
        raise ValueError(f"saved calibrator uses unknown class {name!r}; known: "
                         f"{sorted(CALIBRATORS)}") from None
