"""Exact samples of a linear-chain CRF by forward filtering, backward sampling:
``y_{L-1} ~ alpha_{L-1}``, then ``p(y_t = a | y_{t+1} = b, x) ∝ alpha_t(a)
exp(T[a, b])``. Independent samples give the probability of any event and
credible intervals (Nguyen & O'Connor 2015, Section 5.2). The uniform behind a
tag is a hash of ``(seed, sentence id, sample, position)``, so a sentence's
samples do not depend on the batch.
"""
import numpy as np

from ..core.dispatch import SENTENCE_RECURSION, takes_data
from ..core.hashing import splitmix64 as _mix
from ..core.validation import as_array, check_allocation, check_positive_int
from .._docs import fill_doc

__all__ = ["sample_sequences"]

def uniforms(seed, ids, n_samples, n_positions):
    """Uniforms in [0, 1) ``[len(ids), n_samples, n_positions]``, hashes of their indices."""
    h = _mix(_mix(np.array([seed], np.uint64)) ^ ids.astype(np.uint64))       # [B]
    h = _mix(h[:, None] ^ np.arange(n_samples, dtype=np.uint64)[None])          # [B, S]
    h = _mix(h[..., None] ^ np.arange(n_positions, dtype=np.uint64)[None, None])
    return (h >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def _check_ids(sentence_ids, B):
    if sentence_ids is None:
        return np.arange(B, dtype=np.int64)
    ids = as_array(sentence_ids, "sentence_ids")
    if ids.dtype.kind not in "iu":
        raise TypeError(f"sentence_ids must hold integers, got dtype {ids.dtype}")
    if ids.shape != (B,):
        raise ValueError(f"sentence_ids has shape {ids.shape}, expected ({B},)")
    if B and ids.min() < 0:
        raise ValueError("sentence_ids must be non-negative")
    return ids


def _seed(seed):
    seed = check_positive_int(seed, "seed", allow_zero=True)
    if seed >= 2 ** 64:
        raise ValueError(f"seed must be below 2**64, got {seed}")
    return seed


@takes_data(refuse=SENTENCE_RECURSION)
@fill_doc
def sample_sequences(emissions, transitions, n_samples, lengths=None, start=None,
                     end=None, allowed=None, mask=None, seed=0, sentence_ids=None,
                     n_threads=None):
    """Independent exact samples of tag sequences from a linear-chain CRF.

    Parameters
    ----------
    {crf_potentials}
    n_samples : int
        Samples per sentence (S).
    seed : int, default 0
        In ``[0, 2**64)``.
    sentence_ids : array_like of int, shape (B,), optional
        Ids of the sentences' random streams (default ``0 .. B-1``).
    {torch_threads}

    Returns
    -------
    LongTensor, shape (B, S, N)
        Tag indices, ``-1`` past each sentence's length.

    Examples
    --------
    >>> import torch
    >>> y = sample_sequences(torch.zeros(1, 2, 2), torch.zeros(2, 2), 3000, seed=1)
    >>> y.shape, round(float((y[0, :, 0] == 1).double().mean()), 1)
    (torch.Size([1, 3000, 2]), 0.5)
    """
    from ..crf import logspace
    from ..crf._torch import torch, torch_threads
    from ..crf.potentials import prepare

    S = check_positive_int(n_samples, "n_samples")
    seed = _seed(seed)
    with torch_threads(n_threads), torch.no_grad():
        ch = prepare(emissions, transitions, lengths, start, end, allowed, mask)
        ids = _check_ids(sentence_ids, ch.B)
        check_allocation(ch.B * S * ch.n * (8 * 2 + ch.C * 8 * 3),
                         f"n_samples={S}")
        ef, T, _, L = ch.shifted(dtype=torch.float64)
        parts = [logspace.forward(ef[sl], T, L[sl]) for sl in logspace.chunks(ch.B, ch.C ** 2)]
        la, logz = torch.cat([a for a, _ in parts]), torch.cat([z for _, z in parts])
        if not bool(torch.isfinite(logz).all()):
            raise ch.no_path_error(torch.nonzero(~torch.isfinite(logz))[:, 0])
        u = torch.from_numpy(uniforms(seed, ids, S, ch.n)).to(ch.device)
        out = torch.full((ch.B, S, ch.N), -1, dtype=torch.int64, device=ch.device)
        nxt = torch.zeros((ch.B, S), dtype=torch.int64, device=ch.device)
        Tt = T.t()                                     # Tt[b] = T[:, b]
        for t in range(ch.n - 1, -1, -1):
            logits = la[:, t, None, :].expand(ch.B, S, ch.C)
            inner = (t < L - 1)[:, None, None]
            logits = torch.where(inner, logits + Tt[nxt], logits)
            y = _inverse_cdf(torch.softmax(logits, -1), u[:, :, t])
            real = (t < L)[:, None]
            out[:, :, t] = torch.where(real, y, -1)
            nxt = torch.where(real, y, nxt)
        return out


def _inverse_cdf(p, u):
    """The category with ``cdf[c-1] <= u < cdf[c]`` per row of ``p`` (never of probability 0)."""
    from ..crf._torch import torch

    cdf = torch.cumsum(p, -1)
    c = (cdf <= u[..., None] * cdf[..., -1:]).sum(-1)
    positive = p > 0
    last = p.shape[-1] - 1 - positive.flip(-1).to(torch.int8).argmax(-1)
    return torch.minimum(c, last)
