"""pytest-benchmark suite for sparsecal's compiled core.

Run (a few minutes at the default sizes, ~10^7 entries)::

    .venv/bin/python -m pytest benchmarks/bench_core.py --benchmark-only

Add the 10^8-entry sizes with ``SPARSECAL_BENCH_LARGE=1`` (needs ~8 GB of RAM
and tens of minutes). Each group (``--benchmark-group-by=group``, the default
here) holds sparsecal at ``n_threads=1`` and ``2`` and the NumPy / scikit-learn
way to get the same result, so pytest-benchmark's table compares them. Results
are checked against the baseline once, outside the timed calls.

The project's ``testpaths = ["tests"]`` keeps this file out of the normal test
run; it is collected only when named on the command line.
"""
import os

import numpy as np
import pytest

import _data
import sparsecal
from sparsecal.core import equal_mass_bins, fixed_width_bins, isotonic_fit, isotonic_predict
from binning import (argsort_scores, equal_mass_bin_starts,
                                    equal_mass_bins_sorted, lookup_bins)
from groups import partition_by_group

from _baselines import floor_count as _floor_count
from _baselines import numpy_threshold as _numpy_threshold

LARGE = os.environ.get("SPARSECAL_BENCH_LARGE", "") not in ("", "0")
T = 0.01
THREADS = [1, 2]

# Default sizes stay around 10^7 entries; the large ones are opt-in.
THRESHOLD_ROWS = [23_474] + ([234_742] if LARGE else [])      # x 426 = 1e7, 1e8
SORT_SIZES = [10**6, 10**7] + ([10**8] if LARGE else [])
ISO_SIZES = [10**6, 10**7] + ([10**8] if LARGE else [])
SKLEARN_MAX = 10**7          # scikit-learn baselines above this: compare_core.py


def _ids(prefix):
    return lambda n: f"{prefix}{n:.0e}".replace("+", "")


def _pedantic(benchmark, fn, rounds):
    """Slow calls: a fixed, small number of rounds instead of calibration."""
    return benchmark.pedantic(fn, rounds=rounds, iterations=1, warmup_rounds=0)


def _rounds(n):
    return 3 if n >= 10**7 else 5


# --------------------------------------------------------------------------- #
# Inputs (session cache: generated once per size)                              #
# --------------------------------------------------------------------------- #

_CACHE = {}


def _cached(key, make):
    if key not in _CACHE:
        _CACHE.clear() if len(_CACHE) > 4 else None   # bound memory at large sizes
        _CACHE[key] = make()
    return _CACHE[key]


def score_matrix(rows):
    return _cached(("scores", rows), lambda: _data.score_matrix(rows))


def flat_entries(n):
    return _cached(("flat", n), lambda: _data.flat_entries(n))


def iso_data(n):
    return _cached(("iso", n), lambda: _data.isotonic_data(n))


def iso_knots(n):
    x, y = iso_data(n)
    return _cached(("knots", n), lambda: isotonic_fit(x, y))


# --------------------------------------------------------------------------- #
# 1. threshold                                                                 #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("rows", THRESHOLD_ROWS, ids=_ids("rows"))
@pytest.mark.parametrize("n_threads", THREADS, ids=lambda t: f"sparsecal-nt{t}")
def test_threshold_sparsecal(benchmark, rows, n_threads):
    scores, gold = score_matrix(rows)
    benchmark.group = f"threshold {scores.size:.0e} entries"
    benchmark.extra_info.update(entries=scores.size, bytes=scores.nbytes)
    e = benchmark(sparsecal.threshold, scores, gold, T, n_threads=n_threads)
    ref = _numpy_threshold(scores, gold)
    for a, b in zip(ref, (e.score, e.tag, e.label, e.token)):
        np.testing.assert_array_equal(a, b)
    benchmark.extra_info["survivors"] = len(e)


@pytest.mark.parametrize("rows", THRESHOLD_ROWS, ids=_ids("rows"))
def test_threshold_numpy(benchmark, rows):
    scores, gold = score_matrix(rows)
    benchmark.group = f"threshold {scores.size:.0e} entries"
    benchmark(_numpy_threshold, scores, gold)


@pytest.mark.parametrize("rows", THRESHOLD_ROWS, ids=_ids("rows"))
def test_threshold_floor_count_nonzero(benchmark, rows):
    """Memory-bandwidth floor: one pass that only counts."""
    scores, _ = score_matrix(rows)
    benchmark.group = f"threshold {scores.size:.0e} entries"
    benchmark(_floor_count, scores)


@pytest.mark.parametrize("n_threads", THREADS, ids=lambda t: f"sparsecal-nt{t}")
def test_threshold_memmap_sparsecal(benchmark, tmp_path_factory, n_threads):
    """Memory-mapped input (page cache warm after the first round)."""
    rows = THRESHOLD_ROWS[0]
    path = tmp_path_factory.getbasetemp() / f"scores_{rows}.npy"
    scores, gold = score_matrix(rows)
    if not path.exists():
        np.save(path, scores)
    benchmark.group = f"threshold memmap {scores.size:.0e} entries"
    mm = np.load(path, mmap_mode="r")
    e = benchmark(sparsecal.threshold, mm, gold, T, n_threads=n_threads)
    assert len(e) == _floor_count(scores)


def test_threshold_memmap_numpy(benchmark, tmp_path_factory):
    rows = THRESHOLD_ROWS[0]
    path = tmp_path_factory.getbasetemp() / f"scores_{rows}.npy"
    scores, gold = score_matrix(rows)
    if not path.exists():
        np.save(path, scores)
    benchmark.group = f"threshold memmap {scores.size:.0e} entries"
    benchmark(_numpy_threshold, np.load(path, mmap_mode="r"), gold)


# --------------------------------------------------------------------------- #
# 2. stable argsort and equal-mass bins (threshold 0: every entry)             #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("n", SORT_SIZES, ids=_ids("n"))
@pytest.mark.parametrize("n_threads", THREADS, ids=lambda t: f"sparsecal-nt{t}")
def test_argsort_sparsecal(benchmark, n, n_threads):
    x, _ = flat_entries(n)
    benchmark.group = f"argsort float32 {n:.0e}"
    perm, xs = _pedantic(benchmark, lambda: argsort_scores(x, n_threads=n_threads),
                         _rounds(n))
    if n <= 10**7:
        np.testing.assert_array_equal(perm, np.argsort(x, kind="stable"))


@pytest.mark.parametrize("n", SORT_SIZES, ids=_ids("n"))
def test_argsort_numpy_stable(benchmark, n):
    x, _ = flat_entries(n)
    benchmark.group = f"argsort float32 {n:.0e}"
    _pedantic(benchmark, lambda: np.argsort(x, kind="stable"), _rounds(n))


def _numpy_equal_mass(x, y, n_bins=10):
    n = x.shape[0]
    perm = np.argsort(x, kind="stable")
    xs, ys = x[perm], y[perm]
    starts = np.arange(n_bins + 1, dtype=np.int64) * n // n_bins
    st = starts[:-1]
    return (np.diff(starts), np.add.reduceat(xs, st, dtype=np.float64),
            np.add.reduceat(ys, st, dtype=np.int64), xs[st], xs[starts[1:] - 1])


@pytest.mark.parametrize("n", SORT_SIZES, ids=_ids("n"))
@pytest.mark.parametrize("n_threads", THREADS, ids=lambda t: f"sparsecal-nt{t}")
def test_equal_mass_bins_sparsecal(benchmark, n, n_threads):
    x, y = flat_entries(n)
    benchmark.group = f"sort + 10 equal-mass bins {n:.0e}"
    b = _pedantic(benchmark,
                  lambda: equal_mass_bins(x, y, n_bins=10, n_threads=n_threads),
                  _rounds(n))
    if n <= 10**7:
        count, s_score, s_label, lower, upper = _numpy_equal_mass(x, y)
        np.testing.assert_array_equal(b.count, count)
        np.testing.assert_array_equal(b.sum_label, s_label)
        np.testing.assert_allclose(b.sum_score, s_score, rtol=1e-9)
        np.testing.assert_array_equal(b.lower, lower)
        np.testing.assert_array_equal(b.upper, upper)


@pytest.mark.parametrize("n", SORT_SIZES, ids=_ids("n"))
def test_equal_mass_bins_numpy(benchmark, n):
    x, y = flat_entries(n)
    benchmark.group = f"sort + 10 equal-mass bins {n:.0e}"
    _pedantic(benchmark, lambda: _numpy_equal_mass(x, y), _rounds(n))


@pytest.mark.parametrize("n", SORT_SIZES[:2], ids=_ids("n"))
def test_equal_mass_bin_stats_kernel(benchmark, n):
    """The statistics kernel alone, on already sorted scores (gather labels)."""
    x, y = flat_entries(n)
    perm, xs = argsort_scores(x)
    starts = equal_mass_bin_starts(n, n_bins=10)
    benchmark.group = f"equal-mass bin statistics (sorted input) {n:.0e}"
    benchmark(equal_mass_bins_sorted, xs, y, perm, starts)


@pytest.mark.parametrize("n", SORT_SIZES[:2], ids=_ids("n"))
def test_equal_mass_bin_stats_numpy(benchmark, n):
    x, y = flat_entries(n)
    perm, xs = argsort_scores(x)
    starts = equal_mass_bin_starts(n, n_bins=10)
    benchmark.group = f"equal-mass bin statistics (sorted input) {n:.0e}"
    benchmark(lambda: (np.add.reduceat(xs, starts[:-1], dtype=np.float64),
                       np.add.reduceat(y[perm], starts[:-1], dtype=np.int64)))


# --------------------------------------------------------------------------- #
# 3. fixed-width bins, bin lookup, partition by tag group                      #
# --------------------------------------------------------------------------- #

N_MISC = 10**7


def test_fixed_width_bins_sparsecal(benchmark):
    x, y = flat_entries(N_MISC)
    benchmark.group = f"fixed-width bins (10) {N_MISC:.0e}"
    benchmark(fixed_width_bins, x, y, n_bins=10)


def test_fixed_width_bins_numpy(benchmark):
    x, y = flat_entries(N_MISC)
    benchmark.group = f"fixed-width bins (10) {N_MISC:.0e}"

    def numpy_way():
        b = np.minimum((x * 10).astype(np.int64), 9)
        return (np.bincount(b, minlength=10), np.bincount(b, x, minlength=10),
                np.bincount(b, y, minlength=10))
    benchmark(numpy_way)


@pytest.mark.parametrize("n_threads", THREADS, ids=lambda t: f"sparsecal-nt{t}")
def test_lookup_bins_sparsecal(benchmark, n_threads):
    x, _ = flat_entries(N_MISC)
    bounds = np.quantile(x[:10**5].astype(np.float64), np.linspace(0, 1, 16)[1:-1])
    benchmark.group = f"lookup bins (15 boundaries) {N_MISC:.0e}"
    out = benchmark(lookup_bins, x, bounds, n_threads=n_threads)
    np.testing.assert_array_equal(out, np.searchsorted(bounds, x, side="right"))


def test_lookup_bins_numpy(benchmark):
    x, _ = flat_entries(N_MISC)
    bounds = np.quantile(x[:10**5].astype(np.float64), np.linspace(0, 1, 16)[1:-1])
    benchmark.group = f"lookup bins (15 boundaries) {N_MISC:.0e}"
    benchmark(np.searchsorted, bounds, x, side="right")


def _tags(n):
    scores, _ = score_matrix(THRESHOLD_ROWS[0])
    e = sparsecal.threshold(scores, np.zeros(scores.shape[0], np.int64), 0.0)
    return np.resize(e.tag, n)


def test_partition_by_group_sparsecal(benchmark):
    tag = _cached(("tags", N_MISC), lambda: _tags(N_MISC))
    groups = np.arange(_data.N_TAGS) % 7
    benchmark.group = f"partition by tag group (7 groups) {N_MISC:.0e}"
    perm, offsets = benchmark(partition_by_group, tag, groups)
    np.testing.assert_array_equal(perm, np.argsort(groups[tag], kind="stable"))


def test_partition_by_group_numpy(benchmark):
    tag = _cached(("tags", N_MISC), lambda: _tags(N_MISC))
    groups = np.arange(_data.N_TAGS) % 7
    benchmark.group = f"partition by tag group (7 groups) {N_MISC:.0e}"
    benchmark(lambda: np.argsort(groups[tag], kind="stable"))


# --------------------------------------------------------------------------- #
# 4. isotonic regression                                                        #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("n", ISO_SIZES, ids=_ids("n"))
@pytest.mark.parametrize("n_threads", THREADS, ids=lambda t: f"sparsecal-nt{t}")
def test_isotonic_fit_sparsecal(benchmark, n, n_threads):
    x, y = iso_data(n)
    benchmark.group = f"isotonic fit {n:.0e}"
    _pedantic(benchmark, lambda: isotonic_fit(x, y, n_threads=n_threads),
              _rounds(n))


@pytest.mark.parametrize("n", [s for s in ISO_SIZES if s <= SKLEARN_MAX], ids=_ids("n"))
def test_isotonic_fit_sklearn(benchmark, n):
    from sklearn.isotonic import IsotonicRegression
    x, y = iso_data(n)
    benchmark.group = f"isotonic fit {n:.0e}"
    m = _pedantic(benchmark, lambda: IsotonicRegression(
        y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(x, y), _rounds(n))
    xk, yk = iso_knots(n)
    np.testing.assert_allclose(m.X_thresholds_, xk, rtol=0, atol=0)
    np.testing.assert_allclose(m.y_thresholds_, yk, rtol=0, atol=1e-12)


@pytest.mark.parametrize("n", ISO_SIZES, ids=_ids("n"))
@pytest.mark.parametrize("n_threads", THREADS, ids=lambda t: f"sparsecal-nt{t}")
def test_isotonic_predict_sparsecal(benchmark, n, n_threads):
    x, _ = iso_data(n)
    xk, yk = iso_knots(n)
    benchmark.group = f"isotonic predict {n:.0e}"
    benchmark.extra_info["knots"] = len(xk)
    _pedantic(benchmark, lambda: isotonic_predict(x, xk, yk, n_threads=n_threads),
              _rounds(n))


@pytest.mark.parametrize("n", [s for s in ISO_SIZES if s <= SKLEARN_MAX], ids=_ids("n"))
def test_isotonic_predict_sklearn(benchmark, n):
    from sklearn.isotonic import IsotonicRegression
    x, y = iso_data(n)
    m = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(x, y)
    benchmark.group = f"isotonic predict {n:.0e}"
    p = _pedantic(benchmark, lambda: m.predict(x), _rounds(n))
    np.testing.assert_allclose(p, isotonic_predict(x, *iso_knots(n)),
                               rtol=0, atol=1e-12)
