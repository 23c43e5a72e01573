"""The lean backend: scaled (non-log) forward-backward on BLAS matrix products.

With ``M = exp(T - m)`` (``m`` the largest finite transition) and
``E_t = exp(e_t - rowmax_t)`` (start and end folded into the emissions)::

    alpha_t = normalise((alpha_{t-1} @ M) * E_t)
    beta_t  = normalise((E_{t+1} * beta_{t+1}) @ M^T)

Token marginals are ``normalise(alpha_t * beta_t)``, pair marginals
``normalise(alpha_t[a] M[a, b] E_{t+1}[b] beta_{t+1}[b])``, and ``log Z`` the
sum of the logs of the forward normalisers plus the scales taken out (Nguyen &
O'Connor 2015, Section 4.2). Memory is ``O(B N C)``.

The batch is sorted by decreasing length, so each position multiplies only the
sentences that reach it. Beyond the ``2 (N-1)`` products the work is a few
in-place passes; the alphas become the token marginals in place, and the scaled
emissions and ``exp(T)`` live in a per-thread workspace (:func:`_workspace`). A
sentence whose recursion lost precision (a normaliser below ``C^2 * tiny / eps``,
0 or not finite) is flagged in the returned ``bad`` rows, for the caller to
recompute in log space (:mod:`.backends`).
"""
import threading

from ._torch import torch
from .potentials import largest_finite

__all__ = ["token_marginals", "pair_marginals", "log_alpha_beta", "log_partition",
           "differentiable_log_partition", "WORKSPACE_BYTES"]

#: Scratch a thread keeps between calls on CPU (:func:`_workspace`), in bytes.
WORKSPACE_BYTES = 64 << 20

_workspaces = threading.local()


class _Forward:
    """The forward pass over the batch sorted by decreasing length.

    ``perm`` sorts the batch (None if sorted); ``Ls`` the sorted lengths;
    ``counts[t]`` the sentences reaching ``t``; ``E`` [B, n, C] the scaled
    exponentiated emissions with scales ``r``; ``M = exp(T - m)``; ``A`` [B, n, C]
    the normalised alphas (in ``buf`` [B, N, C]) with normalisers ``zf`` [n, B, 1];
    ``Es``, ``As`` per-position views; ``floor`` the smallest trusted normaliser.
    """

    __slots__ = ("B", "n", "perm", "Ls", "counts", "E", "Es", "r", "m", "M", "buf", "A",
                 "As", "zf", "zb", "floor")

    def lost_precision(self, z):
        """Sorted rows with a normaliser in ``z`` below the floor, 0 or not finite."""
        z = z.reshape(self.n, self.B)
        return ((z < self.floor) | ~torch.isfinite(z)).any(0)

    def unsort(self, x):
        if self.perm is None:
            return x
        out = torch.empty_like(x)
        out[self.perm] = x
        return out


def _workspace(numel, dtype, device):
    """``numel`` values of scratch, kept per thread between calls on CPU (up to
    ``WORKSPACE_BYTES``): fresh scratch was returned to the system and
    page-faulted back at every call, half of the time beyond the products.
    """
    if device.type != "cpu" or numel * torch.finfo(dtype).bits // 8 > WORKSPACE_BYTES:
        return torch.empty(numel, dtype=dtype, device=device)
    buf = getattr(_workspaces, "buf", None)
    if buf is None or buf.dtype != dtype or buf.numel() < numel:
        buf = _workspaces.buf = torch.empty(numel, dtype=dtype)
    return buf[:numel]


def _forward(ch):
    B, N, n, C = ch.B, ch.N, ch.n, ch.C
    dt, dev = ch.dtype, ch.device
    f = _Forward()
    f.B, f.n = B, n
    Lc = ch.L_list
    if all(Lc[i] >= Lc[i + 1] for i in range(B - 1)):
        f.perm, f.Ls, Lsc = None, ch.L, Lc
    else:
        f.perm = torch.argsort(ch.L, descending=True, stable=True)
        f.Ls = ch.L[f.perm]
        Lsc = f.Ls.tolist()
    f.counts = counts = [0] * n
    j = B
    for t in range(n):
        while j > 0 and Lsc[j - 1] <= t:
            j -= 1
        counts[t] = j

    # E (in the workspace): the sorted emissions with start/end folded, scaled,
    # exp'd; read from the caller's tensor when there is nothing to sort or fold
    ws = _workspace(B * n * C + C * C, dt, dev)
    Ew = ws[:B * n * C].view(B, n, C)
    E = ch.e[:, :n]
    if f.perm is not None or ch.start is not None or ch.end is not None:
        if f.perm is None:
            Ew.copy_(E)
        else:
            torch.index_select(E, 0, f.perm, out=Ew)
        E = Ew
        if ch.start is not None:
            E[:, 0].add_(ch.start)
        if ch.end is not None:
            E[torch.arange(B, device=dev), f.Ls - 1] += ch.end
    r = E.amax(-1, keepdim=True)                                    # [B, n, 1]
    # 0 for a row without a finite value (an impossible token, or padding, which
    # holds any value: it is never read)
    f.r = torch.nan_to_num(r, nan=0.0, posinf=0.0, neginf=0.0)
    E = torch.sub(E, f.r, out=Ew).exp_()
    f.m = largest_finite(ch.T)
    f.M = M = torch.sub(ch.T, f.m, out=ws[B * n * C:].view(C, C)).exp_()

    # the alphas fill the first n positions of a [B, N, C] buffer: token_marginals
    # turns it into its output in place
    f.buf = torch.empty((B, N, C), dtype=dt, device=dev)
    f.A = f.buf[:, :n]
    f.zf = torch.ones((n, B, 1), dtype=dt, device=dev)
    f.E, f.Es, f.As = E, E.unbind(1), f.A.unbind(1)
    As, Es, zfs = f.As, f.Es, f.zf.unbind(0)
    torch.sum(Es[0], 1, keepdim=True, out=zfs[0])
    torch.div(Es[0], zfs[0], out=As[0])
    for t in range(1, n):
        k = counts[t]              # the first k (sorted) sentences reach t
        if k == B:                 # no slicing: Python-level indexing costs at small C
            prev, a, e, zt = As[t - 1], As[t], Es[t], zfs[t]
        else:
            prev, a, e, zt = As[t - 1][:k], As[t][:k], Es[t][:k], zfs[t][:k]
            As[t][k:].zero_()
        torch.mm(prev, M, out=a)
        a.mul_(e)
        torch.sum(a, 1, keepdim=True, out=zt)
        a.div_(zt)

    f.floor = _floor(dt, C)
    return f


def _floor(dtype, C):
    """The smallest normaliser trusted: below it, underflowed terms (each under
    ``tiny``, at most ``C^2``) could exceed ``eps`` of the sum.
    """
    finfo = torch.finfo(dtype)
    return min(C * C * finfo.tiny / finfo.eps, 1e-3)


def _backward(f):
    """Yield ``(t, k0, k1, w, beta)`` from ``t = n - 2`` down to 0: the first ``k0``
    rows of ``beta`` hold the normalised ``beta_t`` of the sorted sentences reaching
    ``t``, the first ``k1`` rows of ``w`` hold ``E_{t+1} * beta_{t+1}`` (buffers
    reused by the next step). Sets the normalisers ``f.zb``.
    """
    B, n, C = f.A.shape
    beta = torch.ones((B, C), dtype=f.A.dtype, device=f.A.device)
    w = torch.empty_like(beta)
    f.zb = torch.ones((n, B, 1), dtype=f.A.dtype, device=f.A.device)
    zbs, Es, MT = f.zb.unbind(0), f.Es, f.M.t()      # M.t(): a view BLAS reads transposed
    for t in range(n - 2, -1, -1):
        k0, k1 = f.counts[t], f.counts[t + 1]
        if k1:
            if k1 == B:
                e, bt, wt, zt = Es[t + 1], beta, w, zbs[t]
            else:
                e, bt, wt, zt = Es[t + 1][:k1], beta[:k1], w[:k1], zbs[t][:k1]
            torch.mul(e, bt, out=wt)
            torch.mm(wt, MT, out=bt)
            torch.sum(bt, 1, keepdim=True, out=zt)
            bt.div_(zt)
        yield t, k0, k1, w, beta


def token_marginals(ch):
    """``(marginals [B, N, C], bad [B])``: token marginals (0 on padding) and the
    sentences that lost precision.
    """
    f = _forward(ch)
    B, N, n = ch.B, ch.N, ch.n
    for t, k0, _, _, beta in _backward(f):
        if k0 == B:
            f.As[t].mul_(beta)
        else:
            f.As[t][:k0].mul_(beta[:k0])
    zs = f.A.sum(-1, keepdim=True)                                  # [B, n, 1]
    padding = torch.arange(n, device=ch.device)[None] >= f.Ls[:, None]
    zs.masked_fill_(padding[..., None], 1.0)                        # alphas 0 there
    f.A.div_(zs)
    bad = (f.lost_precision(f.zf) | f.lost_precision(f.zb)
           | f.lost_precision(zs.transpose(0, 1)))
    if N > n:
        f.buf[:, n:].zero_()
    return f.unsort(f.buf), f.unsort(bad)


def pair_marginals(ch):
    """``(marginals [B, N-1, C, C], bad [B])``: pair marginals and the sentences that
    lost precision.
    """
    f = _forward(ch)
    B, N, C, n = ch.B, ch.N, ch.C, ch.n
    P = torch.zeros((B, max(N - 1, 0), C, C), dtype=ch.dtype, device=ch.device)
    zp = torch.ones((n, B, 1, 1), dtype=ch.dtype, device=ch.device)
    for t, _, k1, w, _ in _backward(f):
        if k1:
            slab = f.As[t][:k1, :, None] * f.M[None] * w[:k1, None, :]
            torch.sum(slab, (1, 2), keepdim=True, out=zp[t, :k1])
            slab.div_(zp[t, :k1])
            if f.perm is None:
                P[:k1, t] = slab
            else:
                P[f.perm[:k1], t] = slab
            del slab
    bad = f.lost_precision(f.zf) | f.lost_precision(f.zb) | f.lost_precision(zp)
    return P, f.unsort(bad)


def log_alpha_beta(ch):
    """``(log_alpha, log_beta, bad)``: logs of the normalised alphas and betas
    [B, n, C] (their sum is ``log p(y_t | x)`` up to a constant per position) and
    the sentences that lost precision.
    """
    f = _forward(ch)
    B, C, n = ch.B, ch.C, ch.n
    Bst = torch.ones((B, n, C), dtype=ch.dtype, device=ch.device)    # normalised betas
    for t, k0, _, _, beta in _backward(f):
        Bst[:k0, t] = beta[:k0]
    bad = f.lost_precision(f.zf) | f.lost_precision(f.zb)
    return f.unsort(torch.log(f.A)), f.unsort(Bst.log_()), f.unsort(bad)


def log_partition(ch):
    """``(log_z [B], bad [B])`` by the scaled forward pass (summed in float64; not
    differentiable).
    """
    f = _forward(ch)
    real = torch.arange(ch.n, device=ch.device)[None] < f.Ls[:, None]    # [B, n]
    r64 = torch.where(real, f.r[..., 0], 0.0).double().sum(1)
    logz = torch.log(f.zf[..., 0].double()).sum(0) + r64 + (f.Ls - 1) * f.m.double()
    return f.unsort(logz.to(ch.dtype)), f.unsort(f.lost_precision(f.zf))


def differentiable_log_partition(ch):
    """``(log_z [B], bad [B])`` by the scaled forward recursion, out of place so that
    autograd flows through it (one [b, C] @ [C, C] product per step). For training.
    """
    ef, L = ch.folded()
    T = ch.T
    r = ef.amax(-1, keepdim=True).detach()
    E = torch.exp(ef - r)
    m = largest_finite(T)
    M = torch.exp(T - m)
    a = E[:, 0]
    z = a.sum(-1)
    floor = _floor(ef.dtype, ch.C)
    bad = ~(z.detach() >= floor)
    logz = torch.log(z) + r[:, 0, 0]
    a = a / z[:, None]
    for t in range(1, ef.shape[1]):
        new = (a @ M) * E[:, t]
        zt = new.sum(-1)
        active = L > t
        bad = bad | (active & ~(zt.detach() >= floor))
        a = torch.where(active[:, None], new / zt[:, None], a)
        logz = logz + torch.where(active, torch.log(zt) + r[:, t, 0] + m,
                                  torch.zeros_like(zt))
    return logz, bad | ~torch.isfinite(logz.detach())
