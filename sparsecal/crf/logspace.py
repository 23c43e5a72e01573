"""Exact forward-backward in log space: the reference, and the lean backend's fallback.

Per position a ``logsumexp`` over a ``[b, C, C]`` temporary (about ``C`` times
the work of the lean backend's matrix product), batch-chunked so that one
temporary holds at most ``CHUNK_ELEMENTS`` values (Nguyen & O'Connor 2015,
Section 4.2: token and pair marginals from forward-backward). Recursions run
over emissions with start and end folded in (:meth:`Chain.folded`); a sentence
keeps its last alpha past its length and has beta 0 at and after its last token.
"""
from ._torch import torch

__all__ = ["chunks", "log_fb", "log_partition", "token_marginals", "pair_marginals"]

#: Elements of one [b, C, C] (or [b, C, C, k]) temporary in the log-space loops.
CHUNK_ELEMENTS = 1 << 22


def chunks(b, per_row):
    """Row slices of a batch of ``b`` rows, each of at most ``CHUNK_ELEMENTS /
    per_row`` rows (at least one)."""
    step = max(1, CHUNK_ELEMENTS // max(1, per_row))
    return [slice(i, min(b, i + step)) for i in range(0, b, step)]


def forward(ef, T, L):
    """Log alphas [b, n, C] and log Z [b] of folded emissions (differentiable)."""
    n = ef.shape[1]
    a = ef[:, 0]
    out = [a]
    for t in range(1, n):
        new = torch.logsumexp(a[:, :, None] + T[None], dim=1) + ef[:, t]
        a = torch.where((L > t)[:, None], new, a)
        out.append(a)
    return torch.stack(out, 1), torch.logsumexp(a, -1)


def backward(ef, T, L):
    """Log betas [b, n, C] of folded emissions (0 at and after each sentence's
    last token)."""
    b, n, C = ef.shape
    beta = torch.zeros(b, C, dtype=ef.dtype, device=ef.device)
    out = [beta]
    for t in range(n - 2, -1, -1):
        new = torch.logsumexp(T[None] + (ef[:, t + 1] + beta)[:, None, :], dim=2)
        beta = torch.where((L - 1 > t)[:, None], new, torch.zeros_like(new))
        out.append(beta)
    return torch.stack(out[::-1], 1)


def log_partition(ch, rows=None, dtype=None):
    """log Z [b] of the sentences ``rows`` (default all) in ``dtype`` (default the
    chain's); ``-inf`` for a sentence without a possible tag sequence.
    Differentiable."""
    ef, L = ch.folded(rows, dtype)
    T = ch.T.to(ef.dtype)
    return torch.cat([forward(ef[sl], T, L[sl])[1]
                      for sl in chunks(ef.shape[0], ch.C * ch.C)])


def log_fb(ch, rows=None, dtype=None):
    """Forward-backward of the sentences ``rows`` (default all; an index tensor).

    Returns
    -------
    (log alpha [b, n, C], log beta [b, n, C], log Z [b], folded emissions
    [b, n, C], lengths [b]), in ``dtype`` (default the chain's).
    """
    ef, L = ch.folded(rows, dtype)
    T = ch.T.to(ef.dtype)
    la, lb, lz = [], [], []
    for sl in chunks(ef.shape[0], ch.C * ch.C):
        a, z = forward(ef[sl], T, L[sl])
        la.append(a)
        lz.append(z)
        lb.append(backward(ef[sl], T, L[sl]))
    return torch.cat(la), torch.cat(lb), torch.cat(lz), ef, L


def _log_fb_with_paths(ch, rows, dtype):
    """:func:`log_fb`, raising for a sentence without any possible tag sequence."""
    la, lb, lz, ef, L = log_fb(ch, rows, dtype)
    bad = ~torch.isfinite(lz)
    if bad.any():
        idx = torch.nonzero(bad)[:, 0]
        raise ch.no_path_error(idx if rows is None else rows[idx])
    return la, lb, lz, ef, L


def token_marginals(ch, rows=None, dtype=None):
    """Token marginals [b, n, C] of the sentences ``rows`` (0 on padding)."""
    la, lb, lz, ef, L = _log_fb_with_paths(ch, rows, dtype)
    m = torch.exp(la + lb - lz[:, None, None])
    real = torch.arange(ch.n, device=ch.device)[None] < L[:, None]
    return m * real[..., None]


def pair_marginals(ch, rows=None, dtype=None):
    """Pair marginals [b, n-1, C, C] of the sentences ``rows`` (0 past each
    sentence's last pair)."""
    la, lb, lz, ef, L = _log_fb_with_paths(ch, rows, dtype)
    T = ch.T.to(ef.dtype)
    n = ch.n
    if n < 2:
        return torch.zeros(ef.shape[0], 0, ch.C, ch.C, dtype=ef.dtype, device=ef.device)
    right = (ef[:, 1:] + lb[:, 1:])[:, :, None, :]              # [b, n-1, 1, C]
    p = torch.exp(la[:, :-1, :, None] + T[None, None] + right - lz[:, None, None, None])
    valid = torch.arange(n - 1, device=ch.device)[None] < (L - 1)[:, None]
    return p * valid[..., None, None]
