"""Atomic output: a kill at any instant leaves the complete old or the complete new.

Files: written to a temporary sibling (``.<name>.tmp-<pid>-<token>``), flushed to
disk, then renamed over the target (``os.replace``, atomic on POSIX and Windows).

Directories (a saved calibrator, a report): the new directory is written beside
the target, then the two are swapped in one step with ``renameat2(...,
RENAME_EXCHANGE)`` (Linux 3.15+; through glibc or the raw system call) or
``renamex_np(..., RENAME_SWAP)`` (macOS), and the old one, now at the temporary
name, is removed. Where the file system has no atomic exchange (some network
file systems, other platforms) the swap takes two renames: the old directory
first moves to ``.<name>.old-<pid>-<token>``. A kill between the two renames
leaves it there, whole; the next write to the same target puts it back first, so
no output is ever lost.

Temporaries left by a killed process (its pid no longer runs) are removed by the
next write to the same target. An error while writing (a full disk, a file-size
limit) removes the temporary, leaves the old output untouched, and is raised
naming the user's path, not the temporary one.
"""
import contextlib
import ctypes
import errno
import os
import platform
import secrets
import shutil
import sys

__all__ = ["atomic_directory", "atomic_path", "atomic_write_text", "exchange", "make_temp"]

#: errno values of a failed write that concern the output (not the input).
_WRITE_ERRORS = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EIO, errno.EROFS}
#: ``renameat2`` system call numbers, for a libc without the wrapper (glibc < 2.28).
_SYS_RENAMEAT2 = {"x86_64": 316, "aarch64": 276, "arm64": 276, "i686": 353, "i386": 353,
                  "armv7l": 382, "ppc64le": 357, "ppc64": 357, "s390x": 347,
                  "riscv64": 276}
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2   # Linux
_RENAME_SWAP = 2       # macOS


def _prefix(path, kind):
    name = os.path.basename(os.path.normpath(path))[:80]
    return f".{name}.{kind}-"


def make_temp(directory, prefix=".tmp-", suffix="", *, is_dir=False):
    """Create a new, uniquely named empty file (or directory) in ``directory``.

    Unlike ``tempfile.mkstemp``/``mkdtemp`` (private: 0o600/0o700) it gets the
    permissions ``open``/``mkdir`` would give (0o666/0o777 less the umask), which
    the rename then carries over to the output. The name holds this process's
    pid, so that a later run can tell a killed writer's leftovers.

    Parameters
    ----------
    directory : str
    prefix, suffix : str
    is_dir : bool, default=False

    Returns
    -------
    str
        The path created.

    Examples
    --------
    >>> import os
    >>> from sparsecal.io.atomic import make_temp
    >>> p = make_temp(".", ".out.npy.tmp-", ".npy")
    >>> os.path.basename(p).startswith(f".out.npy.tmp-{os.getpid()}-"), os.path.isfile(p)
    (True, True)
    >>> os.remove(p)
    """
    for _ in range(1000):
        path = os.path.join(directory,
                            f"{prefix}{os.getpid()}-{secrets.token_hex(4)}{suffix}")
        try:
            if is_dir:
                os.mkdir(path, 0o777)
            else:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"no free temporary name in {directory!r}")


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):   # another user's process: alive
        return True
    return True


def _leftovers(path, kind):
    """Siblings of ``path`` of ``kind`` ("tmp" or "old") whose writer is gone."""
    directory = os.path.dirname(os.path.abspath(path))
    prefix = _prefix(path, kind)
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    out = []
    for name in names:
        if name.startswith(prefix):
            pid = name[len(prefix):].split("-", 1)[0]
            if pid.isdigit() and int(pid) != os.getpid() and not _pid_alive(int(pid)):
                out.append(os.path.join(directory, name))
    return sorted(out)


def _recover(path):
    """Put back an old output a killed two-rename swap left aside, and remove the
    temporaries of killed writers."""
    olds = _leftovers(path, "old")
    if olds and not os.path.lexists(path):
        os.replace(olds[-1], path)
        olds = olds[:-1]
    for leftover in olds + _leftovers(path, "tmp"):
        if os.path.isdir(leftover) and not os.path.islink(leftover):
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.remove(leftover)


def _libc():
    import ctypes.util   # here only: files never need it (it imports subprocess)
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name, use_errno=True)
    except OSError:   # pragma: no cover - no C library to load
        return None


def exchange(a, b):
    """Swap the paths ``a`` and ``b`` in one atomic step, if the system can.

    Parameters
    ----------
    a, b : str
        Two existing paths on the same file system.

    Returns
    -------
    bool
        True if they were swapped; False if this platform or file system has no
        atomic exchange (nothing was changed then).

    Raises
    ------
    OSError
        For any other failure (e.g. permissions), naming both paths.

    Examples
    --------
    >>> import os
    >>> from sparsecal.io.atomic import exchange
    >>> os.makedirs("a"); os.makedirs("b"); open("a/x", "w").close()
    >>> swapped = exchange("a", "b")
    >>> swapped is False or (os.listdir("a"), os.listdir("b")) == ([], ["x"])
    True
    """
    libc = _libc()
    if libc is None:   # pragma: no cover
        return False
    fa, fb = os.fsencode(a), os.fsencode(b)
    if sys.platform == "darwin":   # pragma: no cover - exercised on macOS only
        func = getattr(libc, "renamex_np", None)
        if func is None:
            return False
        rc = func(fa, fb, ctypes.c_uint(_RENAME_SWAP))
    elif sys.platform.startswith("linux"):
        func = getattr(libc, "renameat2", None)
        if func is not None:
            rc = func(_AT_FDCWD, fa, _AT_FDCWD, fb, ctypes.c_uint(_RENAME_EXCHANGE))
        else:   # pragma: no cover - glibc < 2.28
            number = _SYS_RENAMEAT2.get(platform.machine())
            if number is None:
                return False
            rc = libc.syscall(number, _AT_FDCWD, fa, _AT_FDCWD, fb,
                              ctypes.c_uint(_RENAME_EXCHANGE))
    else:   # pragma: no cover
        return False
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, f"cannot exchange {a!r} and {b!r}: {os.strerror(err)}")


def _fsync(path, directory=False):
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    try:
        fd = os.open(path, flags)
    except OSError:   # pragma: no cover - e.g. directories on Windows
        return
    try:
        os.fsync(fd)
    except OSError:   # pragma: no cover - file systems without fsync on directories
        pass
    finally:
        os.close(fd)


def _named(exc, path, tmp):
    """``exc`` re-raised as naming ``path`` if it is a failure to write ``tmp``."""
    if isinstance(exc, OSError) and (exc.errno in _WRITE_ERRORS
                                     or (exc.filename and os.fspath(exc.filename) == tmp)):
        return OSError(exc.errno, f"cannot write {path!r}: "
                                  f"{exc.strerror or os.strerror(exc.errno or 0)}")
    return None


@contextlib.contextmanager
def atomic_path(path, suffix=""):
    """Yield a temporary path beside ``path``; on success it replaces ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        The output file.
    suffix : str, default=""
        Suffix of the temporary name (writers such as ``np.save`` add their
        extension when it is missing).

    Yields
    ------
    str
        The temporary path to write.

    Raises
    ------
    OSError
        A failure to write (a full disk, a file-size limit), naming ``path``;
        the temporary is removed and the old ``path`` is untouched.

    Examples
    --------
    >>> from sparsecal.io.atomic import atomic_path
    >>> with atomic_path("out.txt") as tmp:
    ...     with open(tmp, "w") as f:
    ...         _ = f.write("complete")
    >>> open("out.txt").read()
    'complete'
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    _recover(path)
    tmp = make_temp(directory, _prefix(path, "tmp"), suffix)
    try:
        yield tmp
        with contextlib.suppress(OSError):   # replacing a file keeps its mode (set after
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)   # writing: it may be read-only)
        _fsync(tmp)
        os.replace(tmp, path)
        _fsync(directory, directory=True)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        named = _named(exc, path, tmp)
        if named is not None:
            raise named from None
        raise


def atomic_write_text(path, text):
    """Write ``text`` (UTF-8) to ``path`` atomically.

    Parameters
    ----------
    path : str or os.PathLike
    text : str

    Returns
    -------
    None

    Examples
    --------
    >>> from sparsecal.io.atomic import atomic_write_text
    >>> atomic_write_text("note.txt", "hello")
    >>> open("note.txt").read()
    'hello'
    """
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)


@contextlib.contextmanager
def atomic_directory(path, replaceable, what):
    """Yield a new directory beside ``path`` to fill; on success it takes the
    place of ``path`` in one atomic step (see the module's description).

    Parameters
    ----------
    path : str or os.PathLike
        The output directory.
    replaceable : callable
        ``replaceable(path)`` is true for an existing ``path`` that may be
        replaced (one this package wrote); anything else is refused.
    what : str
        What the directory holds, for the refusal (``"a saved calibrator"``).

    Yields
    ------
    str
        The temporary directory to fill.

    Raises
    ------
    FileExistsError
        If ``path`` exists and is not replaceable, before anything is written.
    OSError
        A failure to write, naming ``path``; the temporary directory is removed
        and the old ``path`` is untouched.

    Examples
    --------
    >>> import os
    >>> from sparsecal.io.atomic import atomic_directory
    >>> for text in ("old", "new"):
    ...     with atomic_directory("out", lambda p: True, "an output") as tmp:
    ...         with open(os.path.join(tmp, "x.txt"), "w") as f:
    ...             _ = f.write(text)
    >>> open("out/x.txt").read(), [n for n in os.listdir(".") if n.startswith(".out")]
    ('new', [])
    """
    path = os.fspath(path)
    _recover(path)
    if os.path.lexists(path) and not (os.path.isdir(path) and replaceable(path)):
        raise FileExistsError(f"{path!r} exists and is not {what}: choose another "
                              "output path")
    directory = os.path.dirname(os.path.abspath(path))
    tmp = make_temp(directory, _prefix(path, "tmp"), is_dir=True)
    try:
        yield tmp
        for name in os.listdir(tmp):
            _fsync(os.path.join(tmp, name))
        _fsync(tmp, directory=True)
        if not os.path.lexists(path):
            os.rename(tmp, path)
        elif exchange(tmp, path):   # tmp now holds the old directory
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            old = make_temp(directory, _prefix(path, "old"), is_dir=True)
            os.rmdir(old)
            os.rename(path, old)
            try:
                os.rename(tmp, path)   # a kill before this line: _recover puts old back
            except BaseException:
                os.rename(old, path)
                raise
            shutil.rmtree(old, ignore_errors=True)
        _fsync(directory, directory=True)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        named = _named(exc, path, tmp)
        if named is not None:
            raise named from None
        raise
