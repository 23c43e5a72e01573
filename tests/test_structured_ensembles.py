"""Confidence from several samples (issue 14, item 2; Jagannatha & Yu 2020,
Section 2.6): per-event mean, 10th/90th percentiles and spread against NumPy and
a direct loop, and the MC-dropout helper on a tiny torch model."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sparsecal.structured import (  # noqa: E402
    crf_event_probabilities, crf_span_events, mc_dropout_samples, sample_confidence,
    softmax_event_probabilities, softmax_sequence_events)

from test_structured_events import BIO, brute, random_crf  # noqa: E402


@pytest.mark.parametrize("S", [1, 2, 10])
def test_sample_confidence_against_sorted_samples(S):
    rng = np.random.default_rng(S)
    p = rng.random((S, 30)).astype(np.float32)
    p[:, 0] = 0.5                                           # ties
    c = sample_confidence(p)
    x = np.sort(p.astype(np.float64), 0)
    for q, got in ((10, c.p_low), (90, c.p_high)):
        h = q / 100 * (S - 1)
        lo = int(np.floor(h))
        ref = x[lo] + (h - lo) * (x[min(lo + 1, S - 1)] - x[lo])
        np.testing.assert_allclose(got, ref, rtol=1e-12)
    np.testing.assert_allclose(c.mean, x.mean(0), rtol=1e-12)
    np.testing.assert_allclose(c.std, np.sqrt(((x - x.mean(0)) ** 2).mean(0)), rtol=1e-9,
                               atol=1e-15)
    assert c.p_low[0] == c.p_high[0] == 0.5 and c.n_samples == S
    assert sorted(c.features()) == ["mean", "p_high", "p_low", "std"]
    c5 = sample_confidence(p, percentiles=(5, 95))
    if S > 1:
        assert not np.allclose(c5.p_low, c.p_low)


def test_event_confidence_from_crf_samples_against_brute_force():
    rng = np.random.default_rng(31)
    em, T, start, end, allowed, lengths = random_crf(rng, B=3, N=4)
    gold = rng.integers(0, 3, size=(3, 4))
    ev = crf_span_events(em, T, gold, BIO, 2, lengths=lengths, allowed=allowed)
    members = [em + 0.5 * rng.normal(size=em.shape) for _ in range(5)]
    P = np.stack([crf_event_probabilities(ev, m, T, lengths=lengths, allowed=allowed,
                                          normalize=True) for m in members])
    c = sample_confidence(P)
    for i in range(len(ev)):
        b, s, l = ev.sentence[i], ev.start[i], ev.length[i]
        qs = []
        for m in members:
            seqs, p = brute(m[b, :lengths[b]], T, None, None, allowed, lengths[b])
            qs.append(p[(seqs[:, s:s + l] == ev.tags[i, :l]).all(1)].sum() ** (1 / l))
        assert c.mean[i] == pytest.approx(np.mean(qs), abs=1e-9)
        assert c.p_high[i] == pytest.approx(np.percentile(qs, 90), abs=1e-9)


class Tagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = torch.nn.Linear(4, 8)
        self.norm = torch.nn.BatchNorm1d(8)
        self.drop = torch.nn.Dropout(0.5)
        self.out = torch.nn.Linear(8, 3)

    def forward(self, x):
        return torch.softmax(self.out(self.drop(self.norm(self.lin(x)))), -1)


def test_mc_dropout_samples_turns_on_dropout_only_and_restores_modes():
    net = Tagger()
    net.train()
    net.out.eval()                                          # mixed modes, restored
    before = {n: m.training for n, m in net.named_modules()}
    x = torch.randn(6, 4)
    state = torch.get_rng_state()
    out = mc_dropout_samples(net, x, n_samples=7, seed=3)
    assert torch.equal(torch.get_rng_state(), state)        # global RNG untouched
    assert {n: m.training for n, m in net.named_modules()} == before
    assert out.shape == (7, 6, 3) and not out.requires_grad
    assert torch.equal(out, mc_dropout_samples(net, x, n_samples=7, seed=3))
    # the reference: dropout on, batch norm in eval mode, the same masks
    net.eval()
    net.drop.train()
    torch.manual_seed(3)
    with torch.no_grad():
        ref = torch.stack([net(x) for _ in range(7)])
    assert torch.equal(out, ref)
    net.drop.eval()
    with torch.no_grad():
        det = net(x)
    assert not torch.allclose(out[0], det)                  # dropout was on
    assert torch.equal(mc_dropout_samples(net, (x,), 2, seed=3), ref[:2])


def test_mc_dropout_to_event_confidence():
    net = Tagger().eval()
    x = torch.randn(2, 3, 4)                                # 2 sentences, 3 tokens
    samples = mc_dropout_samples(net, x.reshape(6, 4), 10, seed=1).reshape(10, 2, 3, 3)
    mean = samples.mean(0).double().numpy()
    ev = softmax_sequence_events(mean, [[0, 1, 2], [2, 2, 2]], k=3)
    P = np.stack([softmax_event_probabilities(ev, s.double().numpy()) for s in samples])
    c = sample_confidence(P)
    np.testing.assert_allclose(c.mean, [np.mean([
        np.prod(s.double().numpy()[b, np.arange(3), ev.tags[i]]) for s in samples])
        for i, b in enumerate(ev.sentence)])
    assert (c.p_low <= c.mean).all() and (c.mean <= c.p_high).all() and (c.std > 0).all()


@pytest.mark.parametrize("call,err,match", [
    (lambda: sample_confidence([0.2, 0.3]), ValueError, "2-dimensional"),
    (lambda: sample_confidence(np.zeros((0, 3))), ValueError, "at least one sample"),
    (lambda: sample_confidence([[1.2]]), ValueError, "probabilities must lie"),
    (lambda: sample_confidence([[0.2]], percentiles=(90, 10)), ValueError, "percentiles"),
    (lambda: sample_confidence([[0.2]], percentiles="10"), ValueError, "percentiles"),
    (lambda: mc_dropout_samples(lambda x: x, torch.ones(1)), TypeError, "Module"),
    (lambda: mc_dropout_samples(Tagger(), torch.ones(2, 4), 0), ValueError, "n_samples"),
    (lambda: mc_dropout_samples(Tagger(), torch.ones(2, 4), 2, seed=-1), ValueError, "seed"),
])
def test_bad_input(call, err, match):
    with pytest.raises(err, match=match):
        call()
