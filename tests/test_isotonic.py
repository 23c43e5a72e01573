"""Tests of ``isotonic_fit`` / ``isotonic_predict`` (docs/architecture.md, Semantics 7) against
``sklearn.isotonic.IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip")``.

scikit-learn also pools x values closer than ``np.finfo(dtype).resolution``
(documented difference), so the comparison runs in float64 on x values at
least 1e-3 apart.
"""
import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression

from sparsecal.core import isotonic_fit, isotonic_predict

TOL = 1e-12


pytestmark = pytest.mark.usefixtures("one_thread_by_default")


def sklearn_predict(x, y, w, q, y_min=0.0, y_max=1.0):
    ir = IsotonicRegression(y_min=y_min, y_max=y_max, out_of_bounds="clip")
    ir.fit(x, y, sample_weight=w)
    return ir.predict(q)


def make_problem(seed):
    """x with heavy ties from a well-separated support, varied weights and y."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([1, 2, 3, 10, 57, 400, 3000]))
    k = int(rng.integers(1, min(n, 60) + 1))
    support = rng.choice(np.arange(1001) / 1000.0, size=k, replace=False)
    x = rng.choice(support, size=n)
    kind = seed % 4
    if kind == 0:      # binary labels, calibrated-ish
        y = (rng.random(n) < x).astype(np.float64)
    elif kind == 1:    # binary labels, anti-calibrated: many violators
        y = (rng.random(n) < 1 - x).astype(np.float64)
    elif kind == 2:    # continuous in [0, 1]
        y = rng.random(n)
    else:              # continuous outside [0, 1]: must be clipped
        y = rng.normal(0.5, 1.5, size=n)
    wkind = (seed // 4) % 3
    if wkind == 0:
        w = None
    elif wkind == 1:   # random weights with zeros
        w = rng.random(n) * 3
        w[rng.random(n) < 0.3] = 0.0
        if not (w > 0).any():
            w[0] = 1.0
    else:              # integer weights
        w = rng.integers(0, 4, size=n).astype(np.float64)
        if not (w > 0).any():
            w[-1] = 2.0
    return x, y, w, support


def query_points(x, support):
    s = np.sort(support)
    mids = (s[:-1] + s[1:]) / 2 if s.size > 1 else s
    return np.concatenate([x, support, mids, np.linspace(-0.5, 1.5, 401),
                           [s[0] - 1e-9, s[-1] + 1e-9, -10.0, 10.0]])


@pytest.mark.parametrize("seed", range(48))
def test_matches_sklearn(seed):
    x, y, w, support = make_problem(seed)
    q = query_points(x, support)
    xk, yk = isotonic_fit(x, y, w)
    got = isotonic_predict(q, xk, yk)
    ref = sklearn_predict(x, y, w, q)
    assert got.dtype == np.float64
    assert np.max(np.abs(got - ref)) <= TOL
    # knots: strictly increasing x, values in [0, 1], non-decreasing
    assert xk.dtype == np.float64 and yk.dtype == np.float64
    assert (np.diff(xk) > 0).all() and (np.diff(yk) >= 0).all()
    assert yk.min() >= 0 and yk.max() <= 1
    # knots lie on the x values that carry weight
    xw = x if w is None else x[w > 0]
    assert np.isin(xk, xw).all()
    assert xk[0] == xw.min() and xk[-1] == xw.max()


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("y_min, y_max", [(0.2, 0.7), (-1.0, 2.0), (0.5, 0.5)])
def test_matches_sklearn_other_clip_range(seed, y_min, y_max):
    x, y, w, support = make_problem(seed + 3)
    q = query_points(x, support)
    xk, yk = isotonic_fit(x, y, w, y_min=y_min, y_max=y_max)
    got = isotonic_predict(q, xk, yk)
    ref = sklearn_predict(x, y, w, q, y_min, y_max)
    assert np.max(np.abs(got - ref)) <= TOL


@pytest.mark.parametrize("seed", range(6))
def test_distinct_x_no_ties(seed):
    rng = np.random.default_rng(seed)
    n = 2000
    x = rng.permutation(np.arange(n) / n)
    y = (rng.random(n) < x ** 2).astype(np.float64)
    q = np.concatenate([x, rng.random(500) * 1.4 - 0.2])
    got = isotonic_predict(q, *isotonic_fit(x, y))
    assert np.max(np.abs(got - sklearn_predict(x, y, None, q))) <= TOL


def test_small_known_example():
    xk, yk = isotonic_fit([1.0, 2.0, 3.0], [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(xk, [1, 2, 3])
    np.testing.assert_array_equal(yk, [0.5, 0.5, 1.0])
    np.testing.assert_array_equal(isotonic_predict([0.0, 1.5, 2.5, 9.0], xk, yk),
                                  [0.5, 0.5, 0.75, 1.0])


def test_ties_pooled_with_weights():
    # x=0.2: weighted mean (1*1 + 3*0)/4 = 0.25; x=0.6: 1.0
    xk, yk = isotonic_fit([0.2, 0.6, 0.2], [1, 1, 0], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(xk, [0.2, 0.6])
    np.testing.assert_array_equal(yk, [0.25, 1.0])


def test_monotone_output():
    rng = np.random.default_rng(11)
    x = rng.random(5000)
    y = rng.random(5000) < 0.5
    xk, yk = isotonic_fit(x, y)
    grid = np.linspace(-1, 2, 10001)
    p = isotonic_predict(grid, xk, yk)
    assert (np.diff(p) >= 0).all()
    assert p.min() >= 0 and p.max() <= 1
    assert p[0] == yk[0] and p[-1] == yk[-1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_single_point(dtype):
    for yv, expect in ((0.3, 0.3), (1.0, 1.0), (-4.0, 0.0), (7.0, 1.0)):
        xk, yk = isotonic_fit(np.array([0.4], dtype=dtype), [yv])
        np.testing.assert_array_equal(xk, [np.float64(dtype(0.4))])
        np.testing.assert_array_equal(yk, [expect])
        np.testing.assert_array_equal(
            isotonic_predict(np.array([0.0, 0.4, 1.0], dtype=dtype), xk, yk),
            np.full(3, expect, dtype=dtype))


def test_all_equal_x():
    x = np.full(10, 0.5)
    y = np.array([1, 0, 0, 1, 1, 0, 1, 0, 0, 0], dtype=float)
    w = np.arange(10, dtype=float)
    xk, yk = isotonic_fit(x, y, w)
    np.testing.assert_array_equal(xk, [0.5])
    np.testing.assert_allclose(yk, [np.dot(w, y) / w.sum()], rtol=1e-15)
    p = isotonic_predict([0.0, 0.5, 1.0], xk, yk)
    np.testing.assert_allclose(p, sklearn_predict(x, y, w, [0.0, 0.5, 1.0]),
                               atol=TOL, rtol=0)


def test_y_outside_unit_interval_is_clipped():
    x = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    y = np.array([-3.0, -1.0, 0.5, 2.0, 5.0])
    xk, yk = isotonic_fit(x, y)
    np.testing.assert_array_equal(yk[[0, -1]], [0.0, 1.0])
    p = isotonic_predict(x, xk, yk)
    np.testing.assert_array_equal(p, [0.0, 0.0, 0.5, 1.0, 1.0])
    assert np.max(np.abs(p - sklearn_predict(x, y, None, x))) <= TOL


def test_zero_weights_same_as_removed():
    rng = np.random.default_rng(12)
    x = rng.choice(np.arange(50) / 50, size=700)
    y = (rng.random(700) < x).astype(np.uint8)
    w = rng.random(700)
    w[rng.random(700) < 0.4] = 0.0
    keep = w > 0
    a = isotonic_fit(x, y, w)
    b = isotonic_fit(x[keep], y[keep], w[keep])
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


def test_zero_weight_points_do_not_extend_range():
    xk, yk = isotonic_fit([0.1, 0.5, 0.9], [0.0, 0.3, 1.0], [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(xk, [0.5])
    np.testing.assert_array_equal(yk, [0.3])


def test_integer_weights_like_repeats():
    rng = np.random.default_rng(13)
    x = rng.choice(np.arange(30) / 30, size=300)
    y = rng.random(300)
    w = rng.integers(1, 4, size=300)
    a = isotonic_predict(x, *isotonic_fit(x, y, w))
    b = isotonic_predict(x, *isotonic_fit(np.repeat(x, w), np.repeat(y, w)))
    np.testing.assert_allclose(a, b, atol=1e-12, rtol=0)


def test_float32_x_same_as_float64():
    rng = np.random.default_rng(14)
    x32 = rng.random(3000).astype(np.float32)
    x32[::3] = x32[1::3]                       # ties
    y = (rng.random(3000) < x32).astype(np.uint8)
    xk32, yk32 = isotonic_fit(x32, y)
    xk64, yk64 = isotonic_fit(x32.astype(np.float64), y)
    np.testing.assert_array_equal(xk32, xk64)
    np.testing.assert_array_equal(yk32, yk64)
    q = rng.random(1000).astype(np.float32)
    p32 = isotonic_predict(q, xk32, yk32)
    assert p32.dtype == np.float32
    p64 = isotonic_predict(q.astype(np.float64), xk32, yk32)
    np.testing.assert_array_equal(p32, p64.astype(np.float32))


def test_label_dtypes_equivalent():
    rng = np.random.default_rng(15)
    x = rng.choice(np.arange(20) / 20, size=400)
    yb = rng.random(400) < x
    base = isotonic_fit(x, yb.astype(np.float64))
    for y in (yb, yb.astype(np.uint8), yb.astype(np.int64), yb.astype(np.float32),
              list(yb.astype(int))):
        got = isotonic_fit(x, y)
        np.testing.assert_array_equal(got[0], base[0])
        np.testing.assert_allclose(got[1], base[1], atol=1e-15, rtol=0)


def test_threads_and_noncontiguous_and_unmodified():
    rng = np.random.default_rng(16)
    xb = rng.choice(np.arange(100) / 100, size=8000)
    yb = rng.random(8000)
    wb = rng.random(8000)
    copies = [a.copy() for a in (xb, yb, wb)]
    for a in (xb, yb, wb):
        a.flags.writeable = False
    x, y, w = xb[::2], yb[::2], wb[::2]
    fits = [isotonic_fit(x, y, w, n_threads=k) for k in (1, 2, 3)]
    for f in fits[1:]:
        np.testing.assert_array_equal(f[0], fits[0][0])
        np.testing.assert_array_equal(f[1], fits[0][1])
    ref = isotonic_fit(x.copy(), y.copy(), w.copy())
    np.testing.assert_array_equal(ref[0], fits[0][0])
    np.testing.assert_array_equal(ref[1], fits[0][1])
    q = rng.random(20001)[::3]
    preds = [isotonic_predict(q, *fits[0], n_threads=k) for k in (1, 2, 3)]
    for p in preds[1:]:
        np.testing.assert_array_equal(p, preds[0])
    for a, c in zip((xb, yb, wb), copies):
        np.testing.assert_array_equal(a, c)


def test_predict_infinite_and_empty():
    xk, yk = np.array([0.2, 0.8]), np.array([0.1, 0.9])
    np.testing.assert_array_equal(isotonic_predict([-np.inf, np.inf, 0.5], xk, yk),
                                  [0.1, 0.9, 0.5])
    out = isotonic_predict(np.array([], dtype=np.float32), xk, yk)
    assert out.shape == (0,) and out.dtype == np.float32


def test_predict_at_knots_exact():
    rng = np.random.default_rng(17)
    x = rng.random(1000)
    xk, yk = isotonic_fit(x, rng.random(1000) < x)
    np.testing.assert_array_equal(isotonic_predict(xk, xk, yk), yk)


# --------------------------------------------------------------------------- #
# Errors                                                                       #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_fit_non_finite_x(bad):
    with pytest.raises(ValueError, match=r"x\[1\]"):
        isotonic_fit([0.1, bad, 0.3], [0, 1, 0])


def test_fit_nan_y():
    with pytest.raises(ValueError, match="y must be finite"):
        isotonic_fit([0.1, 0.2], [0.0, np.nan])


@pytest.mark.parametrize("y", [[0, 1], [0, 1, 1, 0], [[0, 1, 1]]])
def test_fit_y_shape_mismatch(y):
    with pytest.raises(ValueError, match="y has shape"):
        isotonic_fit([0.1, 0.2, 0.3], y)


def test_fit_weight_shape_mismatch():
    with pytest.raises(ValueError, match="sample_weight"):
        isotonic_fit([0.1, 0.2, 0.3], [0, 1, 1], [1.0, 1.0])


@pytest.mark.parametrize("w", [[0.0, 0.0, 0.0], [0, 0, 0]])
def test_fit_all_zero_weights(w):
    with pytest.raises(ValueError, match="positive weight"):
        isotonic_fit([0.1, 0.2, 0.3], [0, 1, 1], w)


@pytest.mark.parametrize("w", [[1.0, -0.5, 1.0], [1.0, np.nan, 1.0],
                               [1.0, np.inf, 1.0]])
def test_fit_bad_weights(w):
    with pytest.raises(ValueError, match="sample_weight"):
        isotonic_fit([0.1, 0.2, 0.3], [0, 1, 1], w)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fit_empty(dtype):
    with pytest.raises(ValueError, match="at least one point"):
        isotonic_fit(np.array([], dtype=dtype), np.array([], dtype=np.float64))


def test_fit_bad_clip_range_and_shape():
    with pytest.raises(ValueError, match="y_min"):
        isotonic_fit([0.1, 0.2], [0, 1], y_min=0.8, y_max=0.2)
    with pytest.raises(ValueError, match="1-dimensional"):
        isotonic_fit(np.zeros((2, 2)), np.zeros(2))
    with pytest.raises(TypeError):
        isotonic_fit(np.array(["a", "b"]), [0, 1])


def test_predict_errors():
    xk, yk = np.array([0.2, 0.8]), np.array([0.1, 0.9])
    with pytest.raises(ValueError, match="NaN"):
        isotonic_predict([0.5, np.nan], xk, yk)
    with pytest.raises(ValueError, match="knots"):
        isotonic_predict([0.5], xk, yk[:1])
    with pytest.raises(ValueError, match="knots"):
        isotonic_predict([0.5], [], [])
    with pytest.raises(ValueError, match="knots"):
        isotonic_predict([0.5], [[0.2, 0.8]], [[0.1, 0.9]])
    with pytest.raises(ValueError, match="1-dimensional"):
        isotonic_predict(np.zeros((2, 2)), xk, yk)
