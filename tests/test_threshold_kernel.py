"""The threshold kernel's machinery (sparsecal/core/_threshold.pyx, _simd.h):
every instruction-set level, the worker thread (progress, Ctrl-C), and the
release of memory-mapped pages (issue 12: bounded memory on memory maps).

Values are checked against ``np.nonzero(scores >= t)`` (tests/test_threshold.py's
reference); the levels the CPU lacks are clamped to its best and said so.
"""
import resource
import sys
import threading

import numpy as np
import pytest

import sparsecal.core.entries as entries_mod
from sparsecal import threshold
from sparsecal.core import _threshold

from test_threshold import assert_matches, make_gold, make_scores, reference

DTYPES = [np.float32, np.float64]
LEVELS = [0, 1, 2]     # scalar, SSE2, AVX2


@pytest.fixture
def level(request):
    """Run the test at one instruction-set level, restore the best afterwards."""
    got = _threshold.simd_level(request.param)
    yield got
    _threshold.simd_level(-1)


@pytest.mark.parametrize("level", LEVELS, indirect=True)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n_tags", [1, 2, 3, 7, 8, 9, 63, 64, 65, 127, 130, 426, 511,
                                    512, 513, 1100])
def test_every_level_matches_reference(level, dtype, n_tags):
    # widths around the vector lanes (2/4/8), the 64-bit mask word and the
    # 512-column segment: every tail path of every level
    rng = np.random.default_rng(n_tags)
    s = make_scores(rng, 37, n_tags, dtype)
    gold = make_gold(rng, 37, n_tags)
    for t in (0.0, 0.01, 0.5, 1.0):
        assert_matches(threshold(s, gold, t), reference(s, gold, t), dtype)


@pytest.mark.parametrize("level", LEVELS, indirect=True)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bad", [np.nan, -np.inf, np.inf, -1e-30, 1.0000001])
@pytest.mark.parametrize("col", [0, 3, 7, 8, 62, 63, 64, 100, 511, 512, 514])
def test_every_level_finds_bad_values(level, dtype, bad, col):
    s = np.full((5, 515), 0.001, dtype=dtype)
    s[3, col] = bad
    if s[3, col] <= 1 and s[3, col] >= 0:      # 1.0000001 rounds to 1 in float32
        pytest.skip(f"{bad!r} is a valid {np.dtype(dtype).name} probability")
    with pytest.raises(ValueError, match=rf"scores\[3, {col}\]"):
        threshold(s, np.zeros(5, dtype=np.int64))


def test_levels_are_clamped_to_the_cpu():
    best = _threshold.simd_level(-1)
    assert best in LEVELS
    assert _threshold.simd_level(99) == best
    assert _threshold.simd_level(0) == 0
    assert _threshold.simd_level(-1) == best
    if sys.platform.startswith("linux") and best < 2:
        with open("/proc/cpuinfo") as f:
            assert " avx2" not in f.read(), "the CPU has AVX2 but the kernel did not pick it"


# --------------------------------------------------------------------------- #
# The worker thread: progress and cancellation                                 #
# --------------------------------------------------------------------------- #

def test_progress_from_the_worker_thread(monkeypatch):
    monkeypatch.setattr(entries_mod, "_THREAD_BYTES", 0)
    monkeypatch.setattr(entries_mod, "_CHUNK_BYTES", 64)
    rng = np.random.default_rng(1)
    s = make_scores(rng, 400, 30, np.float32)
    gold = make_gold(rng, 400, 30)
    calls = []
    e = threshold(s, gold, progress=lambda done, total: calls.append((done, total)),
                  n_threads=2)
    assert_matches(e, reference(s, gold), np.float32)
    assert calls[-1] == (400, 400)
    assert all(t == 400 and 0 <= d <= 400 for d, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_interrupt_cancels_the_scan_and_leaves_no_thread(monkeypatch):
    monkeypatch.setattr(entries_mod, "_THREAD_BYTES", 0)
    s = np.full((2000, 50), 0.02)

    def interrupt(done, total):
        raise KeyboardInterrupt

    before = threading.active_count()
    with pytest.raises(KeyboardInterrupt):
        threshold(s, np.zeros(2000, dtype=np.int64), progress=interrupt)
    assert threading.active_count() == before


def test_cancelled_scan_reports_it():
    survivors = _threshold.Survivors(2, 8)
    survivors.cancel()
    s = np.full((100, 10), 0.5)
    assert survivors.scan(s, np.zeros(100, dtype=np.int64), 0.01, 10, 0, False) == -2


def test_worker_errors_reach_the_caller(monkeypatch):
    monkeypatch.setattr(entries_mod, "_THREAD_BYTES", 0)
    s = np.full((300, 20), 0.3, dtype=np.float32)
    s[250, 4] = np.nan
    with pytest.raises(ValueError, match=r"scores\[250, 4\] = nan is NaN"):
        threshold(s, np.zeros(300, dtype=np.int64))


def test_gather_checks_output_sizes():
    survivors = _threshold.Survivors(1, 8)
    s = np.full((3, 4), 0.5)
    assert survivors.scan(s, np.zeros(3, dtype=np.int64), 0.01, 2, 0, False) == -1
    assert survivors.size == 12
    with pytest.raises(ValueError, match="exactly the survivors"):
        survivors.gather(np.empty(11), np.empty(11, np.int32), np.empty(11, np.uint8),
                         np.empty(11, np.int64))


# --------------------------------------------------------------------------- #
# Memory maps: pages are released, data is not                                 #
# --------------------------------------------------------------------------- #

def _mapping_rss_kib(path):
    """Resident KiB of this process's mappings of ``path`` (Linux smaps)."""
    total, inside = 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            first = line.split(maxsplit=1)[0]
            if "-" in first and not first.endswith(":"):   # a mapping's header line
                inside = line.rstrip().endswith(str(path))
            elif inside and first == "Rss:":
                total += int(line.split()[1])
    return total


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="page release (madvise) and smaps are Linux-only")


@linux_only
@pytest.mark.parametrize("mode", ["r", "r+"])
@pytest.mark.parametrize("n_threads, chunk_bytes", [(1, 1 << 20), (2, 1 << 20), (2, 100_000)])
def test_memmap_pages_are_released(tmp_path, monkeypatch, mode, n_threads, chunk_bytes):
    # chunks finish out of order with two threads: pages are still released
    # in order, else a reader maps a shared page (or a large folio) again
    monkeypatch.setattr(entries_mod, "_CHUNK_BYTES", chunk_bytes)
    rng = np.random.default_rng(2)
    s = make_scores(rng, 4096, 512, np.float32)        # 8 MiB
    gold = make_gold(rng, 4096, 512)
    path = tmp_path / "scores.npy"
    np.save(path, s)
    mm = np.load(path, mmap_mode=mode)
    np.asarray(mm).sum()                                 # every page resident
    assert _mapping_rss_kib(path) >= 8 * 1024 - 8
    e = threshold(mm, gold, 0.01, n_threads=n_threads)
    assert_matches(e, reference(s, gold), np.float32)
    # what stays: the page of the .npy header and the last page
    assert _mapping_rss_kib(path) <= 2 * resource.getpagesize() // 1024
    np.testing.assert_array_equal(mm, s)                 # the data is untouched


@linux_only
@pytest.mark.parametrize("n_threads", [1, 2])
def test_byte_swapped_memmap_pages_are_released(tmp_path, monkeypatch, n_threads):
    # another byte order: converted 64 MiB at a time (here 1 MiB), and the
    # file's pages are given back once a block is copied
    monkeypatch.setattr(entries_mod, "_BLOCK_BYTES", 1 << 20)
    rng = np.random.default_rng(4)
    s = make_scores(rng, 4096, 512, np.float32)
    gold = make_gold(rng, 4096, 512)
    path = tmp_path / "scores.npy"
    np.save(path, s.astype(">f4"))
    mm = np.load(path, mmap_mode="r")
    assert mm.dtype == np.dtype(">f4")
    e = threshold(mm, gold, 0.01, n_threads=n_threads)
    assert_matches(e, reference(s, gold), np.float32)
    assert _mapping_rss_kib(path) <= 2 * resource.getpagesize() // 1024
    np.testing.assert_array_equal(mm, s)


@linux_only
def test_private_and_anonymous_memory_is_never_released(tmp_path):
    rng = np.random.default_rng(3)
    s = make_scores(rng, 2048, 512, np.float32)
    gold = make_gold(rng, 2048, 512)
    path = tmp_path / "scores.npy"
    np.save(path, s)
    cow = np.load(path, mmap_mode="c")                   # copy-on-write: changes in memory
    cow[::7] = np.float32(0.75)
    expected = np.array(cow)
    assert_matches(threshold(cow, gold, 0.01), reference(expected, gold), np.float32)
    np.testing.assert_array_equal(cow, expected)         # the changes survive
    mem = np.array(s)
    threshold(mem, gold, 0.01)
    np.testing.assert_array_equal(mem, s)


def test_shared_file_map_detection(tmp_path):
    path = tmp_path / "scores.npy"
    np.save(path, np.full((4, 4), 0.5))
    shared = entries_mod._is_shared_file_map
    assert shared(np.load(path, mmap_mode="r"))
    assert shared(np.load(path, mmap_mode="r+")[1:])
    assert shared(np.asarray(np.load(path, mmap_mode="r")))
    assert not shared(np.load(path, mmap_mode="c"))
    assert not shared(np.load(path))
