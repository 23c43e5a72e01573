"""Saving and loading fitted calibrator states: a versioned, non-pickle format.

This module reads and writes *states* (JSON values and NumPy arrays) and holds
the checks they share; it knows no calibrator class
(:meth:`~sparsecal.calibration.GroupedCalibrator.get_state` and ``from_state``
turn models into states and back).

A saved :class:`~sparsecal.calibration.GroupedCalibrator` is a directory of

- ``calibrator.json``: format, version, ``n_tags``, ``threshold``,
  ``min_entries``, ``renormalize``, ``groups`` and ``fallback`` (kind,
  n_groups), ``base`` and ``calibrators`` (class, params, fitted);
- ``arrays.npz`` (uncompressed, no pickles): the groups' tag-to-group maps,
  ``tag_to_calibrator`` and calibrator ``i``'s fitted arrays as
  ``c{i}.{name}``.

It is written to a temporary sibling and renamed into place. Reading is bounded
before anything is parsed or inflated (regular files, :data:`MAX_JSON_BYTES`,
:data:`MAX_TAGS`, members of ``arrays.npz`` declaring at most the file's size
plus ``16 MiB + 64 bytes * n_tags``); every error is a :class:`StateError`
naming the file and the field.
"""
import json
import math
import os
import stat
import zipfile
from contextlib import contextmanager

import numpy as np

from ..core.jsonfile import read_json
from ..core.validation import check_positive_int, file_kind
from .atomic import atomic_directory
from .npyfile import read_npz

__all__ = ["ENSEMBLE_FORMAT", "FORMAT", "MAX_JSON_BYTES", "MAX_TAGS", "VERSION", "StateError", "StateFields",
           "check_bool", "check_count", "check_fields", "check_index_array", "check_number",
           "check_state_array", "describe", "load_state", "save_state"]

FORMAT = "sparsecal.GroupedCalibrator"
#: the format of a saved :class:`~sparsecal.calibration.ensemble.CrossFittedCalibrator`
ENSEMBLE_FORMAT = "sparsecal.CrossFittedCalibrator"
VERSION = 1
#: the largest ``calibrator.json`` read (checked before parsing)
MAX_JSON_BYTES = 64 << 20
#: the most tags (and groups) a saved calibrator may have
MAX_TAGS = 1 << 24
# Bytes the members of arrays.npz may inflate to beyond the file's own size.
_INFLATE_BASE = 16 << 20
_INFLATE_PER_TAG = 64


class StateError(ValueError):
    """A saved calibrator that is not valid; the message names the file and field."""


class StateFields:
    """How errors name the fields of a state: the saved directory ``path`` (optional),
    and the prefixes of JSON fields (``field``) and arrays (``array``).
    """

    def __init__(self, path=None, field="", array=""):
        self.path = None if path is None else os.fspath(path)
        self.prefix = field
        self.array_prefix = array

    def field(self, name):
        """The full name of JSON field ``name`` (``""``: the prefix itself)."""
        if not self.prefix or not name:
            return self.prefix or name
        return f"{self.prefix}{'' if name.startswith('[') else '.'}{name}"

    def array(self, name):
        """The full name of array ``name`` (its key in ``arrays.npz``)."""
        return self.array_prefix + name

    def child(self, field, array=""):
        """The names inside JSON field ``field`` (and arrays prefixed ``array``)."""
        return StateFields(self.path, self.field(field), self.array_prefix + array)

    def file(self, name):
        """The path of ``name`` in the saved directory (None without a path)."""
        return None if self.path is None else os.path.join(self.path, name)

    def in_json(self):
        """Context turning a ValueError/TypeError into a :class:`StateError` naming
        ``calibrator.json``.
        """
        return _naming(self.file("calibrator.json"))

    def in_arrays(self):
        """Context turning a ValueError/TypeError into a :class:`StateError` naming
        ``arrays.npz``.
        """
        return _naming(self.file("arrays.npz"))


@contextmanager
def _naming(file):
    try:
        yield
    except StateError:
        raise
    except (ValueError, TypeError) as exc:
        raise StateError(str(exc) if file is None else f"{file}: {exc}") from None


def describe(value):
    """A short text for a JSON value in an error: ``null``, its repr, or its type's
    name when that is long.
    """
    if value is None:
        return "null"
    text = repr(value)
    return text if len(text) <= 60 else f"a {type(value).__name__}"


def check_fields(value, name, required, optional=()):
    """Check that ``value`` is a JSON object with the ``required`` fields and no
    others than ``optional``.
    """
    fields = StateFields(field=name)
    if not isinstance(value, dict):
        raise ValueError(f"{name or 'the file'} must be a JSON object, got {describe(value)}")
    for key in required:
        if key not in value:
            raise ValueError(f"{fields.field(key)} is missing")
    for key in value:
        if key not in required and key not in optional:
            raise ValueError(f"{fields.field(str(key))} is not a field of a saved calibrator")


def check_bool(value, name):
    """``value`` if it is a JSON boolean (the string ``"false"`` is not)."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false, got {describe(value)}")
    return value


def check_number(value, name):
    """A finite JSON number (not a boolean) as a float."""
    try:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) \
            and math.isfinite(value)
    except OverflowError:   # an integer beyond float64
        ok = False
    if not ok:
        raise ValueError(f"{name} must be a finite number, got {describe(value)}")
    return float(value)


def check_count(value, name):
    """An integer in ``[1, MAX_TAGS]`` (tags or groups)."""
    value = check_positive_int(value, name)
    if value > MAX_TAGS:
        raise ValueError(f"{name} must be at most {MAX_TAGS}, got {value}")
    return value


def check_state_array(arrays, key, name, kinds):
    """``arrays[key]``, a 1-D array of a dtype kind in ``kinds`` (``"f"``, ``"iu"``)."""
    if key not in arrays:
        raise ValueError(f"{name} is missing")
    a = np.asarray(arrays[key])
    if a.dtype.kind not in kinds:
        what = "floating-point numbers" if kinds == "f" else "integers"
        raise ValueError(f"{name} must hold {what}, got dtype {a.dtype}")
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {a.shape}")
    return a


def check_index_array(arrays, key, name, length, low, high):
    """``arrays[key]`` as int64: ``length`` integers in ``[low, high)``, checked in
    the stored dtype (nothing wraps).
    """
    a = check_state_array(arrays, key, name, "iu")
    if a.shape[0] != length:
        raise ValueError(f"{name} must have {length} values (one per tag), got {a.shape[0]}")
    bad = (a < low) | (a >= high)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{i}] = {a[i]} is out of range: must lie in [{low}, {high})")
    return a.astype(np.int64)


def save_state(path, meta, arrays, format=FORMAT):
    """Write a state to directory ``path``: ``calibrator.json`` (``meta`` with
    ``format`` and version; finite numbers only) and ``arrays.npz``, replacing a
    saved calibrator there atomically.
    """
    path = os.fspath(path)
    meta = {"format": format, "version": VERSION, **meta}
    with atomic_directory(path, _is_saved_calibrator, "a saved calibrator") as tmp:
        with open(os.path.join(tmp, "calibrator.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=2, allow_nan=False)
        np.savez(os.path.join(tmp, "arrays.npz"), **arrays)


def _is_saved_calibrator(path):
    return os.path.isfile(os.path.join(path, "calibrator.json"))


def load_state(path, format=FORMAT):
    """``(meta, arrays)`` of a state written by :func:`save_state`, read within the
    limits of the module, its format (one of ``format``), version and ``n_tags``
    checked.
    """
    fields = StateFields(path)
    json_file, _ = _regular_file(fields, "calibrator.json")
    with _naming(None):   # the readers' messages name the file
        meta = read_json(json_file, "saved calibrator", max_bytes=MAX_JSON_BYTES)
    with fields.in_json():
        formats = (format,) if isinstance(format, str) else tuple(format)
        if meta.get("format") not in formats:
            raise ValueError(f"the file is not a {' or '.join(formats)} file")
        version = meta.get("version")
        if type(version) is not int:
            raise ValueError(f"version must be an integer, got {describe(version)}")
        if version != VERSION:
            raise ValueError(f"format version {version} cannot be read: this sparsecal "
                             f"reads version {VERSION}")
        if "n_tags" not in meta:
            raise ValueError("n_tags is missing")
        n_tags = check_count(meta["n_tags"], "n_tags")
    npz_file, size = _regular_file(fields, "arrays.npz")
    with fields.in_arrays():
        limit = size + _INFLATE_BASE + _INFLATE_PER_TAG * n_tags
        total = _inflated_size(npz_file)
        if total > limit:
            raise ValueError(f"its members would decompress to {total} bytes, more than the "
                             f"{limit} allowed (the file's size + {_INFLATE_BASE} + "
                             f"{_INFLATE_PER_TAG} per tag)")
    with _naming(None):
        arrays = read_npz(npz_file, "saved calibrator")
    with fields.in_arrays():
        for key, a in arrays.items():
            if a.dtype.kind not in "biuf":
                raise ValueError(f"{key}: dtype {a.dtype} is not numeric")
    return meta, arrays


def _regular_file(fields, name):
    """The path and size of ``name``, a regular file (never a FIFO or device)."""
    file = fields.file(name)
    try:
        st = os.stat(file)
    except FileNotFoundError:
        what = "a" if name == "calibrator.json" else "a complete"
        raise StateError(f"{fields.path!r} is not {what} saved calibrator (no {name})") \
            from None
    except NotADirectoryError:   # the calibrator given as a file, a FIFO, ...
        raise StateError(f"{fields.path!r} is {file_kind(os.stat(fields.path).st_mode)}, "
                         "not a saved calibrator's directory") from None
    except OSError as exc:
        raise StateError(f"{file}: cannot be read: {exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise StateError(f"{file}: not a regular file")
    return file, st.st_size


def _inflated_size(file):
    """The total size the members of zip ``file`` declare (0 if not a readable zip)."""
    try:
        with zipfile.ZipFile(file) as archive:
            return sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
            NotImplementedError, RuntimeError):   # e.g. an unknown zip version
        return 0
