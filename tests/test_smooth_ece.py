"""smooth_ece and smooth_reliability against the reference package relplot
(Błasiok & Nakkiran 2023; a test-only dependency) on random inputs with ties,
tiny and larger sizes, both dtypes."""
import numpy as np
import pytest

from sparsecal.metrics import smooth_ece, smooth_reliability

relplot = pytest.importorskip("relplot")


def _data(rng, n, kind):
    f = rng.random(n)
    if kind == "ties":
        f = np.round(f, 1)
    if kind == "ends":                     # exact 0 and 1, many ties at the ends
        f = rng.choice([0.0, 1.0, 0.5, 0.999], size=n)
    power = {"calibrated": 1.0, "ties": 2.0, "ends": 0.5}[kind]
    y = (rng.random(n) < f ** power).astype(np.uint8)
    return f, y


@pytest.mark.parametrize("n", [1, 2, 3, 17, 500, 5000])
@pytest.mark.parametrize("kind", ["calibrated", "ties", "ends"])
def test_smooth_ece_matches_relplot(n, kind):
    rng = np.random.default_rng(n * 7 + len(kind))
    f, y = _data(rng, n, kind)
    value, width = relplot.smECE(f, y, return_width=True)
    got = smooth_ece(f, y)
    assert got.bandwidth == width
    assert got.value == pytest.approx(value, abs=1e-9)
    assert got.n == n


@pytest.mark.parametrize("sigma", [0.003, 0.05, 0.3, 1.0])
def test_fixed_bandwidth_matches_relplot_smece_sigma(sigma):
    rng = np.random.default_rng(3)
    f, y = _data(rng, 800, "ties")
    got = smooth_ece(f, y, bandwidth=sigma)
    assert got.bandwidth == sigma
    assert got.value == pytest.approx(relplot.smECE_sigma(f, y, sigma), abs=1e-9)


def test_the_bandwidth_is_the_fixed_point():
    rng = np.random.default_rng(4)
    f, y = _data(rng, 3000, "ties")
    s = smooth_ece(f, y)
    # the bisection ends on the side where smECE(sigma) <= sigma, within 2^-10
    assert smooth_ece(f, y, bandwidth=s.bandwidth).value <= s.bandwidth
    assert smooth_ece(f, y, bandwidth=s.bandwidth - 2 ** -10).value > s.bandwidth - 2 ** -10


def test_a_large_input_matches_relplot():
    rng = np.random.default_rng(5)
    f = rng.random(200_000)
    y = (rng.random(200_000) < f ** 2).astype(np.uint8)
    assert smooth_ece(f, y).value == pytest.approx(relplot.smECE(f, y), abs=1e-9)


def test_float32_gives_the_float64_result_of_the_same_values():
    rng = np.random.default_rng(6)
    f = rng.random(1000).astype(np.float32)
    y = rng.random(1000) < f
    assert smooth_ece(f, y).value == smooth_ece(f.astype(np.float64), y).value


def test_perfectly_separated_extremes_have_smece_zero_and_a_constant_miss_is_found():
    f = np.array([0.0, 0.0, 1.0, 1.0])
    assert smooth_ece(f, [0, 0, 1, 1]).value == pytest.approx(0.0, abs=1e-3)
    # a constant forecast 0.5 of events that always happen: residual -0.5 everywhere
    assert smooth_ece(np.full(100, 0.5), np.ones(100), bandwidth=0.1).value == \
        pytest.approx(0.5, abs=1e-3)


def test_smooth_reliability_matches_relplot_curve_and_density():
    from relplot.estimators import KernelSmoother
    from relplot.kernels import ReflectedGaussianKernel
    rng = np.random.default_rng(7)
    f, y = _data(rng, 2000, "ties")
    r = smooth_reliability(f, y)
    ker = ReflectedGaussianKernel(r.smooth_ece.bandwidth)
    t = np.linspace(0, 1, 200)
    mu = KernelSmoother(ker).fit(f.reshape(-1, 1), y.astype(float)).predict(t.reshape(-1, 1))
    np.testing.assert_allclose(r.mesh, t)
    np.testing.assert_allclose(r.curve, mu, atol=1e-9)
    np.testing.assert_allclose(r.density, ker.kde(f, t), rtol=1e-9, atol=1e-9)
    assert r.smooth_ece == smooth_ece(f, y)


def test_inputs_are_not_modified():
    f = np.array([0.3, 0.7, 0.7])
    y = np.array([0, 1, 1])
    f0, y0 = f.copy(), y.copy()
    smooth_reliability(f, y)
    assert np.array_equal(f, f0) and np.array_equal(y, y0)


@pytest.mark.parametrize("kwargs,exc,match", [
    ({"scores": [], "labels": []}, ValueError, "scores is empty"),
    ({"scores": [0.5, 1.5], "labels": [0, 1]}, ValueError, "scores must lie in"),
    ({"scores": [0.5], "labels": [2]}, ValueError, "labels must be 0 or 1"),
    ({"scores": [0.5], "labels": [1, 0]}, ValueError, "labels has 2 values"),
    ({"scores": [0.5], "labels": [1], "bandwidth": 0}, ValueError, "bandwidth must be"),
    ({"scores": [0.5], "labels": [1], "bandwidth": np.nan}, ValueError, "bandwidth"),
    ({"scores": [0.5], "labels": [1], "bandwidth": "wide"}, TypeError, "bandwidth"),
    ({"scores": ["a"], "labels": [1]}, TypeError, "scores"),
])
def test_bad_input_raises_one_clear_error(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        smooth_ece(**kwargs)


def test_bad_n_points():
    with pytest.raises(ValueError, match="n_points"):
        smooth_reliability([0.5], [1], n_points=1)
