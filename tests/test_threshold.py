"""Tests of ``sparsecal.threshold`` (docs/architecture.md, Semantics 1) against a NumPy reference.

Reference: ``np.nonzero(scores >= np.asarray(t, scores.dtype))`` gives the kept
entries in row-major (token, tag) order; label = (gold[token] == tag).
"""
import zlib

import numpy as np
import pytest

import sparsecal
import sparsecal.core.entries as entries_mod
from sparsecal import Entries, threshold

DTYPES = [np.float32, np.float64]


pytestmark = pytest.mark.usefixtures("one_thread_by_default")


# --------------------------------------------------------------------------- #
# Reference and helpers                                                        #
# --------------------------------------------------------------------------- #

def reference(scores, gold, t=0.01, missing_gold="negatives"):
    s = np.asarray(scores)
    gold = np.asarray(gold).astype(np.int64)
    rows, cols = np.nonzero(s >= np.asarray(t, s.dtype))
    score = s[rows, cols]
    tag = cols.astype(np.int32)
    label = (gold[rows] == cols).astype(np.uint8)
    token = rows.astype(np.int64)
    if missing_gold == "drop":
        keep = gold[rows] >= 0
        score, tag, label, token = score[keep], tag[keep], label[keep], token[keep]
    return score, tag, label, token


def assert_matches(e, ref, dtype):
    score, tag, label, token = ref
    assert isinstance(e, Entries)
    assert e.score.dtype == np.dtype(dtype)
    assert e.tag.dtype == np.int32
    assert e.label.dtype == np.uint8
    assert e.token.dtype == np.int64
    for arr in (e.score, e.tag, e.label, e.token):
        assert arr.ndim == 1 and arr.flags.c_contiguous
    assert len(e) == score.shape[0]
    np.testing.assert_array_equal(e.score, score)
    np.testing.assert_array_equal(e.tag, tag)
    np.testing.assert_array_equal(e.label, label)
    np.testing.assert_array_equal(e.token, token)
    # score is bit-identical (not just equal as numbers)
    assert e.score.tobytes() == np.ascontiguousarray(score, dtype=dtype).tobytes()


def make_scores(rng, n_tokens, n_tags, dtype, t=0.01):
    """Skewed random probabilities with exact 0, exact 1, heavy ties and values
    exactly at / just around the threshold (in the score dtype)."""
    s = (rng.random((n_tokens, n_tags)) ** 4).astype(dtype)
    flat = s.reshape(-1)
    n = flat.size
    tt = np.asarray(t, dtype)
    specials = np.array([0.0, -0.0, 1.0, tt, np.nextafter(tt, dtype(0)),
                         np.nextafter(tt, dtype(1)), 0.5, 0.25], dtype=dtype)
    specials = specials[(specials >= 0) & (specials <= 1)]
    k = max(1, n // 4)
    idx = rng.choice(n, size=min(k, n), replace=False)
    flat[idx] = rng.choice(specials, size=idx.size)
    return s


def make_gold(rng, n_tokens, n_tags, missing_fraction=0.2):
    gold = rng.integers(0, n_tags, size=n_tokens).astype(np.int64)
    gold[rng.random(n_tokens) < missing_fraction] = -1
    return gold


@pytest.fixture
def small_chunks(monkeypatch):
    """Force many row chunks (a few rows each) through the streaming loop."""
    monkeypatch.setattr(entries_mod, "_CHUNK_BYTES", 4096)


# --------------------------------------------------------------------------- #
# Agreement with the reference                                                 #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("t", [0.0, 1e-50, 0.01, 0.1, 0.25, 0.5, 0.9999, 1.0])
@pytest.mark.parametrize("shape", [(1, 1), (1, 37), (41, 1), (53, 17), (200, 426)])
def test_matches_reference(dtype, t, shape):
    seed = zlib.crc32(repr((np.dtype(dtype).char, t, shape)).encode())
    rng = np.random.default_rng(seed)
    s = make_scores(rng, *shape, dtype, t)
    gold = make_gold(rng, shape[0], shape[1])
    for missing in ("negatives", "drop"):
        e = threshold(s, gold, t, missing_gold=missing)
        assert_matches(e, reference(s, gold, t, missing), dtype)
        assert e.n_tags == shape[1] and e.n_tokens == shape[0] and e.threshold == t


@pytest.mark.parametrize("dtype", DTYPES)
def test_default_threshold_is_001(dtype):
    rng = np.random.default_rng(1)
    s = make_scores(rng, 30, 20, dtype, 0.01)
    gold = make_gold(rng, 30, 20)
    e = threshold(s, gold)
    assert e.threshold == 0.01
    assert_matches(e, reference(s, gold, 0.01), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_threshold_compared_in_score_dtype(dtype):
    # float32(0.01) < 0.01: a float32 score equal to float32(0.01) is kept, as
    # NumPy keeps it in ``scores >= 0.01``.
    tt = np.asarray(0.01, dtype)
    below = np.nextafter(tt, dtype(0))
    above = np.nextafter(tt, dtype(1))
    s = np.array([[below, tt, above, 0.0, 1.0]], dtype=dtype)
    e = threshold(s, [1], 0.01)
    np.testing.assert_array_equal(e.tag, [1, 2, 4])
    np.testing.assert_array_equal(e.label, [1, 0, 0])
    np.testing.assert_array_equal(e.token, [0, 0, 0])
    assert_matches(e, reference(s, [1], 0.01), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_threshold_zero_keeps_everything(dtype):
    rng = np.random.default_rng(2)
    s = make_scores(rng, 23, 9, dtype)
    gold = make_gold(rng, 23, 9)
    e = threshold(s, gold, 0.0)
    assert len(e) == s.size
    np.testing.assert_array_equal(e.score, s.ravel())
    np.testing.assert_array_equal(e.tag, np.tile(np.arange(9), 23))
    np.testing.assert_array_equal(e.token, np.repeat(np.arange(23), 9))
    np.testing.assert_array_equal(e.label, (gold[:, None] == np.arange(9)).ravel())


@pytest.mark.parametrize("dtype", DTYPES)
def test_threshold_one_keeps_only_exact_ones(dtype):
    s = np.array([[1.0, np.nextafter(dtype(1), dtype(0)), 0.0],
                  [0.3, 1.0, 1.0]], dtype=dtype)
    e = threshold(s, [0, 2], 1.0)
    np.testing.assert_array_equal(e.token, [0, 1, 1])
    np.testing.assert_array_equal(e.tag, [0, 1, 2])
    np.testing.assert_array_equal(e.label, [1, 0, 1])
    np.testing.assert_array_equal(e.score, [1, 1, 1])


@pytest.mark.parametrize("dtype", DTYPES)
def test_nothing_kept(dtype):
    s = np.full((7, 5), 0.001, dtype=dtype)
    e = threshold(s, np.zeros(7, dtype=np.int64), 0.5)
    assert len(e) == 0
    assert_matches(e, reference(s, np.zeros(7), 0.5), dtype)


def test_gold_under_threshold_is_dropped():
    # The gold entry under the threshold is dropped like any other entry.
    s = np.array([[0.005, 0.995], [0.6, 0.4]])
    e = threshold(s, [0, 0], 0.01)
    np.testing.assert_array_equal(e.token, [0, 1, 1])
    np.testing.assert_array_equal(e.tag, [1, 0, 1])
    np.testing.assert_array_equal(e.label, [0, 1, 0])


# --------------------------------------------------------------------------- #
# Gold -1                                                                       #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("dtype", DTYPES)
def test_missing_gold_negatives_vs_drop(dtype):
    s = np.array([[0.7, 0.3], [0.2, 0.8], [0.5, 0.5], [0.9, 0.1]], dtype=dtype)
    gold = np.array([0, -1, 1, -1])
    neg = threshold(s, gold, 0.15)
    np.testing.assert_array_equal(neg.token, [0, 0, 1, 1, 2, 2, 3])
    np.testing.assert_array_equal(neg.label, [1, 0, 0, 0, 0, 1, 0])
    drop = threshold(s, gold, 0.15, missing_gold="drop")
    np.testing.assert_array_equal(drop.token, [0, 0, 2, 2])
    np.testing.assert_array_equal(drop.tag, [0, 1, 0, 1])
    np.testing.assert_array_equal(drop.label, [1, 0, 0, 1])
    # token indices stay those of the dense matrix, n_tokens too
    assert drop.n_tokens == 4
    assert_matches(drop, reference(s, gold, 0.15, "drop"), dtype)


def test_all_gold_missing():
    rng = np.random.default_rng(3)
    s = make_scores(rng, 11, 6, np.float64)
    gold = np.full(11, -1)
    neg = threshold(s, gold, 0.01)
    assert len(neg) > 0 and neg.label.sum() == 0
    assert_matches(neg, reference(s, gold, 0.01), np.float64)
    drop = threshold(s, gold, 0.01, missing_gold="drop")
    assert len(drop) == 0
    assert_matches(drop, reference(s, gold, 0.01, "drop"), np.float64)


@pytest.mark.parametrize("gold_dtype", [np.int8, np.int16, np.int32, np.int64,
                                        np.uint8, np.uint16, np.uint32, np.uint64])
def test_gold_integer_dtypes(gold_dtype):
    rng = np.random.default_rng(4)
    s = make_scores(rng, 40, 7, np.float64)
    gold = rng.integers(0, 7, size=40)
    if np.issubdtype(gold_dtype, np.signedinteger):
        gold[::5] = -1
    e = threshold(s, gold.astype(gold_dtype), 0.01)
    assert_matches(e, reference(s, gold, 0.01), np.float64)


# --------------------------------------------------------------------------- #
# Chunking, memory maps, layouts, threads                                      #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("chunk_bytes", [1, 200, 1000, 1 << 16])
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_many_chunks_equal_one_chunk(monkeypatch, dtype, chunk_bytes, n_threads):
    # chunk_bytes=1: one row per chunk (a row is larger than the chunk size)
    rng = np.random.default_rng(5)
    s = make_scores(rng, 67, 31, dtype)
    gold = make_gold(rng, 67, 31)
    whole = threshold(s, gold, 0.01, n_threads=n_threads)
    monkeypatch.setattr(entries_mod, "_CHUNK_BYTES", chunk_bytes)
    chunked = threshold(s, gold, 0.01, n_threads=n_threads)
    ref = reference(s, gold, 0.01)
    assert_matches(whole, ref, dtype)
    assert_matches(chunked, ref, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_output_growth_across_chunks(monkeypatch, dtype):
    # More survivors than the initial output capacity (2**16 here): the output
    # arrays must grow between chunks without losing entries.
    monkeypatch.setattr(entries_mod, "_CHUNK_BYTES", 30000)
    rng = np.random.default_rng(6)
    s = make_scores(rng, 310, 300, dtype)
    gold = make_gold(rng, 310, 300)
    for t, n_threads in ((0.0, 2), (1e-4, 1)):
        e = threshold(s, gold, t, n_threads=n_threads)
        assert_matches(e, reference(s, gold, t), dtype)
    assert len(threshold(s, gold, 0.0)) == 310 * 300 > 1 << 16


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_memmap_many_chunks(tmp_path, small_chunks, dtype, order):
    rng = np.random.default_rng(7)
    s = make_scores(rng, 301, 23, dtype)
    if order == "F":
        s = np.asfortranarray(s)
    gold = make_gold(rng, 301, 23)
    np.save(tmp_path / "scores.npy", s)
    np.save(tmp_path / "gold.npy", gold)
    mm = np.load(tmp_path / "scores.npy", mmap_mode="r")
    gm = np.load(tmp_path / "gold.npy", mmap_mode="r")
    assert isinstance(mm, np.memmap) and not mm.flags.writeable
    assert mm.flags.f_contiguous == (order == "F")
    for n_threads in (1, 2):
        e_mm = threshold(mm, gm, 0.01, n_threads=n_threads)
        e_mem = threshold(s, gold, 0.01, n_threads=n_threads)
        assert_matches(e_mm, reference(s, gold, 0.01), dtype)
        assert_matches(e_mem, reference(s, gold, 0.01), dtype)
    np.testing.assert_array_equal(np.asarray(mm), s)


def test_memmap_larger_than_real_chunk(tmp_path):
    """The one large test: a read-only memory map of ~10 MiB (> _CHUNK_BYTES)
    with the real chunk size."""
    rng = np.random.default_rng(8)
    n_tokens, n_tags = 6200, 426
    logits = rng.standard_normal((n_tokens, n_tags), dtype=np.float32) * 3
    s = np.exp(logits - logits.max(axis=1, keepdims=True))
    s /= s.sum(axis=1, keepdims=True)
    s[::97, 5] = np.float32(0.01)   # exact threshold values
    assert s.dtype == np.float32 and s.nbytes > entries_mod._CHUNK_BYTES
    gold = make_gold(rng, n_tokens, n_tags, missing_fraction=0.05)
    path = tmp_path / "big.npy"
    np.save(path, s)
    mm = np.load(path, mmap_mode="r")
    assert not mm.flags.writeable
    ref = reference(s, gold, 0.01)
    for n_threads in (1, 2):
        assert_matches(threshold(mm, gold, 0.01, n_threads=n_threads), ref, np.float32)
    assert_matches(threshold(s, gold, 0.01), ref, np.float32)
    drop_ref = reference(s, gold, 0.01, "drop")
    assert_matches(threshold(mm, gold, 0.01, missing_gold="drop"), drop_ref,
                   np.float32)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["fortran", "row_step", "col_step", "col_slice",
                                    "reversed", "transposed"])
def test_non_contiguous_input(small_chunks, dtype, layout):
    rng = np.random.default_rng(9)
    base = make_scores(rng, 120, 60, dtype)
    s = {"fortran": np.asfortranarray(base),
         "row_step": base[::3],
         "col_step": base[:, ::4],
         "col_slice": base[5:, 7:50],
         "reversed": base[::-1, ::-2],
         "transposed": base.T}[layout]
    assert not s.flags.c_contiguous
    gold = make_gold(rng, s.shape[0], s.shape[1])
    ref = reference(s, gold, 0.01)
    for n_threads in (1, 2):
        assert_matches(threshold(s, gold, 0.01, n_threads=n_threads), ref, dtype)
    # same result as a contiguous copy
    assert_matches(threshold(np.ascontiguousarray(s), gold, 0.01), ref, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_non_contiguous_gold(small_chunks, dtype):
    rng = np.random.default_rng(10)
    s = make_scores(rng, 50, 8, dtype)
    gold_base = np.stack([make_gold(rng, 50, 8), make_gold(rng, 50, 8)], axis=1)
    gold = gold_base[:, 1]               # int64, stride 16 bytes
    assert not gold.flags.c_contiguous
    for missing in ("negatives", "drop"):
        assert_matches(threshold(s, gold, 0.01, missing_gold=missing),
                       reference(s, gold, 0.01, missing), dtype)
    gold32 = np.asarray(gold_base, dtype=np.int32)[::-1, 0][::-1]
    assert not gold32.flags.c_contiguous
    assert_matches(threshold(s, gold32, 0.01), reference(s, gold32, 0.01), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_threads_identical(dtype):
    rng = np.random.default_rng(11)
    s = make_scores(rng, 333, 47, dtype)
    gold = make_gold(rng, 333, 47)
    results = [threshold(s, gold, 0.01, n_threads=k) for k in (1, 2, 3, 8)]
    for e in results[1:]:
        for a, b in zip((e.score, e.tag, e.label, e.token),
                        (results[0].score, results[0].tag, results[0].label,
                         results[0].token)):
            assert a.tobytes() == b.tobytes()


def test_n_threads_env(monkeypatch):
    rng = np.random.default_rng(12)
    s = make_scores(rng, 20, 5, np.float64)
    gold = make_gold(rng, 20, 5)
    monkeypatch.setenv("SPARSECAL_NUM_THREADS", "2")
    assert_matches(threshold(s, gold), reference(s, gold), np.float64)
    monkeypatch.delenv("SPARSECAL_NUM_THREADS")   # all CPUs of this process
    assert_matches(threshold(s, gold), reference(s, gold), np.float64)
    with pytest.raises(ValueError, match="n_threads"):
        threshold(s, gold, n_threads=0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_caller_arrays_unmodified(small_chunks, dtype):
    rng = np.random.default_rng(13)
    s = make_scores(rng, 64, 12, dtype)
    gold = make_gold(rng, 64, 12)
    s_copy, gold_copy = s.copy(), gold.copy()
    s.flags.writeable = False
    gold.flags.writeable = False
    e = threshold(s, gold, 0.01, missing_gold="drop")
    np.testing.assert_array_equal(s, s_copy)
    np.testing.assert_array_equal(gold, gold_copy)
    # the entries do not alias the caller's memory
    for arr in (e.score, e.tag, e.label, e.token):
        assert not np.shares_memory(arr, s) and not np.shares_memory(arr, gold)
    # and the entries cannot be modified (they remember their sort)
    for arr in (e.score, e.tag, e.label, e.token):
        with pytest.raises(ValueError, match="read-only"):
            arr[:] = 0


def test_nested_list_input():
    s = [[0.2, 0.8], [0.001, 0.999]]
    e = threshold(s, [1, 0])
    assert e.score.dtype == np.float64
    np.testing.assert_array_equal(e.tag, [0, 1, 1])
    np.testing.assert_array_equal(e.label, [0, 1, 0])


def test_exported_from_package():
    assert sparsecal.threshold is threshold
    assert sparsecal.Entries is Entries


# --------------------------------------------------------------------------- #
# Errors                                                                       #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bad, what", [(np.nan, "NaN"), (np.inf, "outside"),
                                       (-np.inf, "outside"), (-0.25, "outside"),
                                       (1.5, "outside"), ("next1", "outside")])
@pytest.mark.parametrize("where", [(0, 0), (3, 2), (250, 30)])
def test_invalid_score_names_row_and_col(monkeypatch, dtype, bad, what, where):
    # small chunks: the row number must be global, not relative to the chunk
    monkeypatch.setattr(entries_mod, "_CHUNK_BYTES", 4096)
    rng = np.random.default_rng(14)
    s = make_scores(rng, 260, 31, dtype)
    if bad == "next1":
        bad = np.nextafter(dtype(1), dtype(2))
    s[where] = bad
    s[where[0] + 1:, :] = np.nan   # later bad values must not be reported first
    with pytest.raises(ValueError, match=rf"scores\[{where[0]}, {where[1]}\].*{what}"):
        threshold(s, np.zeros(260, dtype=np.int64), 0.01, n_threads=1)


def test_invalid_score_under_threshold_still_raises():
    s = np.array([[0.5, 0.5], [-1e-9, 0.3]])
    with pytest.raises(ValueError, match=r"scores\[1, 0\]"):
        threshold(s, [0, 0], 0.01)


@pytest.mark.parametrize("gold, n_tags, match", [
    ([0, 3], 3, r"gold\[1\] = 3"),
    ([-2, 0], 3, r"gold\[0\] = -2"),
    ([0, 1, 2, 99], 3, r"gold\[3\] = 99"),
])
def test_gold_out_of_range(gold, n_tags, match):
    s = np.full((len(gold), n_tags), 0.5)
    with pytest.raises(ValueError, match=match):
        threshold(s, gold)


def test_gold_uint64_huge_is_out_of_range():
    # 2**64 - 1 must not wrap around to -1 ("no gold tag").
    s = np.full((2, 3), 0.5)
    with pytest.raises(ValueError, match=r"gold\[1\]"):
        threshold(s, np.array([0, 2**64 - 1], dtype=np.uint64))


@pytest.mark.parametrize("gold", [np.zeros(4, int), np.zeros(6, int),
                                  np.zeros((5, 1), int), np.zeros((), int)])
def test_gold_shape_mismatch(gold):
    with pytest.raises(ValueError, match="gold"):
        threshold(np.full((5, 3), 0.5), gold)


@pytest.mark.parametrize("gold", [np.zeros(5), np.zeros(5, dtype=bool),
                                  np.array(["a"] * 5)])
def test_gold_wrong_dtype(gold):
    with pytest.raises(TypeError, match="gold"):
        threshold(np.full((5, 3), 0.5), gold)


@pytest.mark.parametrize("scores", [np.ones((3, 2), dtype=np.int64),
                                    np.ones((3, 2), dtype=np.uint8),
                                    np.ones((3, 2), dtype=bool),
                                    np.full((3, 2), 0.5, dtype=np.float16),
                                    np.full((3, 2), 0.5, dtype=np.longdouble),
                                    np.full((3, 2), 0.5, dtype=np.complex128)])
def test_wrong_score_dtype(scores):
    if scores.dtype == np.longdouble and np.dtype(np.longdouble) == np.float64:
        pytest.skip("long double is double here")
    with pytest.raises(TypeError, match="float32 or float64"):
        threshold(scores, np.zeros(3, dtype=np.int64))


@pytest.mark.parametrize("dtype", [">f4", ">f8", "<f4", "<f8"])
def test_either_byte_order(dtype):
    # Big- and little-endian scores give the entries of native ones (in the native
    # float of the same width), read chunk by chunk without modifying the input.
    native = np.array([[0.5, 0.005, 0.25], [0.0, 1.0, 0.01]], dtype=np.dtype(dtype).newbyteorder("="))
    scores = native.astype(dtype)
    before = scores.copy()
    got, want = threshold(scores, [0, 2]), threshold(native, [0, 2])
    assert got.score.dtype == native.dtype and got.score.dtype.isnative
    for name in ("score", "tag", "label", "token"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    np.testing.assert_array_equal(scores, before)
    assert scores.dtype == np.dtype(dtype)


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_empty_matrix(shape, dtype):
    with pytest.raises(ValueError, match="empty"):
        threshold(np.zeros(shape, dtype=dtype), np.zeros(shape[0], dtype=np.int64))


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4), ()])
def test_wrong_ndim(shape):
    with pytest.raises(ValueError, match="2-dimensional"):
        threshold(np.full(shape, 0.5), np.zeros(2, dtype=np.int64))


@pytest.mark.parametrize("t", [-0.01, 1.01, np.nan, np.inf, -np.inf])
def test_threshold_outside_unit_interval(t):
    with pytest.raises(ValueError, match="threshold"):
        threshold(np.full((2, 2), 0.5), [0, 1], t)


@pytest.mark.parametrize("t", ["0.5", None, True, [0.5]])
def test_threshold_not_a_number(t):
    with pytest.raises(TypeError, match="threshold"):
        threshold(np.full((2, 2), 0.5), [0, 1], t)


def test_bad_missing_gold_option():
    with pytest.raises(ValueError, match="missing_gold"):
        threshold(np.full((2, 2), 0.5), [0, -1], missing_gold="positives")
    with pytest.raises(ValueError, match="missing_gold"):
        threshold(np.full((2, 2), 0.5), [0, -1], missing_gold=None)


# --------------------------------------------------------------------------- #
# The Entries container                                                        #
# --------------------------------------------------------------------------- #

def test_entries_constructor_dtypes_and_no_copy():
    score = np.array([0.2, 0.9, 0.5], dtype=np.float32)
    tag = np.array([3, 0, 7], dtype=np.int32)
    label = np.array([False, True, False])
    token = np.array([0, 0, 1], dtype=np.int64)
    e = Entries(score, tag, label, token, n_tags=8, n_tokens=2, threshold=0.1)
    assert e.score.dtype == np.float32 and e.tag.dtype == np.int32
    assert e.label.dtype == np.uint8 and e.token.dtype == np.int64
    for a, b in ((e.score, score), (e.tag, tag), (e.label, label), (e.token, token)):
        assert np.shares_memory(a, b)
    np.testing.assert_array_equal(e.label, [0, 1, 0])
    assert len(e) == 3 and e.n_tags == 8 and e.n_tokens == 2 and e.threshold == 0.1
    assert "n=3" in repr(e) and "positives=1" in repr(e)
    e2 = Entries([0.5], np.array([2], dtype=np.int64), [1])
    assert e2.tag.dtype == np.int32 and e2.token is None and e2.score.dtype == np.float64


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"score": [0.5, 1.5]}, ValueError, "score"),
    ({"score": [0.5, np.nan]}, ValueError, "NaN"),
    ({"tag": [0]}, ValueError, "tag has shape"),
    ({"tag": [0.0, 1.0]}, TypeError, "tag"),
    ({"tag": [0, -1]}, ValueError, "non-negative"),
    ({"tag": [0, 2**31]}, ValueError, "int32"),
    ({"tag": [0, 4], "n_tags": 4}, ValueError, "n_tags"),
    ({"label": [0, 2]}, ValueError, "0 or 1"),
    ({"label": [0]}, ValueError, "label"),
    ({"token": [0]}, ValueError, "token"),
    ({"token": [0.0, 1.0]}, TypeError, "token"),
    ({"threshold": 2.0}, ValueError, "threshold"),
])
def test_entries_constructor_errors(kwargs, exc, match):
    args = {"score": [0.5, 0.2], "tag": [0, 1], "label": [1, 0], "token": [0, 1]}
    args.update(kwargs)
    extra = {k: args.pop(k) for k in ("n_tags", "threshold") if k in args}
    with pytest.raises(exc, match=match):
        Entries(args["score"], args["tag"], args["label"], args["token"], **extra)


def test_entries_take_and_with_scores():
    rng = np.random.default_rng(15)
    s = make_scores(rng, 30, 6, np.float64)
    gold = make_gold(rng, 30, 6)
    e = threshold(s, gold, 0.01)
    mask = e.label == 1
    sub = e.take(mask)
    np.testing.assert_array_equal(sub.score, e.score[mask])
    np.testing.assert_array_equal(sub.token, e.token[mask])
    assert (sub.label == 1).all() and sub.n_tags == 6 and sub.threshold == 0.01
    idx = np.array([2, 0, 1])
    np.testing.assert_array_equal(e.take(idx).tag, e.tag[idx])
    new = e.with_scores(np.full(len(e), 0.5, dtype=np.float32))
    assert new.score.dtype == np.float32 and (new.score == 0.5).all()
    assert new.tag is e.tag and new.label is e.label and new.token is e.token
    np.testing.assert_array_equal(e.score, threshold(s, gold, 0.01).score)
    with pytest.raises(ValueError, match="shape"):
        e.with_scores(np.full(len(e) + 1, 0.5))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        e.with_scores(np.full(len(e), 1.5))


def test_token_offset_shifts_tokens_and_error_rows():
    sc = sparsecal
    rng = np.random.default_rng(7)
    scores = rng.dirichlet(np.ones(6) * 0.3, size=50)
    gold = rng.integers(0, 6, 50)
    plain = sc.threshold(scores, gold, 0.05)
    shifted = sc.threshold(scores, gold, 0.05, token_offset=1000)
    np.testing.assert_array_equal(shifted.token, plain.token + 1000)
    np.testing.assert_array_equal(shifted.score, plain.score)
    gold[3] = -1
    dropped = sc.threshold(scores, gold, 0.05, missing_gold="drop", token_offset=10)
    assert 13 not in dropped.token and dropped.token.min() >= 10
    bad = scores.copy()
    bad[7, 2] = np.nan
    with pytest.raises(ValueError, match=r"scores\[1007, 2\]"):
        sc.threshold(bad, gold, 0.05, token_offset=1000)
    with pytest.raises(ValueError, match="token_offset"):
        sc.threshold(scores, gold, 0.05, token_offset=-1)
