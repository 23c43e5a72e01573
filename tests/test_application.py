"""Application-based measures (DCF, minDCF, Cllr, minCllr, Bayes error plot)
against brute force (a loop over thresholds), scikit-learn's PAV, hand-computed
values and the identities of the theory, on random inputs with ties."""
import numpy as np
import pytest

from sparsecal.metrics import bayes_error_plot, cllr, dcf, min_cllr, min_dcf

sklearn_isotonic = pytest.importorskip("sklearn.isotonic")


def _cost(llr, y, t, prior, c_miss, c_fa):
    """Normalized DCF of deciding positive where llr > t (brute force)."""
    yes = llr > t
    p_miss = np.sum(~yes & (y == 1)) / np.sum(y == 1)
    p_fa = np.sum(yes & (y == 0)) / np.sum(y == 0)
    return (prior * c_miss * p_miss + (1 - prior) * c_fa * p_fa) / \
        min(prior * c_miss, (1 - prior) * c_fa)


def _data(rng, n, ties):
    y = np.zeros(n, dtype=np.uint8)
    y[rng.permutation(n)[: max(1, n // 3)]] = 1
    llr = 1.5 * (2.0 * y - 1) + rng.normal(0, 2, n)
    if ties:
        llr = np.round(llr)
    return llr, y


def test_hand_computed_example():
    llr = np.array([-2.0, -1.0, 0.5, 1.0, 3.0])
    y = np.array([0, 1, 0, 1, 1])
    d = dcf(llr, y, prior=0.5, scores_are="llr")
    assert (d.p_miss, d.p_fa) == (1 / 3, 1 / 2)
    assert d.value == pytest.approx(5 / 6)
    m = min_dcf(llr, y, prior=0.5, scores_are="llr")
    assert m.value == pytest.approx(1 / 3) and m.threshold == 0.5
    assert dcf(llr, y, prior=0.5, scores_are="llr", normalize=False).value == \
        pytest.approx(5 / 12)
    # c_miss = 10: threshold -log(10) = -2.30, every point positive: p_fa = 1
    d10 = dcf(llr, y, prior=0.5, c_miss=10, scores_are="llr")
    assert d10.threshold == pytest.approx(-np.log(10))
    assert d10.value == pytest.approx(0.5 / 0.5)


@pytest.mark.parametrize("n", [2, 3, 10, 200])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("app", [(0.5, 1, 1), (0.1, 1, 1), (0.5, 10, 1), (0.9, 1, 3)])
def test_actual_and_min_dcf_match_brute_force(n, ties, app):
    rng = np.random.default_rng(n + 2 * ties)
    llr, y = _data(rng, n, ties)
    prior, c_miss, c_fa = app
    t = -np.log(prior * c_miss / ((1 - prior) * c_fa))
    d = dcf(llr, y, prior=prior, c_miss=c_miss, c_fa=c_fa, scores_are="llr")
    assert d.value == pytest.approx(_cost(llr, y, t, *app), rel=1e-12)
    u = np.unique(llr)
    candidates = np.concatenate([[-np.inf, np.inf], u, (u[1:] + u[:-1]) / 2])
    brute = min(_cost(llr, y, c, *app) for c in candidates)
    m = min_dcf(llr, y, prior=prior, c_miss=c_miss, c_fa=c_fa, scores_are="llr")
    assert m.value == pytest.approx(brute, rel=1e-12, abs=1e-15)
    assert m.value == pytest.approx(_cost(llr, y, m.threshold, *app), rel=1e-12, abs=1e-15)
    assert m.value <= d.value + 1e-12


def test_probabilities_are_converted_with_the_training_prior():
    rng = np.random.default_rng(1)
    llr, y = _data(rng, 300, ties=False)
    pi_t = 0.2
    p = 1 / (1 + np.exp(-(llr + np.log(pi_t / (1 - pi_t)))))
    a = dcf(p, y, prior=0.3, training_prior=pi_t)
    b = dcf(llr, y, prior=0.3, scores_are="llr")
    assert a.value == b.value and a.threshold == b.threshold
    # the default training prior is the positive rate of the labels
    rate = y.mean()
    assert dcf(p, y, prior=0.3).value == dcf(p, y, prior=0.3, training_prior=rate).value
    assert cllr(p, y, training_prior=pi_t) == pytest.approx(cllr(llr, y, scores_are="llr"),
                                                            rel=1e-9)
    # the minimum depends on the order only
    assert min_dcf(p, y, prior=0.3).value == min_dcf(llr, y, prior=0.3, scores_are="llr").value
    assert min_cllr(p, y) == pytest.approx(min_cllr(llr, y, scores_are="llr"), abs=1e-12)


@pytest.mark.parametrize("prior", [0.05, 0.3, 0.5, 0.7, 0.95])
def test_a_useless_system_costs_one_and_a_perfect_one_nothing(prior):
    y = np.array([0, 1, 0, 1, 1, 0])
    zero = np.zeros(6)
    assert dcf(zero, y, prior=prior, scores_are="llr").value == pytest.approx(1.0)
    assert min_dcf(zero, y, prior=prior, scores_are="llr").value == pytest.approx(1.0)
    assert cllr(zero, y, scores_are="llr") == 1.0
    assert min_cllr(zero, y, scores_are="llr") == pytest.approx(1.0)
    perfect = np.where(y == 1, 50.0, -50.0)
    assert dcf(perfect, y, prior=prior, scores_are="llr").value == 0.0
    assert min_dcf(perfect, y, prior=prior, scores_are="llr").value == 0.0
    assert cllr(perfect, y, scores_are="llr") < 1e-20
    assert min_cllr(perfect, y, scores_are="llr") == 0.0


def _cllr_brute(llr, y):
    tar = [np.log1p(np.exp(-s)) for s in llr[y == 1]]
    non = [np.log1p(np.exp(s)) for s in llr[y == 0]]
    return (np.mean(tar) + np.mean(non)) / (2 * np.log(2))


@pytest.mark.parametrize("n", [2, 5, 60, 1000])
@pytest.mark.parametrize("ties", [False, True])
def test_cllr_and_min_cllr_match_brute_force(n, ties):
    rng = np.random.default_rng(10 * n + ties)
    llr, y = _data(rng, n, ties)
    assert cllr(llr, y, scores_are="llr") == pytest.approx(_cllr_brute(llr, y), rel=1e-12)
    iso = sklearn_isotonic.IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip")
    p = iso.fit(llr, y.astype(float)).predict(llr)
    prior = y.mean()
    with np.errstate(divide="ignore"):
        pav = np.log(p) - np.log1p(-p) - np.log(prior / (1 - prior))
    tar, non = pav[y == 1], pav[y == 0]
    want = (np.mean(np.logaddexp(0, -tar)) + np.mean(np.logaddexp(0, non))) / (2 * np.log(2))
    got = min_cllr(llr, y, scores_are="llr")
    assert got == pytest.approx(want, rel=1e-10, abs=1e-15)
    assert got <= cllr(llr, y, scores_are="llr") + 1e-12
    # min_cllr of any monotone transform is the same; a miscalibrated scaling
    # raises cllr but not min_cllr
    assert min_cllr(3 * llr - 2, y, scores_are="llr") == pytest.approx(got, abs=1e-12)
    assert cllr(3 * llr - 2, y, scores_are="llr") >= got


def test_probabilities_zero_and_one():
    y = np.array([0, 0, 1, 1])
    assert cllr([0.0, 0.2, 0.8, 1.0], y, training_prior=0.5) < 1
    assert cllr([0.0, 0.2, 0.8, 0.0], y, training_prior=0.5) == np.inf
    assert min_cllr([0.0, 0.2, 0.8, 1.0], y) == 0.0
    assert dcf([0.0, 0.0, 1.0, 1.0], y, prior=0.5).value == 0.0
    assert min_dcf([0.0, 0.0, 1.0, 1.0], y, prior=0.5).value == 0.0


def test_bayes_error_plot_is_dcf_over_the_grid():
    rng = np.random.default_rng(3)
    llr, y = _data(rng, 400, ties=True)
    b = bayes_error_plot(llr, y, scores_are="llr")
    assert b.prior_log_odds.shape == (61,) and b.prior_log_odds[0] == -3.0
    for x, a, m in zip(b.prior_log_odds[::10], b.actual_dcf[::10], b.min_dcf[::10]):
        prior = 1 / (1 + np.exp(-x))
        assert a == dcf(llr, y, prior=prior, scores_are="llr").value
        assert m == min_dcf(llr, y, prior=prior, scores_are="llr").value
    assert np.all(b.min_dcf <= b.actual_dcf + 1e-12)
    assert np.all(b.min_dcf <= 1 + 1e-12)


def test_large_input_runs_vectorised():
    rng = np.random.default_rng(4)
    llr, y = _data(rng, 200_000, ties=False)
    m = min_dcf(llr, y, prior=0.5, scores_are="llr")
    assert m.value == pytest.approx(_cost(llr, y, m.threshold, 0.5, 1, 1), rel=1e-12)


def test_inputs_are_not_modified():
    x = np.array([0.3, 0.1, 0.9])
    y = np.array([1, 0, 0])
    x0, y0 = x.copy(), y.copy()
    for f in (cllr, min_cllr):
        f(x, y)
    min_dcf(x, y, prior=0.5)
    bayes_error_plot(x, y)
    assert np.array_equal(x, x0) and np.array_equal(y, y0)


@pytest.mark.parametrize("kwargs,exc,match", [
    ({"labels": [1, 1]}, ValueError, "both classes"),
    ({"prior": 0.0}, ValueError, "prior must lie in \\(0, 1\\)"),
    ({"prior": True}, TypeError, "prior must be a real number"),
    ({"c_miss": -1}, ValueError, "c_miss must be a finite number above 0"),
    ({"c_fa": np.inf}, ValueError, "c_fa"),
    ({"scores_are": "logit"}, ValueError, "scores_are must be one of"),
    ({"scores": [0.2, 1.2]}, ValueError, "scores must lie in"),
    ({"scores": [0.2, np.inf], "scores_are": "llr"}, ValueError, "scores must be finite"),
    ({"scores_are": "llr", "training_prior": 0.5}, ValueError, "training_prior applies"),
    ({"training_prior": 1.5}, ValueError, "training_prior must lie"),
    ({"scores": [], "labels": []}, ValueError, "scores is empty"),
    ({"labels": [0, 2]}, ValueError, "labels must be 0 or 1"),
])
def test_bad_input(kwargs, exc, match):
    args = {"scores": [0.2, 0.7], "labels": [0, 1], "prior": 0.5, **kwargs}
    with pytest.raises(exc, match=match):
        dcf(**args)
    with pytest.raises(exc, match=match):
        min_dcf(**args)


def test_bad_grid():
    with pytest.raises(ValueError, match="prior_log_odds"):
        bayes_error_plot([0.2, 0.7], [0, 1], prior_log_odds=[])
    with pytest.raises(ValueError, match="prior_log_odds"):
        bayes_error_plot([0.2, 0.7], [0, 1], prior_log_odds=[0.0, 50.0])
