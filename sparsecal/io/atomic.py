"""Atomic output: a kill at any instant leaves the complete old or the complete new.

Files are written to a temporary sibling (``.<name>.tmp-<pid>-<token>``),
flushed, and renamed over the target. Directories are written beside the target
and swapped with it in one step (``renameat2(RENAME_EXCHANGE)`` on Linux,
``renamex_np(RENAME_SWAP)`` on macOS); without an atomic exchange the old
directory is first renamed to ``.<name>.old-<pid>-<token>``, and the next write
puts it back if a kill fell between the two renames. The next write also removes
the temporaries of killed writers. A failed write removes its temporary, leaves
the old output untouched, and is raised naming the user's path. An output path
that writing would destroy something through (an input, a device, a FIFO) is
refused before anything is written (:func:`check_output`).
"""
import contextlib
import ctypes
import errno
import os
import platform
import secrets
import shutil
import stat
import sys

from ..core.validation import file_kind

__all__ = ["atomic_directory", "atomic_path", "atomic_write_text", "check_output",
           "exchange", "make_temp"]

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
    """Create a new, uniquely named empty file (or directory) in ``directory``, named
    with this process's pid and with the permissions ``open``/``mkdir`` would give
    (not ``mkstemp``'s private ones), which the rename carries to the output.
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


def check_output(path, name="output", inputs=(), *, is_dir=None):
    """Refuse, with a ValueError naming ``name`` and ``path``, an output path that
    cannot be written or that writing would destroy something through: one whose
    directory does not exist, an existing path that is not a
    regular file or a directory (a device, a FIFO, a socket: it would be
    replaced by a file) or not of the kind ``is_dir`` asks (None: either), or
    one of ``inputs`` (``(name, path)`` pairs, ``name`` as "the input --scores":
    the same file, through links; an input inside the output, which replacing
    the output removes).
    """
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
    except OSError:   # nothing there (or a dangling link, which is replaced)
        mode = None
    directory = os.path.dirname(os.path.abspath(path))
    if mode is None and not os.path.isdir(directory):
        raise ValueError(f"{name} {path!r}: directory {directory!r} does not exist")
    kinds = {None: (stat.S_ISREG, stat.S_ISDIR), True: (stat.S_ISDIR,),
             False: (stat.S_ISREG,)}[is_dir]
    if mode is not None and not any(ok(mode) for ok in kinds):
        wanted = {None: "a file or directory", True: "a directory", False: "a file"}[is_dir]
        raise ValueError(f"{name} {path!r} is {file_kind(mode)}, not {wanted}: choose "
                         "another output path")
    real = os.path.realpath(path)
    for input_name, input_path in inputs:
        other = os.path.realpath(input_path)
        same = real == other or (mode is not None and os.path.exists(input_path)
                                 and os.path.samefile(path, input_path))
        if same or (other != real and os.path.commonpath([real, other]) == real):
            raise ValueError(f"{name} {path!r} {'is' if same else 'holds'} {input_name} "
                             f"{input_path!r}: choose another output path")


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
    """Put back an old output a killed two-rename swap left aside; remove the
    temporaries of killed writers.
    """
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
    """Swap the paths ``a`` and ``b`` atomically; False (nothing changed) where the
    system cannot.
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
    if isinstance(exc, OSError) and (exc.errno in _WRITE_ERRORS
                                     or (exc.filename and os.fspath(exc.filename) == tmp)):
        return OSError(exc.errno, f"cannot write {path!r}: "
                                  f"{exc.strerror or os.strerror(exc.errno or 0)}")
    return None


@contextlib.contextmanager
def atomic_path(path, suffix=""):
    """Yield a temporary path (ending in ``suffix``) beside ``path``; on success it
    replaces ``path``.
    """
    path = os.fspath(path)
    check_output(path, is_dir=False)
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
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)


@contextlib.contextmanager
def atomic_directory(path, replaceable, what):
    """Yield a new directory beside ``path`` to fill; on success it takes the place
    of ``path`` in one atomic step.

    An existing ``path`` must be ``replaceable(path)`` (one this package wrote),
    else a FileExistsError naming ``what`` it should hold, before anything is
    written.
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
