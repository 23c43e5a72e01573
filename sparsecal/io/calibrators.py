"""Saving and loading fitted calibrator states: a versioned, non-pickle format.

This module writes and reads *states* (JSON values and NumPy arrays) and holds
the checks they share; it knows no calibrator class.
:meth:`GroupedCalibrator.get_state
<sparsecal.calibration.GroupedCalibrator.get_state>` turns a model into a state and
``from_state`` (with the method registry) checks every field and turns it back;
each calibrator class checks its own parameters and fitted arrays.

A saved :class:`~sparsecal.calibration.GroupedCalibrator` is a directory holding

- ``calibrator.json``: ``{"format": "sparsecal.GroupedCalibrator", "version": 1,
  "n_tags", "threshold", "min_entries", "renormalize", "groups": {"kind",
  "n_groups"}, "fallback": {"kind", "n_groups"} or null, "base": {"class",
  "params"}, "calibrators": [{"class", "params", "fitted"}, ...]}``;
- ``arrays.npz`` (uncompressed ``.npy`` members, no pickled objects):
  ``groups_tag_to_group``, ``fallback_tag_to_group`` (if any),
  ``tag_to_calibrator`` and, for calibrator ``i``, its fitted arrays as
  ``c{i}.{name}`` (e.g. ``c0.x_knots_``).

The directory is written to a temporary sibling and renamed into place, so a
failure leaves no partial calibrator. Reading is bounded before anything is
parsed or inflated: ``calibrator.json`` may hold at most :data:`MAX_JSON_BYTES`
(and no NaN, infinity or repeated key), a saved calibrator covers at most
:data:`MAX_TAGS` tags, and the members of ``arrays.npz`` must be numeric ``.npy``
arrays whose headers agree with their sizes and whose total size is at most the
file's size plus ``16 MiB + 64 bytes * n_tags`` (so a compressed member cannot
inflate beyond that). Every error is a :class:`StateError` naming the file and
the field.
"""
import json
import math
import os
import stat
import zipfile
from contextlib import contextmanager

import numpy as np

from ..core.validation import check_positive_int
from .atomic import atomic_directory

__all__ = ["FORMAT", "MAX_JSON_BYTES", "MAX_TAGS", "VERSION", "StateError", "StateFields",
           "check_bool", "check_count", "check_fields", "check_index_array", "check_number",
           "check_state_array", "describe", "load_state", "save_state"]

FORMAT = "sparsecal.GroupedCalibrator"
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
    """How errors name the fields of a state: the files it was read from and
    the prefixes of its JSON fields and arrays.

    Parameters
    ----------
    path : str or path, optional
        The saved calibrator's directory; errors then start with the path of
        ``calibrator.json`` or ``arrays.npz``.
    field : str, default=""
        Prefix of JSON field names, e.g. ``"calibrators[3]"``.
    array : str, default=""
        Prefix of array names, e.g. ``"c3."``.

    Examples
    --------
    >>> from sparsecal.io.calibrators import StateFields
    >>> fields = StateFields(field="calibrators[3]", array="c3.")
    >>> fields.field("params.n_bins"), fields.array("x_knots_")
    ('calibrators[3].params.n_bins', 'c3.x_knots_')
    >>> with fields.in_json():
    ...     raise ValueError("calibrators[3].params.n_bins must be a positive integer")
    Traceback (most recent call last):
    ...
    sparsecal.io.calibrators.StateError: calibrators[3].params.n_bins must be a positive integer
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
        """Context turning a ValueError/TypeError into a :class:`StateError`
        naming ``calibrator.json``."""
        return _naming(self.file("calibrator.json"))

    def in_arrays(self):
        """Context turning a ValueError/TypeError into a :class:`StateError`
        naming ``arrays.npz``."""
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
    """A short text for a JSON value in an error: ``null``, or its repr (the
    type's name when that is long).

    Examples
    --------
    >>> from sparsecal.io.calibrators import describe
    >>> describe(None), describe("10"), describe(list(range(100)))
    ('null', "'10'", 'a list')
    """
    if value is None:
        return "null"
    text = repr(value)
    return text if len(text) <= 60 else f"a {type(value).__name__}"


def check_fields(value, name, required, optional=()):
    """Check that ``value`` is a JSON object with exactly these fields.

    Parameters
    ----------
    value : object
    name : str
        Its name in errors (``""``: the whole file).
    required, optional : sequence of str

    Raises
    ------
    ValueError
        For a non-object, a missing or an unknown field (named).

    Examples
    --------
    >>> from sparsecal.io.calibrators import check_fields
    >>> check_fields({"kind": "tfg"}, "groups", ["kind", "n_groups"])
    Traceback (most recent call last):
    ...
    ValueError: groups.n_groups is missing
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
    """``value`` if it is a JSON boolean.

    Raises
    ------
    ValueError
        For anything else (the string ``"false"`` included).

    Examples
    --------
    >>> from sparsecal.io.calibrators import check_bool
    >>> check_bool(False, "renormalize")
    False
    """
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false, got {describe(value)}")
    return value


def check_number(value, name):
    """A finite JSON number, as a float.

    Raises
    ------
    ValueError
        For a non-number, a boolean, NaN, infinity or an integer beyond float64.

    Examples
    --------
    >>> from sparsecal.io.calibrators import check_number
    >>> check_number(2, "fitted.slope_")
    2.0
    """
    try:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) \
            and math.isfinite(value)
    except OverflowError:   # an integer beyond float64
        ok = False
    if not ok:
        raise ValueError(f"{name} must be a finite number, got {describe(value)}")
    return float(value)


def check_count(value, name):
    """A positive integer no larger than :data:`MAX_TAGS` (tags or groups).

    Raises
    ------
    ValueError
        For a non-integer, a boolean, or a value outside ``[1, MAX_TAGS]``.

    Examples
    --------
    >>> from sparsecal.io.calibrators import check_count
    >>> check_count(426, "n_tags")
    426
    """
    value = check_positive_int(value, name)
    if value > MAX_TAGS:
        raise ValueError(f"{name} must be at most {MAX_TAGS}, got {value}")
    return value


def check_state_array(arrays, key, name, kinds):
    """``arrays[key]``, a 1-D array whose dtype kind is one of ``kinds``.

    Parameters
    ----------
    arrays : dict of str to ndarray
    key : str
    name : str
        Its name in errors (its key in ``arrays.npz``).
    kinds : str
        NumPy dtype kinds accepted, e.g. ``"f"`` or ``"iu"``.

    Returns
    -------
    ndarray

    Raises
    ------
    ValueError
        For a missing array, another dtype kind, or another number of dimensions.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.io.calibrators import check_state_array
    >>> check_state_array({"a": np.zeros(2)}, "a", "c0.a", "iu")
    Traceback (most recent call last):
    ...
    ValueError: c0.a must hold integers, got dtype float64
    """
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
    """``arrays[key]`` as int64: integers in ``[low, high)``, ``length`` of them.

    Raises
    ------
    ValueError
        For a missing array, another dtype, shape, or a value out of range
        (checked in the stored dtype, so nothing wraps around).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.io.calibrators import check_index_array
    >>> check_index_array({"m": np.array([0, 3])}, "m", "m", 2, -1, 3)
    Traceback (most recent call last):
    ...
    ValueError: m[1] = 3 is out of range: must lie in [-1, 3)
    """
    a = check_state_array(arrays, key, name, "iu")
    if a.shape[0] != length:
        raise ValueError(f"{name} must have {length} values (one per tag), got {a.shape[0]}")
    bad = (a < low) | (a >= high)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{i}] = {a[i]} is out of range: must lie in [{low}, {high})")
    return a.astype(np.int64)


def save_state(path, meta, arrays):
    """Write a state to directory ``path`` (replaced atomically if it holds a
    saved calibrator): ``calibrator.json`` (``meta`` plus format and version)
    and ``arrays.npz``.

    Parameters
    ----------
    path : str or path
    meta : dict
        JSON values (finite numbers only).
    arrays : dict of str to ndarray
        Numeric arrays.

    Raises
    ------
    ValueError
        For a NaN or infinite number in ``meta``.
    """
    path = os.fspath(path)
    meta = {"format": FORMAT, "version": VERSION, **meta}
    with atomic_directory(path, _is_saved_calibrator, "a saved calibrator") as tmp:
        with open(os.path.join(tmp, "calibrator.json"), "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=2, allow_nan=False)
        np.savez(os.path.join(tmp, "arrays.npz"), **arrays)


def _is_saved_calibrator(path):
    return os.path.isfile(os.path.join(path, "calibrator.json"))


def load_state(path):
    """Read a state written by :func:`save_state`, within the reading limits,
    and check its format, version and ``n_tags``.

    Returns
    -------
    meta : dict
    arrays : dict of str to ndarray
        Numeric arrays only.

    Raises
    ------
    StateError
        A ValueError naming the file: no ``calibrator.json`` or ``arrays.npz``
        (or not regular files), a ``calibrator.json`` over
        :data:`MAX_JSON_BYTES`, not UTF-8, not valid JSON (NaN, infinity and
        repeated keys included) or nested too deeply, another format or
        version, an invalid ``n_tags``, or an ``arrays.npz`` that is not a
        readable zip of numeric ``.npy`` arrays within the size limit.
    """
    fields = StateFields(path)
    meta = _read_json(fields)
    with fields.in_json():
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise ValueError(f"the file is not a {FORMAT} file")
        version = meta.get("version")
        if type(version) is not int:
            raise ValueError(f"version must be an integer, got {describe(version)}")
        if version != VERSION:
            raise ValueError(f"format version {version} cannot be read: this sparsecal "
                             f"reads version {VERSION}")
        if "n_tags" not in meta:
            raise ValueError("n_tags is missing")
        n_tags = check_count(meta["n_tags"], "n_tags")
    return meta, _read_npz(fields, n_tags)


def _regular_file(fields, name):
    """The size of ``name`` in the saved directory, which must be a regular file."""
    file = fields.file(name)
    try:
        st = os.stat(file)
    except FileNotFoundError:
        what = "a" if name == "calibrator.json" else "a complete"
        raise StateError(f"{fields.path!r} is not {what} saved calibrator (no {name})") \
            from None
    except OSError as exc:
        raise StateError(f"{file}: cannot be read: {exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise StateError(f"{file}: not a regular file")
    return file, st.st_size


def _reject_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} appears twice in one object")
        out[key] = value
    return out


def _read_json(fields):
    file, size = _regular_file(fields, "calibrator.json")
    if size > MAX_JSON_BYTES:
        raise StateError(f"{file}: {size} bytes, more than the {MAX_JSON_BYTES} a saved "
                         "calibrator may have")
    try:
        with open(file, "rb") as f:
            data = f.read(MAX_JSON_BYTES + 1)
    except OSError as exc:
        raise StateError(f"{file}: cannot be read: {exc}") from None
    if len(data) > MAX_JSON_BYTES:
        raise StateError(f"{file}: more than the {MAX_JSON_BYTES} bytes a saved calibrator "
                         "may have")
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_reject_constant,
                          object_pairs_hook=_unique_keys)
    except UnicodeDecodeError as exc:
        raise StateError(f"{file}: not UTF-8 text ({exc})") from None
    except RecursionError:
        raise StateError(f"{file}: not valid JSON: nested too deeply") from None
    except ValueError as exc:   # JSONDecodeError, and the rejections above
        raise StateError(f"{file}: not valid JSON: {exc}") from None


def _read_npz(fields, n_tags):
    file, size = _regular_file(fields, "arrays.npz")
    limit = size + _INFLATE_BASE + _INFLATE_PER_TAG * n_tags
    try:
        with zipfile.ZipFile(file) as zf:
            infos = zf.infolist()
            names = [info.filename for info in infos]
            if len(set(names)) != len(names):
                raise ValueError("a member name appears twice")
            total = sum(info.file_size for info in infos)
            if total > limit:
                raise ValueError(f"its members would decompress to {total} bytes, more than "
                                 f"the {limit} allowed (the file's size + {_INFLATE_BASE} + "
                                 f"{_INFLATE_PER_TAG} per tag)")
            for info in infos:
                _check_member(zf, info)
        with np.load(file, allow_pickle=False) as npz:
            return {key: npz[key] for key in npz.files}
    except StateError:
        raise
    except (OSError, EOFError, zipfile.BadZipFile, ValueError) as exc:
        raise StateError(f"{file}: not a readable calibrator .npz file: {exc}") from None


def _check_member(zf, info):
    """Check a member's ``.npy`` header (numeric dtype, size agreeing with the
    shape) before anything of it is inflated."""
    name = info.filename
    if not name.endswith(".npy"):
        raise ValueError(f"member {name!r} is not a .npy array")
    with zf.open(info) as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f"{name[:-4]}: unsupported .npy version {version}")
        header = f.tell()
    if dtype.hasobject or dtype.kind not in "biuf":
        raise ValueError(f"{name[:-4]}: dtype {dtype} is not numeric (object arrays and "
                         "pickles are never loaded)")
    if header + math.prod(shape) * dtype.itemsize != info.file_size:
        raise ValueError(f"{name[:-4]}: its header (shape {shape}, dtype {dtype}) does not "
                         f"match its size ({info.file_size} bytes)")
