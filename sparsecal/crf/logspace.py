"""Exact forward-backward in log space: the reference, and the lean backend's fallback.

Per position a ``logsumexp`` over a ``[b, C, C]`` temporary (about ``C`` times
the lean backend's work), batch-chunked to ``CHUNK_ELEMENTS`` values. Log alphas
and betas are *relative* (each step shifted by its largest finite value), so
marginals are normalised per position, never ``exp(... - log Z)`` of huge
numbers. Outputs are exactly 0 past each sentence's end.
"""
from ._torch import torch

__all__ = ["chunks", "log_fb", "log_partition", "token_marginals", "pair_marginals"]

#: Elements of one [b, C, C] (or [b, C, C, k]) temporary in the log-space loops.
CHUNK_ELEMENTS = 1 << 22


def chunks(b, per_row):
    """Row slices of ``b`` rows, each of at most ``CHUNK_ELEMENTS / per_row`` rows."""
    step = max(1, CHUNK_ELEMENTS // max(1, per_row))
    return [slice(i, min(b, i + step)) for i in range(0, b, step)]


def _shift(x):
    """``x`` [b, C] minus its largest finite value per row (detached; rows
    without one are kept), and that shift [b]."""
    c = x.detach().amax(-1)
    c = torch.where(torch.isfinite(c), c, torch.zeros((), dtype=c.dtype, device=c.device))
    return x - c[:, None], c


def forward(ef, T, L):
    """Relative log alphas [b, n, C] and log Z [b] of shifted folded emissions
    (differentiable; ``log Z`` relative to the shifts of :meth:`Chain.shifted`)."""
    n = ef.shape[1]
    a, acc = _shift(ef[:, 0])
    out = [a]
    for t in range(1, n):
        new, c = _shift(torch.logsumexp(a[:, :, None] + T[None], dim=1) + ef[:, t])
        act = L > t
        a = torch.where(act[:, None], new, a)
        acc = acc + torch.where(act, c, torch.zeros_like(c))
        out.append(a)
    return torch.stack(out, 1), acc + torch.logsumexp(a, -1)


def backward(ef, T, L):
    """Relative log betas [b, n, C] of shifted folded emissions (0 at and after
    each sentence's last token)."""
    b, n, C = ef.shape
    beta = torch.zeros(b, C, dtype=ef.dtype, device=ef.device)
    out = [beta]
    for t in range(n - 2, -1, -1):
        new = _shift(torch.logsumexp(T[None] + (ef[:, t + 1] + beta)[:, None, :], dim=2))[0]
        beta = torch.where((L - 1 > t)[:, None], new, torch.zeros_like(new))
        out.append(beta)
    return torch.stack(out[::-1], 1)


def log_partition(ch, rows=None, dtype=None):
    """log Z [b] of the sentences ``rows`` (default all) in ``dtype`` (default the
    chain's); ``-inf`` for a sentence without a possible tag sequence.
    Differentiable."""
    ef, T, offset, L = ch.shifted(rows, dtype)
    return torch.cat([forward(ef[sl], T, L[sl])[1]
                      for sl in chunks(ef.shape[0], ch.C * ch.C)]) + offset


def log_fb(ch, rows=None, dtype=None):
    """Forward-backward of the sentences ``rows`` (default all; an index tensor).

    Returns
    -------
    (relative log alpha [b, n, C], relative log beta [b, n, C], log Z [b],
    shifted folded emissions [b, n, C], shifted transitions [C, C], lengths
    [b]), in ``dtype`` (default the chain's). ``log alpha + log beta`` at a
    position is ``log p(y_t = c)`` up to a constant.
    """
    ef, T, offset, L = ch.shifted(rows, dtype)
    la, lb, lz = [], [], []
    for sl in chunks(ef.shape[0], ch.C * ch.C):
        a, z = forward(ef[sl], T, L[sl])
        la.append(a)
        lz.append(z)
        lb.append(backward(ef[sl], T, L[sl]))
    return torch.cat(la), torch.cat(lb), torch.cat(lz) + offset, ef, T, L


def log_fb_with_paths(ch, rows=None, dtype=None):
    """:func:`log_fb`, raising for a sentence without any possible tag sequence."""
    out = log_fb(ch, rows, dtype)
    bad = ~torch.isfinite(out[2])
    if bad.any():
        idx = torch.nonzero(bad)[:, 0]
        raise ch.no_path_error(idx if rows is None else rows[idx])
    return out


def token_marginals(ch, rows=None, dtype=None):
    """Token marginals [b, n, C] of the sentences ``rows`` (0 on padding)."""
    la, lb, _, _, _, L = log_fb_with_paths(ch, rows, dtype)
    real = torch.arange(ch.n, device=ch.device)[None] < L[:, None]
    return torch.where(real[..., None], torch.softmax(la + lb, -1), 0.0)


def pair_marginals(ch, rows=None, dtype=None):
    """Pair marginals [b, n-1, C, C] of the sentences ``rows`` (0 past each
    sentence's last pair)."""
    la, lb, _, ef, T, L = log_fb_with_paths(ch, rows, dtype)
    b, n, C = ef.shape
    if n < 2:
        return torch.zeros(b, 0, C, C, dtype=ef.dtype, device=ef.device)
    v = la[:, :-1, :, None] + T[None, None] + (ef[:, 1:] + lb[:, 1:])[:, :, None, :]
    p = torch.softmax(v.reshape(b, n - 1, C * C), -1).reshape(b, n - 1, C, C)
    valid = torch.arange(n - 1, device=ch.device)[None] < (L - 1)[:, None]
    return torch.where(valid[..., None, None], p, 0.0)
