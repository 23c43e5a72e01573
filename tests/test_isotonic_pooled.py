"""isotonic_fit_pooled: the knots of isotonic_fit from the table of distinct
scores (count, label sum), bit for bit; and its argument errors."""
import numpy as np
import pytest

from sparsecal.core.isotonic import isotonic_fit, isotonic_fit_pooled


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 5, 300, 4000])
def test_pooled_fit_equals_fit_bit_for_bit(dtype, n):
    rng = np.random.default_rng(n)
    x = rng.random(n).round(2).astype(dtype)              # ties
    y = (rng.random(n) < x ** 2).astype(np.uint8)
    ux, inv = np.unique(x, return_inverse=True)
    count = np.bincount(inv).astype(np.float64)
    positives = np.bincount(inv, weights=y)
    got = isotonic_fit_pooled(ux.astype(np.float64), positives / count, count)
    ref = isotonic_fit(x, y)
    for a, b in zip(got, ref):
        assert a.dtype == b.dtype == np.float64
        np.testing.assert_array_equal(a, b)


def test_pooled_fit_errors_and_inputs_unchanged():
    x, y, w = np.array([0.1, 0.2]), np.array([1.0, 0.0]), np.array([1.0, 2.0])
    before = [a.copy() for a in (x, y, w)]
    assert isotonic_fit_pooled(x, y, w)[1].tolist() == [1 / 3, 1 / 3]
    for a, b in zip((x, y, w), before):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="strictly increasing"):
        isotonic_fit_pooled([0.2, 0.2], y, w)
    with pytest.raises(ValueError, match="weight must be positive"):
        isotonic_fit_pooled(x, y, [1.0, 0.0])
    with pytest.raises(ValueError, match="one length"):
        isotonic_fit_pooled(x, y[:1], w)
    with pytest.raises(ValueError, match="y_mean must be finite"):
        isotonic_fit_pooled(x, [np.nan, 0.0], w)
    with pytest.raises(TypeError, match="x"):
        isotonic_fit_pooled(["a", "b"], y, w)
