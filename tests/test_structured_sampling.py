"""Sampling-based inference (issue 14, item 5): forward-filtering backward-sampling
against the exact forward-backward marginals and brute-force sequence
probabilities (bounds of 5 binomial standard errors), reproducibility, and the
intervals of event frequencies against scipy's Wilson interval."""
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sparsecal import crf  # noqa: E402
from sparsecal.structured import (  # noqa: E402
    decode_spans, sample_frequency, sample_percentiles, sample_sequences)
from sparsecal.structured.sampling import uniforms  # noqa: E402

from test_structured_events import BIO, brute, random_crf, ref_spans  # noqa: E402

S = 20000


def _within(freq, exact, n, k=5.0):
    se = np.sqrt(exact * (1 - exact) / n)
    assert np.all(np.abs(freq - exact) <= k * se + 1e-12), np.max(np.abs(freq - exact) - k * se)


@pytest.fixture(scope="module")
def crf_and_samples():
    rng = np.random.default_rng(11)
    em, T, start, end, allowed, lengths = random_crf(rng, B=3, N=4)
    y = sample_sequences(em, T, S, lengths=lengths, start=start, end=end,
                         allowed=allowed, seed=5).numpy()
    return (em, T, start, end, allowed, lengths), y


def test_sampled_token_and_pair_marginals_converge_to_forward_backward(crf_and_samples):
    (em, T, start, end, allowed, lengths), y = crf_and_samples
    kw = dict(lengths=lengths, start=start, end=end, allowed=allowed, backend="log")
    tok = crf.marginals(em, T, **kw).numpy()
    pair = crf.pair_marginals(em, T, **kw).numpy()
    B, N, C = em.shape
    freq = (y[..., None] == np.arange(C)).mean(1)                       # [B, N, C]
    _within(freq, tok, S)
    pf = ((y[:, :, :-1, None, None] == np.arange(C)[:, None])
          & (y[:, :, 1:, None, None] == np.arange(C)[None, :])).mean(1)  # [B, N-1, C, C]
    _within(pf, pair, S)
    assert (y[np.arange(N)[None, None] >= lengths[:, None, None]
              + np.zeros((1, S, 1), int)] == -1).all()
    assert not (pf[:, :, ~allowed] > 0).any()                            # never forbidden


def test_sampled_sequence_frequencies_match_exact_probabilities(crf_and_samples):
    from scipy.stats import chisquare

    (em, T, start, end, allowed, lengths), y = crf_and_samples
    seqs, p = brute(em[0], T, start, end, allowed)                      # 81 sequences
    code = (y[0] * 3 ** np.arange(3, -1, -1)).sum(-1)
    counts = np.bincount(code, minlength=81)
    scode = (seqs * 3 ** np.arange(3, -1, -1)).sum(-1)
    freq = counts[scode] / S
    _within(freq, p, S)
    keep = p > 0
    assert counts[scode[~keep]].sum() == 0
    assert chisquare(counts[scode[keep]], p[keep] / p[keep].sum() * S).pvalue > 1e-3


def test_samples_reproducible_and_independent_of_the_batch():
    rng = np.random.default_rng(12)
    em, T, start, end, allowed, lengths = random_crf(rng, B=4, N=5)
    kw = dict(start=start, end=end, allowed=allowed)
    full = sample_sequences(em, T, 50, lengths=lengths, seed=3, **kw)
    assert torch.equal(full, sample_sequences(em, T, 50, lengths=lengths, seed=3, **kw))
    assert not torch.equal(full, sample_sequences(em, T, 50, lengths=lengths, seed=4, **kw))
    # sentence 2 alone, padded differently, with more samples: the same draws
    L2 = int(lengths[2])
    alone = sample_sequences(em[2:3, :L2], T, 80, lengths=[L2], seed=3, sentence_ids=[2],
                             **kw)
    assert torch.equal(alone[0, :50, :L2], full[2, :, :L2])
    sub = sample_sequences(em[[3, 1]], T, 50, lengths=lengths[[3, 1]], seed=3,
                           sentence_ids=[3, 1], **kw)
    assert torch.equal(sub, full[[3, 1]])


def test_float32_and_float64_give_the_same_samples_up_to_rounding():
    rng = np.random.default_rng(13)
    em, T, start, end, allowed, lengths = random_crf(rng, B=5, N=6)
    a = sample_sequences(em, T, 400, lengths=lengths, allowed=allowed, seed=1)
    b = sample_sequences(em.astype(np.float32), T.astype(np.float32), 400, lengths=lengths,
                         allowed=allowed, seed=1)
    assert (a == b).double().mean() > 0.999


def test_tiny_sentences_and_one_sample():
    em = np.array([[[0.0, np.log(3.0)]]])                              # N = 1, p = 1/4, 3/4
    y = sample_sequences(em, np.zeros((2, 2)), 4000, seed=0).numpy()
    _within((y[0, :, 0] == 1).mean(), 0.75, 4000)
    one = sample_sequences(em, np.zeros((2, 2)), 1)
    assert one.shape == (1, 1, 1) and int(one[0, 0, 0]) in (0, 1)


def test_uniforms_are_uniform_and_keyed_by_id():
    from scipy.stats import kstest

    u = uniforms(7, np.array([0, 1, 2]), 1000, 10)
    assert u.shape == (3, 1000, 10) and 0 <= u.min() and u.max() < 1
    assert kstest(u.ravel(), "uniform").pvalue > 1e-3
    assert abs(np.corrcoef(u[:, :, :-1].ravel(), u[:, :, 1:].ravel())[0, 1]) < 0.02
    np.testing.assert_array_equal(uniforms(7, np.array([2]), 1000, 10)[0], u[2])


def test_span_count_interval_and_event_frequency_from_samples(crf_and_samples):
    (em, T, start, end, allowed, lengths), y = crf_and_samples
    spans = decode_spans(y[0], BIO)                                   # 20000 samples
    count = np.bincount(spans.sentence, minlength=S)
    seqs, p = brute(em[0], T, start, end, allowed)
    exact = np.array([len(ref_spans(s, BIO, "bio")) for s in seqs])
    mean, var = (p * exact).sum(), (p * exact ** 2).sum() - (p * exact).sum() ** 2
    est = sample_percentiles(count)
    assert abs(est.estimate - mean) <= 5 * np.sqrt(var / S)
    cdf = np.cumsum(np.bincount(exact, weights=p))                    # exact quantiles
    assert est.low == np.searchsorted(cdf, 0.025) and est.high == np.searchsorted(cdf, 0.975)
    # the event "a span starts at token 0": frequency, Wilson interval, exact value
    event = np.zeros(S, bool)
    event[spans.sentence[spans.start == 0]] = True
    truth = p[[bool(ref_spans(s, BIO, "bio")) and ref_spans(s, BIO, "bio")[0][0] == 0
               for s in seqs]].sum()
    f = sample_frequency(event)
    assert f.low <= truth <= f.high
    _within(f.estimate, truth, S)


@pytest.mark.parametrize("k,n", [(0, 1), (1, 1), (0, 2), (1, 2), (2, 2), (0, 50), (7, 50),
                                 (50, 50), (333, 1000)])
@pytest.mark.parametrize("level", [0.95, 0.9, 0.5])
def test_wilson_interval_matches_scipy(k, n, level):
    from scipy.stats import binomtest

    est = sample_frequency(np.arange(n) < k, confidence_level=level)
    ref = binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    assert est.estimate == k / n and est.n_samples == n
    assert est.low == pytest.approx(ref.low, abs=1e-12)
    assert est.high == pytest.approx(ref.high, abs=1e-12)


def test_estimates_shapes_and_percentiles():
    rng = np.random.default_rng(14)
    x = rng.integers(0, 2, size=(3, 4, 200)).astype(bool)
    est = sample_frequency(x)
    assert est.estimate.shape == (3, 4)
    np.testing.assert_allclose(est.estimate, x.mean(-1))
    v = rng.normal(size=(5, 400)).astype(np.float32)
    pe = sample_percentiles(v, confidence_level=0.8)
    s = np.sort(v.astype(np.float64), -1)
    np.testing.assert_allclose(pe.low, s[:, 39] + 0.9 * (s[:, 40] - s[:, 39]), rtol=1e-6)
    np.testing.assert_allclose(pe.high, s[:, 359] + 0.1 * (s[:, 360] - s[:, 359]), rtol=1e-6)
    np.testing.assert_allclose(pe.estimate, v.astype(np.float64).mean(-1), rtol=1e-12)
    assert pe.to_dict()["method"] == "percentile"


@pytest.mark.parametrize("call,err,match", [
    (lambda: sample_sequences(np.zeros((1, 2, 2)), np.zeros((2, 2)), 0), ValueError,
     "n_samples"),
    (lambda: sample_sequences(np.zeros((1, 2, 2)), np.zeros((2, 2)), 2, seed=-1),
     ValueError, "seed"),
    (lambda: sample_sequences(np.zeros((1, 2, 2)), np.zeros((2, 2)), 2, seed=2 ** 64),
     ValueError, "seed"),
    (lambda: sample_sequences(np.zeros((1, 2, 2)), np.zeros((2, 2)), 2,
                              sentence_ids=[1, 2]), ValueError, "sentence_ids"),
    (lambda: sample_sequences(np.zeros((1, 2, 2)), np.zeros((2, 2)), 2,
                              allowed=np.zeros((2, 2), bool)), ValueError, "no tag sequence"),
    (lambda: sample_frequency([0, 2]), ValueError, "0/1"),
    (lambda: sample_frequency(np.zeros((2, 0))), ValueError, "at least one sample"),
    (lambda: sample_frequency([1, 0], confidence_level=95), ValueError, "confidence_level"),
    (lambda: sample_percentiles([1.0, np.nan]), ValueError, "NaN"),
    (lambda: sample_percentiles(["a"]), TypeError, "values"),
])
def test_bad_input(call, err, match):
    with pytest.raises(err, match=match):
        call()
