"""Atomic file output: write to a temporary file beside the target, then rename,
so that a failure (or a kill) never leaves a half-written file at the target."""
import contextlib
import os
import secrets
import shutil

__all__ = ["atomic_directory", "atomic_path", "atomic_write_text", "make_temp"]


def make_temp(directory, prefix=".tmp-", suffix="", *, is_dir=False):
    """Create a new, uniquely named empty file (or directory) in ``directory``
    and return its path.

    Unlike ``tempfile.mkstemp``/``mkdtemp`` (private: 0o600/0o700) it gets the
    permissions ``open``/``mkdir`` would give (0o666/0o777 less the umask), which
    the rename then carries over to the output.
    """
    for _ in range(1000):
        path = os.path.join(directory, f"{prefix}{secrets.token_hex(4)}{suffix}")
        try:
            if is_dir:
                os.mkdir(path, 0o777)
            else:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free temporary name in {directory!r}")


@contextlib.contextmanager
def atomic_path(path, suffix=""):
    """Yield a temporary path in the target's directory; on success it replaces
    ``path``, on error it is removed."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    tmp = make_temp(directory, ".tmp-", suffix)
    try:
        with contextlib.suppress(OSError):   # replacing a file keeps its mode
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
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


@contextlib.contextmanager
def atomic_directory(path, replaceable, what):
    """Yield a new temporary directory beside ``path`` to fill; on success it
    takes the place of ``path``, on error it is removed.

    An existing ``path`` is replaced only if ``replaceable(path)`` is true (else
    ``FileExistsError`` naming ``what``, before anything is written); if the final
    rename fails, the earlier directory is put back.
    """
    path = os.fspath(path)
    if os.path.exists(path) and not replaceable(path):
        raise FileExistsError(f"{path!r} exists and is not {what}: choose another "
                              "output path")
    tmp = make_temp(os.path.dirname(os.path.abspath(path)), ".tmp-dir-", is_dir=True)
    try:
        yield tmp
        if os.path.exists(path):
            old = tmp + "-old"
            os.replace(path, old)
            try:
                os.replace(tmp, path)
            except BaseException:
                os.replace(old, path)
                raise
            shutil.rmtree(old)
        else:
            os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
