"""Validated CRF potentials: the :class:`Chain` every recursion reads.

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
"""
import math

from ._torch import to_tensor, torch

__all__ = ["Chain", "prepare", "with_potentials_doc"]

FLOAT_DTYPES = (torch.float32, torch.float64)

POTENTIALS_DOC = """    emissions : Tensor or ndarray, float32 or float64, shape (B, N, C)
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


def with_potentials_doc(func):
    """Replace the line ``%(potentials)s`` of ``func``'s docstring by the
    parameters every CRF function shares (:data:`POTENTIALS_DOC`)."""
    func.__doc__ = func.__doc__.replace("    %(potentials)s\n", POTENTIALS_DOC)
    return func


class Chain:
    """Validated CRF inputs of a batch (views of the caller's tensors: never
    modified).

    Attributes: ``e`` emissions [B, N, C], ``T`` transitions [C, C] (disallowed
    ones ``-inf``), ``start``/``end`` [C] or None, ``L`` lengths [B] (int64),
    ``L_list`` the same as a list, ``n = max(L)``, ``B, N, C``, ``dtype``,
    ``device``.
    """

    __slots__ = ("e", "T", "start", "end", "L", "L_list", "n", "B", "N", "C", "dtype",
                 "device")

    def __init__(self, e, T, start, end, L, n):
        self.e, self.T, self.start, self.end, self.L, self.n = e, T, start, end, L, n
        self.B, self.N, self.C = e.shape
        self.dtype, self.device = e.dtype, e.device
        self.L_list = L.tolist()

    def folded(self, rows=None, dtype=None):
        """Emissions [b, n, C] of the sentences ``rows`` (default all) with
        ``start`` folded into t=0, ``end`` into t=L-1 and padding set to 0 (out
        of place, differentiable), and their lengths [b]."""
        e, L = self.e[:, :self.n], self.L
        if rows is not None:
            e, L = e[rows], L[rows]
        if dtype is not None:
            e = e.to(dtype)
        pos = torch.arange(self.n, device=self.device)
        if self.end is not None:
            last = (pos[None] == (L - 1)[:, None])[..., None]
            e = torch.where(last, e + self.end.to(e.dtype), e)
        if self.start is not None:
            e = torch.cat([e[:, :1] + self.start.to(e.dtype), e[:, 1:]], 1)
        real = (pos[None] < L[:, None])[..., None]
        return torch.where(real, e, torch.zeros((), dtype=e.dtype, device=e.device)), L

    def subchain(self, rows, dtype):
        """The sentences ``rows`` as a chain of their own, trimmed to their
        longest, in ``dtype``."""
        L = self.L[rows]
        n = int(L.max())
        return Chain(self.e[rows, :n].to(dtype), self.T.to(dtype),
                     None if self.start is None else self.start.to(dtype),
                     None if self.end is None else self.end.to(dtype), L, n)

    def no_path_error(self, rows):
        """The ValueError for sentences ``rows`` (the first is named) that have no
        tag sequence with a finite score."""
        b = int(rows[0])
        return ValueError(f"sentence {b} (length {self.L_list[b]}) has no tag sequence "
                          "with a finite score: every path is impossible (-inf "
                          "potentials or disallowed transitions)")


def _float_like(x, name, ref, shape):
    t = to_tensor(x, name)
    if not (t.is_floating_point() or t.dtype in (torch.int32, torch.int64)):
        raise TypeError(f"{name} must hold real numbers, got dtype {t.dtype}")
    if tuple(t.shape) != tuple(shape):
        raise ValueError(f"{name} has shape {tuple(t.shape)}, expected {tuple(shape)}")
    return t.to(device=ref.device, dtype=ref.dtype)


def _raise_on_nan(t, name, lengths=None):
    """NaN and +inf are errors; -inf means 'impossible'. With ``lengths``, ``t``
    is [B, n, C] and only real tokens are checked."""
    if t.numel() == 0:
        return
    top = t.max()
    if torch.isnan(top) or top == math.inf:
        bad = torch.isnan(t) | (t == math.inf)
        if lengths is not None:
            bad &= (torch.arange(t.shape[1], device=t.device)[None]
                    < lengths[:, None])[..., None]
            if not bad.any():
                return
        idx = tuple(int(i) for i in torch.nonzero(bad)[0])
        what = "NaN" if torch.isnan(t[idx]) else "+inf"
        raise ValueError(f"{name}{list(idx)} is {what}: potentials must be log-scores "
                         "(finite, or -inf for impossible)")


def _lengths_of_mask(mask, B, N, device):
    mask = to_tensor(mask, "mask")
    if tuple(mask.shape) != (B, N):
        raise ValueError(f"mask has shape {tuple(mask.shape)}, expected ({B}, {N})")
    if mask.dtype != torch.bool:
        if mask.is_floating_point() or mask.is_complex():
            raise TypeError(f"mask must be boolean, got dtype {mask.dtype}")
        mask = mask != 0
    mask = mask.to(device)
    Lm = mask.sum(1)
    leading = torch.arange(N, device=device)[None] < Lm[:, None]
    if not torch.equal(mask, leading):
        b = int(torch.nonzero((mask != leading).any(1))[0])
        raise ValueError(f"mask row {b} is not a run of leading Trues: give lengths "
                         "for padded sentences")
    return Lm


def prepare(emissions, transitions, lengths=None, start=None, end=None, allowed=None,
            mask=None):
    """Validate CRF potentials (see the module docstring) into a :class:`Chain`.

    Raises
    ------
    TypeError, ValueError
        On invalid potentials, as listed in :func:`sparsecal.crf.marginals`; NaN
        and ``+inf`` are looked for in real tokens only (padding is never read).
    """
    e = to_tensor(emissions, "emissions")
    if e.dtype not in FLOAT_DTYPES:
        raise TypeError(f"emissions must be float32 or float64, got dtype {e.dtype}")
    if e.dim() != 3:
        raise ValueError(f"emissions must be 3-dimensional [B, N, C], got shape "
                         f"{tuple(e.shape)}")
    B, N, C = e.shape
    if B == 0 or N == 0 or C == 0:
        raise ValueError(f"emissions is empty (shape {tuple(e.shape)})")
    T = _float_like(transitions, "transitions", e, (C, C))
    if allowed is not None:
        allowed = to_tensor(allowed, "allowed")
        if allowed.dtype != torch.bool:
            raise TypeError(f"allowed must be a boolean mask, got dtype {allowed.dtype}")
        if tuple(allowed.shape) != (C, C):
            raise ValueError(f"allowed has shape {tuple(allowed.shape)}, expected "
                             f"({C}, {C})")
        T = T.masked_fill(~allowed.to(e.device), -math.inf)
    _raise_on_nan(T, "transitions")
    if start is not None:
        start = _float_like(start, "start", e, (C,))
        _raise_on_nan(start, "start")
    if end is not None:
        end = _float_like(end, "end", e, (C,))
        _raise_on_nan(end, "end")

    Lm = None if mask is None else _lengths_of_mask(mask, B, N, e.device)
    if lengths is not None:
        L = to_tensor(lengths, "lengths")
        if L.dtype == torch.bool or L.is_floating_point() or L.is_complex():
            raise TypeError(f"lengths must hold integers, got dtype {L.dtype}")
        if tuple(L.shape) != (B,):
            raise ValueError(f"lengths has shape {tuple(L.shape)}, expected ({B},)")
        L = L.to(device=e.device, dtype=torch.int64)
        if Lm is not None and not torch.equal(L, Lm):
            raise ValueError("lengths and mask disagree")
    elif Lm is not None:
        L = Lm
    else:
        L = torch.full((B,), N, dtype=torch.int64, device=e.device)
    lo, n = int(L.min()), int(L.max())
    if lo < 1:
        b = int(torch.nonzero(L < 1)[0])
        raise ValueError(f"lengths[{b}] = {int(L[b])}: every sentence needs at least 1 "
                         "token")
    if n > N:
        b = int(torch.nonzero(L > N)[0])
        raise ValueError(f"lengths[{b}] = {int(L[b])} exceeds the padded length N={N} "
                         "of emissions")
    _raise_on_nan(e[:, :n], "emissions", L)
    return Chain(e, T, start, end, L, n)
