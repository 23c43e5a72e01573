"""Atomic file output: write to a temporary file beside the target, then rename,
so that a failure (or a kill) never leaves a half-written file at the target."""
import contextlib
import os
import tempfile

__all__ = ["atomic_path", "atomic_write_text"]


@contextlib.contextmanager
def atomic_path(path, suffix=""):
    """Yield a temporary path in the target's directory; on success it replaces
    ``path``, on error it is removed."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=suffix, dir=directory)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def atomic_write_text(path, text):
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
