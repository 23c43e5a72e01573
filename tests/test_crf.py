"""Tests of ``sparsecal.crf`` (linear-chain CRF marginals).

References: brute-force enumeration of every tag sequence on tiny chains (exact
token / pair / span marginals, log Z, Viterbi and k-best), the log-space
recursion, and torch-struct's ``LinearChainCRF``.
"""
import doctest
import itertools
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import sparsecal  # noqa: E402
from sparsecal import crf  # noqa: E402
from sparsecal.crf import decoding, logspace, posteriors, streaming  # noqa: E402

F64 = torch.float64
TOL = 1e-10


# --------------------------------------------------------------------------- #
# Brute force                                                                  #
# --------------------------------------------------------------------------- #

def _np(x):
    return None if x is None else np.asarray(x.detach() if torch.is_tensor(x) else x,
                                             dtype=np.float64)


def brute(e, T, L, start=None, end=None, allowed=None):
    """Enumerate all sequences: token [B,N,C], pairs [B,N-1,C,C], logZ [B], and
    per sentence the list of (sequence, probability)."""
    e, T = _np(e), _np(T).copy()
    start, end = _np(start), _np(end)
    if allowed is not None:
        T[~np.asarray(allowed)] = -np.inf
    B, N, C = e.shape
    tok = np.zeros((B, N, C))
    pairs = np.zeros((B, max(N - 1, 0), C, C))
    logz = np.zeros(B)
    seqprobs = []
    for b in range(B):
        l = int(L[b])
        seqs = np.array(list(itertools.product(range(C), repeat=l)))
        sc = e[b, np.arange(l)[None], seqs].sum(1)
        if l > 1:
            sc = sc + T[seqs[:, :-1], seqs[:, 1:]].sum(1)
        if start is not None:
            sc = sc + start[seqs[:, 0]]
        if end is not None:
            sc = sc + end[seqs[:, -1]]
        mx = sc.max()
        w = np.exp(sc - mx)                  # normalised directly: exact for ties
        lz = mx + np.log(w.sum())            # of huge scores, where log(count) is lost
        p = w / w.sum()
        logz[b] = lz
        for t in range(l):
            np.add.at(tok[b, t], seqs[:, t], p)
        for t in range(l - 1):
            np.add.at(pairs[b, t], (seqs[:, t], seqs[:, t + 1]), p)
        seqprobs.append((seqs, p))
    return tok, pairs, logz, seqprobs


def random_case(seed, B=4, N=5, C=3, lengths=(5, 1, 3, 2), start_end=True,
                constrained=False, dtype=F64, scale=1.5):
    g = torch.Generator().manual_seed(seed)
    e = (torch.randn(B, N, C, generator=g, dtype=F64) * scale).to(dtype)
    T = (torch.randn(C, C, generator=g, dtype=F64) * scale).to(dtype)
    st = en = allowed = None
    if start_end:
        st = torch.randn(C, generator=g, dtype=F64).to(dtype)
        en = torch.randn(C, generator=g, dtype=F64).to(dtype)
    if constrained:
        allowed = torch.rand(C, C, generator=g) < 0.6
        allowed.fill_diagonal_(True)              # every sentence keeps a path
        e[0, 1, 0] = -torch.inf                   # an impossible tag at one token
        if st is not None:
            st[C - 1] = -torch.inf
    L = torch.tensor(lengths[:B])
    return dict(emissions=e, transitions=T, lengths=L, start=st, end=en, allowed=allowed)


CASES = [
    dict(seed=1),
    dict(seed=2, start_end=False),
    dict(seed=3, constrained=True),
    dict(seed=4, constrained=True, start_end=False, C=4, N=4, lengths=(4, 4, 1, 3)),
    dict(seed=5, B=3, N=5, C=2, lengths=(1, 1, 1)),
    dict(seed=6, B=3, N=5, C=4, lengths=(3, 2, 3)),     # max(lengths) < N
    dict(seed=7, B=2, N=1, C=3, lengths=(1, 1)),
]
BACKENDS = ["lean", "log", "torch-struct"]


def _kw(case):
    return {k: v for k, v in case.items() if k not in ("emissions", "transitions")}


@pytest.fixture(params=range(len(CASES)), ids=lambda i: f"case{i}")
def case(request):
    c = random_case(**CASES[request.param])
    ref = brute(c["emissions"], c["transitions"], c["lengths"], c["start"], c["end"],
                c["allowed"])
    return c, ref


# --------------------------------------------------------------------------- #
# Exactness against enumeration                                                #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("backend", BACKENDS)
def test_token_marginals_exact(case, backend):
    c, (tok, _, _, _) = case
    m = crf.marginals(c["emissions"], c["transitions"], backend=backend, **_kw(c))
    assert m.dtype == F64 and m.shape == tok.shape
    np.testing.assert_allclose(m.numpy(), tok, atol=TOL, rtol=0)
    real = np.arange(m.shape[1])[None] < c["lengths"].numpy()[:, None]
    np.testing.assert_allclose(m.sum(-1).numpy(), real.astype(float), atol=TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pair_marginals_exact(case, backend):
    c, (tok, pairs, _, _) = case
    p = crf.pair_marginals(c["emissions"], c["transitions"], backend=backend, **_kw(c))
    assert p.shape == pairs.shape
    np.testing.assert_allclose(p.numpy(), pairs, atol=TOL, rtol=0)
    if p.shape[1]:
        # summing out either tag gives the token marginals (where the pair exists)
        valid = (np.arange(p.shape[1])[None] < c["lengths"].numpy()[:, None] - 1)
        np.testing.assert_allclose(p.sum(-1).numpy(), tok[:, :-1] * valid[..., None],
                                   atol=TOL)
        np.testing.assert_allclose(p.sum(-2).numpy(), tok[:, 1:] * valid[..., None],
                                   atol=TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_log_partition_exact(case, backend):
    c, (_, _, logz, _) = case
    z = crf.log_partition(c["emissions"], c["transitions"], backend=backend, **_kw(c))
    np.testing.assert_allclose(z.detach().numpy(), logz, atol=TOL, rtol=0)


@pytest.mark.parametrize("backend", ["lean", "log"])
@pytest.mark.parametrize("normalize", [False, True])
def test_span_marginals_exact(case, backend, normalize):
    c, (_, _, _, seqprobs) = case
    L = c["lengths"].tolist()
    C = c["emissions"].shape[2]
    rng = np.random.default_rng(0)
    for l in (1, 2, 3):
        bi, ss, tags, want = [], [], [], []
        for b, (seqs, p) in enumerate(seqprobs):
            for s in range(L[b] - l + 1):
                for _ in range(3):
                    y = rng.integers(0, C, l)
                    hit = (seqs[:, s:s + l] == y).all(1)
                    bi.append(b), ss.append(s), tags.append(y)
                    want.append(p[hit].sum())
        if not bi:
            continue
        got = crf.span_marginals(c["emissions"], c["transitions"], bi, ss,
                                 np.array(tags), normalize=normalize, backend=backend,
                                 **_kw(c))
        want = np.array(want)
        if normalize:
            want = want ** (1.0 / l)
        np.testing.assert_allclose(got.numpy(), want, atol=TOL, rtol=0)


def test_span_of_length_one_is_token_marginal(case):
    c, (tok, _, _, _) = case
    L = c["lengths"].tolist()
    C = c["emissions"].shape[2]
    bi, ss, tags = zip(*[(b, t, [y]) for b in range(len(L)) for t in range(L[b])
                         for y in range(C)])
    got = crf.span_marginals(c["emissions"], c["transitions"], bi, ss, tags, **_kw(c))
    np.testing.assert_allclose(got.numpy(), tok[list(bi), list(ss), [t[0] for t in tags]],
                               atol=TOL)


def test_viterbi_exact(case):
    c, (_, _, _, seqprobs) = case
    paths, logp = crf.viterbi(c["emissions"], c["transitions"], **_kw(c))
    assert paths.dtype == torch.int64 and paths.shape == c["emissions"].shape[:2]
    for b, (seqs, p) in enumerate(seqprobs):
        l = int(c["lengths"][b])
        best = int(np.argmax(p))
        assert paths[b, :l].tolist() == seqs[best].tolist()
        assert (paths[b, l:] == -1).all()
        assert abs(float(logp[b]) - np.log(p[best])) < TOL


@pytest.mark.parametrize("k", [1, 4, 40])
def test_kbest_exact(case, k):
    c, (_, _, _, seqprobs) = case
    paths, probs = crf.kbest(c["emissions"], c["transitions"], k, **_kw(c))
    B, N = c["emissions"].shape[:2]
    assert paths.shape == (B, k, N) and probs.shape == (B, k)
    for b, (seqs, p) in enumerate(seqprobs):
        l = int(c["lengths"][b])
        order = np.argsort(-p, kind="stable")
        n_valid = int((p > 0).sum())
        want = np.zeros(k)
        m = min(k, n_valid)
        want[:m] = p[order[:m]]
        np.testing.assert_allclose(probs[b].numpy(), want, atol=TOL, rtol=0)
        assert (np.diff(probs[b].numpy()) <= 1e-15).all()              # descending
        lookup = {tuple(s): q for s, q in zip(seqs.tolist(), p)}
        seen = set()
        for r in range(k):
            path = paths[b, r].tolist()
            if r < m:
                seq = tuple(path[:l])
                assert all(v == -1 for v in path[l:])
                assert seq not in seen
                seen.add(seq)
                assert abs(lookup[seq] - float(probs[b, r])) < TOL
            else:
                assert all(v == -1 for v in path) and float(probs[b, r]) == 0.0


# --------------------------------------------------------------------------- #
# Against torch-struct and the log-space reference                             #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("seed,C,constrained", [(11, 50, False), (12, 23, True),
                                                (13, 8, True)])
def test_agrees_with_torch_struct(seed, C, constrained):
    pytest.importorskip("torch_struct")
    c = random_case(seed, B=5, N=7, C=C, lengths=(6, 1, 3, 6, 2), scale=3.0,
                    constrained=constrained)
    kw = _kw(c)
    ref = crf.marginals(c["emissions"], c["transitions"], backend="torch-struct", **kw)
    refp = crf.pair_marginals(c["emissions"], c["transitions"], backend="torch-struct",
                              **kw)
    for backend in ("lean", "log"):
        m = crf.marginals(c["emissions"], c["transitions"], backend=backend, **kw)
        assert float((m - ref).abs().max()) <= 1e-9
        p = crf.pair_marginals(c["emissions"], c["transitions"], backend=backend, **kw)
        assert float((p - refp).abs().max()) <= 1e-9
    z_ts = crf.log_partition(c["emissions"], c["transitions"], backend="torch-struct", **kw)
    z = crf.log_partition(c["emissions"], c["transitions"], **kw)
    assert float((z - z_ts).abs().max()) <= 1e-9


def test_torch_struct_no_warnings_inference_mode_and_inputs_untouched():
    pytest.importorskip("torch_struct")
    c = random_case(21, B=3, N=4, C=5, lengths=(4, 1, 2))
    e = c["emissions"].clone().requires_grad_(True)
    T = c["transitions"].clone()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with torch.inference_mode():
            m = crf.marginals(e, T, c["lengths"], c["start"], c["end"],
                              backend="torch-struct")
            p = crf.pair_marginals(e, T, c["lengths"], backend="torch-struct")
        m2 = crf.marginals(e, T, c["lengths"], c["start"], c["end"], backend="torch-struct")
    assert e.requires_grad and not T.requires_grad and e.grad is None
    assert torch.equal(e.detach(), c["emissions"]) and torch.equal(T, c["transitions"])
    assert not m.requires_grad and not m2.requires_grad and not p.requires_grad
    assert torch.allclose(m, m2, atol=1e-12)
    ref = crf.marginals(e, T, c["lengths"], c["start"], c["end"], backend="log")
    assert torch.allclose(m, ref, atol=1e-12)


@pytest.mark.parametrize("C", [7, 120])
def test_float32_lean_close_to_float64_log(C):
    c = random_case(31, B=6, N=25, C=C, lengths=(25, 1, 17, 25, 3, 9), scale=3.0,
                    constrained=True)
    kw = _kw(c)
    ref = crf.marginals(c["emissions"], c["transitions"], backend="log", **kw)
    kw32 = {k: (v.float() if torch.is_tensor(v) and v.is_floating_point() else v)
            for k, v in kw.items()}
    m = crf.marginals(c["emissions"].float(), c["transitions"].float(), **kw32)
    assert m.dtype == torch.float32
    assert float((m.double() - ref).abs().max()) <= 1e-4
    lean64 = crf.marginals(c["emissions"], c["transitions"], **kw)
    assert float((lean64 - ref).abs().max()) <= 1e-12
    z = crf.log_partition(c["emissions"], c["transitions"], backend="lean", **kw)
    zr = crf.log_partition(c["emissions"], c["transitions"], **kw)
    assert float(((z - zr) / zr.abs()).abs().max()) <= 1e-12


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_extreme_potentials_fall_back_without_nan(dtype, monkeypatch):
    # Transitions spanning ~900 nats and emissions ~1000: the scaled recursion
    # underflows (M and E entries flush to 0) for sentences 0 and 1 and must fall
    # back to log space; sentence 2 (mild emissions) stays on the lean path.
    C, N = 3, 6
    T = torch.tensor([[0.0, -900.0, -5.0], [-900.0, 0.0, -5.0], [-5.0, -5.0, 0.0]],
                     dtype=F64)
    e = torch.zeros(3, N, C, dtype=F64)
    e[:2, ::2, 0] = 1000.0
    e[:2, 1::2, 1] = 1000.0
    e[1, :, 2] = -3.0
    e[2] = torch.randn(N, C, generator=torch.Generator().manual_seed(3), dtype=F64)
    L = torch.tensor([6, 5, 4])
    fallback_rows = []
    log_fb = logspace.log_fb

    def spy(ch, rows=None, dtype=None):
        fallback_rows.append(None if rows is None else sorted(rows.tolist()))
        return log_fb(ch, rows, dtype)

    monkeypatch.setattr(logspace, "log_fb", spy)
    tok, pairs, logz, seqprobs = brute(e, T, L)
    m = crf.marginals(e.to(dtype), T.to(dtype), L)
    assert fallback_rows == [[0, 1]]
    p = crf.pair_marginals(e.to(dtype), T.to(dtype), L)
    z = crf.log_partition(e.to(dtype), T.to(dtype), L, backend="lean")
    tol = 1e-10 if dtype == F64 else 1e-4
    assert not torch.isnan(m).any() and not torch.isnan(p).any()
    np.testing.assert_allclose(m.double().numpy(), tok, atol=tol)
    np.testing.assert_allclose(p.double().numpy(), pairs, atol=tol)
    np.testing.assert_allclose(z.double().numpy(), logz, rtol=1e-6)
    s = crf.span_marginals(e.to(dtype), T.to(dtype), [0, 1, 2], [0, 1, 1],
                           [[0, 1], [1, 0], [2, 0]], L)
    want = [sum(q for y, q in zip(*seqprobs[b]) if tuple(y[s:s + 2]) == tg)
            for b, s, tg in ((0, 0, (0, 1)), (1, 1, (1, 0)), (2, 1, (2, 0)))]
    np.testing.assert_allclose(s.double().numpy(), want, atol=tol)
    paths, _ = crf.viterbi(e.to(dtype), T.to(dtype), L)
    for b, (seqs, q) in enumerate(seqprobs):
        assert paths[b, :int(L[b])].tolist() == seqs[np.argmax(q)].tolist()


# --------------------------------------------------------------------------- #
# Constraints                                                                  #
# --------------------------------------------------------------------------- #

def bio(C_types=2):
    """O, B-x, I-x tags; I-x only after B-x or I-x; no sentence starts with I-x."""
    C = 1 + 2 * C_types
    allowed = torch.ones(C, C, dtype=torch.bool)
    start = torch.zeros(C, dtype=F64)
    for x in range(C_types):
        i_tag = 2 + 2 * x
        allowed[:, i_tag] = False
        allowed[1 + 2 * x, i_tag] = True
        allowed[i_tag, i_tag] = True
        start[i_tag] = -torch.inf
    return C, allowed, start


@pytest.mark.parametrize("backend", BACKENDS)
def test_bio_constraints_zero_mass_no_nan(backend):
    C, allowed, start = bio()
    g = torch.Generator().manual_seed(5)
    e = torch.randn(3, 6, C, generator=g, dtype=F64) * 2
    T = torch.randn(C, C, generator=g, dtype=F64)
    L = torch.tensor([6, 1, 4])
    m = crf.marginals(e, T, L, start=start, allowed=allowed, backend=backend)
    p = crf.pair_marginals(e, T, L, start=start, allowed=allowed, backend=backend)
    assert not torch.isnan(m).any() and not torch.isnan(p).any()
    assert (m[:, 0, 2] == 0).all() and (m[:, 0, 4] == 0).all()
    assert (p[:, :, ~allowed] == 0).all()
    tok, pairs, _, _ = brute(e, T, L, start, None, allowed)
    np.testing.assert_allclose(m.numpy(), tok, atol=TOL)
    np.testing.assert_allclose(p.numpy(), pairs, atol=TOL)


def test_fewer_sequences_than_k():
    # C=2, only 0->1 and 1->0 transitions: 2 sequences of any length
    allowed = torch.tensor([[False, True], [True, False]])
    e = torch.randn(2, 3, 2, dtype=F64)
    T = torch.zeros(2, 2, dtype=F64)
    paths, probs = crf.kbest(e, T, 5, torch.tensor([3, 1]), allowed=allowed)
    assert (probs[:, 2:] == 0).all() and (paths[:, 2:] == -1).all()
    assert torch.allclose(probs.sum(1), torch.ones(2, dtype=F64), atol=1e-12)
    assert set(map(tuple, paths[0, :2].tolist())) == {(0, 1, 0), (1, 0, 1)}
    assert set(map(tuple, paths[1, :2].tolist())) == {(0, -1, -1), (1, -1, -1)}


def test_no_possible_sequence_raises():
    # tags must alternate (0->1, 1->0); sentence 1 forbids tag 1 at position 0
    # and both tags at position 2: no sequence is possible
    allowed = torch.tensor([[False, True], [True, False]])
    e = torch.zeros(2, 3, 2, dtype=F64)
    e[1, 0, 1] = -torch.inf
    e[1, 2, :] = -torch.inf
    for backend in BACKENDS:
        with pytest.raises(ValueError, match="sentence 1"):
            crf.marginals(e, torch.zeros(2, 2, dtype=F64), allowed=allowed,
                          backend=backend)
    with pytest.raises(ValueError, match="sentence 1"):
        crf.viterbi(e, torch.zeros(2, 2, dtype=F64), allowed=allowed)
    z = crf.log_partition(e, torch.zeros(2, 2, dtype=F64), allowed=allowed)
    assert torch.isfinite(z[0]) and z[1] == -torch.inf


# --------------------------------------------------------------------------- #
# Inputs, autograd, modes                                                      #
# --------------------------------------------------------------------------- #

def test_inputs_untouched_and_requires_grad_kept():
    c = random_case(41, constrained=True)
    e = c["emissions"].clone().requires_grad_(True)
    T = c["transitions"].clone().requires_grad_(True)
    st = c["start"].clone()
    before = [x.detach().clone() for x in (e, T, st)]
    kw = dict(lengths=c["lengths"], start=st, end=c["end"], allowed=c["allowed"])
    outs = [crf.marginals(e, T, **kw), crf.marginals(e, T, backend="log", **kw),
            crf.pair_marginals(e, T, **kw),
            crf.span_marginals(e, T, [0], [1], [[1, 2]], **kw),
            crf.viterbi(e, T, **kw)[1], crf.kbest(e, T, 3, **kw)[1]]
    for o in outs:
        assert not o.requires_grad
    with torch.no_grad():   # lean log Z is differentiable only when grads are wanted
        assert not crf.log_partition(e, T, backend="lean", **kw).requires_grad
    for x, b in zip((e, T, st), before):
        assert torch.equal(x.detach(), b)
    assert e.requires_grad and T.requires_grad and not st.requires_grad
    assert e.grad is None and T.grad is None


def test_log_partition_gradient_is_marginals():
    c = random_case(42, constrained=False)
    e = c["emissions"].clone().requires_grad_(True)
    T = c["transitions"].clone().requires_grad_(True)
    kw = dict(lengths=c["lengths"], start=c["start"], end=c["end"])
    z = crf.log_partition(e, T, **kw)
    z.sum().backward()
    m = crf.marginals(e, T, **kw)
    p = crf.pair_marginals(e, T, **kw)
    np.testing.assert_allclose(e.grad.numpy(), m.numpy(), atol=1e-12)
    np.testing.assert_allclose(T.grad.numpy(), p.sum((0, 1)).numpy(), atol=1e-12)
    assert torch.isfinite(e.grad).all()


def test_inference_mode_all_functions():
    c = random_case(43, constrained=True)
    kw = _kw(c)
    e, T = c["emissions"], c["transitions"]
    ref = crf.marginals(e, T, backend="log", **kw)
    with torch.inference_mode():
        for backend in BACKENDS:
            assert torch.allclose(crf.marginals(e, T, backend=backend, **kw), ref,
                                  atol=1e-12)
        crf.pair_marginals(e, T, **kw)
        crf.log_partition(e, T, **kw)
        crf.span_marginals(e, T, [0, 2], [0, 1], [[0], [1]], **kw)
        crf.viterbi(e, T, **kw)
        crf.kbest(e, T, 2, **kw)
        ei = e.clone()                       # an inference tensor
    m = crf.marginals(ei, T, **kw)
    assert torch.allclose(m, ref, atol=1e-12)


def test_numpy_inputs_and_dtypes():
    c = random_case(44)
    e = c["emissions"].numpy().astype(np.float32)
    e.setflags(write=False)                 # like a read-only memmap
    T = c["transitions"].numpy()            # float64, cast to float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = crf.marginals(e, T, c["lengths"].numpy(), c["start"].numpy(),
                          c["end"].numpy())
    assert isinstance(m, torch.Tensor) and m.dtype == torch.float32
    ref = crf.marginals(c["emissions"], c["transitions"], **_kw(c))
    assert float((m.double() - ref).abs().max()) <= 1e-5
    with pytest.raises(TypeError, match="float32 or float64"):
        crf.marginals(np.zeros((1, 2, 2), dtype=np.int64), T[:2, :2])


def test_mask_equals_lengths_and_trailing_padding_ignored():
    c = random_case(45, lengths=(3, 1, 2, 3))
    e = c["emissions"].clone()
    L = c["lengths"]
    mask = torch.arange(5)[None] < L[:, None]
    e[~mask] = torch.nan                     # padding is never read
    a = crf.marginals(e, c["transitions"], mask=mask, start=c["start"], end=c["end"])
    b = crf.marginals(c["emissions"][:, :3], c["transitions"], L, c["start"], c["end"])
    assert a.shape == (4, 5, 3)
    assert torch.allclose(a[:, :3], b, atol=1e-14) and (a[:, 3:] == 0).all()
    assert not torch.isnan(a).any()


@pytest.mark.parametrize("start_end", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_lean_sorted_batch_reads_emissions_without_writing(dtype, start_end):
    # Lengths already decreasing: without start/end, lean reads the caller's
    # emissions in place (NaN padding, max(lengths) < N); they stay unchanged.
    c = random_case(47, N=6, C=4, lengths=(4, 4, 2, 1), start_end=start_end)
    e = c["emissions"].to(dtype)
    e[torch.arange(6)[None] >= c["lengths"][:, None]] = torch.nan
    before = e.clone()
    kw = {k: (v.to(dtype) if k in ("start", "end") and v is not None else v)
          for k, v in _kw(c).items()}
    m = crf.marginals(e, c["transitions"].to(dtype), **kw)
    assert torch.equal(e.isnan(), before.isnan())
    assert torch.equal(e.nan_to_num(), before.nan_to_num())
    ref = crf.marginals(e, c["transitions"].to(dtype), backend="log", **kw)
    assert float((m - ref).abs().max()) <= (1e-6 if dtype == torch.float32 else 1e-12)
    assert (m[torch.arange(6)[None] >= c["lengths"][:, None]] == 0).all()


def test_lean_workspace_never_aliases_results():
    # The scratch a thread keeps between calls is overwritten by the next call:
    # no result may live in it, whatever the shapes and dtypes in between.
    c = random_case(48, N=6, C=5, lengths=(6, 2, 6, 3))
    e, T, kw = c["emissions"], c["transitions"], _kw(c)
    m = crf.marginals(e, T, **kw)
    p = crf.pair_marginals(e, T, **kw)
    z = crf.log_partition(e, T, backend="lean", **kw)
    s = crf.span_marginals(e, T, [0, 2], [1, 0], [[0, 1], [2, 2]], **kw)
    kept = [x.clone() for x in (m, p, z, s)]
    d = random_case(49, B=3, N=9, C=7, lengths=(9, 9, 4), start_end=False)
    crf.marginals(d["emissions"].float(), d["transitions"].float(), d["lengths"])
    crf.pair_marginals(d["emissions"], d["transitions"], d["lengths"])
    for x, y in zip((m, p, z, s), kept):
        assert torch.equal(x, y)


def test_lean_threads_compute_side_by_side():
    import threading

    # each thread has its own scratch (the products release the GIL)
    cases = [random_case(50 + i, B=5, N=12, C=200, lengths=(12, 3, 12, 7, 1), scale=3.0)
             for i in range(4)]
    ref = [crf.marginals(c["emissions"], c["transitions"], **_kw(c)) for c in cases]
    wrong = [0] * len(cases)
    start = threading.Barrier(len(cases))

    def run(i):
        start.wait()
        for _ in range(20):
            m = crf.marginals(cases[i]["emissions"], cases[i]["transitions"],
                              **_kw(cases[i]))
            wrong[i] += not torch.equal(m, ref[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(cases))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert wrong == [0] * len(cases)


def test_n_threads_restored():
    before = torch.get_num_threads()
    c = random_case(46)
    for n in (None, 1, 2):
        crf.marginals(c["emissions"], c["transitions"], n_threads=n, **_kw(c))
        assert torch.get_num_threads() == before
    for bad in (0, -1, 2.0, True, "2"):
        with pytest.raises(ValueError, match="n_threads must be a positive integer"):
            crf.marginals(c["emissions"], c["transitions"], n_threads=bad)


def test_pair_marginals_memory_warning(monkeypatch):
    monkeypatch.setattr(posteriors, "_PAIR_WARN_BYTES", 100)
    c = random_case(47)
    with pytest.warns(UserWarning, match="GiB"):
        crf.pair_marginals(c["emissions"], c["transitions"], **_kw(c))


@pytest.mark.parametrize("bad, match", [
    (dict(emissions=torch.zeros(2, 3)), "3-dimensional"),
    (dict(transitions=torch.zeros(3, 4, dtype=F64)), "transitions has shape"),
    (dict(start=torch.zeros(4, dtype=F64)), "start has shape"),
    (dict(end=torch.zeros(2, dtype=F64)), "end has shape"),
    (dict(allowed=torch.ones(3, 3)), "boolean"),
    (dict(allowed=torch.ones(2, 3, dtype=torch.bool)), "allowed has shape"),
    (dict(lengths=torch.tensor([5, 6, 1, 1])), "exceeds"),
    (dict(lengths=torch.tensor([5, 0, 1, 1])), "at least 1"),
    (dict(lengths=torch.tensor([5, 1])), "lengths has shape"),
    (dict(lengths=torch.tensor([5.0, 1, 1, 1])), "integers"),
    (dict(lengths=None, mask=torch.tensor([[True, False, True, False, False]] * 4)),
     "leading"),
    (dict(lengths=None, mask=torch.ones(4, 4, dtype=torch.bool)), "mask has shape"),
])
def test_clear_errors(bad, match):
    c = random_case(48)
    c.update(bad)
    with pytest.raises((ValueError, TypeError), match=match):
        crf.marginals(**c)


def test_nan_potentials_raise():
    c = random_case(49)
    e = c["emissions"].clone()
    e[0, 2, 1] = torch.nan
    with pytest.raises(ValueError, match=r"emissions\[0, 2, 1\] is NaN"):
        crf.marginals(e, c["transitions"], c["lengths"])
    e[0, 2, 1] = torch.inf
    with pytest.raises(ValueError, match=r"\+inf"):
        crf.marginals(e, c["transitions"], c["lengths"])
    T = c["transitions"].clone()
    T[1, 1] = torch.nan
    with pytest.raises(ValueError, match="transitions"):
        crf.marginals(c["emissions"], T)
    with pytest.raises(ValueError, match="start"):
        crf.marginals(c["emissions"], c["transitions"], start=torch.full((3,), torch.nan,
                                                                          dtype=F64))
    with pytest.raises(ValueError, match="backend"):
        crf.marginals(c["emissions"], c["transitions"], backend="nope")


def test_span_errors():
    c = random_case(50)
    e, T, kw = c["emissions"], c["transitions"], _kw(c)
    with pytest.raises(ValueError, match="past"):
        crf.span_marginals(e, T, [1], [0], [[0, 1]], **kw)          # sentence 1 has 1 token
    with pytest.raises(ValueError, match="batch_index"):
        crf.span_marginals(e, T, [4], [0], [[0]], **kw)
    with pytest.raises(ValueError, match="tags"):
        crf.span_marginals(e, T, [0], [0], [[3]], **kw)
    one = crf.span_marginals(e, T, 0, 1, [0, 1], **kw)
    assert one.dim() == 0
    with pytest.raises(ValueError, match="k must"):
        crf.kbest(e, T, 0, **kw)


# --------------------------------------------------------------------------- #
# Streaming a corpus into entries                                              #
# --------------------------------------------------------------------------- #

def _corpus(n_batches=4, C=12, dtype=F64):
    g = torch.Generator().manual_seed(60)
    T = torch.randn(C, C, generator=g, dtype=F64).to(dtype)
    batches = []
    for i in range(n_batches):
        B, N = 3 + i, 4 + 2 * i
        L = torch.randint(1, N + 1, (B,), generator=g)
        e = (torch.randn(B, N, C, generator=g, dtype=F64) * 3).to(dtype)
        gold = torch.randint(-1, C, (B, N), generator=g)
        gold[torch.arange(N)[None] >= L[:, None]] = -1
        batches.append(dict(emissions=e, transitions=T, lengths=L, gold=gold))
    return batches


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_stream_entries_equals_threshold_of_dense(dtype):
    batches = _corpus(dtype=dtype)
    dense, gold = [], []
    for b in batches:
        m = crf.marginals(b["emissions"], b["transitions"], b["lengths"])
        real = torch.arange(m.shape[1])[None] < b["lengths"][:, None]
        dense.append(m[real].numpy())
        gold.append(b["gold"][real].numpy())
    dense, gold = np.concatenate(dense), np.concatenate(gold)
    ref = sparsecal.threshold(dense, gold, 0.01)
    dense_out = np.zeros_like(dense)
    calls = []
    got = crf.stream_entries(iter(batches), 0.01, dense_out=dense_out,
                             progress=lambda done, total: calls.append((done, total)))
    # the shared progress convention: batches done, no total for an iterator
    assert calls == [(i, None) for i in range(len(batches) + 1)]
    assert got.n_tokens == dense.shape[0] and got.n_tags == 12
    for name in ("score", "tag", "label", "token"):
        np.testing.assert_array_equal(getattr(got, name), getattr(ref, name))
    np.testing.assert_array_equal(dense_out, dense)
    # tuples and a callable giving the iterator; drop tokens without gold
    tuples = [(b["emissions"], b["transitions"], b["lengths"], b["gold"]) for b in batches]
    calls = []
    got2 = crf.stream_entries(lambda: tuples, 0.05, missing_gold="drop",
                              progress=lambda done, total: calls.append((done, total)))
    assert calls == [(i, len(tuples)) for i in range(len(tuples) + 1)]
    ref2 = sparsecal.threshold(dense, gold, 0.05, missing_gold="drop")
    for name in ("score", "tag", "label", "token"):
        np.testing.assert_array_equal(getattr(got2, name), getattr(ref2, name))


def test_stream_entries_errors():
    batches = _corpus(2)
    with pytest.raises(ValueError, match="dense_out"):
        crf.stream_entries(batches, dense_out=np.zeros((3, 12)))
    with pytest.raises(ValueError, match="n_tags"):
        crf.stream_entries(batches, n_tags=5)
    bad = dict(batches[0], gold=batches[0]["gold"][:, :2])
    with pytest.raises(ValueError, match="gold"):
        crf.stream_entries([bad])
    with pytest.warns(UserWarning, match="not written"):
        crf.stream_entries(batches, dense_out=np.zeros((10_000, 12)))
    with pytest.raises(ValueError, match="backend"):
        crf.stream_entries(batches, backend="nope")
    empty = crf.stream_entries([])
    assert len(empty) == 0 and empty.n_tokens == 0


# --------------------------------------------------------------------------- #
# Optional dependency                                                          #
# --------------------------------------------------------------------------- #

def test_import_without_torch():
    code = ("import sys; sys.modules['torch'] = None\n"
            "import sparsecal\n"
            "assert 'sparsecal.crf' not in sys.modules\n"
            "try:\n"
            "    from sparsecal.crf import marginals\n"
            "except ImportError as exc:\n"
            "    assert 'pip install \"sparsecal[torch]\"' in str(exc), exc\n"
            "    print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


@pytest.mark.parametrize("seed", range(4))
def test_lean_log_partition_is_differentiable_and_matches_log_space(seed):
    """The scaled forward recursion used for training gives the log-space log Z
    and the same gradients (float64), with padding and one-token sentences."""
    g = torch.Generator().manual_seed(seed)
    B, N, C = 5, 7, 6
    args = [torch.randn(*shape, dtype=torch.float64, generator=g, requires_grad=True)
            for shape in ((B, N, C), (C, C), (C,), (C,))]
    lengths = torch.tensor([7, 1, 3, 7, 5])
    kw = dict(lengths=lengths, start=args[2], end=args[3])
    z_log = crf.log_partition(args[0], args[1], backend="log", **kw)
    z_lean = crf.log_partition(args[0], args[1], backend="lean", **kw)
    assert z_lean.requires_grad
    assert torch.allclose(z_lean, z_log, atol=1e-12, rtol=0)
    for a, b in zip(torch.autograd.grad(z_log.sum(), args),
                    torch.autograd.grad(z_lean.sum(), args)):
        assert torch.allclose(a, b, atol=1e-12, rtol=0)


# --------------------------------------------------------------------------- #
# Documentation                                                                #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("module", [posteriors, decoding, streaming], ids=lambda m: m.__name__)
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_public_api_documented():
    for name in crf.__all__:
        doc = getattr(crf, name).__doc__
        for section in ("Parameters", "Returns", "Raises", "References", "Examples"):
            assert section in doc, (name, section)
        assert "%(" not in doc, name


def test_one_thread_variable_for_kernels_and_crf(monkeypatch):
    """One vocabulary (issue 10): ``SPARSECAL_NUM_THREADS`` sets the CRF's torch
    threads as it sets the kernels'; unset, the CRF uses one thread."""
    import warnings

    from sparsecal.core import threads
    from sparsecal.core.threads import get_n_threads
    from sparsecal.crf import _torch
    monkeypatch.setattr(threads, "_usable_cpus", lambda: 2)
    monkeypatch.setenv("SPARSECAL_NUM_THREADS", "2")
    assert _torch.resolve_threads(None) == 2 == get_n_threads(None, 10**9)
    monkeypatch.delenv("SPARSECAL_NUM_THREADS")
    assert _torch.resolve_threads(None) == 1 and _torch.resolve_threads(3) == 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # clamped to the same cap as the kernels' (torch crashes on 10**9)
        assert _torch.resolve_threads(10**9) == threads.max_threads() == 8
