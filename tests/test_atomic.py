"""Atomic replacement of files and directories (sparsecal/io/atomic.py), step by
step: the exchange, the two-rename fallback and its recovery after a kill,
leftovers of killed writers, errors naming the user's path."""
import errno
import os
import subprocess
import sys

import pytest

from sparsecal.io import atomic
from sparsecal.io.atomic import atomic_directory, atomic_path, exchange


def _write_dir(path, text):
    with atomic_directory(path, lambda p: True, "an output") as tmp:
        with open(os.path.join(tmp, "x.txt"), "w") as f:
            f.write(text)


def _dead_pid():
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(proc.stdout)


def test_exchange_swaps_two_directories(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "from_a").touch()
    if not exchange(str(a), str(b)):
        pytest.skip("this file system has no atomic exchange (the fallback is tested below)")
    assert os.listdir(a) == [] and os.listdir(b) == ["from_a"]


@pytest.mark.parametrize("can_exchange", [True, False])
def test_directory_replaced_whole_with_and_without_exchange(tmp_path, monkeypatch,
                                                            can_exchange):
    if not can_exchange:
        monkeypatch.setattr(atomic, "exchange", lambda a, b: False)
    out = tmp_path / "out"
    _write_dir(out, "old")
    _write_dir(out, "new")
    assert (out / "x.txt").read_text() == "new" and os.listdir(tmp_path) == ["out"]


@pytest.mark.parametrize("can_exchange", [True, False])
def test_a_failure_while_filling_keeps_the_old_directory(tmp_path, monkeypatch,
                                                         can_exchange):
    if not can_exchange:
        monkeypatch.setattr(atomic, "exchange", lambda a, b: False)
    out = tmp_path / "out"
    _write_dir(out, "old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_directory(out, lambda p: True, "an output") as tmp:
            (tmp_path / tmp / "x.txt").write_text("half")
            raise KeyboardInterrupt
    assert (out / "x.txt").read_text() == "old" and os.listdir(tmp_path) == ["out"]


def test_fallback_puts_the_old_back_when_the_second_rename_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "exchange", lambda a, b: False)
    out = tmp_path / "out"
    _write_dir(out, "old")
    real_rename, calls = os.rename, []

    def rename(src, dst):
        calls.append((src, dst))
        if len(calls) == 2:   # the new directory into place
            raise OSError(errno.EIO, "Input/output error")
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(OSError, match=f"cannot write {str(out)!r}: Input/output error"):
        _write_dir(out, "new")
    monkeypatch.setattr(os, "rename", real_rename)
    assert (out / "x.txt").read_text() == "old" and os.listdir(tmp_path) == ["out"]


def test_a_kill_between_the_fallback_renames_is_recovered(tmp_path):
    """What a kill between the two renames leaves (the old directory aside, no
    output): the next write puts the old one back first, then replaces it."""
    out = tmp_path / "out"
    aside = tmp_path / f".out.old-{_dead_pid()}-0a1b2c3d"
    aside.mkdir()
    (aside / "x.txt").write_text("old")
    stale = tmp_path / f".out.tmp-{_dead_pid()}-99999999"
    stale.mkdir()
    (stale / "x.txt").write_text("half")
    with atomic_directory(out, lambda p: True, "an output") as tmp:
        assert (out / "x.txt").read_text() == "old"   # recovered before anything else
        assert not stale.exists()                      # the killed writer's temporary
        (tmp_path / tmp / "x.txt").write_text("new")
    assert (out / "x.txt").read_text() == "new" and os.listdir(tmp_path) == ["out"]


def test_a_running_writers_temporary_is_left_alone(tmp_path):
    mine = tmp_path / f".out.txt.tmp-{os.getppid()}-12345678"   # a live process
    mine.write_text("someone else is writing")
    with atomic_path(tmp_path / "out.txt") as tmp:
        with open(tmp, "w") as f:
            f.write("done")
    assert mine.exists() and (tmp_path / "out.txt").read_text() == "done"


@pytest.mark.parametrize("code, text", [(errno.ENOSPC, "No space left on device"),
                                        (errno.EFBIG, "File too large")])
def test_write_errors_name_the_output_not_the_temporary(tmp_path, code, text):
    target = tmp_path / "out.npy"
    target.write_bytes(b"old")
    with pytest.raises(OSError) as info:
        with atomic_path(target, suffix=".npy") as tmp:
            raise OSError(code, os.strerror(code), tmp)
    assert info.value.errno == code
    assert str(info.value).endswith(f"cannot write {str(target)!r}: {text}")
    assert ".tmp-" not in str(info.value)
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["out.npy"]


def test_an_input_error_inside_is_not_blamed_on_the_output(tmp_path):
    with pytest.raises(FileNotFoundError, match="scores.npy"):
        with atomic_path(tmp_path / "out.npy"):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory",
                                    str(tmp_path / "scores.npy"))
    assert os.listdir(tmp_path) == []


def test_replacing_a_file_keeps_its_permissions(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    target.chmod(0o640)
    with atomic_path(target) as tmp:
        with open(tmp, "w") as f:
            f.write("new")
    assert target.read_text() == "new" and (target.stat().st_mode & 0o777) == 0o640


def test_a_file_where_a_directory_is_expected_is_refused_untouched(tmp_path):
    target = tmp_path / "out"
    target.write_text("my file")
    with pytest.raises(FileExistsError, match="exists and is not an output"):
        _write_dir(target, "new")
    assert target.read_text() == "my file" and os.listdir(tmp_path) == ["out"]


def test_a_read_only_output_is_replaced_and_stays_read_only(tmp_path):
    """The old file's mode is applied after writing: copied onto the temporary
    first, a read-only mode would stop the writer (as any non-root user)."""
    target = tmp_path / "out.txt"
    target.write_text("old")
    target.chmod(0o444)
    modes = []
    with atomic_path(target) as tmp:
        modes.append(os.stat(tmp).st_mode & 0o777)
        with open(tmp, "w") as f:
            f.write("new")
    assert modes[0] & 0o200   # writable while being written
    assert target.read_text() == "new" and (target.stat().st_mode & 0o777) == 0o444
