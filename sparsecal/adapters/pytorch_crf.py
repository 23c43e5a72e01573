"""pytorch-crf's ``torchcrf.CRF`` layer: its marginals and ``log Z`` are those of
:mod:`sparsecal.crf` on its parameters (emissions in the layer's layout; the
``mask`` a run of leading ones per sentence, as the layer requires).
"""
from ..core.dispatch import SENTENCE_RECURSION, takes_data
from .._extras import require
from .._docs import fill_doc

__all__ = ["log_partition_from_torchcrf", "marginals_from_torchcrf"]


def _potentials(crf, emissions, mask, purpose):
    """``(crf, keyword arguments of the sparsecal.crf functions)``, batch first."""
    torchcrf = require("torchcrf", "crf", purpose)
    if not isinstance(crf, torchcrf.CRF):
        raise TypeError(f"crf must be a torchcrf.CRF, got {type(crf).__name__}")
    if not hasattr(emissions, "dim") or emissions.dim() != 3:
        raise ValueError("emissions must be a 3-dimensional tensor "
                         + ("[batch, seq_len, num_tags]" if crf.batch_first else
                            "[seq_len, batch, num_tags] (the layer has batch_first=False)"))
    if emissions.shape[2] != crf.num_tags:
        raise ValueError(f"emissions has {emissions.shape[2]} tags in its last dimension "
                         f"but the CRF has num_tags={crf.num_tags}")
    if mask is not None and tuple(mask.shape) != tuple(emissions.shape[:2]):
        raise ValueError(f"mask has shape {tuple(mask.shape)}, expected "
                         f"{tuple(emissions.shape[:2])} (the first two dimensions of "
                         "emissions)")
    if not crf.batch_first:
        emissions = emissions.transpose(0, 1)
        mask = None if mask is None else mask.transpose(0, 1)
    return dict(emissions=emissions, transitions=crf.transitions,
                start=crf.start_transitions, end=crf.end_transitions, mask=mask)


@takes_data(refuse=SENTENCE_RECURSION)
@fill_doc
def marginals_from_torchcrf(crf, emissions, mask=None, *, backend="lean", n_threads=None):
    """Token marginals ``p(y_t = c | x)`` of a ``torchcrf.CRF`` layer.

    Parameters
    ----------
    {torchcrf_layer}
    {crf_backend}
    {torch_threads}

    Returns
    -------
    Tensor, the layout and dtype of ``emissions``
        0 where ``mask`` is off; detached.

    Examples
    --------
    >>> import torch, torchcrf
    >>> mask = torch.tensor([[1, 1, 1], [1, 0, 0]], dtype=torch.bool)
    >>> p = marginals_from_torchcrf(torchcrf.CRF(3), torch.randn(3, 2, 3), mask.T)
    >>> p.sum(-1).T.round(decimals=4).tolist()
    [[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]]
    """
    from ..crf import marginals
    kw = _potentials(crf, emissions, mask, "marginals_from_torchcrf")
    p = marginals(**kw, backend=backend, n_threads=n_threads)
    return p if crf.batch_first else p.transpose(0, 1)


@takes_data(refuse=SENTENCE_RECURSION)
@fill_doc
def log_partition_from_torchcrf(crf, emissions, mask=None, *, backend="log",
                                n_threads=None):
    """``log Z`` per sentence of a ``torchcrf.CRF`` layer (its log-likelihood is
    ``score(tags) - log Z``).

    Parameters
    ----------
    {torchcrf_layer}
    backend : {"log", "lean", "torch-struct"}, default "log"
        As in :func:`sparsecal.crf.log_partition` ("log" is differentiable).
    {torch_threads}

    Returns
    -------
    Tensor, shape (batch,)

    Examples
    --------
    >>> import torch, torchcrf
    >>> crf = torchcrf.CRF(3)
    >>> _ = [torch.nn.init.zeros_(p) for p in crf.parameters()]    # Z counts the 3 ** 2 sequences
    >>> round(float(log_partition_from_torchcrf(crf, torch.zeros(2, 1, 3)).exp()), 6)
    9.0
    """
    from ..crf import log_partition
    kw = _potentials(crf, emissions, mask, "log_partition_from_torchcrf")
    return log_partition(**kw, backend=backend, n_threads=n_threads)
