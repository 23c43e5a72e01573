"""Tests of ``TemperatureScaling`` (Guo et al. 2017) on logits."""
import numpy as np
import pytest
from scipy.special import logsumexp, softmax

import sparsecal.calibration.temperature as temperature_module
from sparsecal import TemperatureScaling


def make_logits(seed, t0, n=20000, n_tags=20, dtype=np.float64):
    """Gold drawn from softmax(true_logits); the tagger reports true_logits * t0,
    so softmax(logits / t0) is calibrated and T = t0 is the true temperature."""
    rng = np.random.default_rng(seed)
    true = rng.normal(0.0, 2.0, size=(n, n_tags))
    true[np.arange(n), rng.integers(0, n_tags, n)] += 3.0
    p = softmax(true, axis=1)
    gold = (p.cumsum(axis=1) < rng.random(n)[:, None]).sum(axis=1)
    gold = np.minimum(gold, n_tags - 1)
    return (true * t0).astype(dtype), gold


def nll(logits, gold, t):
    """Mean negative log-likelihood of the gold tags under softmax(logits / t)."""
    z = logits.astype(np.float64) / t
    keep = gold >= 0
    return float(np.mean(logsumexp(z[keep], axis=1) - z[keep, gold[keep]]))


@pytest.mark.parametrize("t0", [0.5, 1.0, 2.5])
def test_recovers_known_temperature(t0):
    logits, gold = make_logits(int(t0 * 10), t0)
    ts = TemperatureScaling().fit(logits, gold)
    assert ts.temperature_ == pytest.approx(t0, rel=0.04)


def test_nll_minimum_by_brute_force():
    logits, gold = make_logits(3, 1.7, n=8000)
    t = TemperatureScaling().fit(logits, gold).temperature_
    at = nll(logits, gold, t)
    for factor in (0.99, 0.999, 1.001, 1.01):
        assert at <= nll(logits, gold, t * factor) + 1e-12
    grid = np.exp(np.linspace(np.log(0.05), np.log(20), 120))
    assert at <= min(nll(logits, gold, g) for g in grid) + 1e-9


def test_transform_is_softmax_of_scaled_logits():
    logits, gold = make_logits(4, 2.0, n=3000)
    ts = TemperatureScaling().fit(logits, gold)
    p = ts.transform(logits)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(p, softmax(logits / ts.temperature_, axis=1), rtol=1e-12,
                               atol=1e-300)
    p32 = ts.transform(logits.astype(np.float32))
    assert p32.dtype == np.float32
    np.testing.assert_allclose(p32.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(ts.fit_transform(logits, gold), p)


def test_gold_minus_one_is_ignored():
    logits, gold = make_logits(5, 1.5, n=4000)
    gold_m = gold.copy()
    gold_m[::3] = -1
    keep = gold_m >= 0
    a = TemperatureScaling().fit(logits, gold_m).temperature_
    b = TemperatureScaling().fit(logits[keep], gold[keep]).temperature_
    assert a == pytest.approx(b, rel=1e-6)


def test_chunked_equals_unchunked(monkeypatch):
    logits, gold = make_logits(6, 1.3, n=3000)
    whole = TemperatureScaling().fit(logits, gold)
    p_whole = whole.transform(logits)
    monkeypatch.setattr(temperature_module, "_CHUNK_BYTES", 7 * 20 * 8)   # 7 rows a chunk
    assert temperature_module._rows(logits) == 7
    chunked = TemperatureScaling().fit(logits, gold)
    # Sums are added in another order, so T may move in the last digits only.
    assert chunked.temperature_ == pytest.approx(whole.temperature_, rel=1e-6)
    chunked.temperature_ = whole.temperature_
    np.testing.assert_array_equal(chunked.transform(logits), p_whole)


def test_memmap_input_and_output(tmp_path):
    logits, gold = make_logits(7, 0.8, n=3000, dtype=np.float32)
    np.save(tmp_path / "logits.npy", logits)
    mm = np.load(tmp_path / "logits.npy", mmap_mode="r")
    a = TemperatureScaling().fit(logits, gold)
    b = TemperatureScaling().fit(mm, gold)
    assert a.temperature_ == b.temperature_
    out = np.lib.format.open_memmap(tmp_path / "p.npy", mode="w+", dtype=np.float32,
                                    shape=mm.shape)
    assert b.transform(mm, out) is out
    out.flush()
    del out
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), a.transform(logits))


def test_errors():
    logits, gold = make_logits(8, 1.0, n=200, n_tags=5)
    ts = TemperatureScaling()
    with pytest.raises(ValueError, match="not fitted"):
        ts.transform(logits)
    with pytest.raises(ValueError):
        ts.fit(logits[:, 0], gold)                           # 1-D
    with pytest.raises(ValueError):
        ts.fit(logits[:, :1], np.zeros(200, dtype=int))      # one tag
    with pytest.raises(ValueError):
        ts.fit(logits[:0], gold[:0])                         # no tokens
    with pytest.raises(TypeError):
        ts.fit(logits.astype(np.int64), gold)
    bad = logits.copy()
    bad[17, 2] = np.nan
    with pytest.raises(ValueError, match=r"logits\[17, 2\]"):
        ts.fit(bad, gold)
    bad[17, 2] = np.inf
    with pytest.raises(ValueError, match="not finite"):
        ts.fit(bad, gold)
    with pytest.raises(ValueError, match="out of range"):
        ts.fit(logits, np.full(200, 5))
    with pytest.raises(ValueError, match="out of range"):
        ts.fit(logits, np.full(200, -2))
    with pytest.raises(ValueError):
        ts.fit(logits, gold[:-1])
    with pytest.raises(ValueError, match="no token"):
        ts.fit(logits, np.full(200, -1))
    with pytest.raises(ValueError, match="bounds"):
        TemperatureScaling(bounds=(2.0, 1.0)).fit(logits, gold)
    ts.fit(logits, gold)
    with pytest.raises(ValueError, match="non-finite"):
        ts.transform(bad)
    with pytest.raises(ValueError):
        ts.transform(logits, np.empty((199, 5)))


def test_any_byte_order_and_layout_gives_the_same_temperature_and_output():
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(300, 5)) * 3
    gold = rng.integers(0, 5, 300)
    want = TemperatureScaling().fit(logits, gold)
    for variant in (logits.astype(">f8"), np.asfortranarray(logits), logits[:, ::-1][:, ::-1]):
        got = TemperatureScaling().fit(variant, gold)
        assert got.temperature_ == want.temperature_
        out = got.transform(variant)
        assert out.dtype == np.float64 and out.dtype.isnative
        np.testing.assert_array_equal(out, want.transform(logits))


@pytest.mark.parametrize("bounds", [(0, 1), (2, 1), (1, np.inf), ("a", 2), (1,), None])
def test_bad_bounds_are_named_before_the_data_is_read(bounds):
    with pytest.raises(ValueError, match="bounds must"):
        TemperatureScaling(bounds=bounds).fit(np.zeros((2, 3)), [0, 1])
