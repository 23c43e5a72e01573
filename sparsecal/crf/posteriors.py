"""Posterior marginals of a linear-chain CRF and its log partition function:
token and tag-pair marginals by forward-backward (Nguyen & O'Connor 2015,
Section 4.2), span marginals (Jagannatha & Yu 2020, Appendix A.3), ``log Z``.
"""
import contextlib
import math
import warnings

from ..core.dispatch import SENTENCE_RECURSION, takes_data
from . import backends, logspace
from ._torch import to_tensor, torch, torch_threads
from .potentials import prepare
from .._docs import fill_doc

__all__ = ["marginals", "pair_marginals", "span_marginals", "log_partition"]

_PAIR_WARN_BYTES = 1 << 30


@takes_data(refuse=SENTENCE_RECURSION)
@fill_doc
def marginals(emissions, transitions, lengths=None, start=None, end=None, allowed=None,
              mask=None, backend="lean", n_threads=None):
    """Token marginals ``p(y_t = c | x)`` of a linear-chain CRF.

    Parameters
    ----------
    {potentials}
    {crf_backend}
    {torch_threads}

    Returns
    -------
    Tensor, shape (B, N, C), dtype of ``emissions``
        Rows sum to 1 on real tokens, 0 on padding; detached from autograd.

    Raises
    ------
    TypeError, ValueError
        On invalid potentials, or a sentence without a possible tag sequence.

    References
    ----------
    Nguyen & O'Connor 2015, Section 4.2.2.

    Examples
    --------
    Forbidding 0 -> 1 leaves three equally likely sequences, (0, 0), (1, 0), (1, 1):

    >>> import torch
    >>> from sparsecal import crf
    >>> allowed = torch.tensor([[True, False], [True, True]])
    >>> crf.marginals(torch.zeros(1, 2, 2), torch.zeros(2, 2), allowed=allowed)
    tensor([[[0.3333, 0.6667],
             [0.6667, 0.3333]]])
    """
    backend = backends.check_backend(backend)
    with torch_threads(n_threads), torch.no_grad():
        ch = prepare(emissions, transitions, lengths, start, end, allowed, mask)
        return backends.token_marginals(ch, backend)


@takes_data(refuse=SENTENCE_RECURSION)
@fill_doc
def pair_marginals(emissions, transitions, lengths=None, start=None, end=None,
                   allowed=None, mask=None, backend="lean", n_threads=None):
    """Adjacent tag-pair marginals ``p(y_t = a, y_{t+1} = b | x)``; warns above 1 GiB.

    Parameters
    ----------
    {potentials}
    {crf_backend}
    {torch_threads}

    Returns
    -------
    Tensor, shape (B, N-1, C, C)
        Zero for ``t >= lengths[b] - 1``.

    Raises
    ------
    TypeError, ValueError
        As :func:`marginals`.

    References
    ----------
    Nguyen & O'Connor 2015, Section 4.2.3.

    Examples
    --------
    >>> import torch
    >>> from sparsecal import crf
    >>> emissions = torch.zeros(1, 2, 2, dtype=torch.float64)
    >>> allowed = torch.tensor([[True, False], [True, True]])
    >>> crf.pair_marginals(emissions, torch.zeros(2, 2), allowed=allowed)[0, 0]
    tensor([[0.3333, 0.0000],
            [0.3333, 0.3333]], dtype=torch.float64)
    """
    backend = backends.check_backend(backend)
    with torch_threads(n_threads), torch.no_grad():
        ch = prepare(emissions, transitions, lengths, start, end, allowed, mask)
        nbytes = ch.B * max(ch.N - 1, 0) * ch.C * ch.C * ch.e.element_size()
        if nbytes > _PAIR_WARN_BYTES:
            warnings.warn(f"pair_marginals allocates {nbytes / 2**30:.1f} GiB "
                          f"([{ch.B}, {ch.N - 1}, {ch.C}, {ch.C}]); use smaller batches "
                          "or token marginals", UserWarning, stacklevel=3)
        return backends.pair_marginals(ch, backend)


@takes_data(refuse=SENTENCE_RECURSION)
@fill_doc
def log_partition(emissions, transitions, lengths=None, start=None, end=None,
                  allowed=None, mask=None, backend="log", n_threads=None):
    """Log partition function ``log Z`` per sentence, differentiable (to train a CRF).

    Parameters
    ----------
    {potentials}
    backend : {"log", "lean", "torch-struct"}, default "log"
        "log": autograd through the log-space recursion; "lean": through the
        scaled recursion when an input requires grad (much faster at large C);
        "torch-struct": detached.
    {torch_threads}

    Returns
    -------
    Tensor, shape (B,)
        ``-inf`` ("log") for a sentence without a possible tag sequence.

    Raises
    ------
    TypeError, ValueError
        As :func:`marginals`.

    References
    ----------
    Nguyen & O'Connor 2015, Section 4.2.

    Examples
    --------
    Two tokens, two tags, zero scores: ``Z`` counts 4 sequences, and the gradient
    is the token marginals.

    >>> import torch
    >>> from sparsecal import crf
    >>> emissions = torch.zeros(1, 2, 2, dtype=torch.float64, requires_grad=True)
    >>> log_z = crf.log_partition(emissions, torch.zeros(2, 2, dtype=torch.float64))
    >>> round(float(log_z.detach().exp()), 6)
    4.0
    >>> log_z.sum().backward()      # the gradient is the token marginals
    >>> emissions.grad
    tensor([[[0.5000, 0.5000],
             [0.5000, 0.5000]]], dtype=torch.float64)
    """
    backend = backends.check_backend(backend)
    lean_grad = backend == "lean" and torch.is_grad_enabled() and any(
        isinstance(x, torch.Tensor) and x.requires_grad
        for x in (emissions, transitions, start, end))
    no_grad = contextlib.nullcontext() if backend == "log" or lean_grad else torch.no_grad()
    with torch_threads(n_threads), no_grad:
        ch = prepare(emissions, transitions, lengths, start, end, allowed, mask)
        if lean_grad:
            return backends.differentiable_log_partition(ch)
        return backends.log_partition(ch, backend)


def _spans(ch, batch_index, span_start, tags):
    """Validated spans: (batch_index [K], span_start [K], tags [K, l], scalar)."""
    bi = to_tensor(batch_index, "batch_index")
    ss = to_tensor(span_start, "span_start")
    tg = to_tensor(tags, "tags")
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
        return bi, ss, tg, scalar
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
                         f"{ch.L_list[int(bi[i])]}")
    return bi, ss, tg, scalar


@takes_data(refuse=SENTENCE_RECURSION)
@fill_doc
def span_marginals(emissions, transitions, batch_index, span_start, tags, lengths=None,
                   start=None, end=None, allowed=None, mask=None, normalize=False,
                   backend="lean", n_threads=None):
    """Probability that a span carries exactly a tag sequence,
    ``p(y_s = tags[0], ..., y_{s+l-1} = tags[l-1] | x)``, or ``p ** (1/l)``.

    Parameters
    ----------
    {potentials}
    batch_index, span_start : int arrays, shape (K,)
        Sentence and first position of each span (scalars for one span).
    tags : int array, shape (K, l) (or (l,) for one span)
    normalize : bool, default False
        Return ``p ** (1/l)``.
    backend : {"lean", "log"}, default "lean"
    {torch_threads}

    Returns
    -------
    Tensor, shape (K,) (0-d for one span given as scalars)

    Raises
    ------
    TypeError, ValueError
        As :func:`marginals`, or spans out of range.

    References
    ----------
    Jagannatha & Yu 2020, Appendix A.3, eq. 6.

    Examples
    --------
    >>> import torch
    >>> from sparsecal import crf
    >>> emissions = torch.zeros(1, 3, 2, dtype=torch.float64)
    >>> transitions = torch.zeros(2, 2, dtype=torch.float64)
    >>> p = crf.span_marginals(emissions, transitions, 0, 1, [0, 1], normalize=True)
    >>> round(float(p), 6)
    0.5
    """
    backend = backends.check_backend(backend, ("lean", "log"))
    with torch_threads(n_threads), torch.no_grad():
        ch = prepare(emissions, transitions, lengths, start, end, allowed, mask)
        bi, ss, tg, scalar = _spans(ch, batch_index, span_start, tags)
        K, l = tg.shape
        if K == 0:
            return torch.zeros(0, dtype=ch.dtype, device=ch.device)
        rows, inv = torch.unique(bi, return_inverse=True)
        sub = ch.subchain(rows, torch.float64)
        la, lb = backends.log_alpha_beta(sub, backend)
        ef, T, _, _ = sub.shifted()
        logp = torch.empty(K, dtype=torch.float64, device=ch.device)
        for sl in logspace.chunks(K, l * ch.C):
            logp[sl] = _span_log_prob(la, lb, ef, T, inv[sl], ss[sl], tg[sl])
        if normalize:
            logp = logp / l
        p = torch.exp(logp).clamp_(max=1.0).to(ch.dtype)
        return p[0] if scalar else p


def _span_log_prob(la, lb, ef, T, inv, ss, tg):
    """log p of spans [K] by the chain rule of the posterior Markov chain, each factor
    a log-softmax of relative quantities (no huge numbers subtracted); a factor
    after a tag of probability 0 is ``-inf``.
    """
    first = torch.log_softmax(la[inv, ss] + lb[inv, ss], -1)             # [K, C]
    logp = first.gather(1, tg[:, :1])[:, 0]
    l = tg.shape[1]
    if l > 1:
        pos = ss[:, None] + torch.arange(1, l, device=ss.device)[None]    # [K, l-1]
        v = T[tg[:, :-1]] + ef[inv[:, None], pos] + lb[inv[:, None], pos]  # [K, l-1, C]
        cond = torch.log_softmax(v, -1).gather(2, tg[:, 1:, None])[..., 0]
        logp = logp + torch.where(torch.isnan(cond), -math.inf, cond).sum(1)
    return logp
