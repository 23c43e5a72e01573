"""Linear-chain CRF marginals: tokens, tag pairs, spans, Viterbi and k-best.

Needs PyTorch (``pip install "sparsecal[torch]"``); ``import sparsecal`` does not
import this module.

Model and conventions
---------------------
All potentials are log-space scores. For a sentence of length ``L`` with tags
``y_0 .. y_{L-1}``::

    score(y) = start[y_0] + sum_t emissions[t, y_t]
               + sum_{t<L-1} transitions[y_t, y_{t+1}] + end[y_{L-1}]
    p(y | x) = exp(score(y)) / Z,   Z = sum_y exp(score(y))

``transitions[a, b]`` scores tag ``a`` at ``t`` followed by tag ``b`` at ``t+1``;
``allowed[a, b] = False`` forbids that transition (it becomes ``-inf``, e.g. BIO
constraints). ``-inf`` anywhere means "impossible"; NaN and ``+inf`` are errors.
Batches are padded: ``emissions [B, N, C]`` with ``lengths [B]`` (each in
``1..N``) or a ``mask [B, N]`` of leading Trues; padding values are never read.

Computed quantities (Nguyen & O'Connor 2015, Section 4.2; Jagannatha & Yu 2020,
eqs. 5-6):

- :func:`marginals`: ``p(y_t = c | x)`` ``[B, N, C]`` (rows sum to 1 on real
  tokens, 0 on padding);
- :func:`pair_marginals`: ``p(y_t = a, y_{t+1} = b | x)`` ``[B, N-1, C, C]``;
- :func:`span_marginals`: ``p(y_s .. y_{s+l-1} = tags | x)``, or its
  length-normalised geometric mean ``p ** (1/l)``;
- :func:`log_partition`: ``log Z`` (differentiable, to train a CRF);
- :func:`viterbi` and :func:`kbest`: the best / k best tag sequences with their
  probabilities;
- :func:`stream_entries`: token marginals of a whole corpus, batch by batch,
  thresholded into :class:`sparsecal.Entries` without the dense matrix.

Backends
--------
``"lean"`` (default)
    Scaled (non-log) forward-backward on BLAS matrix products:
    ``M = exp(transitions - max)``, ``E_t = exp(e_t - rowmax_t)``,
    ``alpha_t = normalise((alpha_{t-1} @ M) * E_t)``, ``beta`` likewise; token
    marginals ``normalise(alpha_t * beta_t)`` (the scale factors cancel). Memory
    ``O(B N C)``; the batch is sorted by length so that each position only
    multiplies the sentences that reach it. A sentence whose scaled recursion
    loses precision (a normaliser below ``C^2 * tiny / eps`` of the dtype, 0 or
    not finite: extreme potentials) is recomputed by the log-space recursion in
    float64, so results are robust.
``"log"``
    Exact forward-backward in log space (``logsumexp`` over ``[B, C, C]`` per
    position, batch-chunked): the reference, ~``C`` times more work per step than
    a matrix product.
``"torch-struct"``
    ``torch_struct.LinearChainCRF`` (edge potentials ``[B, N-1, C, C]`` indexed
    ``[..., z_{n+1}, z_n]``), an external reference. ``O(N C^3)`` and slow for
    hundreds of tags.

Threads
-------
Every function takes ``num_threads``: the torch intra-op threads used *within the
call* (the previous setting is restored afterwards). ``None`` (default) means
``SPARSECAL_TORCH_THREADS`` if set, else 1: the per-position products are small
(``[B, C] @ [C, C]``) and on a shared 2-core machine one thread was 2-8x faster
than two (OpenMP threads spin-wait between small ops). ``0`` leaves torch's
setting alone. ``torch.set_num_threads`` is process-wide: do not call these
functions concurrently from several Python threads with different settings.
"""
import math
import os
import sys
import time
import warnings
from contextlib import contextmanager

import numpy as np

try:
    import torch
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        'sparsecal.crf needs PyTorch; install it with: pip install "sparsecal[torch]" '
        "(torch==2.13.0, torch-struct==0.5)") from exc

from ..core.entries import Entries, threshold as _threshold

__all__ = ["marginals", "pair_marginals", "log_partition", "span_marginals", "viterbi",
           "kbest", "stream_entries"]

_BACKENDS = ("lean", "log", "torch-struct")
_FLOAT_DTYPES = (torch.float32, torch.float64)
# Elements of one [b, C, C] (or [b, C, C, k]) temporary in the log-space loops.
_CHUNK_ELEMENTS = 1 << 22
_PAIR_WARN_BYTES = 1 << 30


# --------------------------------------------------------------------------- #
# Threads                                                                      #
# --------------------------------------------------------------------------- #

def _resolve_threads(num_threads):
    if num_threads is None:
        env = os.environ.get("SPARSECAL_TORCH_THREADS")
        num_threads = int(env) if env else 1
    num_threads = int(num_threads)
    if num_threads < 0:
        raise ValueError(f"num_threads must be >= 0, got {num_threads}")
    return num_threads


@contextmanager
def _threads(num_threads):
    n = _resolve_threads(num_threads)
    old = torch.get_num_threads()
    if n == 0 or n == old:
        yield
        return
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


# --------------------------------------------------------------------------- #
# Input validation                                                             #
# --------------------------------------------------------------------------- #

def _to_tensor(x, name):
    if torch.is_tensor(x):
        return x
    arr = np.asarray(x)
    if arr.dtype == object:
        raise TypeError(f"{name} must be a numeric array, got dtype object")
    if any(s < 0 for s in arr.strides):
        arr = np.ascontiguousarray(arr)
    with warnings.catch_warnings():
        # read-only arrays (memory maps): we never write to them
        warnings.filterwarnings("ignore", message=".*not writable.*")
        return torch.from_numpy(arr)


def _float_like(x, name, ref, shape):
    t = _to_tensor(x, name)
    if not (t.is_floating_point() or t.dtype in (torch.int32, torch.int64)):
        raise TypeError(f"{name} must hold real numbers, got dtype {t.dtype}")
    if tuple(t.shape) != tuple(shape):
        raise ValueError(f"{name} has shape {tuple(t.shape)}, expected {tuple(shape)}")
    return t.to(device=ref.device, dtype=ref.dtype)


def _check_no_nan(t, name):
    """NaN and +inf are errors; -inf means 'impossible'."""
    if t.numel() == 0:
        return
    top = t.max()
    if torch.isnan(top) or top == math.inf:
        bad = torch.isnan(t) | (t == math.inf)
        idx = tuple(int(i) for i in torch.nonzero(bad)[0])
        what = "NaN" if torch.isnan(t[idx]) else "+inf"
        raise ValueError(f"{name}{list(idx)} is {what}: potentials must be log-scores "
                         "(finite, or -inf for impossible)")


class _Chain:
    """Validated CRF inputs (views of the caller's tensors: never modified)."""

    __slots__ = ("e", "T", "start", "end", "L", "n", "B", "N", "C", "dtype", "device",
                 "_Lcpu")


def _prepare(emissions, transitions, lengths=None, start=None, end=None, allowed=None,
             mask=None):
    e = _to_tensor(emissions, "emissions")
    if e.dtype not in _FLOAT_DTYPES:
        raise TypeError(f"emissions must be float32 or float64, got dtype {e.dtype}")
    if e.dim() != 3:
        raise ValueError(f"emissions must be 3-dimensional [B, N, C], got shape "
                         f"{tuple(e.shape)}")
    B, N, C = e.shape
    if B == 0 or N == 0 or C == 0:
        raise ValueError(f"emissions is empty (shape {tuple(e.shape)})")
    T = _float_like(transitions, "transitions", e, (C, C))
    if allowed is not None:
        allowed = _to_tensor(allowed, "allowed")
        if allowed.dtype != torch.bool:
            raise TypeError(f"allowed must be a boolean mask, got dtype {allowed.dtype}")
        if tuple(allowed.shape) != (C, C):
            raise ValueError(f"allowed has shape {tuple(allowed.shape)}, expected "
                             f"({C}, {C})")
        T = T.masked_fill(~allowed.to(e.device), -math.inf)
    _check_no_nan(T, "transitions")
    if start is not None:
        start = _float_like(start, "start", e, (C,))
        _check_no_nan(start, "start")
    if end is not None:
        end = _float_like(end, "end", e, (C,))
        _check_no_nan(end, "end")

    if mask is not None:
        mask = _to_tensor(mask, "mask")
        if tuple(mask.shape) != (B, N):
            raise ValueError(f"mask has shape {tuple(mask.shape)}, expected ({B}, {N})")
        if mask.dtype != torch.bool:
            if mask.is_floating_point() or mask.is_complex():
                raise TypeError(f"mask must be boolean, got dtype {mask.dtype}")
            mask = mask != 0
        mask = mask.to(e.device)
        Lm = mask.sum(1)
        if not torch.equal(mask, torch.arange(N, device=e.device)[None] < Lm[:, None]):
            b = int(torch.nonzero((mask != (torch.arange(N, device=e.device)[None]
                                             < Lm[:, None])).any(1))[0])
            raise ValueError(f"mask row {b} is not a run of leading Trues: give lengths "
                             "for padded sentences")
    if lengths is not None:
        L = _to_tensor(lengths, "lengths")
        if L.dtype == torch.bool or L.is_floating_point() or L.is_complex():
            raise TypeError(f"lengths must hold integers, got dtype {L.dtype}")
        if tuple(L.shape) != (B,):
            raise ValueError(f"lengths has shape {tuple(L.shape)}, expected ({B},)")
        L = L.to(device=e.device, dtype=torch.int64)
        if mask is not None and not torch.equal(L, Lm):
            raise ValueError("lengths and mask disagree")
    elif mask is not None:
        L = Lm
    else:
        L = torch.full((B,), N, dtype=torch.int64, device=e.device)
    lo, hi = int(L.min()), int(L.max())
    if lo < 1:
        b = int(torch.nonzero(L < 1)[0])
        raise ValueError(f"lengths[{b}] = {int(L[b])}: every sentence needs at least 1 "
                         "token")
    if hi > N:
        b = int(torch.nonzero(L > N)[0])
        raise ValueError(f"lengths[{b}] = {int(L[b])} exceeds the padded length N={N} "
                         "of emissions")
    n = hi
    # NaN / +inf in real tokens (padding is ignored)
    top = e[:, :n].max()
    if torch.isnan(top) or top == math.inf:
        real = torch.arange(n, device=e.device)[None] < L[:, None]
        bad = (torch.isnan(e[:, :n]) | (e[:, :n] == math.inf)) & real[..., None]
        if bad.any():
            idx = tuple(int(i) for i in torch.nonzero(bad)[0])
            what = "NaN" if torch.isnan(e[idx]) else "+inf"
            raise ValueError(f"emissions{list(idx)} is {what}: potentials must be "
                             "log-scores (finite, or -inf for impossible)")
    ch = _Chain()
    ch.e, ch.T, ch.start, ch.end, ch.L = e, T, start, end, L
    ch.n, ch.B, ch.N, ch.C, ch.dtype, ch.device = n, B, N, C, e.dtype, e.device
    ch._Lcpu = L.tolist()
    return ch


def _check_backend(backend, allowed=_BACKENDS):
    b = str(backend).replace("_", "-").lower()
    if b == "torchstruct":
        b = "torch-struct"
    if b not in allowed:
        raise ValueError(f"backend must be one of {allowed}, got {backend!r}")
    return b


def _no_path_error(ch, rows):
    b = int(rows[0])
    return ValueError(f"sentence {b} (length {ch._Lcpu[b]}) has no tag sequence with a "
                      "finite score: every path is impossible (-inf potentials or "
                      "disallowed transitions)")


# --------------------------------------------------------------------------- #
# Log-space reference                                                          #
# --------------------------------------------------------------------------- #

def _folded(ch, rows=None, dtype=None):
    """Emissions [b, n, C] with start folded into t=0, end into t=L-1 and padding
    set to 0 (out of place, differentiable)."""
    e, L = ch.e[:, :ch.n], ch.L
    if rows is not None:
        e, L = e[rows], L[rows]
    if dtype is not None:
        e = e.to(dtype)
    pos = torch.arange(ch.n, device=ch.device)
    if ch.end is not None:
        last = (pos[None] == (L - 1)[:, None])[..., None]
        e = torch.where(last, e + ch.end.to(e.dtype), e)
    if ch.start is not None:
        e = torch.cat([e[:, :1] + ch.start.to(e.dtype), e[:, 1:]], 1)
    real = (pos[None] < L[:, None])[..., None]
    return torch.where(real, e, torch.zeros((), dtype=e.dtype, device=e.device)), L


def _chunks(b, per_row):
    step = max(1, _CHUNK_ELEMENTS // max(1, per_row))
    return [slice(i, min(b, i + step)) for i in range(0, b, step)]


def _log_forward(ef, T, L):
    """Log alphas [b, n, C] and log Z [b] (differentiable)."""
    b, n, C = ef.shape
    a = ef[:, 0]
    out = [a]
    for t in range(1, n):
        new = torch.logsumexp(a[:, :, None] + T[None], dim=1) + ef[:, t]
        a = torch.where((L > t)[:, None], new, a)
        out.append(a)
    return torch.stack(out, 1), torch.logsumexp(a, -1)


def _scaled_logz(ef, T, L):
    """log Z [b] by the scaled forward recursion, out of place so autograd
    flows through it: per step one [b, C] @ [C, C] product instead of the log
    space's [b, C, C] logsumexp (Nguyen & O'Connor 2015, Section 4.2; the
    normalisers carry log Z). For training; sentences must have a path."""
    r = ef.amax(-1, keepdim=True).detach()
    E = torch.exp(ef - r)
    fin = torch.isfinite(T)
    m = T.detach()[fin].max() if bool(fin.any()) else T.new_zeros(())
    M = torch.exp(T - m)
    a = E[:, 0]
    z = a.sum(-1)
    logz = torch.log(z) + r[:, 0, 0]
    a = a / z[:, None]
    for t in range(1, ef.shape[1]):
        new = (a @ M) * E[:, t]
        zt = new.sum(-1)
        active = L > t
        a = torch.where(active[:, None], new / zt[:, None], a)
        logz = logz + torch.where(active, torch.log(zt) + r[:, t, 0] + m,
                                  torch.zeros_like(zt))
    return logz


def _log_backward(ef, T, L):
    """Log betas [b, n, C] (0 at and after each sentence's last token)."""
    b, n, C = ef.shape
    beta = torch.zeros(b, C, dtype=ef.dtype, device=ef.device)
    out = [beta]
    for t in range(n - 2, -1, -1):
        new = torch.logsumexp(T[None] + (ef[:, t + 1] + beta)[:, None, :], dim=2)
        beta = torch.where((L - 1 > t)[:, None], new, torch.zeros_like(new))
        out.append(beta)
    return torch.stack(out[::-1], 1)


def _log_fb(ch, rows=None, dtype=None):
    """(log alpha, log beta, log Z, lengths) for the sentences ``rows``, exact log
    space, batch-chunked; no autograd."""
    ef, L = _folded(ch, rows, dtype)
    T = ch.T.to(ef.dtype)
    la, lb, lz = [], [], []
    for sl in _chunks(ef.shape[0], ch.C * ch.C):
        a, z = _log_forward(ef[sl], T, L[sl])
        la.append(a)
        lz.append(z)
        lb.append(_log_backward(ef[sl], T, L[sl]))
    return torch.cat(la), torch.cat(lb), torch.cat(lz), ef, L


def _log_fb_with_paths(ch, rows=None, dtype=None):
    """:func:`_log_fb`, raising for a sentence without any possible tag sequence."""
    la, lb, lz, ef, L = _log_fb(ch, rows, dtype)
    bad = ~torch.isfinite(lz)
    if bad.any():
        idx = torch.nonzero(bad)[:, 0]
        raise _no_path_error(ch, idx if rows is None else _rows_index(rows, ch)[idx])
    return la, lb, lz, ef, L


def _log_token(ch, rows=None, dtype=None):
    la, lb, lz, ef, L = _log_fb_with_paths(ch, rows, dtype)
    m = torch.exp(la + lb - lz[:, None, None])
    real = torch.arange(ch.n, device=ch.device)[None] < L[:, None]
    return m * real[..., None]


def _log_pairs(ch, rows=None, dtype=None):
    la, lb, lz, ef, L = _log_fb_with_paths(ch, rows, dtype)
    T = ch.T.to(ef.dtype)
    n = ch.n
    if n < 2:
        return torch.zeros(ef.shape[0], 0, ch.C, ch.C, dtype=ef.dtype, device=ef.device)
    right = (ef[:, 1:] + lb[:, 1:])[:, :, None, :]              # [b, n-1, 1, C]
    p = torch.exp(la[:, :-1, :, None] + T[None, None] + right - lz[:, None, None, None])
    valid = torch.arange(n - 1, device=ch.device)[None] < (L - 1)[:, None]
    return p * valid[..., None, None]


def _rows_index(rows, ch):
    if isinstance(rows, torch.Tensor) and rows.dtype == torch.bool:
        return torch.nonzero(rows)[:, 0]
    return torch.as_tensor(rows, device=ch.device)


# --------------------------------------------------------------------------- #
# Lean scaled forward-backward                                                 #
# --------------------------------------------------------------------------- #

def _lean(ch, mode):
    """Scaled forward-backward.

    mode "token": returns (marginals [B, N, C], bad rows (bool [B]))
    mode "pair":  returns (pair marginals [B, N-1, C, C], bad)
    mode "ab":    returns (log alpha [B, n, C], log beta [B, n, C], log Z [B], bad)
    mode "logz":  returns (log Z [B], bad)
    Rows flagged ``bad`` lost precision to underflow and must be recomputed.
    """
    B, n, C, N = ch.B, ch.n, ch.C, ch.N
    dt, dev = ch.dtype, ch.device
    L = ch.L
    Lc = ch._Lcpu
    sorted_ = all(Lc[i] >= Lc[i + 1] for i in range(B - 1))
    if sorted_:
        perm = None
        Ls = L
        Lsc = Lc
    else:
        perm = torch.argsort(L, descending=True, stable=True)
        Ls = L[perm]
        Lsc = Ls.tolist()
    # counts[t] = number of (sorted) sentences with length > t: a prefix
    counts = [0] * n
    j = B
    for t in range(n):
        while j > 0 and Lsc[j - 1] <= t:
            j -= 1
        counts[t] = j

    # E: time-major, sorted copy of the emissions, start/end folded, scaled, exp'd
    src = ch.e[:, :n].transpose(0, 1)                               # [n, B, C] view
    E = torch.empty((n, B, C), dtype=dt, device=dev)
    if perm is None:
        E.copy_(src)
    else:
        torch.index_select(src, 1, perm, out=E)
    if ch.start is not None:
        E[0].add_(ch.start)
    if ch.end is not None:
        ar = torch.arange(B, device=dev)
        E[Ls - 1, ar] += ch.end
    r = E.amax(-1, keepdim=True)                                    # [n, B, 1]
    r = torch.where(torch.isfinite(r), r, torch.zeros((), dtype=dt, device=dev))
    E.sub_(r).exp_()
    fin = torch.isfinite(ch.T)
    m = ch.T[fin].max() if bool(fin.any()) else torch.zeros((), dtype=dt, device=dev)
    M = torch.exp(ch.T - m)
    MT = M.t()                        # a view: BLAS reads it transposed

    # forward: A[t] = normalised alpha_t (padding rows zero). Per-position views
    # are made once (unbind): Python-level indexing dominates at small C.
    A = torch.empty((n, B, C), dtype=dt, device=dev)
    zf = torch.ones((n, B, 1), dtype=dt, device=dev)       # forward normalisers
    As, Es, zfs = A.unbind(0), E.unbind(0), zf.unbind(0)
    full = counts[-1] == B                                  # all sentences of length n
    As[0].copy_(Es[0])
    torch.sum(As[0], 1, keepdim=True, out=zfs[0])
    As[0].div_(zfs[0])
    for t in range(1, n):
        if full:
            a, zt = As[t], zfs[t]
            torch.mm(As[t - 1], M, out=a)
            a.mul_(Es[t])
        else:
            k = counts[t]
            a, zt = As[t][:k], zfs[t][:k]
            torch.mm(As[t - 1][:k], M, out=a)
            a.mul_(Es[t][:k])
            if k < B:
                As[t][k:].zero_()
        torch.sum(a, 1, keepdim=True, out=zt)
        a.div_(zt)

    tiny = torch.finfo(dt).tiny
    eps = torch.finfo(dt).eps
    floor = min(C * C * tiny / eps, 1e-3)

    def bad_of(z):
        z = z.reshape(n, B)
        return ((z < floor) | ~torch.isfinite(z)).any(0)

    real_s = torch.arange(n, device=dev)[:, None] < Ls[None, :]      # [n, B] sorted

    def unsort_rows(x):
        if perm is None:
            return x
        out = torch.empty_like(x)
        out[perm] = x
        return out

    if mode == "logz":
        # summed in float64: log Z is a sum of N terms of size ~|emissions|
        r64 = torch.where(real_s, r[..., 0], 0.0).double()
        logz = (torch.log(zf[..., 0].double()) + r64).sum(0) + (Ls - 1) * m.double()
        return unsort_rows(logz.to(dt)), unsort_rows(bad_of(zf))

    # backward: beta holds the normalised beta_{t+1} of the sentences still open
    beta = torch.ones((B, C), dtype=dt, device=dev)
    tmp = torch.empty((B, C), dtype=dt, device=dev)
    zb = torch.ones((n, B, 1), dtype=dt, device=dev)        # backward normalisers
    zs = torch.ones((n, B, 1), dtype=dt, device=dev)        # alpha * beta normalisers
    zbs, zss = zb.unbind(0), zs.unbind(0)
    if mode == "ab":
        Bst = torch.empty((n, B, C), dtype=dt, device=dev)
        Bst[n - 1].fill_(1.0)
    if mode == "pair":
        npair = max(N - 1, 0)
        P = torch.zeros((B, npair, C, C), dtype=dt, device=dev)
        zp = torch.ones((n, B, 1, 1), dtype=dt, device=dev)
    for t in range(n - 2, -1, -1):
        k1, k0 = counts[t + 1], counts[t]
        if full:
            bt, tm, e1, at = beta, tmp, Es[t + 1], As[t]
        else:
            bt, tm, e1, at = beta[:k1], tmp[:k1], Es[t + 1][:k1], As[t][:k1]
        if k1:
            torch.mul(e1, bt, out=tm)
            if mode == "pair":
                slab = at[:, :, None] * M[None] * tm[:, None, :]
                torch.sum(slab, (1, 2), keepdim=True, out=zp[t, :k1])
                slab.div_(zp[t, :k1])
                if perm is None:
                    P[:k1, t] = slab
                else:
                    P[perm[:k1], t] = slab
                del slab
            torch.mm(tm, MT, out=bt)
            zt = zbs[t] if full else zbs[t][:k1]
            torch.sum(bt, 1, keepdim=True, out=zt)
            bt.div_(zt)
        if mode == "ab":
            Bst[t, :k0] = beta[:k0]
        elif mode == "token":
            if full:
                a, bt, zt = As[t], beta, zss[t]
            else:
                a, bt, zt = As[t][:k0], beta[:k0], zss[t][:k0]
            a.mul_(bt)
            torch.sum(a, 1, keepdim=True, out=zt)
            a.div_(zt)
    del E, Es                         # free the emissions before the output exists
    bad = bad_of(zf) | bad_of(zb) | bad_of(zs)
    if mode == "pair":
        bad |= bad_of(zp)
        return P, unsort_rows(bad)
    if mode == "token":
        out = torch.empty((B, N, C), dtype=dt, device=dev)
        if N > n:
            out[:, n:].zero_()
        if perm is None:
            out[:, :n].copy_(A.transpose(0, 1))
        else:
            out[:, :n].index_copy_(0, perm, A.transpose(0, 1))
        return out, unsort_rows(bad)
    # mode "ab": absolute log alphas / betas
    rr = torch.where(real_s, r[..., 0], 0.0)                        # [n, B]
    stepA = torch.log(zf[..., 0]) + rr
    stepA[1:] += m
    cumA = torch.cumsum(stepA * real_s, 0)                          # [n, B]
    # Bc_t = Bc_{t+1} + log zb_t + r_{t+1} + m for t < L-1, else 0
    stepB = torch.zeros((n, B), dtype=dt, device=dev)
    if n > 1:
        valid = torch.arange(n - 1, device=dev)[:, None] < (Ls - 1)[None, :]
        stepB[:-1] = torch.where(valid, torch.log(zb[:-1, :, 0]) + rr[1:] + m, 0.0)
    cumB = torch.flip(torch.cumsum(torch.flip(stepB, [0]), 0), [0])
    la = (torch.log(A) + cumA[..., None]).transpose(0, 1)
    lb = (torch.log(Bst) + cumB[..., None]).transpose(0, 1)
    logz = cumA[(Ls - 1), torch.arange(B, device=dev)]
    if perm is not None:
        la, lb = unsort_rows(la), unsort_rows(lb)
    return la, lb, unsort_rows(logz), unsort_rows(bad)


# --------------------------------------------------------------------------- #
# torch-struct reference                                                       #
# --------------------------------------------------------------------------- #

def _torch_struct(ch, what):
    """Token marginals, pair marginals or log Z via torch_struct.LinearChainCRF."""
    try:
        import torch_struct
    except ImportError as exc:
        raise ImportError('backend="torch-struct" needs torch-struct: pip install '
                          '"sparsecal[torch]" (torch-struct==0.5)') from exc
    # a sentence without any finite path would get silent garbage from torch-struct
    # (it masks with -1e9, not -inf): check with the cheap lean pass
    _logz_checked(ch)
    B, n, C, N = ch.B, ch.n, ch.C, ch.N
    with torch.inference_mode(False), torch.enable_grad():
        ef, L = _folded(ch)
        ef = ef.detach().clone()
        T = ch.T.detach().clone()
        one = L == 1
        tok = torch.zeros((B, N, C), dtype=ch.dtype, device=ch.device)
        pairs = torch.zeros((B, max(N - 1, 0), C, C), dtype=ch.dtype, device=ch.device)
        logz = torch.empty(B, dtype=ch.dtype, device=ch.device)
        if n >= 2:
            # phi[b, i, z_{i+1}, z_i] = T[z_i, z_{i+1}] + e[i+1, z_{i+1}]
            #                            (+ e[0, z_0] + start[z_0] when i = 0);
            # end is folded into e[L-1], i.e. into the last real edge
            phi = T.t()[None, None] + ef[:, 1:n, :, None]
            phi[:, 0] = phi[:, 0] + ef[:, 0][:, None, :]
            phi = phi.detach()
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*arg_constraints.*")
                dist = torch_struct.LinearChainCRF(phi, lengths=L.clone())
                if what == "logz":
                    logz.copy_(dist.partition.detach())
                else:
                    marg = dist.marginals.detach()                   # [B, n-1, C, C]
        if what != "logz" and n >= 2:
            tok[:, 0] = marg[:, 0].sum(-2)
            tok[:, 1:n] = marg.sum(-1)
            pairs[:, :n - 1] = marg.transpose(-1, -2)
        if bool(one.any()):
            e0 = ef[one, 0]
            tok[one, 0] = torch.softmax(e0, -1)
            logz[one] = torch.logsumexp(e0, -1)
            pairs[one] = 0
    tok, pairs, logz = tok.detach(), pairs.detach(), logz.detach()
    return {"token": tok, "pair": pairs, "logz": logz}[what]


# --------------------------------------------------------------------------- #
# Shared drivers                                                               #
# --------------------------------------------------------------------------- #

def _fallback_rows(ch, bad):
    rows = torch.nonzero(bad)[:, 0]
    return rows


def _token(ch, backend):
    if backend == "torch-struct":
        return _torch_struct(ch, "token")
    if backend == "log":
        out = torch.zeros((ch.B, ch.N, ch.C), dtype=ch.dtype, device=ch.device)
        out[:, :ch.n] = _log_token(ch)
        return out
    out, bad = _lean(ch, "token")
    if bool(bad.any()):
        rows = _fallback_rows(ch, bad)
        out[rows, :ch.n] = _log_token(ch, rows, torch.float64).to(ch.dtype)
    return out


def _logz_checked(ch):
    """log Z [B] by the lean pass (log-space for flagged rows); raises if a
    sentence has no finite path."""
    logz, bad = _lean(ch, "logz")
    if bool(bad.any()):
        rows = _fallback_rows(ch, bad)
        ef, L = _folded(ch, rows, torch.float64)
        T = ch.T.to(torch.float64)
        z = torch.cat([_log_forward(ef[sl], T, L[sl])[1]
                       for sl in _chunks(len(rows), ch.C * ch.C)])
        if not bool(torch.isfinite(z).all()):
            raise _no_path_error(ch, rows[~torch.isfinite(z)])
        logz[rows] = z.to(ch.dtype)
    return logz


# --------------------------------------------------------------------------- #
# Public API                                                                   #
# --------------------------------------------------------------------------- #

_COMMON_DOC = """    emissions : Tensor or ndarray, float32 or float64, shape (B, N, C)
        Log-space emission scores per token and tag.
    transitions : Tensor or ndarray, shape (C, C)
        ``transitions[a, b]`` scores tag ``a`` at ``t`` followed by ``b`` at ``t+1``.
    lengths : int array, shape (B,), optional
        Sentence lengths in ``1..N`` (default: all ``N``). ``max(lengths)`` may be
        below ``N``; positions past a sentence's length are padding.
    start, end : shape (C,), optional
        Log-space scores of the first / last tag of each sentence.
    allowed : bool array, shape (C, C), optional
        ``False`` forbids the transition ``a -> b`` (its score becomes ``-inf``).
    mask : bool array, shape (B, N), optional
        Leading Trues per row; an alternative to ``lengths``.
"""


def marginals(emissions, transitions, lengths=None, start=None, end=None, allowed=None,
              mask=None, backend="lean", num_threads=None):
    """Token marginals ``p(y_t = c | x)`` of a linear-chain CRF.

    Parameters
    ----------
    %(common)s
    backend : {"lean", "log", "torch-struct"}, default "lean"
        See the module docstring. "lean" is a scaled forward-backward on matrix
        products with O(B N C) memory, falling back to float64 log space for any
        sentence whose scaled recursion underflows.
    num_threads : int, optional
        Torch threads within the call (None: ``SPARSECAL_TORCH_THREADS`` or 1;
        0: leave torch's setting), restored afterwards.

    Returns
    -------
    Tensor, shape (B, N, C), dtype of ``emissions``
        Rows sum to 1 on real tokens and are 0 on padding. Never attached to
        autograd; the inputs are neither modified nor given ``requires_grad``.

    Raises
    ------
    ValueError
        On shape mismatches, lengths outside ``1..N``, NaN or +inf potentials, or
        a sentence whose every tag sequence is impossible.
    """
    backend = _check_backend(backend)
    with _threads(num_threads), torch.no_grad():
        ch = _prepare(emissions, transitions, lengths, start, end, allowed, mask)
        return _token(ch, backend)


def pair_marginals(emissions, transitions, lengths=None, start=None, end=None,
                   allowed=None, mask=None, backend="lean", num_threads=None):
    """Adjacent tag-pair marginals ``p(y_t = a, y_{t+1} = b | x)`` (Nguyen &
    O'Connor 2015, Section 4.2.3).

    Parameters
    ----------
    %(common)s
    backend : {"lean", "log", "torch-struct"}, default "lean"
    num_threads : int, optional
        As in :func:`marginals`.

    Returns
    -------
    Tensor, shape (B, N-1, C, C), dtype of ``emissions``
        Zero for ``t >= lengths[b] - 1``; summing over ``b`` (the last axis) gives
        the token marginals at ``t``, over ``a`` those at ``t + 1``.

    Warns
    -----
    UserWarning
        When the result takes more than 1 GiB (``B (N-1) C^2`` values).
    """
    backend = _check_backend(backend)
    with _threads(num_threads), torch.no_grad():
        ch = _prepare(emissions, transitions, lengths, start, end, allowed, mask)
        nbytes = ch.B * max(ch.N - 1, 0) * ch.C * ch.C * ch.e.element_size()
        if nbytes > _PAIR_WARN_BYTES:
            warnings.warn(f"pair_marginals allocates {nbytes / 2**30:.1f} GiB "
                          f"([{ch.B}, {ch.N - 1}, {ch.C}, {ch.C}]); use smaller batches "
                          "or token marginals", UserWarning, stacklevel=2)
        if backend == "torch-struct":
            return _torch_struct(ch, "pair")
        if backend == "log":
            out = torch.zeros((ch.B, max(ch.N - 1, 0), ch.C, ch.C), dtype=ch.dtype,
                              device=ch.device)
            out[:, :max(ch.n - 1, 0)] = _log_pairs(ch)
            return out
        out, bad = _lean(ch, "pair")
        if bool(bad.any()):
            rows = _fallback_rows(ch, bad)
            out[rows, :max(ch.n - 1, 0)] = _log_pairs(ch, rows, torch.float64).to(ch.dtype)
        return out


def log_partition(emissions, transitions, lengths=None, start=None, end=None,
                  allowed=None, mask=None, backend="log", num_threads=None):
    """Log partition function ``log Z`` per sentence.

    Parameters
    ----------
    %(common)s
    backend : {"log", "lean", "torch-struct"}, default "log"
        "log" is differentiable (autograd through the log-space recursion, to
        train a CRF: ``loss = log_partition(...) - gold_score``); its autograd
        graph holds ``O(N B C^2)`` values. "lean", when gradients are enabled
        and an input requires them, is differentiable too, through the scaled
        recursion on matrix products (much faster at large C; its graph holds
        ``O(N B C)`` values); otherwise it, like "torch-struct", returns
        detached results.
    num_threads : int, optional
        As in :func:`marginals`.

    Returns
    -------
    Tensor, shape (B,)
        ``-inf`` for a sentence without any possible tag sequence ("log").
    """
    backend = _check_backend(backend)
    with _threads(num_threads):
        if backend == "log":
            ch = _prepare(emissions, transitions, lengths, start, end, allowed, mask)
            ef, L = _folded(ch)
            return torch.cat([_log_forward(ef[sl], ch.T, L[sl])[1]
                              for sl in _chunks(ch.B, ch.C * ch.C)])
        if backend == "lean" and torch.is_grad_enabled() and any(
                isinstance(x, torch.Tensor) and x.requires_grad
                for x in (emissions, transitions, start, end)):
            ch = _prepare(emissions, transitions, lengths, start, end, allowed, mask)
            ef, L = _folded(ch)
            return _scaled_logz(ef, ch.T, L)
        with torch.no_grad():
            ch = _prepare(emissions, transitions, lengths, start, end, allowed, mask)
            if backend == "torch-struct":
                return _torch_struct(ch, "logz")
            return _logz_checked(ch)


def span_marginals(emissions, transitions, batch_index, span_start, tags, lengths=None,
                   start=None, end=None, allowed=None, mask=None, normalize=False,
                   backend="lean", num_threads=None):
    """Probability that a span carries exactly a tag sequence.

    ``p(y_s = tags[0], ..., y_{s+l-1} = tags[l-1] | x)`` for spans of sentence
    ``batch_index`` starting at ``span_start``, all of length ``l``; with
    ``normalize=True`` the length-normalised geometric mean ``p ** (1/l)``
    (Jagannatha & Yu 2020, eq. 6).

    Parameters
    ----------
    %(common)s
    batch_index, span_start : int arrays, shape (K,)
        Sentence and first position of each span (scalars for one span).
    tags : int array, shape (K, l) (or (l,) for one span)
        Tag sequence of each span; ``span_start + l <= lengths[batch_index]``.
    normalize : bool, default False
        Return ``p ** (1/l)``.
    backend : {"lean", "log"}, default "lean"
        Forward-backward used for the sentences that have spans (computed in
        float64 either way, cast to the dtype of ``emissions``).
    num_threads : int, optional
        As in :func:`marginals`.

    Returns
    -------
    Tensor, shape (K,) (a 0-d tensor for one span given as scalars)
    """
    backend = _check_backend(backend, ("lean", "log"))
    with _threads(num_threads), torch.no_grad():
        ch = _prepare(emissions, transitions, lengths, start, end, allowed, mask)
        bi = _to_tensor(batch_index, "batch_index")
        ss = _to_tensor(span_start, "span_start")
        tg = _to_tensor(tags, "tags")
        for name, x in (("batch_index", bi), ("span_start", ss), ("tags", tg)):
            if x.dtype == torch.bool or x.is_floating_point() or x.is_complex():
                raise TypeError(f"{name} must hold integers, got dtype {x.dtype}")
        scalar = bi.dim() == 0 and ss.dim() == 0 and tg.dim() == 1
        bi, ss = bi.reshape(-1).long().to(ch.device), ss.reshape(-1).long().to(ch.device)
        if tg.dim() == 1 and bi.numel() == 1:
            tg = tg[None]
        if tg.dim() != 2:
            raise ValueError(f"tags must be 2-dimensional [K, l], got shape "
                             f"{tuple(tg.shape)}")
        tg = tg.long().to(ch.device)
        K, l = tg.shape
        if bi.shape != (K,) or ss.shape != (K,):
            raise ValueError(f"batch_index {tuple(bi.shape)} and span_start "
                             f"{tuple(ss.shape)} must have shape ({K},) like tags")
        if l < 1:
            raise ValueError("spans must have at least one tag")
        if K == 0:
            return torch.zeros(0, dtype=ch.dtype, device=ch.device)
        if int(bi.min()) < 0 or int(bi.max()) >= ch.B:
            raise ValueError(f"batch_index must lie in [0, {ch.B})")
        if int(tg.min()) < 0 or int(tg.max()) >= ch.C:
            raise ValueError(f"tags must lie in [0, {ch.C})")
        if int(ss.min()) < 0:
            raise ValueError("span_start must be >= 0")
        over = ss + l > ch.L[bi]
        if bool(over.any()):
            i = int(torch.nonzero(over)[0])
            raise ValueError(f"span {i} (sentence {int(bi[i])}, start {int(ss[i])}, "
                             f"length {l}) runs past the sentence's length "
                             f"{ch._Lcpu[int(bi[i])]}")
        rows, inv = torch.unique(bi, return_inverse=True)
        sub = _subchain(ch, rows, torch.float64)
        if backend == "log":
            la, lb, lz, _, _ = _log_fb(sub)
        else:
            la, lb, lz, bad = _lean(sub, "ab")
            if bool(bad.any()):
                fr = torch.nonzero(bad)[:, 0]
                a2, b2, z2, _, _ = _log_fb(sub, fr)
                la[fr], lb[fr], lz[fr] = a2, b2, z2
        if not bool(torch.isfinite(lz).all()):
            raise _no_path_error(ch, rows[~torch.isfinite(lz)])
        ef, _ = _folded(sub)
        T = sub.T
        pos = ss[:, None] + torch.arange(l, device=ch.device)[None]      # [K, l]
        logp = la[inv, ss, tg[:, 0]] + lb[inv, pos[:, -1], tg[:, -1]] - lz[inv]
        if l > 1:
            logp = logp + (T[tg[:, :-1], tg[:, 1:]]
                           + ef[inv[:, None], pos[:, 1:], tg[:, 1:]]).sum(1)
        if normalize:
            logp = logp / l
        p = torch.exp(logp).clamp_(max=1.0).to(ch.dtype)
        return p[0] if scalar else p


def _subchain(ch, rows, dtype):
    """The sentences ``rows`` of a chain, trimmed to their longest, in ``dtype``."""
    L = ch.L[rows]
    n = int(L.max())
    sub = _Chain()
    sub.e = ch.e[rows, :n].to(dtype)
    sub.T = ch.T.to(dtype)
    sub.start = None if ch.start is None else ch.start.to(dtype)
    sub.end = None if ch.end is None else ch.end.to(dtype)
    sub.L, sub.n, sub.B, sub.N, sub.C = L, n, len(rows), n, ch.C
    sub.dtype, sub.device = dtype, ch.device
    sub._Lcpu = L.tolist()
    return sub


def viterbi(emissions, transitions, lengths=None, start=None, end=None, allowed=None,
            mask=None, num_threads=None):
    """Most probable tag sequence of each sentence (max-product in log space).

    Parameters
    ----------
    %(common)s
    num_threads : int, optional
        As in :func:`marginals`.

    Returns
    -------
    paths : LongTensor, shape (B, N)
        Tag indices, ``-1`` past each sentence's length.
    log_prob : Tensor, shape (B,)
        ``log p(path | x)`` (dtype of ``emissions``).
    """
    paths, scores = _kbest(emissions, transitions, lengths, start, end, allowed, mask,
                           1, num_threads, "viterbi")
    return paths[:, 0], scores[:, 0]


def kbest(emissions, transitions, k, lengths=None, start=None, end=None, allowed=None,
          mask=None, num_threads=None):
    """The ``k`` most probable tag sequences of each sentence, exactly.

    k-best Viterbi keeping the top ``k`` partial paths per state and position
    (memory ``O(B N C k)``, time ``O(B N C^2 k log k)``-ish).

    Parameters
    ----------
    %(common)s
    k : int
        Number of sequences (>= 1); the third positional argument.
    num_threads : int, optional
        As in :func:`marginals`.

    Returns
    -------
    paths : LongTensor, shape (B, k, N)
        Best first; ``-1`` past each sentence's length, and whole rows of ``-1``
        where a sentence has fewer than ``k`` possible sequences.
    probs : Tensor, shape (B, k)
        ``p(path | x)``, sorted descending; 0 for the padding rows.
    """
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    paths, logp = _kbest(emissions, transitions, lengths, start, end, allowed, mask, k,
                         num_threads, "kbest")
    return paths, torch.exp(logp)


for _f in (marginals, pair_marginals, log_partition, span_marginals, viterbi, kbest):
    _f.__doc__ = _f.__doc__.replace("    %(common)s\n", _COMMON_DOC)
del _f


def _kbest(emissions, transitions, lengths, start, end, allowed, mask, k, num_threads,
           what):
    with _threads(num_threads), torch.no_grad():
        ch = _prepare(emissions, transitions, lengths, start, end, allowed, mask)
        logz = _logz_checked(ch)
        ef, L = _folded(ch)
        B, n, C, N = ch.B, ch.n, ch.C, ch.N
        T = ch.T
        dev = ch.device
        paths = torch.full((B, k, N), -1, dtype=torch.int64, device=dev)
        scores = torch.full((B, k), -math.inf, dtype=ch.dtype, device=dev)
        for sl in _chunks(B, C * C * k):
            p, s = _kbest_chunk(ef[sl], T, L[sl], k)
            paths[sl, :, :n] = p
            scores[sl] = s
        logp = scores - logz[:, None]
        return paths, logp


def _kbest_chunk(ef, T, L, k):
    b, n, C = ef.shape
    dev = ef.device
    ninf = torch.tensor(-math.inf, dtype=ef.dtype, device=dev)
    d = torch.full((b, C, k), -math.inf, dtype=ef.dtype, device=dev)
    d[:, :, 0] = ef[:, 0]
    ident_s = torch.arange(C, device=dev)[None, :, None].expand(b, C, k)
    ident_r = torch.arange(k, device=dev)[None, None, :].expand(b, C, k)
    back = []
    for t in range(1, n):
        if k == 1:
            vals, idx = (d[:, :, 0, None] + T[None]).max(1)           # over j
            vals, idx = vals[..., None], idx[..., None]
        else:
            # cand[b, c, j*k + r] = d[b, j, r] + T[j, c]
            cand = d[:, :, None, :] + T[None, :, :, None]             # [b, j, c, r]
            cand = cand.permute(0, 2, 1, 3).reshape(b, C, C * k)
            vals, idx = cand.topk(k, dim=-1)
        new = vals + ef[:, t, :, None]
        act = (L > t)[:, None, None]
        d = torch.where(act, new, d)
        back.append((torch.where(act, idx // k, ident_s), torch.where(act, idx % k, ident_r)))
    flat = d.reshape(b, C * k)
    vals, idx = flat.topk(k, dim=-1) if k > 1 else flat.max(-1, keepdim=True)
    state, rank = idx // k, idx % k                                  # [b, k]
    out = torch.empty((b, k, n), dtype=torch.int64, device=dev)
    out[:, :, n - 1] = state
    for t in range(n - 1, 0, -1):
        ps, pr = back[t - 1]
        f = state * k + rank
        state = ps.reshape(b, C * k).gather(1, f)
        rank = pr.reshape(b, C * k).gather(1, f)
        out[:, :, t - 1] = state
    pad = torch.arange(n, device=dev)[None, None] >= L[:, None, None]
    invalid = ~torch.isfinite(vals)
    out = out.masked_fill(pad | invalid[..., None], -1)
    vals = torch.where(invalid, ninf, vals)
    return out, vals


# --------------------------------------------------------------------------- #
# Corpus streaming                                                             #
# --------------------------------------------------------------------------- #

_BATCH_KEYS = ("emissions", "transitions", "lengths", "gold", "start", "end", "allowed")


def _unpack(batch, i):
    if isinstance(batch, dict):
        unknown = set(batch) - set(_BATCH_KEYS) - {"mask"}
        if unknown:
            raise ValueError(f"batch {i} has unknown keys {sorted(unknown)}; expected "
                             f"{_BATCH_KEYS} (+ mask)")
        missing = [key for key in ("emissions", "transitions", "gold") if key not in batch]
        if missing:
            raise ValueError(f"batch {i} lacks {missing}")
        return dict(batch)
    if isinstance(batch, (tuple, list)):
        if not 4 <= len(batch) <= 7:
            raise ValueError(f"batch {i} is a sequence of {len(batch)} items; expected "
                             "(emissions, transitions, lengths, gold[, start, end, "
                             "allowed])")
        return dict(zip(_BATCH_KEYS, batch))
    raise TypeError(f"batch {i} must be a dict or a tuple, got {type(batch).__name__}")


class _Growing:
    """Entry arrays grown in place (``ndarray.resize``: realloc, mremap for large
    arrays), so that the corpus' entries are never held twice."""

    def __init__(self):
        self.arrays = None
        self.size = 0

    def append(self, ent, offset):
        n = len(ent)
        parts = (ent.score, ent.tag, ent.label, ent.token)
        if self.arrays is None:
            self.arrays = [np.empty(max(n, 1 << 16), dtype=a.dtype) for a in parts]
        elif ent.score.dtype != self.arrays[0].dtype:
            dt = np.result_type(ent.score.dtype, self.arrays[0].dtype)
            self.arrays[0] = self.arrays[0].astype(dt)
        need = self.size + n
        if need > self.arrays[0].shape[0]:
            cap = max(need, self.arrays[0].shape[0] * 3 // 2)
            for a in self.arrays:
                a.resize(cap, refcheck=False)
        lo = self.size
        for a, p in zip(self.arrays, parts):
            a[lo:need] = p
        self.arrays[3][lo:need] += offset
        self.size = need

    def finish(self):
        if self.arrays is None:
            return (np.empty(0, np.float64), np.empty(0, np.int32), np.empty(0, np.uint8),
                    np.empty(0, np.int64))
        for a in self.arrays:
            a.resize(self.size, refcheck=False)
        return tuple(self.arrays)


class _Progress:
    def __init__(self, enabled, total):
        self.enabled, self.total = enabled, total
        self.t0 = time.perf_counter()
        self.last = 0.0

    def update(self, batches, tokens, entries, final=False):
        if not self.enabled:
            return
        now = time.perf_counter()
        if not final and now - self.last < 0.2:
            return
        self.last = now
        el = max(now - self.t0, 1e-9)
        if self.total:
            frac = batches / self.total
            bar = "#" * int(30 * frac) + "-" * (30 - int(30 * frac))
            head = f"[{bar}] {batches}/{self.total} batches"
        else:
            head = f"{batches} batches"
        sys.stderr.write(f"\rCRF marginals {head}, {tokens:,} tokens, {entries:,} "
                         f"entries, {tokens / el:,.0f} tokens/s, {el:.1f}s ")
        if final:
            sys.stderr.write("\n")
        sys.stderr.flush()


def stream_entries(batches, threshold=0.01, n_tags=None, dense_out=None, progress=False,
                   *, backend="lean", missing_gold="negatives", num_threads=None):
    """Token marginals of a corpus, thresholded into entries batch by batch.

    For each batch, computes the token marginals (:func:`marginals`), keeps the
    real tokens (in batch order, sentence by sentence), and appends the entries
    with ``score >= threshold`` (:func:`sparsecal.threshold`) with token indices
    offset by a running counter of real tokens. Memory stays at one batch's
    marginals plus the surviving entries: a corpus of 10^6 tokens x 600 tags never
    needs its dense matrix.

    Parameters
    ----------
    batches : iterable, or callable returning an iterator
        Each batch is a dict with keys ``emissions`` [B, N, C], ``transitions``
        [C, C], ``gold`` [B, N] (gold tag index; -1 for padding and for tokens
        without a gold tag in the inventory) and optionally ``lengths`` (or
        ``mask``), ``start``, ``end``, ``allowed``; or a tuple ``(emissions,
        transitions, lengths, gold[, start, end, allowed])`` (``lengths`` may be
        None).
    threshold : float, default 0.01
        Keep entries with ``score >= threshold`` (Kranzlein et al. 2021, 3.1).
    n_tags : int, optional
        Expected number of tags ``C`` (checked); default: that of the first batch.
    dense_out : array, shape (n_tokens_total, C), optional
        Preallocated array or ``np.memmap`` that receives the dense marginals of
        the real tokens, in order. Raises if the corpus has more tokens than
        rows; warns if it has fewer.
    progress : bool, default False
        A progress line on stderr.
    backend : {"lean", "log", "torch-struct"}, default "lean"
        As in :func:`marginals`.
    num_threads : int, optional
        Threads for torch and for the threshold kernel, per batch (None:
        ``SPARSECAL_TORCH_THREADS`` or 1; 0: the libraries' own defaults).
    missing_gold : {"negatives", "drop"}
        As in :func:`sparsecal.threshold`.

    Returns
    -------
    Entries
        ``token`` counts real tokens over the whole corpus; ``n_tokens`` is their
        total and ``n_tags`` is ``C``.
    """
    t = _unit(threshold)
    # one batch's marginals are small: the threshold kernel gets the same thread
    # count as torch (default 1; 0 = sparsecal's default for its kernels)
    n_kernel_threads = _resolve_threads(num_threads) or None
    if callable(batches):
        batches = batches()
    try:
        total = len(batches)
    except TypeError:
        total = None
    bar = _Progress(progress, total)
    acc = _Growing()
    offset = 0
    n_entries = 0
    i = -1
    for i, batch in enumerate(batches):
        kw = _unpack(batch, i)
        gold = kw.pop("gold")
        em = kw.pop("emissions")
        tr = kw.pop("transitions")
        with _threads(num_threads), torch.no_grad():
            ch = _prepare(em, tr, kw.get("lengths"), kw.get("start"), kw.get("end"),
                          kw.get("allowed"), kw.get("mask"))
            m = _token(ch, backend)
        B, N, C = m.shape
        if n_tags is None:
            n_tags = C
        elif C != n_tags:
            raise ValueError(f"batch {i} has {C} tags, expected n_tags={n_tags}")
        g = _to_tensor(gold, "gold")
        if tuple(g.shape) != (B, N):
            raise ValueError(f"gold of batch {i} has shape {tuple(g.shape)}, expected "
                             f"({B}, {N})")
        if g.dtype == torch.bool or g.is_floating_point() or g.is_complex():
            raise TypeError(f"gold must hold integers, got dtype {g.dtype}")
        real = torch.arange(N)[None] < ch.L.cpu()[:, None]
        dense = m.cpu()[real].numpy()                                 # [n_real, C]
        g_real = g.cpu()[real].numpy().astype(np.int64, copy=False)
        n_real = dense.shape[0]
        if dense_out is not None:
            if offset + n_real > dense_out.shape[0]:
                raise ValueError(f"dense_out has {dense_out.shape[0]} rows but batch {i} "
                                 f"reaches token {offset + n_real}")
            dense_out[offset:offset + n_real] = dense
        ent = _threshold(dense, g_real, t, missing_gold=missing_gold,
                         n_threads=n_kernel_threads)
        acc.append(ent, offset)
        offset += n_real
        n_entries += len(ent)
        bar.update(i + 1, offset, n_entries)
    bar.update(i + 1, offset, n_entries, final=True)
    if dense_out is not None and offset < dense_out.shape[0]:
        warnings.warn(f"dense_out has {dense_out.shape[0]} rows but the corpus has "
                      f"{offset} tokens; the remaining rows were not written",
                      UserWarning, stacklevel=2)
    score, tag, label, token = acc.finish()
    return Entries._trusted(score, tag, label, token, n_tags, offset, t)


def _unit(t):
    t = float(t)
    if not 0.0 <= t <= 1.0:
        raise ValueError(f"threshold must lie in [0, 1], got {t}")
    return t
