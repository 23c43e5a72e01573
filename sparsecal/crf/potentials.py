"""Validated CRF potentials: the :class:`Chain` every recursion reads.

All potentials are log-space scores. For a sentence of length ``L`` with tags
``y_0 .. y_{L-1}``::

    score(y) = start[y_0] + sum_t emissions[t, y_t]
               + sum_{t<L-1} transitions[y_t, y_{t+1}] + end[y_{L-1}]
    p(y | x) = exp(score(y)) / Z,   Z = sum_y exp(score(y))

``transitions[a, b]`` scores tag ``a`` at ``t`` followed by tag ``b`` at ``t+1``;
``allowed[a, b] = False`` forbids that transition (it becomes ``-inf``, e.g. BIO
constraints). ``-inf`` anywhere means "impossible"; NaN and ``+inf`` are errors,
and so are finite potentials so large that a path score (a sum of up to ``2N+1``
of them) could overflow: ``|x| > finfo(dtype).max / (4 (N + 1))`` (about
``8e35 / N`` in float32). Every potential is float32 or float64 (integer and
half-precision dtypes are refused); transitions, start and end are cast to the
emissions' dtype and device. Batches are padded: ``emissions [B, N, C]`` with
``lengths [B]`` (each in ``1..N``) or a ``mask [B, N]`` of leading Trues (an
empty sentence is refused); padding values are never read.

Recursions read the potentials *shifted* (:meth:`Chain.shifted`): each
position's emissions minus their largest value and the transitions minus their
largest finite value. The shifts cancel in every probability and are added back
to ``log Z`` only, so probabilities never come from differences of huge
numbers (no ``exp`` overflow, no ``inf - inf``, whatever the potentials' size).
"""
import math

from ._torch import to_tensor, torch

__all__ = ["Chain", "largest_finite", "prepare", "with_potentials_doc"]

FLOAT_DTYPES = (torch.float32, torch.float64)

POTENTIALS_DOC = """    emissions : Tensor or ndarray, float32 or float64, shape (B, N, C)
        Log-space emission scores per token and tag (finite or ``-inf``; see
        :mod:`sparsecal.crf.potentials` for the bound on their magnitude).
    transitions : Tensor or ndarray, float32 or float64, shape (C, C)
        ``transitions[a, b]`` scores tag ``a`` at ``t`` followed by ``b`` at ``t+1``
        (cast to the dtype of ``emissions``).
    lengths : int array, shape (B,), optional
        Sentence lengths in ``1..N`` (default: all ``N``). ``max(lengths)`` may be
        below ``N``; positions past a sentence's length are padding.
    start, end : float32 or float64, shape (C,), optional
        Log-space scores of the first / last tag of each sentence.
    allowed : bool array, shape (C, C), optional
        ``False`` forbids the transition ``a -> b`` (its score becomes ``-inf``).
    mask : bool array, shape (B, N), optional
        Leading Trues per row; an alternative to ``lengths``.
"""


def largest_finite(x):
    """The largest finite value of ``x`` (detached, 0-dimensional), 0 if there is
    none. ``x`` holds no NaN and no ``+inf`` (as :func:`prepare` ensures), so its
    maximum is finite or ``-inf``: one pass over ``x``, no boolean indexing."""
    return torch.nan_to_num(x.detach().amax(), neginf=0.0)


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

    def shifted(self, rows=None, dtype=None):
        """:meth:`folded` emissions and the transitions, shifted so that the
        recursions never subtract huge numbers.

        Returns
        -------
        ef : Tensor [b, n, C]
            Folded emissions minus, per real position, their largest value
            (where it is finite; padding stays 0).
        T : Tensor [C, C]
            Transitions minus their largest finite value (0 if none).
        offset : Tensor [b]
            What the shifts took from every path's score, ``sum_t r_t + (L-1) m``:
            ``log Z = log Z(ef, T) + offset``.
        L : Tensor [b]
            Lengths.

        The shifts are detached: they cancel in every probability, and ``log Z``
        is the same function of the potentials whatever the shifts, so its
        gradient is exact.
        """
        ef, L = self.folded(rows, dtype)
        r = ef.detach().amax(-1, keepdim=True)
        r = torch.where(torch.isfinite(r), r, torch.zeros((), dtype=r.dtype, device=r.device))
        T = self.T.to(ef.dtype)
        m = largest_finite(T)
        offset = r[..., 0].sum(1) + (L - 1).to(ef.dtype) * m
        return ef - r, T - m, offset, L

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


def _check_float(t, name):
    """TypeError unless ``t`` is float32 or float64."""
    if t.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name} must be float32 or float64, got dtype {t.dtype}")


def _float_like(x, name, ref, shape):
    t = to_tensor(x, name)
    _check_float(t, name)
    if tuple(t.shape) != tuple(shape):
        raise ValueError(f"{name} has shape {tuple(t.shape)}, expected {tuple(shape)}")
    return t.to(device=ref.device, dtype=ref.dtype)


def _check_values(t, name, bound, lengths=None):
    """NaN, +inf and finite values beyond ``bound`` in magnitude are errors;
    -inf means 'impossible'. With ``lengths``, ``t`` is [B, n, C] and only real
    tokens are checked. One pass over ``t`` when nothing is wrong."""
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
    """Validate CRF potentials (see the module docstring) into a :class:`Chain`.

    Raises
    ------
    TypeError, ValueError
        On invalid potentials, as listed in :func:`sparsecal.crf.marginals`; NaN
        and ``+inf`` are looked for in real tokens only (padding is never read).
    """
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
