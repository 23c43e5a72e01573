"""sparsecal.adapters.pytorch_crf against pytorch-crf's own likelihood and brute-force
enumeration of every tag sequence (Nguyen & O'Connor 2015, Section 4.2)."""
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchcrf = pytest.importorskip("torchcrf")

from sparsecal.adapters import log_partition_from_torchcrf, marginals_from_torchcrf  # noqa: E402


def _layer(C, batch_first, seed):
    torch.manual_seed(seed)
    crf = torchcrf.CRF(C, batch_first=batch_first).double()
    with torch.no_grad():
        for p in crf.parameters():
            p.normal_(0, 1.5)
    return crf


def _padded(B, N, C, seed, batch_first):
    g = torch.Generator().manual_seed(seed)
    emissions = torch.randn(B, N, C, generator=g, dtype=torch.float64) * 2
    lengths = torch.randint(1, N + 1, (B,), generator=g)
    lengths[0] = N
    mask = torch.arange(N)[None] < lengths[:, None]
    if not batch_first:
        return emissions.transpose(0, 1), mask.transpose(0, 1), lengths
    return emissions, mask, lengths


def _brute(crf, emissions, mask):
    """Marginals [B, N, C] and log Z [B] by enumerating every sequence, scoring each
    with the layer itself (its forward: log-likelihood + log Z = score)."""
    e = emissions if crf.batch_first else emissions.transpose(0, 1)
    m = mask if crf.batch_first else mask.transpose(0, 1)
    B, N, C = e.shape
    marg, logz = torch.zeros(B, N, C, dtype=torch.float64), torch.zeros(B, dtype=torch.float64)
    for b in range(B):
        L = int(m[b].sum())
        seqs = torch.tensor(list(itertools.product(range(C), repeat=L)))
        scores = torch.stack([_score(crf, e[b, :L], s) for s in seqs])
        logz[b] = torch.logsumexp(scores, 0)
        p = torch.exp(scores - logz[b])
        for t in range(L):
            marg[b, t] = torch.zeros(C, dtype=torch.float64).index_add(0, seqs[:, t], p)
    return marg, logz


def _score(crf, e, tags):
    s = crf.start_transitions[tags[0]] + crf.end_transitions[tags[-1]] + e[
        torch.arange(len(tags)), tags].sum()
    return s + crf.transitions[tags[:-1], tags[1:]].sum()


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_marginals_and_log_z_match_brute_force(batch_first, seed):
    C = 2 + seed % 2
    crf = _layer(C, batch_first, seed)
    emissions, mask, lengths = _padded(3, 4, C, seed, batch_first)
    want_m, want_z = _brute(crf, emissions, mask)
    got = marginals_from_torchcrf(crf, emissions, mask)
    assert got.shape == emissions.shape
    got_bf = got if batch_first else got.transpose(0, 1)
    torch.testing.assert_close(got_bf, want_m, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(log_partition_from_torchcrf(crf, emissions, mask), want_z,
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("batch_first", [True, False])
def test_log_z_is_what_the_layers_likelihood_implies(batch_first):
    """crf(emissions, tags, mask, reduction='none') = score(tags) - log Z, for several
    tag sequences: log Z = score - llh is the same for all of them and ours."""
    C, crf = 5, _layer(5, batch_first, 7)
    emissions, mask, _ = _padded(4, 6, C, 7, batch_first)
    ours = log_partition_from_torchcrf(crf, emissions, mask)
    e = emissions if batch_first else emissions.transpose(0, 1)
    m = mask if batch_first else mask.transpose(0, 1)
    for k in range(4):
        tags = torch.randint(0, C, e.shape[:2], generator=torch.Generator().manual_seed(k))
        layer_tags = tags if batch_first else tags.t()
        llh = crf(emissions, layer_tags, mask, reduction="none")
        score = torch.stack([_score(crf, e[b, :int(m[b].sum())], tags[b, :int(m[b].sum())])
                             for b in range(e.shape[0])])
        torch.testing.assert_close(score - llh, ours, rtol=1e-10, atol=1e-10)


def test_tiny_float32_default_mask_and_inputs_untouched():
    crf = torchcrf.CRF(2)                 # float32, seq-first, one token
    emissions = torch.randn(1, 1, 2)
    before = [p.detach().clone() for p in crf.parameters()] + [emissions.clone()]
    p = marginals_from_torchcrf(crf, emissions)
    want = torch.softmax(emissions[0, 0] + crf.start_transitions + crf.end_transitions, -1)
    assert p.dtype == torch.float32 and not p.requires_grad
    torch.testing.assert_close(p[0, 0], want.detach())
    for a, b in zip(before, list(crf.parameters()) + [emissions]):
        assert torch.equal(a, b)


def test_errors():
    crf = torchcrf.CRF(3, batch_first=True)
    with pytest.raises(TypeError, match="crf must be a torchcrf.CRF"):
        marginals_from_torchcrf(object(), torch.zeros(1, 2, 3))
    with pytest.raises(ValueError, match="num_tags=3"):
        marginals_from_torchcrf(crf, torch.zeros(1, 2, 4))
    with pytest.raises(ValueError, match=r"\[batch, seq_len, num_tags\]"):
        marginals_from_torchcrf(crf, torch.zeros(2, 3))
    with pytest.raises(ValueError, match=r"mask has shape \(2, 1\), expected \(1, 2\)"):
        marginals_from_torchcrf(crf, torch.zeros(1, 2, 3), torch.ones(2, 1, dtype=torch.bool))
    with pytest.raises(ValueError, match="mask"):   # not a run of leading ones
        marginals_from_torchcrf(crf, torch.zeros(1, 3, 3),
                                torch.tensor([[True, False, True]]))
