"""Reading a text file (plain, ``.gz``, ``.bz2`` or ``.xz``) the same way for every
text input: read as bytes at once, UTF-8 checked, a byte-order mark removed,
``\\r\\n`` and ``\\r`` ending lines like ``\\n``, and the newline after the last
line ending it. ``what`` names the file's content in messages.
"""
import bz2
import gzip
import lzma
import os

from ..core.validation import check_input_file

__all__ = ["read_bytes", "read_lines", "base_extension"]

_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def base_extension(path):
    """The lower-case extension of ``path`` below a compression suffix."""
    stem, ext = os.path.splitext(os.fspath(path))
    if ext.lower() in _OPENERS:
        ext = os.path.splitext(stem)[1]
    return ext.lower()


def read_bytes(path, what):
    """The bytes of a UTF-8 text file without a BOM, line ends made ``\\n``."""
    check_input_file(path, what)
    name = os.fspath(path)
    opener = _OPENERS.get(os.path.splitext(name)[1].lower(), open)
    try:
        with opener(path, "rb") as f:
            data = f.read()
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise ValueError(f"cannot read {what} file {name!r}: {exc}") from None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{name!r} is not a UTF-8 text file: line {line}: {exc.reason} "
                         f"(byte {data[exc.start]:#04x})") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return data


def read_lines(path, what):
    """The lines of a text file as :func:`read_bytes` reads it, without line ends."""
    text = read_bytes(path, what).decode("utf-8")
    lines = text.split("\n")
    if text.endswith("\n"):   # the newline ends the last line
        lines.pop()
    return lines
