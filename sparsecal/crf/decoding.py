"""Decoding: the best (Viterbi) and the k best tag sequences, exactly.

Max-product in log space keeping the top ``k`` partial paths per tag and
position; probabilities are ``exp(score - log Z)`` over the shifted potentials
in float64. The k best sequences are the top-k MAP predictions of Jagannatha &
Yu (2020, Section 2.4), whose rank is a calibration feature.
"""
import math

from ..core.dispatch import SENTENCE_RECURSION, takes_data
from ..core.validation import check_allocation, check_positive_int
from . import logspace
from ._torch import torch, torch_threads
from .potentials import prepare
from .._docs import fill_doc

__all__ = ["viterbi", "kbest"]


@takes_data(refuse=SENTENCE_RECURSION)
@fill_doc
def viterbi(emissions, transitions, lengths=None, start=None, end=None, allowed=None,
            mask=None, n_threads=None):
    """Most probable tag sequence of each sentence.

    Parameters
    ----------
    {potentials}
    {torch_threads}

    Returns
    -------
    paths : LongTensor, shape (B, N)
        ``-1`` past each sentence's length.
    log_prob : Tensor, shape (B,)
        ``log p(path | x)``.

    Raises
    ------
    TypeError, ValueError
        As :func:`sparsecal.crf.marginals`.

    References
    ----------
    Jagannatha & Yu 2020, Section 2.4.

    Examples
    --------
    >>> import torch
    >>> from sparsecal import crf
    >>> emissions = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]])
    >>> paths, log_prob = crf.viterbi(emissions, torch.zeros(2, 2), lengths=[2])
    >>> paths
    tensor([[ 0,  1, -1]])
    >>> round(float(log_prob.exp()), 4)          # 0.7311 ** 2
    0.5344
    """
    paths, scores = _kbest(emissions, transitions, lengths, start, end, allowed, mask,
                           1, n_threads)
    return paths[:, 0], scores[:, 0]


@takes_data(refuse=SENTENCE_RECURSION)
@fill_doc
def kbest(emissions, transitions, k, lengths=None, start=None, end=None, allowed=None,
          mask=None, n_threads=None):
    """The ``k`` most probable tag sequences of each sentence, exactly.

    Parameters
    ----------
    {potentials}
    k : int
        The third positional argument.
    {torch_threads}

    Returns
    -------
    paths : LongTensor, shape (B, k, N)
        Best first; rows of ``-1`` where a sentence has fewer sequences.
    probs : Tensor, shape (B, k)
        ``p(path | x)`` (0 for those rows).

    Raises
    ------
    TypeError, ValueError
        As :func:`viterbi`.

    References
    ----------
    Jagannatha & Yu 2020, Section 2.4.

    Examples
    --------
    >>> import torch
    >>> from sparsecal import crf
    >>> emissions = torch.tensor([[[2.0, 0.0], [0.0, 0.0]]], dtype=torch.float64)
    >>> allowed = torch.tensor([[False, True], [True, True]])     # no 0 -> 0
    >>> paths, probs = crf.kbest(emissions, torch.zeros(2, 2), 4, allowed=allowed)
    >>> paths[0].tolist()
    [[0, 1], [1, 0], [1, 1], [-1, -1]]
    >>> probs
    tensor([[0.7870, 0.1065, 0.1065, 0.0000]], dtype=torch.float64)
    """
    k = check_positive_int(k, "k")
    paths, logp = _kbest(emissions, transitions, lengths, start, end, allowed, mask, k,
                         n_threads)
    return paths, torch.exp(logp)


def _kbest(emissions, transitions, lengths, start, end, allowed, mask, k, n_threads):
    """(paths [B, k, N], log p [B, k]) of the k best sequences (searched for no
    more than there are; the memory checked before anything is allocated)."""
    with torch_threads(n_threads), torch.no_grad():
        ch = prepare(emissions, transitions, lengths, start, end, allowed, mask)
        B, n, C, N = ch.B, ch.n, ch.C, ch.N
        # the search runs for the sequences there are (at most C ** n): its
        # candidates and back-pointers per row, and the output, checked first
        run = k if n * math.log2(max(C, 2)) >= 63 else min(k, C ** n)
        check_allocation(8 * (k * B * (N + 2) + run * (3 * C * C + 2 * n * C)), f"k={k}")
        ef, T, _, L = ch.shifted(dtype=torch.float64)
        paths = torch.full((B, k, N), -1, dtype=torch.int64, device=ch.device)
        scores = torch.full((B, k), -math.inf, dtype=torch.float64, device=ch.device)
        logz = torch.empty(B, dtype=torch.float64, device=ch.device)
        for sl in logspace.chunks(B, C * C * run):
            logz[sl] = logspace.forward(ef[sl], T, L[sl])[1]
            p, s = _kbest_chunk(ef[sl], T, L[sl], run)
            paths[sl, :run, :n] = p
            scores[sl, :run] = s
        if not bool(torch.isfinite(logz).all()):
            raise ch.no_path_error(torch.nonzero(~torch.isfinite(logz))[:, 0])
        return paths, (scores - logz[:, None]).clamp_(max=0.0).to(ch.dtype)


def _kbest_chunk(ef, T, L, k):
    """k-best Viterbi over folded emissions [b, n, C]: (paths [b, k, n], scores
    [b, k]), ``-1`` / ``-inf`` where a sentence has fewer than k sequences."""
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
