"""The torch-struct backend: ``torch_struct.LinearChainCRF`` as an external reference.

``O(N C^3)`` edge potentials ``[B, N-1, C, C]`` over the shifted potentials in
float64; one-token sentences are computed directly. It masks impossible paths
with ``-1e9``, so potentials spread over more than ``RANGE`` are refused and
callers first check that every sentence has a path
(:func:`.backends.checked_log_partition`).
"""
import warnings
from contextlib import contextmanager

from .._extras import require
from ._torch import torch

__all__ = ["token_marginals", "pair_marginals", "log_partition"]


#: torch-struct's log semiring stands for "impossible" with -1e5 (and -1e9 in
#: masks): a finite edge potential further than this below the largest would
#: compete with it, so such inputs are refused.
RANGE = 1e4


def _check_range(phi):
    """ValueError if a finite (shifted) edge potential lies below ``-RANGE``."""
    fin = torch.isfinite(phi)
    if bool(fin.any()):
        low = float(phi[fin].min())
        if low < -RANGE:
            raise ValueError(
                f'backend="torch-struct" cannot represent these potentials: a finite '
                f"edge score lies {-low:.3g} below the largest, beyond {RANGE:g} (torch-"
                'struct stands for "impossible" with -1e5); use backend="lean" or "log"')


@contextmanager
def _linear_chain_crf(ch):
    """Yield ``(dist, shifted folded emissions, lengths, offset)`` (``dist`` None when
    no sentence has two tokens), with autograd on inside the block (its marginals
    need it); outputs written in place must be made inside the block.
    """
    torch_struct = require("torch_struct", "torch", 'backend="torch-struct"')
    with torch.inference_mode(False), torch.enable_grad(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*arg_constraints.*")
        ef, T, offset, L = (x.detach().clone() for x in ch.shifted(dtype=torch.float64))
        dist = None
        if ch.n >= 2:
            # phi[b, i, z_{i+1}, z_i] = T[z_i, z_{i+1}] + e[i+1, z_{i+1}]
            #                            (+ e[0, z_0] + start[z_0] when i = 0);
            # end is folded into e[L-1], i.e. into the last real edge
            phi = T.t()[None, None] + ef[:, 1:ch.n, :, None]
            phi[:, 0] = phi[:, 0] + ef[:, 0][:, None, :]
            _check_range(phi)
            dist = torch_struct.LinearChainCRF(phi.detach(), lengths=L.clone())
        yield dist, ef, L, offset


def token_marginals(ch):
    """Token marginals [B, N, C] (0 on padding)."""
    with _linear_chain_crf(ch) as (dist, ef, L, _):
        tok = torch.zeros((ch.B, ch.N, ch.C), dtype=ch.dtype, device=ch.device)
        if dist is not None:
            marg = dist.marginals.detach()                           # [B, n-1, C, C]
            tok[:, 0] = marg[:, 0].sum(-2)
            tok[:, 1:ch.n] = marg.sum(-1)
        one = L == 1
        if bool(one.any()):
            tok[one, 0] = torch.softmax(ef[one, 0], -1).to(ch.dtype)
    return tok.detach()


def pair_marginals(ch):
    """Adjacent tag-pair marginals [B, N-1, C, C] (0 past each sentence's last
    pair)."""
    with _linear_chain_crf(ch) as (dist, _, L, _):
        pairs = torch.zeros((ch.B, max(ch.N - 1, 0), ch.C, ch.C), dtype=ch.dtype,
                            device=ch.device)
        if dist is not None:
            pairs[:, :ch.n - 1] = dist.marginals.detach().transpose(-1, -2)
        pairs[L == 1] = 0
    return pairs.detach()


def log_partition(ch):
    """log Z [B]."""
    with _linear_chain_crf(ch) as (dist, ef, L, offset):
        logz = torch.empty(ch.B, dtype=ef.dtype, device=ch.device)
        if dist is not None:
            logz.copy_(dist.partition.detach())
        one = L == 1
        if bool(one.any()):
            logz[one] = torch.logsumexp(ef[one, 0], -1)
    return (logz + offset).to(ch.dtype).detach()
