"""Posterior marginals of a linear-chain CRF, and its log partition function.

Token marginals ``p(y_t = c | x)`` and adjacent tag-pair marginals
``p(y_t = a, y_{t+1} = b | x)`` from forward-backward (Nguyen & O'Connor 2015,
Section 4.2), span marginals and their length-normalised geometric mean
(Jagannatha & Yu 2020, Appendix A.3, eqs. 5-6), and ``log Z`` (to train a CRF).
"""
import contextlib
import math
import warnings

from ..core.dispatch import SENTENCE_RECURSION, takes_data
from . import backends, logspace
from ._torch import to_tensor, torch, torch_threads
from .potentials import prepare, with_potentials_doc

__all__ = ["marginals", "pair_marginals", "span_marginals", "log_partition"]

_PAIR_WARN_BYTES = 1 << 30


@takes_data(refuse=SENTENCE_RECURSION)
@with_potentials_doc
def marginals(emissions, transitions, lengths=None, start=None, end=None, allowed=None,
              mask=None, backend="lean", n_threads=None):
    """Token marginals ``p(y_t = c | x)`` of a linear-chain CRF.

    Parameters
    ----------
    %(potentials)s
    backend : {"lean", "log", "torch-struct"}, default "lean"
        "lean" is a scaled forward-backward on matrix products with O(B N C)
        memory, falling back to float64 log space for any sentence whose scaled
        recursion underflows; "log" the exact log-space recursion (in float64,
        cast back); "torch-struct"
        ``torch_struct.LinearChainCRF`` (see :mod:`sparsecal.crf.backends`).
    n_threads : int, optional
        Torch threads within the call (None: ``SPARSECAL_NUM_THREADS`` or 1;
        0: leave torch's setting; more than 4 per CPU: clamped to that, with a
        warning), restored afterwards.

    Returns
    -------
    Tensor, shape (B, N, C), dtype of ``emissions``
        Rows sum to 1 on real tokens and are 0 on padding. Never attached to
        autograd; the inputs are neither modified nor given ``requires_grad``.

    Raises
    ------
    TypeError
        On non-float emissions, a non-boolean ``allowed`` or ``mask``, or
        non-integer ``lengths``.
    ValueError
        On shape mismatches, lengths outside ``1..N``, a mask that is not a run of
        leading Trues or disagrees with ``lengths``, NaN or +inf potentials, an
        unknown backend, a sentence whose every tag sequence is impossible, or
        ``n_threads`` (or ``SPARSECAL_NUM_THREADS``) not an integer >= 0.

    References
    ----------
    Nguyen & O'Connor (2015), Posterior calibration and exploratory analysis for
    natural language processing models, Section 4.2.2 (single-word tags).

    Examples
    --------
    With no transition scores the tokens are independent: each row is the
    softmax of its emissions.

    >>> import torch
    >>> from sparsecal import crf
    >>> emissions = torch.tensor([[[1.0, 0.0], [0.0, 0.0], [0.0, 2.0]]],
    ...                          dtype=torch.float64)
    >>> transitions = torch.zeros(2, 2, dtype=torch.float64)
    >>> crf.marginals(emissions, transitions, lengths=[2])
    tensor([[[0.7311, 0.2689],
             [0.5000, 0.5000],
             [0.0000, 0.0000]]], dtype=torch.float64)

    Forbidding the transition 0 -> 1 leaves three equally likely sequences of
    two tokens, (0, 0), (1, 0) and (1, 1):

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
@with_potentials_doc
def pair_marginals(emissions, transitions, lengths=None, start=None, end=None,
                   allowed=None, mask=None, backend="lean", n_threads=None):
    """Adjacent tag-pair marginals ``p(y_t = a, y_{t+1} = b | x)``.

    Parameters
    ----------
    %(potentials)s
    backend : {"lean", "log", "torch-struct"}, default "lean"
        As in :func:`marginals`.
    n_threads : int, optional
        As in :func:`marginals`.

    Returns
    -------
    Tensor, shape (B, N-1, C, C), dtype of ``emissions``
        Zero for ``t >= lengths[b] - 1``; summing over ``b`` (the last axis) gives
        the token marginals at ``t``, over ``a`` those at ``t + 1``.

    Raises
    ------
    TypeError, ValueError
        As in :func:`marginals`.

    Warns
    -----
    UserWarning
        When the result takes more than 1 GiB (``B (N-1) C^2`` values).

    References
    ----------
    Nguyen & O'Connor (2015), Section 4.2.3 (two-consecutive-word tags).

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
@with_potentials_doc
def log_partition(emissions, transitions, lengths=None, start=None, end=None,
                  allowed=None, mask=None, backend="log", n_threads=None):
    """Log partition function ``log Z`` per sentence.

    Parameters
    ----------
    %(potentials)s
    backend : {"log", "lean", "torch-struct"}, default "log"
        "log" is differentiable (autograd through the log-space recursion, to
        train a CRF: ``loss = log_partition(...) - gold_score``; computed in
        float64 and cast back); its autograd graph holds ``O(N B C^2)`` values. "lean", when gradients are enabled
        and an input requires them, is differentiable too, through the scaled
        recursion on matrix products (much faster at large C; its graph holds
        ``O(N B C)`` values); otherwise it, like "torch-struct", returns
        detached results.
    n_threads : int, optional
        As in :func:`marginals`.

    Returns
    -------
    Tensor, shape (B,)
        ``-inf`` for a sentence without any possible tag sequence ("log").

    Raises
    ------
    TypeError, ValueError
        As in :func:`marginals` ("lean" without gradients and "torch-struct"
        raise for a sentence without any possible tag sequence).

    References
    ----------
    Nguyen & O'Connor (2015), Section 4.2 (the forward algorithm's normaliser).

    Examples
    --------
    Two tokens and two tags with zero scores: ``Z`` counts the 4 sequences.

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
@with_potentials_doc
def span_marginals(emissions, transitions, batch_index, span_start, tags, lengths=None,
                   start=None, end=None, allowed=None, mask=None, normalize=False,
                   backend="lean", n_threads=None):
    """Probability that a span carries exactly a tag sequence.

    ``p(y_s = tags[0], ..., y_{s+l-1} = tags[l-1] | x)`` for spans of sentence
    ``batch_index`` starting at ``span_start``, all of length ``l``; with
    ``normalize=True`` the length-normalised geometric mean ``p ** (1/l)``.

    Parameters
    ----------
    %(potentials)s
    batch_index, span_start : int arrays, shape (K,)
        Sentence and first position of each span (scalars for one span).
    tags : int array, shape (K, l) (or (l,) for one span)
        Tag sequence of each span; ``span_start + l <= lengths[batch_index]``.
    normalize : bool, default False
        Return ``p ** (1/l)``.
    backend : {"lean", "log"}, default "lean"
        Forward-backward used for the sentences that have spans (computed in
        float64 either way, cast to the dtype of ``emissions``).
    n_threads : int, optional
        As in :func:`marginals`.

    Returns
    -------
    Tensor, shape (K,) (a 0-d tensor for one span given as scalars)

    Raises
    ------
    TypeError
        As in :func:`marginals`, or non-integer spans.
    ValueError
        As in :func:`marginals`, or spans out of range (sentence, tag, or past
        the sentence's length).

    References
    ----------
    Jagannatha & Yu (2020), Calibrating structured output predictors for natural
    language processing, Appendix A.3, eq. 6 (length-normalised span marginal).

    Examples
    --------
    >>> import torch
    >>> from sparsecal import crf
    >>> emissions = torch.zeros(1, 3, 2, dtype=torch.float64)
    >>> transitions = torch.zeros(2, 2, dtype=torch.float64)
    >>> p = crf.span_marginals(emissions, transitions, 0, 1, [0, 1])
    >>> round(float(p), 6)                       # one quarter of the sequences
    0.25
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
    """log p of spans [K] by the chain rule of the posterior (a Markov chain):
    ``p(y_s = t_0) prod_i p(y_{s+i} = t_i | y_{s+i-1} = t_{i-1})``, each factor
    a log-softmax over the tags of relative quantities (``la``, ``lb`` relative
    log alphas and betas, ``ef``, ``T`` the shifted potentials), so that no huge
    numbers are subtracted. A factor after a tag of probability 0 can be NaN
    (no allowed successor): it becomes ``-inf``, like the span's probability."""
    first = torch.log_softmax(la[inv, ss] + lb[inv, ss], -1)             # [K, C]
    logp = first.gather(1, tg[:, :1])[:, 0]
    l = tg.shape[1]
    if l > 1:
        pos = ss[:, None] + torch.arange(1, l, device=ss.device)[None]    # [K, l-1]
        v = T[tg[:, :-1]] + ef[inv[:, None], pos] + lb[inv[:, None], pos]  # [K, l-1, C]
        cond = torch.log_softmax(v, -1).gather(2, tg[:, 1:, None])[..., 0]
        logp = logp + torch.where(torch.isnan(cond), -math.inf, cond).sum(1)
    return logp
