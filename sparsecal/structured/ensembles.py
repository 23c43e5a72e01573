"""Confidence of events from several score samples: MC dropout or an ensemble.

The forecaster's model-uncertainty features of an event (Jagannatha & Yu 2020,
Section 2.6) are the mean of its probability over 10 MC-dropout samples and the
10th and 90th percentiles. Score the events under every sample, then summarise
the ``[S, n_events]`` matrix with :func:`sample_confidence`.
"""
from dataclasses import dataclass

import numpy as np

from ..core.dispatch import IN_MEMORY_SAMPLES, takes_data
from ..core.validation import (as_float_array, check_allocation, check_positive_int,
                               check_probabilities)

__all__ = ["EventConfidence", "sample_confidence", "mc_dropout_samples"]


@dataclass(frozen=True)
class EventConfidence:
    """Per-event summary of S probabilities: ``mean``, the ``percentiles``
    ``p_low`` and ``p_high``, and ``std`` (``ddof=0``).

    Examples
    --------
    >>> c = sample_confidence([[0.2, 0.9], [0.4, 0.9]])
    >>> c.mean.round(3).tolist(), c.std.round(3).tolist()
    ([0.3, 0.9], [0.1, 0.0])
    """

    mean: np.ndarray
    p_low: np.ndarray
    p_high: np.ndarray
    std: np.ndarray
    percentiles: tuple
    n_samples: int

    def features(self):
        """``{"mean", "p_low", "p_high", "std"}`` -> arrays."""
        return {"mean": self.mean, "p_low": self.p_low, "p_high": self.p_high,
                "std": self.std}


@takes_data(refuse=IN_MEMORY_SAMPLES)
def sample_confidence(probabilities, percentiles=(10.0, 90.0)):
    """Mean, percentiles and spread of each event's probability over S samples.

    Parameters
    ----------
    probabilities : array_like of float, shape (S, n_events)
        Every event's probability under each sample, in [0, 1].
    percentiles : (float, float), default (10, 90)
        Low and high, in [0, 100].

    Returns
    -------
    EventConfidence

    Examples
    --------
    >>> import numpy as np
    >>> probs = np.linspace(0.0, 1.0, 11)[:, None]      # 11 samples of one event
    >>> c = sample_confidence(probs)
    >>> c.mean.round(6).tolist(), c.p_low.round(6).tolist(), c.p_high.round(6).tolist()
    ([0.5], [0.1], [0.9])
    """
    p = as_float_array(probabilities, "probabilities", ndim=2)
    if p.shape[0] == 0:
        raise ValueError("probabilities needs at least one sample (row)")
    check_probabilities(p.reshape(-1), "probabilities")
    pct = np.asarray(percentiles, dtype=np.float64) if not isinstance(percentiles, str) \
        else None
    if pct is None or pct.shape != (2,) or not (0 <= pct[0] <= pct[1] <= 100):
        raise ValueError(f"percentiles must be (low, high) with 0 <= low <= high <= 100, "
                         f"got {percentiles!r}")
    p = p.astype(np.float64)
    low, high = np.percentile(p, pct, axis=0)
    return EventConfidence(p.mean(0), low, high, p.std(0), tuple(pct.tolist()), p.shape[0])


def mc_dropout_samples(model, inputs, n_samples=10, seed=None):
    """Run a PyTorch model S times with only its dropout modules in training mode, no
    gradients, and stack the outputs (modes restored afterwards).

    Parameters
    ----------
    model : torch.nn.Module
        Called as ``model(*inputs)`` (a tuple) or ``model(inputs)``.
    inputs : Tensor or tuple
    n_samples : int, default 10
    seed : int, optional
        Seed of the dropout masks (the global RNG is left as it was); None uses
        the global RNG.

    Returns
    -------
    Tensor, shape (S, ...)

    Examples
    --------
    >>> import torch
    >>> net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Dropout(0.5),
    ...                           torch.nn.Linear(4, 2), torch.nn.Softmax(-1))
    >>> out = mc_dropout_samples(net.eval(), torch.ones(5, 3), n_samples=8, seed=0)
    >>> out.shape, net.training
    (torch.Size([8, 5, 2]), False)
    """
    from ..crf._torch import torch

    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    S = check_positive_int(n_samples, "n_samples")
    if seed is not None:
        seed = check_positive_int(seed, "seed", allow_zero=True)
    args = inputs if isinstance(inputs, tuple) else (inputs,)
    modes = [(m, m.training) for m in model.modules()]
    dropout = (torch.nn.modules.dropout._DropoutNd,)
    try:
        for m, _ in modes:
            m.training = isinstance(m, dropout)
        with torch.no_grad(), torch.random.fork_rng(enabled=seed is not None):
            if seed is not None:
                torch.manual_seed(seed)
            outs = [model(*args)]
            if torch.is_tensor(outs[0]):   # the samples stacked: S times the first, twice
                check_allocation(2 * S * outs[0].element_size() * outs[0].nelement(),
                                 f"n_samples={S}")
            outs += [model(*args) for _ in range(S - 1)]
    finally:
        for m, mode in modes:
            m.training = mode
    if not all(torch.is_tensor(o) for o in outs):
        raise TypeError("model must return a tensor")
    return torch.stack(outs)
