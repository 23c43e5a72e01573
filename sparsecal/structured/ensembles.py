"""Confidence of events from several score samples (MC dropout or an ensemble):
the forecaster's model-uncertainty features (Jagannatha & Yu 2020, Section
2.6), the mean and percentiles of an event's probability over the samples.
"""
from dataclasses import dataclass

import numpy as np

from ..core.dispatch import IN_MEMORY_SAMPLES, takes_data
from ..core.validation import (as_float_array, check_allocation, check_positive_int,
                               check_probabilities)
from ..io.tables import number, plural, summary

__all__ = ["EventConfidence", "sample_confidence", "mc_dropout_samples"]


@dataclass(frozen=True)
class EventConfidence:
    """Per-event summary of S probabilities: ``mean``, ``p_low`` and ``p_high`` (at
    the ``percentiles``) and ``std`` (``ddof=0``).

    Examples
    --------
    See :func:`sample_confidence`.
    """

    mean: np.ndarray
    p_low: np.ndarray
    p_high: np.ndarray
    std: np.ndarray
    percentiles: tuple
    n_samples: int

    def __repr__(self):
        low, high = self.percentiles
        return summary(self, plural(self.mean.size, "event"), plural(self.n_samples, "sample"),
                       self.mean.size and f"mean {number(float(self.mean.mean()))}",
                       f"percentiles ({low:g}, {high:g})")

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
        Every event's probability under each sample.
    percentiles : (float, float), default (10, 90)
        Low and high, in [0, 100].

    Returns
    -------
    EventConfidence

    Examples
    --------
    >>> c = sample_confidence([[0.2, 0.9], [0.4, 0.9]])
    >>> c.mean.round(3).tolist(), c.std.round(3).tolist()
    ([0.3, 0.9], [0.1, 0.0])
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
    """Run a PyTorch model S times with only its dropout modules in training mode,
    no gradients, and stack the outputs (modes restored afterwards).

    Parameters
    ----------
    model : torch.nn.Module
        Called as ``model(*inputs)`` (a tuple) or ``model(inputs)``.
    inputs : Tensor or tuple
    n_samples : int, default 10
    seed : int, optional
        Seed of the dropout masks (the global RNG is left as it was).

    Returns
    -------
    Tensor, shape (S, ...)

    Examples
    --------
    >>> import torch
    >>> net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Dropout(0.5))
    >>> mc_dropout_samples(net.eval(), torch.ones(5, 3), n_samples=8, seed=0).shape, net.training
    (torch.Size([8, 5, 4]), False)
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
