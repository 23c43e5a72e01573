"""Validated CRF potentials: the :class:`Chain` every recursion reads.

All potentials are log-space scores. For a sentence of length ``L`` with tags
``y_0 .. y_{L-1}``::

    score(y) = start[y_0] + sum_t emissions[t, y_t]
               + sum_{t<L-1} transitions[y_t, y_{t+1}] + end[y_{L-1}]
    p(y | x) = exp(score(y)) / Z,   Z = sum_y exp(score(y))

``allowed[a, b] = False`` forbids a transition (e.g. BIO constraints); ``-inf``
anywhere means "impossible". NaN, ``+inf`` and finite potentials so large that a
path score could overflow (``|x| > finfo(dtype).max / (4 (N + 1))``) are errors.
Potentials are float32 or float64; transitions, start and end are cast to the
emissions' dtype and device. Batches are padded: ``emissions [B, N, C]`` with
``lengths [B]`` in ``1..N`` or a ``mask [B, N]`` of leading Trues; padding is
never read.

Recursions read the potentials *shifted* (:meth:`Chain.shifted`): each
position's emissions minus their largest value, the transitions minus their
largest finite value. The shifts cancel in every probability and are added back
to ``log Z`` only, so no probability comes from differences of huge numbers.
"""
import math

from ._torch import to_tensor, torch

__all__ = ["Chain", "largest_finite", "prepare"]

FLOAT_DTYPES = (torch.float32, torch.float64)


def largest_finite(x):
    """The largest finite value of ``x`` (detached, 0-d), 0 if none; ``x`` holds no NaN
    or ``+inf``, so one ``amax`` does it.
    """
    return torch.nan_to_num(x.detach().amax(), neginf=0.0)



class Chain:
    """Validated CRF inputs of a batch (views of the caller's tensors, never modified):
    ``e`` [B, N, C], ``T`` [C, C] (disallowed ``-inf``), ``start``/``end`` [C] or
    None, lengths ``L`` [B] (and ``L_list``), ``n = max(L)``, ``B, N, C``, ``dtype``,
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
        """Emissions [b, n, C] of the sentences ``rows`` (default all) with ``start`` and
        ``end`` folded in and padding 0 (differentiable), and their lengths [b].
        """
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

    def shifted(self, rows=None, dtype=None):
        """``(ef, T, offset, L)``: :meth:`folded` emissions minus each real position's
        largest value, transitions minus their largest finite value, and what the
        shifts took from every path's score (``log Z = log Z(ef, T) + offset``).

        The shifts are detached: they cancel in every probability and ``log Z`` does
        not depend on them, so its gradient is exact.
        """
        ef, L = self.folded(rows, dtype)
        r = ef.detach().amax(-1, keepdim=True)
        r = torch.where(torch.isfinite(r), r, torch.zeros((), dtype=r.dtype, device=r.device))
        T = self.T.to(ef.dtype)
        m = largest_finite(T)
        offset = r[..., 0].sum(1) + (L - 1).to(ef.dtype) * m
        return ef - r, T - m, offset, L

    def subchain(self, rows, dtype):
        """The sentences ``rows`` as a chain of their own, trimmed to their longest."""
        L = self.L[rows]
        n = int(L.max())
        return Chain(self.e[rows, :n].to(dtype), self.T.to(dtype),
                     None if self.start is None else self.start.to(dtype),
                     None if self.end is None else self.end.to(dtype), L, n)

    def no_path_error(self, rows):
        """The ValueError for sentences ``rows`` without a tag sequence of finite score."""
        b = int(rows[0])
        return ValueError(f"sentence {b} (length {self.L_list[b]}) has no tag sequence "
                          "with a finite score: every path is impossible (-inf "
                          "potentials or disallowed transitions)")


def _check_float(t, name):
    if t.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name} must be float32 or float64, got dtype {t.dtype}")


def _float_like(x, name, ref, shape):
    t = to_tensor(x, name)
    _check_float(t, name)
    if tuple(t.shape) != tuple(shape):
        raise ValueError(f"{name} has shape {tuple(t.shape)}, expected {tuple(shape)}")
    return t.to(device=ref.device, dtype=ref.dtype)


def _check_values(t, name, bound, lengths=None):
    """NaN, +inf and finite values beyond ``bound`` raise (in real tokens only, given
    ``lengths``); one pass when nothing is wrong.
    """
    if t.numel() == 0:
        return
    lo, hi = torch.aminmax(t)
    if not (torch.isnan(hi) or hi > bound or lo < -bound):
        return
    finite = torch.isfinite(t)
    bad = torch.isnan(t) | (t == math.inf) | (finite & (t.abs() > bound))
    if lengths is not None:
        bad &= (torch.arange(t.shape[1], device=t.device)[None]
                < lengths[:, None])[..., None]
    if not bad.any():
        return
    idx = tuple(int(i) for i in torch.nonzero(bad)[0])
    v = float(t[idx])
    if math.isnan(v) or v == math.inf:
        raise ValueError(f"{name}{list(idx)} is {'NaN' if math.isnan(v) else '+inf'}: "
                         "potentials must be log-scores (finite, or -inf for impossible)")
    raise ValueError(f"{name}{list(idx)} = {v:.6g} is too large in magnitude: finite "
                     f"potentials must lie within +-{bound:.3g} (finfo({t.dtype}).max / "
                     "(4 (N + 1))) so that no path score overflows")


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
    if bool((Lm == 0).any()):
        b = int(torch.nonzero(Lm == 0)[0])
        raise ValueError(f"mask row {b} is all False: every sentence needs at least 1 "
                         "token (leave empty sentences out of the batch)")
    return Lm


def prepare(emissions, transitions, lengths=None, start=None, end=None, allowed=None,
            mask=None):
    """Validate CRF potentials (see the module) into a :class:`Chain`."""
    e = to_tensor(emissions, "emissions")
    _check_float(e, "emissions")
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
    bound = torch.finfo(e.dtype).max / (4 * (N + 1))
    _check_values(T, "transitions", bound)
    if start is not None:
        start = _float_like(start, "start", e, (C,))
        _check_values(start, "start", bound)
    if end is not None:
        end = _float_like(end, "end", e, (C,))
        _check_values(end, "end", bound)

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
                         "token (leave empty sentences out of the batch)")
    if n > N:
        b = int(torch.nonzero(L > N)[0])
        raise ValueError(f"lengths[{b}] = {int(L[b])} exceeds the padded length N={N} "
                         "of emissions")
    _check_values(e[:, :n], "emissions", bound, L)
    return Chain(e, T, start, end, L, n)
