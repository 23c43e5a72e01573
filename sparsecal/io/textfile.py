"""Reading a text file (plain or compressed) into lines, the same way for every
text input (``.txt`` gold, CoNLL-U, CoNLL column files).

The file is read as bytes in one call and decoded once: a UTF-8 byte-order mark
is removed, ``\\r\\n`` and ``\\r`` end lines like ``\\n`` (as Python's universal
newlines), and the newline after the last line ends it (it does not start an
empty line). ``.gz``, ``.bz2`` and ``.xz`` files are decompressed on the fly
(the UD treebanks ship as ``.conllu.xz``).
"""
import bz2
import gzip
import lzma
import os

__all__ = ["check_file", "read_bytes", "read_lines", "base_extension"]

_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def check_file(path, what):
    """Raise unless ``path`` is an existing file (not a directory).

    Parameters
    ----------
    path : str or os.PathLike
    what : str
        What the file holds, for messages ("gold", "scores", ...).

    Returns
    -------
    None

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If ``path`` is a directory.

    Examples
    --------
    >>> from sparsecal.io.textfile import check_file
    >>> check_file("absent.txt", "gold")
    Traceback (most recent call last):
    ...
    FileNotFoundError: gold file 'absent.txt' does not exist
    """
    if os.path.isdir(path):
        raise ValueError(f"{what} file {os.fspath(path)!r} is a directory, not a file")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{what} file {os.fspath(path)!r} does not exist")


def base_extension(path):
    """The extension of ``path`` below a compression suffix, lower case.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    str

    Examples
    --------
    >>> from sparsecal.io.textfile import base_extension
    >>> base_extension("en_ewt-ud-dev.conllu.xz"), base_extension("gold.TXT")
    ('.conllu', '.txt')
    """
    stem, ext = os.path.splitext(os.fspath(path))
    if ext.lower() in _OPENERS:
        ext = os.path.splitext(stem)[1]
    return ext.lower()


def read_bytes(path, what):
    """The bytes of a UTF-8 text file, checked, with line ends made ``\\n``.

    Parameters
    ----------
    path : str or os.PathLike
        A text file, or one compressed with gzip (``.gz``), bzip2 (``.bz2``) or
        xz (``.xz``).
    what : str
        What the file holds, for messages.

    Returns
    -------
    bytes
        Valid UTF-8 without a BOM, ``\\r\\n`` and ``\\r`` replaced by ``\\n``.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        Naming the file: unreadable or corrupt compressed data, or text that
        is not UTF-8 (with the line of the first bad byte).

    Examples
    --------
    >>> from sparsecal.io.textfile import read_bytes
    >>> with open("crlf.txt", "wb") as f:
    ...     _ = f.write(b"\\xef\\xbb\\xbfNOUN\\r\\nVERB\\r")
    >>> read_bytes("crlf.txt", "gold")
    b'NOUN\\nVERB\\n'
    """
    check_file(path, what)
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
    """The lines of a UTF-8 text file, without their line ends.

    Parameters
    ----------
    path, what
        As for :func:`read_bytes` (plain, ``.gz``, ``.bz2`` or ``.xz``; what the
        file holds, for messages).

    Returns
    -------
    list of str
        One string per line (a BOM removed; ``\\r\\n`` and ``\\r`` end lines).

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`read_bytes`.

    Examples
    --------
    >>> from sparsecal.io.textfile import read_lines
    >>> with open("lines.txt", "wb") as f:
    ...     _ = f.write(b"\\xef\\xbb\\xbfNOUN\\r\\nVERB\\r\\n\\r\\n")
    >>> read_lines("lines.txt", "gold")
    ['NOUN', 'VERB', '']
    """
    text = read_bytes(path, what).decode("utf-8")
    lines = text.split("\n")
    if text.endswith("\n"):   # the newline ends the last line
        lines.pop()
    return lines
