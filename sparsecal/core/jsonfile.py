"""Reading small JSON files (training counts, tag indices, saved metadata) safely.

One reader for every JSON input, so each refuses, naming the file: a directory,
a file over a size cap, text that is not UTF-8, invalid JSON, ``NaN``/``Infinity``,
a key written twice in one object, nesting that would exhaust the parser's
recursion, and a top-level value of the wrong kind.
"""
import json
import os

from .validation import check_input_file

__all__ = ["MAX_JSON_BYTES", "read_json"]

#: Largest JSON input read (bytes). A tag index or count file of a million tags
#: is tens of megabytes; anything far larger is not one of our files.
MAX_JSON_BYTES = 256 << 20


_JSON_NAMES = {dict: "a JSON object", list: "a JSON array", str: "a string", int: "a number",
               float: "a number", bool: "a boolean", type(None): "null"}


def _no_constants(name):
    raise ValueError(f"the non-standard constant {name} is not allowed")


def _unique_keys(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def read_json(path, what, *, kind=dict, max_bytes=MAX_JSON_BYTES):
    """Parse a JSON file whose top-level value must be a ``kind``; ``what`` names
    the file's content in messages, ``max_bytes`` caps its size.
    """
    name = os.fspath(path)
    check_input_file(name, what)
    try:
        size = os.path.getsize(name)
        if size > max_bytes:
            raise ValueError(f"{what} file {name!r} is {size:,} bytes, larger than the "
                             f"{max_bytes:,} a {what} file may have")
        with open(name, "rb") as f:
            raw = f.read(max_bytes + 1)
    except OSError as exc:
        raise ValueError(f"cannot read {what} file {name!r}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{what} file {name!r} is not UTF-8 text: {exc}") from None
    try:
        data = json.loads(text, parse_constant=_no_constants,
                          object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} file {name!r} is not valid JSON: {exc}") from None
    except ValueError as exc:   # from the hooks above
        raise ValueError(f"{what} file {name!r} is not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"{what} file {name!r} is nested too deeply to be a {what} "
                         "file") from None
    if not isinstance(data, kind):
        wanted, got = _JSON_NAMES[kind], _JSON_NAMES[type(data)]
        raise ValueError(f"{what} file {name!r} must hold {wanted}, got {got}")
    return data
