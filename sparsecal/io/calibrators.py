"""Saving and loading fitted calibrator states: a versioned, non-pickle format.

This module writes, reads and validates *states* (JSON values and NumPy arrays);
it knows no calibrator class. :meth:`GroupedCalibrator.get_state
<sparsecal.calibration.GroupedCalibrator.get_state>` turns a model into a state and
``from_state`` (with the method registry) turns it back.

A saved :class:`~sparsecal.calibration.GroupedCalibrator` is a directory holding

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

__all__ = ["FORMAT", "VERSION", "load_state", "save_state"]

FORMAT = "sparsecal.GroupedCalibrator"
VERSION = 1


def save_state(path, meta, arrays):
    """Write a state to directory ``path`` (replaced atomically if it holds a
    saved calibrator): ``calibrator.json`` (``meta`` plus format and version)
    and ``arrays.npz``.

    Parameters
    ----------
    path : str or path
    meta : dict
        JSON values.
    arrays : dict of str to ndarray
    """
    path = os.fspath(path)
    meta = {"format": FORMAT, "version": VERSION, **meta}
    with atomic_directory(path, _is_saved_calibrator, "a saved calibrator") as tmp:
        with open(os.path.join(tmp, "calibrator.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=2)
        np.savez(os.path.join(tmp, "arrays.npz"), **arrays)


def _is_saved_calibrator(path):
    return os.path.isfile(os.path.join(path, "calibrator.json"))


def load_state(path):
    """Read and check a state written by :func:`save_state`.

    Returns
    -------
    meta : dict
    arrays : dict of str to ndarray

    Raises
    ------
    ValueError
        Naming the file: no ``calibrator.json`` or ``arrays.npz``, invalid JSON,
        another format or version, an unreadable ``.npz``.
    """
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
    return meta, arrays
