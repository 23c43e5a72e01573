"""Backend choice, and the lean backend's log-space fallback.

``"lean"`` (default): scaled forward-backward on matrix products
(:mod:`.scaled`), ``O(B N C)`` memory; a sentence that loses precision is redone
in float64 log space. ``"log"``: exact forward-backward in log space
(:mod:`.logspace`), in float64, the reference. ``"torch-struct"``:
``torch_struct.LinearChainCRF`` (:mod:`.torch_struct_backend`), ``O(N C^3)``.
Each function takes a :class:`.potentials.Chain` and raises for a sentence
without any possible tag sequence.
"""
from . import logspace, scaled, torch_struct_backend
from ._torch import torch

__all__ = ["BACKENDS", "check_backend", "token_marginals", "pair_marginals",
           "log_partition", "checked_log_partition", "differentiable_log_partition",
           "log_alpha_beta"]

BACKENDS = ("lean", "log", "torch-struct")


def check_backend(backend, allowed=BACKENDS):
    """The canonical name of ``backend`` (``_`` for ``-`` and any case accepted)."""
    b = str(backend).replace("_", "-").lower()
    if b == "torchstruct":
        b = "torch-struct"
    if b not in allowed:
        raise ValueError(f"backend must be one of {allowed}, got {backend!r}")
    return b


def token_marginals(ch, backend):
    """Token marginals [B, N, C] (0 on padding)."""
    if backend == "torch-struct":
        checked_log_partition(ch)
        return torch_struct_backend.token_marginals(ch)
    if backend == "log":
        out = torch.zeros((ch.B, ch.N, ch.C), dtype=ch.dtype, device=ch.device)
        out[:, :ch.n] = logspace.token_marginals(ch, None, torch.float64)
        return out
    out, bad = scaled.token_marginals(ch)
    if bool(bad.any()):
        rows = torch.nonzero(bad)[:, 0]
        out[rows, :ch.n] = logspace.token_marginals(ch, rows, torch.float64).to(ch.dtype)
    return out


def pair_marginals(ch, backend):
    """Adjacent tag-pair marginals [B, N-1, C, C]."""
    if backend == "torch-struct":
        checked_log_partition(ch)
        return torch_struct_backend.pair_marginals(ch)
    n_pairs = max(ch.n - 1, 0)
    if backend == "log":
        out = torch.zeros((ch.B, max(ch.N - 1, 0), ch.C, ch.C), dtype=ch.dtype,
                          device=ch.device)
        out[:, :n_pairs] = logspace.pair_marginals(ch, None, torch.float64)
        return out
    out, bad = scaled.pair_marginals(ch)
    if bool(bad.any()):
        rows = torch.nonzero(bad)[:, 0]
        out[rows, :n_pairs] = logspace.pair_marginals(ch, rows, torch.float64).to(ch.dtype)
    return out


def checked_log_partition(ch):
    """log Z [B] by the lean backend (log space for the sentences that lost
    precision); raises if a sentence has no finite path."""
    logz, bad = scaled.log_partition(ch)
    if bool(bad.any()):
        rows = torch.nonzero(bad)[:, 0]
        z = logspace.log_partition(ch, rows, torch.float64)
        if not bool(torch.isfinite(z).all()):
            raise ch.no_path_error(rows[~torch.isfinite(z)])
        logz[rows] = z.to(ch.dtype)
    return logz


def log_partition(ch, backend):
    """log Z [B]; differentiable for ``"log"``, which gives ``-inf`` for a
    sentence without a path where the others raise."""
    if backend == "log":
        return logspace.log_partition(ch, None, torch.float64).to(ch.dtype)
    logz = checked_log_partition(ch)
    return torch_struct_backend.log_partition(ch) if backend == "torch-struct" else logz


def differentiable_log_partition(ch):
    """log Z [B] by the lean backend with autograd (the scaled recursion; the
    whole batch in float64 log space if a sentence lost precision there);
    raises for a sentence without a path."""
    logz, bad = scaled.differentiable_log_partition(ch)
    if not bool(bad.any()):
        return logz
    logz = logspace.log_partition(ch, None, torch.float64)
    if not bool(torch.isfinite(logz).all()):
        raise ch.no_path_error(torch.nonzero(~torch.isfinite(logz))[:, 0])
    return logz.to(ch.dtype)


def log_alpha_beta(ch, backend):
    """Relative (log alpha [B, n, C], log beta [B, n, C]) by ``"lean"`` or
    ``"log"``: ``log alpha_t + log beta_t`` is ``log p(y_t | x)`` up to a
    constant per position. Raises for a sentence without a path."""
    if backend == "log":
        return logspace.log_fb_with_paths(ch)[:2]
    la, lb, bad = scaled.log_alpha_beta(ch)
    if bool(bad.any()):
        rows = torch.nonzero(bad)[:, 0]
        la[rows], lb[rows] = logspace.log_fb_with_paths(ch, rows)[:2]
    return la, lb
