"""The recalibrators of issue 13 against their references: BetaCalibration =
``betacal`` (Kull et al. 2017), PriorWeightedLogistic and LogisticFusion = a
brute-force minimisation of the lecture notes' (``004``) prior-weighted objective,
GaussianCalibration = the closed form by hand."""
import functools
import math
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from sparsecal import (BetaCalibration, GaussianCalibration, LogisticFusion,
                       PriorWeightedLogistic)
from sparsecal.calibration import clone

betacal = pytest.importorskip("betacal")
import betacal.beta_calibration as betacal_impl  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402


def logit(p):
    return np.log(p) - np.log1p(-p)


def make_data(seed, n, ends=True):
    """Rounded scores (ties), some exactly 0 and 1, labels of both classes at
    both ends (not separable)."""
    rng = np.random.default_rng(seed)
    s = np.round(rng.beta(0.7, 1.5, n), int(rng.integers(1, 4)))
    if ends:
        s[:4] = [0.0, 0.0, 1.0, 1.0]
    y = (rng.random(n) < np.clip(s, 0.05, 0.95) ** rng.uniform(0.5, 2.5)).astype(np.uint8)
    y[:4] = [0, 1, 0, 1]
    return s, y


@pytest.fixture
def converged_betacal(monkeypatch):
    """betacal's own code with its LogisticRegression run to convergence (its
    default ``tol=1e-4`` stops up to ~7e-4 away from its optimum)."""
    monkeypatch.setattr(betacal_impl, "LogisticRegression",
                        functools.partial(LogisticRegression, tol=1e-12, max_iter=100000))
    return betacal.BetaCalibration


# --------------------------------------------------------------------------- #
# Beta calibration                                                            #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("parameters", ["abm", "ab", "am"])
@pytest.mark.parametrize("seed,n", [(0, 8), (1, 40), (2, 300), (3, 5000), (4, 100000)])
def test_beta_matches_betacal(converged_betacal, parameters, seed, n):
    s, y = make_data(seed, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = converged_betacal(parameters).fit(s, y)
    cal = BetaCalibration(parameters).fit(s, y)
    q = np.concatenate([np.linspace(0, 1, 2001), s[:1000]])
    np.testing.assert_allclose(cal.predict(q), ref.predict(q), atol=1e-5, rtol=0)
    a, b, _ = ref.calibrator_.map_
    assert (cal.a_, cal.b_) == pytest.approx((a, b), rel=1e-3, abs=1e-4)


def test_beta_refits_without_a_negative_coefficient(converged_betacal):
    """Scores anti-correlated with ln s: betacal drops ``a`` and refits."""
    rng = np.random.default_rng(5)
    s = rng.random(3000)
    y = (rng.random(3000) < 0.3 + 0.2 * (1 - s) * (s > 0.5)).astype(int)
    cal = BetaCalibration().fit(s, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = converged_betacal("abm").fit(s, y)
    assert ref.calibrator_.map_[0] == 0 or ref.calibrator_.map_[1] == 0
    assert (cal.a_ == 0.0) == (ref.calibrator_.map_[0] == 0)
    assert (cal.b_ == 0.0) == (ref.calibrator_.map_[1] == 0)
    np.testing.assert_allclose(cal.predict(s), ref.predict(s), atol=1e-6)


def beta_objective(params, s, y, parameters):
    """betacal's objective, written out: sum of log losses + ||coef||^2 / (2 C)."""
    a, b, c = params
    s = np.clip(s, np.finfo(float).eps, 1 - np.finfo(float).eps)
    eta = a * np.log(s) - b * np.log(1 - s) + c
    z = np.where(y == 1, 1.0, -1.0)
    return np.sum(np.logaddexp(0, -z * eta)) + (a * a + b * b) / (2 * 99999999999.0)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_beta_tiny_and_separable_is_finite_and_optimal(n):
    """n = 1, 2, 3 (separable): the tiny ridge keeps the fit finite; it
    predicts the labels, and its objective is at most stock betacal's."""
    s = np.array([0.2, 0.7, 0.9])[:n]
    y = np.array([0, 1, 1])[:n] if n > 1 else np.array([1])
    cal = BetaCalibration().fit(s, y)
    assert np.isfinite([cal.a_, cal.b_, cal.c_]).all()
    np.testing.assert_array_equal(np.round(cal.predict(s)), y)
    if n > 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a, b, _ = betacal.BetaCalibration().fit(s, y).calibrator_.map_
            lr = betacal.BetaCalibration().fit(s, y).calibrator_.lr_
        ours = beta_objective((cal.a_, cal.b_, cal.c_), s, y, "abm")
        theirs = beta_objective((a, b, lr.intercept_[0]), s, y, "abm")
        assert ours <= theirs + 1e-9


def test_beta_dtype_weights_and_errors():
    s, y = make_data(6, 3000)
    cal = BetaCalibration().fit(s, y)
    p32 = cal.predict(s.astype(np.float32))
    assert p32.dtype == np.float32
    np.testing.assert_allclose(p32, cal.predict(s.astype(np.float32).astype(np.float64)),
                               rtol=1e-6)
    w = np.random.default_rng(0).integers(0, 3, s.size).astype(float)
    weighted = BetaCalibration().fit(s, y, sample_weight=w)
    repeated = BetaCalibration().fit(np.repeat(s, w.astype(int)), np.repeat(y, w.astype(int)))
    np.testing.assert_allclose(weighted.predict(s), repeated.predict(s), atol=1e-9)
    with pytest.raises(ValueError, match="parameters must be one of"):
        BetaCalibration("abc").fit(s, y)
    before = s.copy()
    BetaCalibration().fit(s, y)
    np.testing.assert_array_equal(s, before)


# --------------------------------------------------------------------------- #
# Prior-weighted logistic regression                                          #
# --------------------------------------------------------------------------- #

def notes_R(params, features, z, prior, w=None):
    """R of the lecture notes (``004``): sum_i w_i log(1 + exp(-z_i (alpha . x_i
    + gamma + logit(prior)))), w_i = prior / n_T or (1 - prior) / n_F."""
    *alpha, gamma = params
    w = np.ones(z.size) if w is None else w
    pos = z == 1
    cls_w = np.where(pos, prior / w[pos].sum(), (1 - prior) / w[~pos].sum()) * w
    eta = features @ np.asarray(alpha) + gamma + math.log(prior / (1 - prior))
    return np.sum(cls_w * np.logaddexp(0.0, -z * eta))


def brute_force(features, y, prior, w=None):
    z = np.where(y == 1, 1.0, -1.0)
    x0 = np.zeros(features.shape[1] + 1)
    res = minimize(notes_R, x0, args=(features, z, prior, w), method="BFGS",
                   options={"gtol": 1e-11, "maxiter": 10000})
    return res.x, res.fun


@pytest.mark.parametrize("prior", [0.02, 0.3, 0.5, 0.9])
@pytest.mark.parametrize("seed,n", [(10, 6), (11, 200), (12, 20000)])
def test_prior_weighted_minimises_notes_objective(prior, seed, n):
    s, y = make_data(seed, n)
    cal = PriorWeightedLogistic(training_prior=prior).fit(s, y)
    x = logit(np.clip(s, 1e-7, 1 - 1e-7))[:, None]
    ref, fun = brute_force(x, y, prior)
    assert (cal.slope_, cal.offset_) == pytest.approx(tuple(ref), abs=1e-5)
    z = np.where(y == 1, 1.0, -1.0)
    assert notes_R([cal.slope_, cal.offset_], x, z, prior) <= fun + 1e-12
    assert cal.training_prior_ == prior
    q = np.linspace(0, 1, 501)
    llr = cal.slope_ * logit(np.clip(q, 1e-7, 1 - 1e-7)) + cal.offset_
    np.testing.assert_allclose(cal.llr(q), llr, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cal.predict(q), expit(llr + logit(prior)), rtol=1e-12)


def test_prior_retargeting_is_the_log_odds_shift_and_needs_no_refit():
    s, y = make_data(13, 3000)
    cal = PriorWeightedLogistic(training_prior=0.4).fit(s, y)
    q = np.linspace(0, 1, 301)
    for prior in (0.01, 0.2, 0.7):
        expected = expit(cal.llr(q) + math.log(prior / (1 - prior)))
        np.testing.assert_allclose(cal.predict_for_prior(q, prior), expected, rtol=1e-12)
        retargeted = clone(cal).set_params(application_prior=prior)
        with pytest.raises(ValueError, match="not fitted"):
            retargeted.predict(q)
        state = cal.set_params(application_prior=prior)
        np.testing.assert_allclose(state.predict(q), expected, rtol=1e-12)
        assert (cal.slope_, cal.offset_) == (state.slope_, state.offset_)
    with pytest.raises(ValueError, match=r"application_prior must lie in \(0, 1\)"):
        cal.predict_for_prior(q, 1.0)


def test_prior_default_is_plain_ml_with_a_prior_free_llr():
    """No training prior: the dev rate, so weights 1/n (maximum likelihood,
    as Platt), and the LLR is the ML log-odds minus the dev log-odds."""
    from sparsecal import PlattCalibrator
    s, y = make_data(14, 4000)
    w = np.random.default_rng(1).random(s.size)
    cal = PriorWeightedLogistic().fit(s, y, sample_weight=w)
    platt = PlattCalibrator().fit(s, y, sample_weight=w)
    rate = np.sum(w * y) / np.sum(w)
    assert cal.training_prior_ == pytest.approx(rate, rel=1e-12)
    q = np.linspace(0.01, 0.99, 99)
    np.testing.assert_allclose(cal.predict(q), platt.predict(q), atol=1e-6)
    np.testing.assert_allclose(cal.llr(q), platt.llr(q) - logit(rate), atol=1e-5)


def test_prior_errors():
    s, y = make_data(15, 100)
    with pytest.raises(ValueError, match="both positive and negative"):
        PriorWeightedLogistic().fit(s, np.zeros_like(y))
    with pytest.raises(ValueError, match=r"training_prior must lie in \(0, 1\), got 0.0"):
        PriorWeightedLogistic(training_prior=0.0).fit(s, y)
    with pytest.raises(TypeError, match="application_prior must be a real number"):
        PriorWeightedLogistic(application_prior="0.5").fit(s, y)
    with pytest.raises(ValueError, match=r"eps must lie in \(0, 0.5\)"):
        PriorWeightedLogistic(eps=0.6).fit(s, y)


# --------------------------------------------------------------------------- #
# Gaussian generative calibration                                             #
# --------------------------------------------------------------------------- #

def gaussian_by_hand(s, y, tied, w):
    x = logit(np.clip(s, 1e-7, 1 - 1e-7))
    out = []
    for cls in (1, 0):
        m = y == cls
        mu = np.average(x[m], weights=w[m])
        out.append((mu, np.average((x[m] - mu) ** 2, weights=w[m]), w[m].sum()))
    (mt, vt, nt), (mf, vf, nf) = out
    if tied:
        vt = vf = (vt * nt + vf * nf) / (nt + nf)
    return mt, mf, vt, vf, nt / (nt + nf)


@pytest.mark.parametrize("variance", ["tied", "untied"])
@pytest.mark.parametrize("seed,n", [(20, 5), (21, 300), (22, 50000)])
@pytest.mark.parametrize("weighted", [False, True])
def test_gaussian_equals_closed_form(variance, seed, n, weighted):
    s, y = make_data(seed, n)
    w = np.random.default_rng(seed).random(n) + 0.1 if weighted else np.ones(n)
    cal = GaussianCalibration(variance=variance).fit(s, y, sample_weight=w if weighted else None)
    mt, mf, vt, vf, prior = gaussian_by_hand(s, y, variance == "tied", w)
    fitted = (cal.mean_pos_, cal.mean_neg_, cal.var_pos_, cal.var_neg_, cal.dev_prior_)
    assert fitted == pytest.approx((mt, mf, vt, vf, prior), rel=1e-10)
    q = np.linspace(0, 1, 401)
    x = logit(np.clip(q, 1e-7, 1 - 1e-7))

    def log_normal(v, mu, var):
        return -0.5 * np.log(2 * np.pi * var) - (v - mu) ** 2 / (2 * var)

    llr = log_normal(x, mt, vt) - log_normal(x, mf, vf)
    np.testing.assert_allclose(cal.llr(q), llr, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(cal.predict(q), expit(llr + logit(prior)), rtol=1e-9)
    if variance == "tied":            # affine: (mt - mf) / v * x - (mt^2 - mf^2) / (2 v)
        np.testing.assert_allclose(llr, (mt - mf) / vt * x - (mt ** 2 - mf ** 2) / (2 * vt),
                                   rtol=1e-9, atol=1e-9)
    app = GaussianCalibration(variance=variance, application_prior=0.1)
    app.fit(s, y, sample_weight=w if weighted else None)
    np.testing.assert_allclose(app.predict(q), expit(llr + logit(0.1)), rtol=1e-9)


def test_gaussian_errors():
    with pytest.raises(ValueError, match="both positive and negative"):
        GaussianCalibration().fit([0.2, 0.3], [1, 1])
    with pytest.raises(ValueError, match="zero variance"):
        GaussianCalibration(variance="untied").fit([0.2, 0.3, 0.7], [0, 0, 1])
    with pytest.raises(ValueError, match="variance must be one of"):
        GaussianCalibration(variance="diag").fit([0.2, 0.7], [0, 1])
    cal = GaussianCalibration().fit([0.2, 0.3, 0.7], [0, 0, 1])      # tied: pooled > 0
    assert cal.var_pos_ == cal.var_neg_ > 0


# --------------------------------------------------------------------------- #
# Linear logistic fusion                                                      #
# --------------------------------------------------------------------------- #

def fusion_data(seed, n, k=3):
    if n < 10:      # tiny: one column with overlapping classes (not separable)
        return (np.array([[-1.0], [0.0], [0.0], [1.0], [1.0], [2.0], [-2.0]]),
                np.array([0, 0, 1, 0, 1, 1, 1], dtype=np.uint8))
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(np.uint8)
    truth = np.where(y == 1, 1.0, -1.0)
    x = truth[:, None] * rng.uniform(0.2, 1.5, k) + rng.normal(0, 1.5, (n, k))
    x[:, -1] = np.round(x[:, -1])                 # ties
    return x, y


@pytest.mark.parametrize("prior", [None, 0.1, 0.5])
@pytest.mark.parametrize("seed,n", [(30, 7), (31, 500), (32, 30000)])
def test_fusion_minimises_notes_objective(prior, seed, n):
    x, y = fusion_data(seed, n)
    fusion = LogisticFusion(training_prior=prior).fit(x, y)
    used = y.mean() if prior is None else prior
    ref, fun = brute_force(x, y, used)
    np.testing.assert_allclose(np.r_[fusion.coef_, fusion.offset_], ref, atol=1e-5)
    z = np.where(y == 1, 1.0, -1.0)
    assert notes_R(np.r_[fusion.coef_, fusion.offset_], x, z, used) <= fun + 1e-12
    np.testing.assert_allclose(fusion.llr(x), x @ fusion.coef_ + fusion.offset_, rtol=1e-12)
    np.testing.assert_allclose(fusion.predict(x), expit(fusion.llr(x) + logit(used)),
                               rtol=1e-12)
    np.testing.assert_allclose(fusion.predict_for_prior(x, 0.2),
                               expit(fusion.llr(x) + logit(0.2)), rtol=1e-12)


def test_fusion_of_one_column_is_prior_weighted_logistic():
    s, y = make_data(33, 3000)
    cal = PriorWeightedLogistic(training_prior=0.2).fit(s, y)
    fusion = LogisticFusion(training_prior=0.2).fit(logit(np.clip(s, 1e-7, 1 - 1e-7))[:, None], y)
    assert (fusion.coef_[0], fusion.offset_) == pytest.approx((cal.slope_, cal.offset_),
                                                               rel=1e-9, abs=1e-12)


def test_fusion_save_load_and_validation(tmp_path):
    x, y = fusion_data(34, 2000)
    fusion = LogisticFusion(training_prior=0.3, application_prior=0.05).fit(x, y)
    fusion.save(tmp_path / "f.json")
    back = LogisticFusion.load(tmp_path / "f.json")
    assert back.get_params() == fusion.get_params()
    np.testing.assert_array_equal(back.predict(x), fusion.predict(x))
    import json
    text = (tmp_path / "f.json").read_text()
    for edit, fragment in [
        (lambda d: d["fitted"].update(coef_=[]), "fitted.coef_ must be a non-empty list"),
        (lambda d: d["fitted"].update(offset_="1"), "fitted.offset_ must be a finite number"),
        (lambda d: d["fitted"].update(training_prior_=1.0), "fitted.training_prior_ must lie"),
        (lambda d: d["params"].update(application_prior=2), "params.application_prior must"),
        (lambda d: d["params"].pop("training_prior"), "params.training_prior is missing"),
        (lambda d: d.update(format="x"), "not a sparsecal.LogisticFusion file"),
        (lambda d: d.update(extra=1), "extra is not a field"),
    ]:
        d = json.loads(text)
        edit(d)
        (tmp_path / "bad.json").write_text(json.dumps(d))
        with pytest.raises(ValueError, match="bad.json: ") as info:
            LogisticFusion.load(tmp_path / "bad.json")
        assert fragment in str(info.value)


def test_fusion_errors_and_estimator_api():
    x, y = fusion_data(35, 300)
    fusion = LogisticFusion()
    with pytest.raises(ValueError, match="not fitted"):
        fusion.predict(x)
    assert clone(fusion.fit(x, y)).get_params() == {"application_prior": None,
                                                    "training_prior": None}
    with pytest.raises(ValueError, match="X has 2 columns but the fusion was fit on 3"):
        fusion.predict(x[:, :2])
    bad = x.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"X\[3, 1\] = nan is not finite"):
        LogisticFusion().fit(bad, y)
    with pytest.raises(ValueError, match="labels has 299 values"):
        LogisticFusion().fit(x, y[:-1])
    with pytest.raises(ValueError, match="both positive and negative"):
        LogisticFusion().fit(x, np.ones_like(y))
    before = x.copy()
    LogisticFusion().fit(x, y).predict(x)
    np.testing.assert_array_equal(x, before)
    p32 = LogisticFusion().fit(x.astype(np.float32), y).predict(x.astype(np.float32))
    np.testing.assert_allclose(p32, LogisticFusion().fit(x.astype(np.float32).astype(float), y)
                               .predict(x.astype(np.float32).astype(float)), rtol=1e-12)
