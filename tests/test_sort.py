"""Tests of ``sparsecal.core.binning.argsort_scores``: the parallel LSD radix sort must give
exactly ``np.argsort(x, kind="stable")`` (docs/architecture.md, Semantics 2: ties keep entry
order), for float32 and float64 and any thread count."""
import numpy as np
import pytest

from sparsecal.core.binning import argsort_scores
from sparsecal.core import _sort

DTYPES = [np.float32, np.float64]
THREADS = [1, 2, 3]


pytestmark = pytest.mark.usefixtures("one_thread_by_default")


def check_sorted(x, n_threads=1):
    x = np.asarray(x)
    perm, sorted_x = argsort_scores(x, n_threads=n_threads)
    ref = np.argsort(x, kind="stable")
    assert perm.dtype == np.int64 and perm.shape == x.shape
    assert sorted_x.dtype == x.dtype and sorted_x.shape == x.shape
    assert perm.flags.c_contiguous and sorted_x.flags.c_contiguous
    np.testing.assert_array_equal(perm, ref)
    # numerically equal to the sorted input (-0.0 compares equal to 0.0)
    np.testing.assert_array_equal(sorted_x, x[ref])
    np.testing.assert_array_equal(sorted_x, np.sort(x, kind="stable"))
    return perm, sorted_x


# --------------------------------------------------------------------------- #
# Value generators                                                             #
# --------------------------------------------------------------------------- #

def gen_uniform(rng, n, dtype):
    return rng.random(n).astype(dtype)


def gen_heavy_ties(rng, n, dtype):
    return (rng.integers(0, 5, size=n) / 4).astype(dtype)


def gen_all_equal(rng, n, dtype):
    return np.full(n, 0.3, dtype=dtype)


def gen_tiny_set_f32(rng, n, dtype):
    # values cast from a tiny set: they share all high bits, many radix digits
    # are constant and their passes are skipped
    vals = np.array([0.25, 0.5, 0.75, 0.5000001, 1.0], dtype=np.float32)
    return rng.choice(vals, size=n).astype(dtype)


def gen_exact_f32_in_f64(rng, n, dtype):
    # float64 values that are exact float32 values: the low 29 mantissa bits are
    # zero, so the low radix passes of the float64 sort are skipped
    return rng.random(n).astype(np.float32).astype(dtype)


def gen_low_bits_only(rng, n, dtype):
    # values 0.6 + k ulp, differing only in their lowest mantissa bits: the
    # high radix passes are skipped (exact: all lie in [0.5, 1), one binade)
    base = dtype(0.6)
    ulp = np.spacing(base)
    return base + rng.integers(0, 3000, size=n).astype(dtype) * ulp


def gen_signed_inf(rng, n, dtype):
    specials = np.array([np.inf, -np.inf, 0.0, -0.0, np.finfo(dtype).max,
                         -np.finfo(dtype).max, np.finfo(dtype).tiny,
                         -np.finfo(dtype).tiny, np.finfo(dtype).smallest_subnormal,
                         -np.finfo(dtype).smallest_subnormal, 1.0, -1.0], dtype=dtype)
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, size=n)).astype(dtype)
    mask = rng.random(n) < 0.3
    x[mask] = rng.choice(specials, size=int(mask.sum()))
    return x


def gen_zero_signs(rng, n, dtype):
    return rng.choice(np.array([0.0, -0.0, 1e-3, -1e-3], dtype=dtype), size=n)


def gen_sorted(rng, n, dtype):
    return np.sort(rng.random(n)).astype(dtype)


def gen_reversed(rng, n, dtype):
    return np.sort(rng.random(n))[::-1].astype(dtype)


GENERATORS = [gen_uniform, gen_heavy_ties, gen_all_equal, gen_tiny_set_f32,
              gen_exact_f32_in_f64, gen_low_bits_only, gen_signed_inf,
              gen_zero_signs, gen_sorted, gen_reversed]


# --------------------------------------------------------------------------- #
# Agreement with np.argsort(kind="stable")                                     #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("gen", GENERATORS, ids=lambda g: g.__name__[4:])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 64, 2047, 2048, 2049, 10007])
def test_matches_numpy_stable(dtype, gen, n):
    rng = np.random.default_rng(n * 31 + GENERATORS.index(gen))
    x = gen(rng, n, dtype)
    results = [check_sorted(x, k) for k in (THREADS if n > 2048 else (1, 2))]
    for perm, sorted_x in results[1:]:
        assert perm.tobytes() == results[0][0].tobytes()
        assert sorted_x.tobytes() == results[0][1].tobytes()


@pytest.mark.parametrize("gen", GENERATORS, ids=lambda g: g.__name__[4:])
@pytest.mark.parametrize("n", [1, 2, 2049, 10007])
def test_float32_separate_keys_layout(gen, n):
    """float32 keys are packed with their indices below 2**32 values; the
    layout for more (keys and indices apart) gives the same order. It is
    reached here by handing the kernel a sorted-values buffer of n."""
    rng = np.random.default_rng(n * 17 + GENERATORS.index(gen))
    x = gen(rng, n, np.float32)
    ref = np.argsort(x, kind="stable")
    for n_threads in THREADS:
        perm = np.empty(n, dtype=np.int64)
        sorted_x = np.empty(n, dtype=np.float32)
        _sort.argsort_floats(x, perm, sorted_x, n_threads)
        np.testing.assert_array_equal(perm, ref)
        np.testing.assert_array_equal(sorted_x, x[ref])


@pytest.mark.parametrize("dtype", DTYPES)
def test_sorted_scores_own_exactly_their_memory(dtype):
    """The packed float32 sort uses the sorted-values array as its second
    buffer (2 n floats) and gives the second half back: what is returned owns
    n values, nothing more."""
    x = np.random.default_rng(5).random(300_001).astype(dtype)
    perm, sorted_x = argsort_scores(x, n_threads=2)
    for a in (perm, sorted_x):
        assert a.base is None and a.flags.owndata and a.flags.writeable
    assert sorted_x.nbytes == x.nbytes and perm.nbytes == 8 * x.size


def test_kernel_refuses_inconsistent_buffers():
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(ValueError, match="perm must hold n"):
        _sort.argsort_floats(x, np.empty(3, np.int64), np.empty(4, np.float32), 1)
    with pytest.raises(ValueError, match="perm must hold n"):
        _sort.argsort_floats(x, np.empty(4, np.int64), np.empty(5, np.float32), 1)
    with pytest.raises(ValueError, match="packed keys need float32"):
        _sort.argsort_floats(x.astype(np.float64), np.empty(4, np.int64),
                             np.empty(8, np.float64), 1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("gen", [gen_uniform, gen_heavy_ties, gen_signed_inf,
                                 gen_exact_f32_in_f64],
                         ids=lambda g: g.__name__[4:])
def test_large(dtype, gen):
    rng = np.random.default_rng(99)
    x = gen(rng, 1_000_003 if gen is gen_uniform else 200_003, dtype)
    check_sorted(x, 2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_all_equal_identity(dtype):
    for n in (1, 7, 5000):
        for v in (0.0, 1.0, -2.5, np.inf):
            x = np.full(n, v, dtype=dtype)
            perm, sorted_x = argsort_scores(x, n_threads=2)
            np.testing.assert_array_equal(perm, np.arange(n))
            np.testing.assert_array_equal(sorted_x, x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_negative_and_positive_zero_tie(dtype):
    x = np.array([0.0, -0.0, 0.0, -0.0, -1.0, 1.0], dtype=dtype)
    perm, sorted_x = check_sorted(x)
    # the four zeros keep their input order: they are tied
    np.testing.assert_array_equal(perm, [4, 0, 1, 2, 3, 5])
    np.testing.assert_array_equal(sorted_x, [-1, 0, 0, 0, 0, 1])


@pytest.mark.parametrize("dtype", DTYPES)
def test_single_element(dtype):
    perm, sorted_x = argsort_scores(np.array([0.42], dtype=dtype))
    np.testing.assert_array_equal(perm, [0])
    assert sorted_x.dtype == dtype and sorted_x[0] == dtype(0.42)


@pytest.mark.parametrize("dtype", DTYPES)
def test_empty_returns_empty(dtype):
    # Sorting nothing is well defined (like np.argsort): empty outputs.
    perm, sorted_x = argsort_scores(np.array([], dtype=dtype))
    assert perm.shape == (0,) and perm.dtype == np.int64
    assert sorted_x.shape == (0,) and sorted_x.dtype == dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_fewer_elements_than_threads(dtype):
    for n in (1, 2, 3):
        x = np.array([0.5, 0.1, 0.5][:n], dtype=dtype)
        for k in (1, 2, 3, 8):
            check_sorted(x, k)


@pytest.mark.parametrize("dtype", DTYPES)
def test_non_contiguous_and_unmodified(dtype):
    rng = np.random.default_rng(5)
    base = gen_heavy_ties(rng, 3001, dtype)
    keep = base.copy()
    base.flags.writeable = False
    for x in (base[::3], base[::-1], base[1:-1:2]):
        perm, _ = argsort_scores(x, n_threads=2)
        np.testing.assert_array_equal(perm, np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(base, keep)


def test_float32_and_float64_same_order():
    rng = np.random.default_rng(6)
    x32 = gen_signed_inf(rng, 5000, np.float32)
    p32, s32 = argsort_scores(x32)
    p64, s64 = argsort_scores(x32.astype(np.float64))
    np.testing.assert_array_equal(p32, p64)
    np.testing.assert_array_equal(s32.astype(np.float64), s64)


def test_integer_and_list_input_sorted_as_float64():
    perm, sorted_x = argsort_scores([3, 1, 2, 1])
    np.testing.assert_array_equal(perm, [1, 3, 2, 0])
    assert sorted_x.dtype == np.float64


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pos", [0, 5, 9])
def test_nan_raises(dtype, pos):
    x = np.linspace(0, 1, 10).astype(dtype)
    x[pos] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        argsort_scores(x)
    x[pos] = -np.nan   # NaN with the sign bit set
    with pytest.raises(ValueError, match="NaN"):
        argsort_scores(x)


@pytest.mark.parametrize("shape", [(3, 4), ()])
def test_not_1d_raises(shape):
    with pytest.raises(ValueError, match="1-dimensional"):
        argsort_scores(np.zeros(shape))


def test_non_numeric_raises():
    with pytest.raises(TypeError):
        argsort_scores(np.array(["a", "b"]))


def test_bad_n_threads():
    with pytest.raises(ValueError, match="n_threads"):
        argsort_scores(np.zeros(3), n_threads=0)
