"""Reading ``.npy`` and ``.npz`` files without trusting what they declare.

Every header is checked before anything is allocated or decompressed: the
file's kind from its first bytes, no object arrays (``allow_pickle`` is never
set), a declared size that the file (or archive member) really holds and that
fits in memory. A compressed member is inflated only up to its declared size.
``what`` names the file's content in messages.
"""
import contextlib
import os

import numpy as np

from ..core.validation import check_input_file, memory_limit

__all__ = ["npz_names", "open_npy", "read_npz"]

_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK"
#: Array kinds a sparsecal file may hold: numbers, booleans, text (no objects).
_KINDS = "biufUS"


def _kind_of(path):
    """'npy', 'zip' or None, from the first bytes of ``path``."""
    with open(path, "rb") as f:
        head = f.read(len(_NPY_MAGIC))
    if head.startswith(_NPY_MAGIC):
        return "npy"
    if head.startswith(_ZIP_MAGIC):
        return "zip"
    return None


def _header(f, where):
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f"unsupported .npy format version {version}")
    except Exception as exc:   # noqa: BLE001 - numpy's header parser raises ValueError,
        # SyntaxError, TokenError, TypeError, RecursionError, MemoryError... on bad text
        raise ValueError(f"{where}: not a readable .npy array ({type(exc).__name__}: "
                         f"{exc})") from None
    if dtype.hasobject or dtype.kind not in _KINDS or dtype.fields is not None:
        raise ValueError(f"{where}: holds an array of {dtype}, not of numbers or text")
    if any(n < 0 for n in shape):
        raise ValueError(f"{where}: declares the impossible shape {shape}")
    return shape, fortran, dtype, int(np.prod(shape, dtype=object)) * dtype.itemsize


def _check_fits(declared, available, where, shape, dtype):
    if declared != available:
        raise ValueError(f"{where}: declares shape {shape} of {dtype} ({declared:,} bytes) "
                         f"but holds {available:,} bytes of data (truncated or corrupt)")


def open_npy(path, what):
    """A read-only memory map of the ``.npy`` file ``path`` (its own dtype, byte
    order and memory order), its header checked.
    """
    name = os.fspath(path)
    check_input_file(name, what)   # (a FIFO would block the read)
    kind = _kind_of(name)
    if kind == "zip":
        raise ValueError(f"cannot read {what} file {name!r}: it is an .npz archive, not "
                         "an .npy array (rename it to .npz)")
    if kind != "npy":
        raise ValueError(f"cannot read {what} file {name!r}: not an .npy file (no NumPy "
                         "header)")
    with open(name, "rb") as f:
        shape, fortran, dtype, declared = _header(f, f"cannot read {what} file {name!r}")
        offset = f.tell()
    _check_fits(declared, os.path.getsize(name) - offset,
                f"cannot read {what} file {name!r}", shape, dtype)
    if declared == 0:   # mmap cannot map zero bytes
        return np.zeros(shape, dtype=dtype, order="F" if fortran else "C")
    return np.memmap(name, dtype=dtype, mode="r", offset=offset, shape=shape,
                     order="F" if fortran else "C")


def read_npz(path, what, names=None):
    """The arrays of the ``.npz`` archive ``path`` (only those in ``names``, if
    given) as a dict in archive order, every member checked first.
    """
    name = os.fspath(path)
    check_input_file(name, what)
    wanted = None if names is None else set(names)
    with _archive(name, what) as archive:
        members = [(key, info) for key, info in _members(archive, name, what)
                   if wanted is None or key in wanted]
        headers, total = [], 0
        for key, info in members:
            where = f"cannot read {what} file {name!r}, array {key!r}"
            with archive.open(info) as f:
                shape, fortran, dtype, declared = _header(f, where)
                offset = f.tell()
            _check_fits(declared, info.file_size - offset, where, shape, dtype)
            headers.append((key, info, shape, fortran, dtype, declared))
            total += declared
        memory, where = memory_limit()
        if memory is not None and total > memory:
            raise ValueError(f"cannot read {what} file {name!r}: it declares {total:,} "
                             f"bytes of arrays, more than {where} ({memory:,} bytes)")
        out = {}
        for key, info, shape, fortran, dtype, declared in headers:
            with archive.open(info) as f:
                _header(f, key)
                data = f.read(declared + 1)   # to the end: the CRC is checked there
            if len(data) != declared:
                raise ValueError(f"cannot read {what} file {name!r}, array {key!r}: it "
                                 f"holds {len(data):,} bytes, not the {declared:,} declared")
            out[key] = np.frombuffer(data, dtype=dtype).reshape(
                shape, order="F" if fortran else "C")
        return out


def npz_names(path, what):
    """Names of the arrays in the ``.npz`` archive ``path`` (nothing is read)."""
    name = os.fspath(path)
    with _archive(name, what) as archive:
        return [key for key, _ in _members(archive, name, what)]


@contextlib.contextmanager
def _archive(name, what):
    """The open zip archive ``name``; every read error becomes one ValueError."""
    import zipfile   # here only: reading an .npy never needs it
    import zlib
    kind = _kind_of(name)
    if kind == "npy":
        raise ValueError(f"cannot read {what} file {name!r}: it is an .npy array, not an "
                         ".npz archive")
    if kind != "zip":
        raise ValueError(f"cannot read {what} file {name!r}: not an .npz archive")
    try:
        with zipfile.ZipFile(name) as archive:
            yield archive
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError,
            NotImplementedError, RuntimeError) as exc:
        # a corrupt archive (bad CRC, bad compression) or an encrypted one
        raise ValueError(f"cannot read {what} file {name!r}: {exc}") from None


def _members(archive, name, what):
    out, seen = [], set()
    for info in archive.infolist():
        if not info.filename.endswith(".npy"):
            raise ValueError(f"cannot read {what} file {name!r}: member {info.filename!r} "
                             "is not an .npy array")
        key = info.filename[:-len(".npy")]
        if key in seen:
            raise ValueError(f"cannot read {what} file {name!r}: it holds the array "
                             f"{key!r} twice")
        seen.add(key)
        out.append((key, info))
    return out
