"""Memory-mapped scores read with ``pread`` (sparsecal/core/entries.py:
_FileSource; the kernel's ``scan(fd=...)``): the file under a shared map is
read into small per-thread buffers, so a scan maps no page of it; only a file
proved to be the one mapped (device, inode and offset from /proc/self/maps) is
read that way, anything else through the map as before."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import sparsecal.core.entries as entries_mod
from sparsecal import threshold

from test_threshold import assert_matches, make_gold, make_scores, reference
from test_threshold_kernel import _mapping_rss_kib, linux_only

pytestmark = linux_only


@pytest.fixture
def saved(tmp_path):
    rng = np.random.default_rng(7)
    s = make_scores(rng, 3001, 173, np.float32)
    gold = make_gold(rng, 3001, 173)
    path = tmp_path / "scores.npy"
    np.save(path, s)
    return path, s, gold


def _sources(monkeypatch):
    """Record every _FileSource made."""
    made = []
    of = entries_mod._FileSource.of.__func__

    def spy(cls, scores):
        source = of(cls, scores)
        made.append(source)
        return source
    monkeypatch.setattr(entries_mod._FileSource, "of", classmethod(spy))
    return made


@pytest.mark.parametrize("rows", [slice(None), slice(5, None), slice(17, 2003),
                                  slice(3000, None)])
def test_source_is_the_mapped_file_at_the_right_offset(saved, rows):
    path, s, _ = saved
    view = np.load(path, mmap_mode="r")[rows]
    source = entries_mod._FileSource.of(view)
    try:
        assert os.path.samefile(source.path, path)
        assert os.pread(source.fd, view.nbytes, source.offset) == s[rows].tobytes()
    finally:
        source.close()


@pytest.mark.parametrize("n_threads, chunk_bytes, read_bytes", [
    (1, 1 << 20, 1 << 18), (2, 1 << 20, 1 << 20), (2, 1 << 20, 1), (3, 10_000, 10_000),
    (3, 10_000, 5_000), (2, 1, 1 << 18), (2, 50_000, 20_000)])
@pytest.mark.parametrize("mode", ["r", "r+"])
def test_read_with_pread_equals_reading_memory(saved, monkeypatch, n_threads,
                                               chunk_bytes, read_bytes, mode):
    """Chunks read whole or in pieces of whole rows (one row; the last piece of a
    chunk shorter)."""
    path, s, gold = saved
    monkeypatch.setattr(entries_mod, "_CHUNK_BYTES", chunk_bytes)
    monkeypatch.setattr(entries_mod, "_READ_BYTES", read_bytes)
    made = _sources(monkeypatch)
    mm = np.load(path, mmap_mode=mode)
    for rows in (slice(None), slice(11, 2999)):
        e = threshold(mm[rows], gold[rows], 0.01, n_threads=n_threads, token_offset=4)
        score, tag, label, token = reference(s[rows], gold[rows])
        assert_matches(e, (score, tag, label, token + 4), np.float32)
    assert len(made) == 2 and all(m is not None for m in made)


def test_a_scan_maps_no_page_of_the_file(saved):
    path, s, gold = saved
    mm = np.load(path, mmap_mode="r")
    threshold(mm, gold, 0.01, n_threads=2)
    assert _mapping_rss_kib(path) == 0
    np.testing.assert_array_equal(mm, s)


def test_replaced_file_is_read_through_the_map(saved, monkeypatch):
    """The name now holds another file: the map still shows the old one, which
    is what the caller's array holds, so it is read through the map."""
    path, s, gold = saved
    mm = np.load(path, mmap_mode="r")
    other = path.with_name("other.npy")
    np.save(other, np.zeros_like(s))
    os.replace(other, path)
    made = _sources(monkeypatch)
    e = threshold(mm, gold, 0.01)
    assert made == [None]
    assert_matches(e, reference(s, gold), np.float32)


def test_other_platforms_read_through_the_map(saved, monkeypatch):
    path, s, gold = saved
    monkeypatch.setattr(entries_mod.sys, "platform", "darwin")
    made = _sources(monkeypatch)
    e = threshold(np.load(path, mmap_mode="r"), gold, 0.01)
    assert made == [None]
    assert_matches(e, reference(s, gold), np.float32)


def test_memory_and_private_maps_are_not_read_from_a_file(saved, monkeypatch):
    path, s, gold = saved
    made = _sources(monkeypatch)
    threshold(np.load(path, mmap_mode="c"), gold, 0.01)
    threshold(np.load(path), gold, 0.01)
    assert made == []


def test_file_cut_short_raises_naming_it(saved):
    """Through the map, a file cut short after mapping kills the process with
    SIGBUS; read with pread it is one clear error (run apart, to be safe)."""
    path, _, _ = saved
    code = textwrap.dedent(f"""
        import os, numpy as np
        from sparsecal import threshold
        mm = np.load({str(path)!r}, mmap_mode="r")
        gold = np.zeros(mm.shape[0], dtype=np.int64)
        os.truncate({str(path)!r}, os.path.getsize({str(path)!r}) // 2)
        try:
            threshold(mm, gold, 0.01)
        except OSError as exc:
            print("OSError", exc.filename == {str(path)!r}, "cut short" in str(exc))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["OSError", "True", "True"]
