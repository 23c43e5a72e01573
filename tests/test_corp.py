"""CORP decompositions (Dimitriadis, Gneiting & Jordan 2021) against scikit-learn's
IsotonicRegression as the brute-force recalibration, with the exact identity
S = MCB - DSC + UNC, on random inputs with ties, tiny and larger sizes."""
import numpy as np
import pytest

from sparsecal.metrics import brier_corp, log_loss_corp

sklearn_isotonic = pytest.importorskip("sklearn.isotonic")


def _reference(x, y, rule):
    iso = sklearn_isotonic.IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip")
    rc = iso.fit(x, y.astype(float)).predict(x)
    c = np.full_like(x, y.mean())
    if rule == "brier":
        s = lambda p: np.mean((p - y) ** 2)                       # noqa: E731
    else:
        def s(p):
            with np.errstate(divide="ignore"):
                return -np.mean(np.log(np.where(y == 1, p, 1 - p)))
    return s(x), s(x) - s(rc), s(c) - s(rc), s(c)


def _data(rng, n, kind):
    x = rng.random(n)
    if kind == "ties":
        x = np.round(x, 1)
    elif kind == "ends":
        x = rng.choice([0.0, 0.3, 1.0], size=n)
    y = (rng.random(n) < x ** 1.5).astype(np.uint8)
    if kind == "ends":                       # keep log loss finite: x = 0 -> 0, 1 -> 1
        y = np.where(x == 0, 0, np.where(x == 1, 1, y)).astype(np.uint8)
    return x, y


@pytest.mark.parametrize("func,rule", [(brier_corp, "brier"), (log_loss_corp, "log_loss")])
@pytest.mark.parametrize("n", [1, 2, 5, 100, 3000])
@pytest.mark.parametrize("kind", ["continuous", "ties", "ends"])
def test_matches_sklearn_pav_and_the_identity_holds(func, rule, n, kind):
    rng = np.random.default_rng(n + len(kind))
    x, y = _data(rng, n, kind)
    d = func(x, y)
    want = _reference(x, y, rule)
    got = (d.score, d.miscalibration, d.discrimination, d.uncertainty)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert abs(d.score - (d.miscalibration - d.discrimination + d.uncertainty)) < 1e-12
    assert d.miscalibration >= -1e-12 and d.discrimination >= -1e-12
    assert d.n == n and d.rule == rule


def test_closed_forms():
    y = np.array([0, 1, 1, 1])
    # a constant forecast has no discrimination; UNC = ybar (1 - ybar), = entropy
    d = brier_corp(np.full(4, 0.5), y)
    assert d.uncertainty == pytest.approx(0.75 * 0.25)
    assert d.discrimination == pytest.approx(0.0, abs=1e-15)
    assert d.miscalibration == pytest.approx(0.25 - 0.1875)
    h = -(0.75 * np.log(0.75) + 0.25 * np.log(0.25))
    assert log_loss_corp(np.full(4, 0.5), y).uncertainty == pytest.approx(h)
    # perfect, confident, right forecasts: every term 0 but UNC = DSC
    p = brier_corp([0.0, 1.0, 1.0, 1.0], y)
    assert (p.score, p.miscalibration) == (0.0, 0.0)
    assert p.discrimination == pytest.approx(p.uncertainty)


def test_log_loss_of_a_confident_miss_is_infinite():
    d = log_loss_corp([0.0, 0.5, 0.9], [1, 0, 1])
    assert d.score == np.inf and d.miscalibration == np.inf
    assert np.isfinite(d.discrimination) and np.isfinite(d.uncertainty)


def test_float32_equals_float64_of_the_same_values():
    rng = np.random.default_rng(9)
    x = rng.random(500).astype(np.float32)
    y = rng.random(500) < x
    assert brier_corp(x, y) == brier_corp(x.astype(np.float64), y)


def test_inputs_are_not_modified():
    x = np.array([0.3, 0.1, 0.3])
    y = np.array([1, 0, 0])
    x0, y0 = x.copy(), y.copy()
    log_loss_corp(x, y)
    assert np.array_equal(x, x0) and np.array_equal(y, y0)


@pytest.mark.parametrize("x,y,exc,match", [
    ([], [], ValueError, "scores is empty"),
    ([0.5, np.nan], [0, 1], ValueError, "NaN"),
    ([0.5], [3], ValueError, "labels must be 0 or 1"),
    ([0.5], [1, 1], ValueError, "labels has 2 values"),
    (["x"], [1], TypeError, "scores must hold real numbers"),
])
def test_bad_input(x, y, exc, match):
    for func in (brier_corp, log_loss_corp):
        with pytest.raises(exc, match=match):
            func(x, y)
