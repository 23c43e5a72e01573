"""Results do not depend on dtype, byte order, memory layout, memory maps, thread
count or chunk size, and inputs are never modified (issue 11).

Property tests (hypothesis) over the core (threshold, bin statistics, isotonic
regression), the metrics and every registered calibrator. Float32 input is
compared with the float64 of the same float32 values: the core and the metrics
give identical results, calibrators give predictions equal up to the rounding
of the output to float32.

Bounded by default (``max_examples=30``); ``SPARSECAL_HYPOTHESIS_PROFILE=long``
runs 500 examples per test.
"""
import os
import tempfile
from contextlib import contextmanager
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sparsecal.calibration.registry import METHODS
from sparsecal.core import entries as entries_module
from sparsecal.core.binning import argsort_scores, bin_statistics, lookup_bins
from sparsecal.core.entries import Entries, threshold
from sparsecal.core.groups import TagGroups
from sparsecal.core.isotonic import isotonic_fit, isotonic_predict
from sparsecal.metrics import calibration_error, gmce, smce, top_label_ece

_LONG = os.environ.get("SPARSECAL_HYPOTHESIS_PROFILE") == "long"
SETTINGS = settings(max_examples=500 if _LONG else 30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.data_too_large])

THREADS = (1, 2, 3)


# -- strategies ------------------------------------------------------------ #

# float32 values in [0, 1] with many ties and the edge values 0, 1, 0.01.
_TIES = st.sampled_from([0.0, 1.0, 0.01, 0.5, 0.1, 0.3, 0.7, float(np.float32(0.01))])
_VALUE = st.one_of(st.floats(0, 1, width=32), _TIES)


@st.composite
def scores_labels(draw, min_size=1, max_size=200):
    n = draw(st.integers(min_size, max_size))
    x = draw(arrays(np.float32, n, elements=_VALUE))
    y = draw(arrays(np.uint8, n, elements=st.integers(0, 1)))
    return x, y


@st.composite
def score_matrix(draw):
    n_tokens, n_tags = draw(st.integers(1, 30)), draw(st.integers(1, 12))
    m = draw(arrays(np.float32, (n_tokens, n_tags), elements=_VALUE))
    gold = draw(arrays(np.int64, n_tokens, elements=st.integers(-1, n_tags - 1)))
    return m, gold


# -- variants of one input -------------------------------------------------- #

@contextmanager
def _memmap_of(a):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "a.npy")
        np.save(path, a)
        mm = np.load(path, mmap_mode="r")
        try:
            yield mm
        finally:
            del mm


def _strided(a):
    """The same values as a non-contiguous view (every other element of a larger array)."""
    big = np.zeros((a.shape[0] * 2,) + a.shape[1:], dtype=a.dtype)
    big[::2] = a
    return big[::2]


def variants(a32):
    """(name, array) pairs holding the values of the float32 array ``a32``."""
    a64 = a32.astype(np.float64)
    out = [("float32", a32), ("float64", a64), (">f4", a32.astype(">f4")),
           (">f8", a64.astype(">f8")), ("strided32", _strided(a32)),
           ("strided64", _strided(a64))]
    if a32.ndim == 2:
        out += [("fortran32", np.asfortranarray(a32)), ("fortran64", np.asfortranarray(a64)),
                ("fortran>f8", np.asfortranarray(a64.astype(">f8")))]
    return out


def _assert_same_values(got, want):
    """Equal as float64 values (float32 vs float64 of the same values compare exactly)."""
    np.testing.assert_array_equal(np.asarray(got, dtype=np.float64),
                                  np.asarray(want, dtype=np.float64))


def _check_unchanged(arrays_before):
    for a, before in arrays_before:
        np.testing.assert_array_equal(a, before)
        assert a.dtype == before.dtype


# -- core --------------------------------------------------------------------- #

@SETTINGS
@given(scores_labels(), st.sampled_from(["equal-mass", "fixed"]), st.integers(1, 300))
def test_bin_statistics_invariant(data, binning, n_bins):
    x32, y = data
    ref, *_ = bin_statistics(x32, y, binning=binning, n_bins=n_bins, n_threads=1)
    ref_perm = argsort_scores(x32, n_threads=1)[0]
    for name, x in variants(x32):
        before = [(x, x.copy()), (y, y.copy())]
        for t in THREADS:
            got, *_ = bin_statistics(x, y, binning=binning, n_bins=n_bins, n_threads=t)
            for field in ("count", "sum_score", "sum_label", "lower", "upper"):
                _assert_same_values(getattr(got, field), getattr(ref, field))
            np.testing.assert_array_equal(argsort_scores(x, n_threads=t)[0], ref_perm)
        _check_unchanged(before)
    with _memmap_of(x32) as mm:
        got, *_ = bin_statistics(mm, y, binning=binning, n_bins=n_bins, n_threads=2)
        _assert_same_values(got.sum_score, ref.sum_score)


@SETTINGS
@given(scores_labels(), arrays(np.float64, st.integers(0, 12), elements=st.floats(0, 1)))
def test_lookup_bins_invariant(data, boundaries):
    x32, _ = data
    boundaries = np.sort(boundaries)
    ref = np.searchsorted(boundaries, x32.astype(np.float64), side="right")
    for name, x in variants(x32):
        for t in THREADS:
            np.testing.assert_array_equal(lookup_bins(x, boundaries, n_threads=t), ref)
    np.testing.assert_array_equal(lookup_bins(x32, boundaries.astype(">f8")), ref)


@SETTINGS
@given(score_matrix(), st.sampled_from([0.0, float(np.float32(0.01)), 0.25, 0.5, 1.0]),
       st.sampled_from(["negatives", "drop"]), st.integers(1, 64))
def test_threshold_invariant(data, t, missing_gold, chunk_bytes):
    # Thresholds exactly representable in float32: scores are compared with the
    # threshold in their own dtype, so only then do float32 and float64 agree.
    m32, gold = data
    if missing_gold == "drop" and (gold < 0).all():
        gold = gold.copy()
        gold[0] = 0
    ref = threshold(m32, gold, t, missing_gold=missing_gold, n_threads=1)
    for name, m in variants(m32):
        before = [(m, m.copy()), (gold, gold.copy())]
        for n_threads in THREADS:
            # chunk size: the row chunk of the streaming loop, down to one row
            with mock.patch.object(entries_module, "_CHUNK_BYTES", chunk_bytes):
                got = threshold(m, gold, t, missing_gold=missing_gold, n_threads=n_threads)
            _assert_same_values(got.score, ref.score)
            for field in ("tag", "label", "token"):
                np.testing.assert_array_equal(getattr(got, field), getattr(ref, field))
            assert got.score.dtype.isnative
        _check_unchanged(before)
    with _memmap_of(m32) as mm:
        _assert_same_values(threshold(mm, gold, t, missing_gold=missing_gold).score, ref.score)
    # Streaming: row blocks with token_offset give the entries of the whole matrix.
    step = max(1, m32.shape[0] // 3)
    parts = [threshold(m32[r:r + step], gold[r:r + step], t, token_offset=r,
                       missing_gold=missing_gold) for r in range(0, m32.shape[0], step)]
    np.testing.assert_array_equal(np.concatenate([p.token for p in parts]), ref.token)
    _assert_same_values(np.concatenate([p.score for p in parts]), ref.score)


@SETTINGS
@given(scores_labels(min_size=1, max_size=150),
       st.one_of(st.none(), arrays(np.float64, 150, elements=st.sampled_from([0.0, 0.5, 1.0, 2.5]))),
       scores_labels())
def test_isotonic_invariant(data, w, test):
    x32, y = data
    if w is not None:
        w = w[:x32.shape[0]]
        if not (w > 0).any():
            w = None
    xk, yk = isotonic_fit(x32, y, w, n_threads=1)
    t32 = test[0]
    ref = isotonic_predict(t32.astype(np.float64), xk, yk, n_threads=1)
    for name, x in variants(x32):
        before = [(x, x.copy()), (y, y.copy())]
        for n_threads in THREADS:
            gk = isotonic_fit(x, y.astype(np.float64) if n_threads == 3 else y, w,
                              n_threads=n_threads)
            np.testing.assert_array_equal(gk[0], xk)
            np.testing.assert_array_equal(gk[1], yk)
        _check_unchanged(before)
    for name, t in variants(t32):
        for n_threads in THREADS:
            got = isotonic_predict(t, xk, yk, n_threads=n_threads)
            # computed in float64, rounded once to the input's width
            np.testing.assert_array_equal(got, ref.astype(got.dtype))


# -- metrics -------------------------------------------------------------------- #

@SETTINGS
@given(score_matrix(), st.integers(1, 15))
def test_metrics_invariant(data, n_bins):
    m32, gold = data
    e32 = threshold(m32, gold, 0.0)
    groups = TagGroups(np.arange(m32.shape[1]) % 2, 2) if m32.shape[1] > 1 \
        else TagGroups.scw(1)

    def metrics(e):
        return ([smce(e, n_bins=n_bins).value]
                + [g.value if g is not None else None for g in gmce(e, groups, n_bins=n_bins)]
                + [top_label_ece(e).value,
                   calibration_error(e.score, e.label, norm=1, n_bins=n_bins).value,
                   calibration_error(e.score, e.label, binning="fixed", n_bins=n_bins).value])

    ref = metrics(e32)
    for name, s in variants(e32.score):
        e = Entries(s, e32.tag, e32.label, e32.token, n_tags=e32.n_tags,
                    n_tokens=e32.n_tokens)
        for a, b in zip(metrics(e), ref):
            assert (a is None and b is None) or abs(a - b) <= 1e-6, name


# -- calibrators ------------------------------------------------------------------ #

@SETTINGS
@given(scores_labels(min_size=2, max_size=300), scores_labels(max_size=300),
       st.sampled_from(sorted(METHODS)), st.integers(1, 12))
def test_calibrators_invariant(dev, test, method, n_bins):
    x32, y = dev
    t32 = test[0]
    try:
        ref = METHODS[method].build(n_bins=n_bins).fit(x32.astype(np.float64), y)
    except ValueError as exc:
        # outside the method's domain (one class for the prior-weighted and Gaussian
        # methods, a zero variance): refused the same way whatever the dtype or layout
        for name, x in variants(x32):
            with pytest.raises(ValueError) as refused:
                METHODS[method].build(n_bins=n_bins).fit(x, y)
            assert str(refused.value) == str(exc), f"{method}: fit {name}"
        return
    want = ref.predict(t32.astype(np.float64))
    for name, x in variants(x32):
        before = [(x, x.copy()), (y, y.copy())]
        cal = METHODS[method].build(n_bins=n_bins).fit(x, y)
        _check_unchanged(before)
        for tname, t in variants(t32):
            t_before = t.copy()
            got = cal.predict(t)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-6,
                                       err_msg=f"{method}: fit {name}, predict {tname}")
            np.testing.assert_array_equal(t, t_before)


def test_scaling_binning_scales_in_float64():
    """A float32 score whose float32-rounded scaled value crosses a bin boundary
    got another bin's value (up to 0.65 apart) than the float64 of the same score."""
    cal = METHODS["scaling-binning"].build(n_bins=2)
    cal.x_knots_, cal.y_knots_ = np.array([0.0, 1.0]), np.array([0.0, 1.0 / 3.0])
    x = np.float32(0.7)   # scaled: 0.2333...; its float32 rounding lies above the boundary
    z64 = float(x) / 3.0
    z32 = float(np.float32(z64))
    assert z32 > z64
    cal.boundaries_ = np.array([(z64 + z32) / 2])
    cal.bin_values_ = np.array([0.1, 0.75])
    np.testing.assert_allclose(cal.predict(np.array([x])),
                               cal.predict(np.array([x], dtype=np.float64)), atol=1e-7)
    assert cal.predict(np.array([x]))[0] == np.float32(0.1)


# -- torch tensors ------------------------------------------------------------------ #

def test_cpu_tensors_accepted():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    m = rng.random((20, 6)).astype(np.float32)
    gold = rng.integers(0, 6, 20)
    ref = threshold(m, gold)
    got = threshold(torch.from_numpy(m), torch.from_numpy(gold))
    _assert_same_values(got.score, ref.score)
    np.testing.assert_array_equal(got.token, ref.token)
    x, y = ref.score, ref.label
    a, *_ = bin_statistics(torch.from_numpy(x), torch.from_numpy(y))
    b, *_ = bin_statistics(x, y)
    _assert_same_values(a.sum_score, b.sum_score)
    cal = METHODS["isotonic"].build().fit(torch.from_numpy(x), torch.from_numpy(y))
    np.testing.assert_array_equal(cal.predict(torch.from_numpy(x)), cal.predict(x))
