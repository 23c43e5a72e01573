"""pytorch-crf's ``torchcrf.CRF`` layer: its posterior marginals and log partition.

``torchcrf.CRF(num_tags, batch_first=False)`` scores a tag sequence ``y`` of a
sentence of length ``L`` (the positions where ``mask`` is on) as::

    start_transitions[y_0] + sum_t emissions[t, y_t]
        + sum_{t<L-1} transitions[y_t, y_{t+1}] + end_transitions[y_{L-1}]

which is exactly the potentials of :mod:`sparsecal.crf` (``transitions[i, j]``
scores ``i -> j``; ``start``, ``end``), so its marginals and ``log Z`` are
those of :func:`sparsecal.crf.marginals` and :func:`sparsecal.crf.log_partition`
with the layer's parameters (Nguyen & O'Connor 2015, Section 4.2). Layout: the
emissions are ``[seq_len, batch, C]`` unless the layer has ``batch_first=True``
(``[batch, seq_len, C]``); ``mask`` has their first two dimensions and must be
on at the first position of every sentence (as the layer requires) and a run
of leading ones (the layer scores only such masks as sentences: its end score
goes to the last position of the mask's count).

Needs the ``crf`` extra (``pip install "sparsecal[crf]"``).
"""
from ..core.dispatch import SENTENCE_RECURSION, takes_data
from .._extras import require

__all__ = ["log_partition_from_torchcrf", "marginals_from_torchcrf"]


def _potentials(crf, emissions, mask, purpose):
    """(crf module, keyword arguments of the sparsecal.crf functions) in batch-first
    layout."""
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
def marginals_from_torchcrf(crf, emissions, mask=None, *, backend="lean", n_threads=None):
    """Token marginals ``p(y_t = c | x)`` of a ``torchcrf.CRF`` layer.

    Parameters
    ----------
    crf : torchcrf.CRF
        The layer (its ``transitions``, ``start_transitions``,
        ``end_transitions`` and ``batch_first``; never modified).
    emissions : Tensor, float32 or float64
        ``[seq_len, batch, num_tags]``, or ``[batch, seq_len, num_tags]`` when
        ``crf.batch_first``: the scores fed to the layer.
    mask : bool or uint8 Tensor, optional
        The layer's mask (same layout as the first two dimensions of
        ``emissions``); default: every position is real.
    backend : {"lean", "log", "torch-struct"}, default "lean"
        As in :func:`sparsecal.crf.marginals`.
    n_threads : int, optional
        As in :func:`sparsecal.crf.marginals`.

    Returns
    -------
    Tensor, the layout and dtype of ``emissions``
        Rows sum to 1 on real positions and are 0 where ``mask`` is off.
        Detached from autograd.

    Raises
    ------
    ImportError
        Without pytorch-crf (``pip install "sparsecal[crf]"``).
    TypeError
        If ``crf`` is not a ``torchcrf.CRF``, or as in :func:`sparsecal.crf.marginals`.
    ValueError
        On shapes that disagree with the layer, a mask that is not a run of
        leading ones per sentence (an empty sentence included), or as in
        :func:`sparsecal.crf.marginals`.

    References
    ----------
    Nguyen & O'Connor (2015), Posterior calibration and exploratory analysis
    for natural language processing models, Section 4.2 (CRF marginals by
    forward-backward).

    Examples
    --------
    >>> import torch
    >>> from torchcrf import CRF
    >>> from sparsecal.adapters import marginals_from_torchcrf
    >>> crf = CRF(3, batch_first=True)
    >>> emissions = torch.randn(2, 4, 3)
    >>> mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]], dtype=torch.bool)
    >>> p = marginals_from_torchcrf(crf, emissions, mask)
    >>> p.shape, p.sum(-1).round(decimals=4).tolist()
    (torch.Size([2, 4, 3]), [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 0.0, 0.0]])
    """
    from ..crf import marginals
    kw = _potentials(crf, emissions, mask, "marginals_from_torchcrf")
    p = marginals(**kw, backend=backend, n_threads=n_threads)
    return p if crf.batch_first else p.transpose(0, 1)


@takes_data(refuse=SENTENCE_RECURSION)
def log_partition_from_torchcrf(crf, emissions, mask=None, *, backend="log",
                                n_threads=None):
    """``log Z`` per sentence of a ``torchcrf.CRF`` layer.

    The layer's ``crf(emissions, tags, mask, reduction="none")`` is the
    log-likelihood ``score(tags) - log Z``.

    Parameters
    ----------
    crf : torchcrf.CRF
    emissions : Tensor, float32 or float64
    mask : bool or uint8 Tensor, optional
        As in :func:`marginals_from_torchcrf`.
    backend : {"log", "lean", "torch-struct"}, default "log"
        As in :func:`sparsecal.crf.log_partition` ("log" is differentiable).
    n_threads : int, optional
        As in :func:`sparsecal.crf.marginals`.

    Returns
    -------
    Tensor, shape (batch,)

    Raises
    ------
    ImportError, TypeError, ValueError
        As in :func:`marginals_from_torchcrf`.

    References
    ----------
    Nguyen & O'Connor (2015), Section 4.2 (the forward algorithm's normaliser).

    Examples
    --------
    With zero parameters and emissions, ``Z`` counts the ``3 ** 2`` sequences:

    >>> import torch
    >>> from torchcrf import CRF
    >>> from sparsecal.adapters import log_partition_from_torchcrf
    >>> crf = CRF(3)
    >>> for p in crf.parameters():
    ...     _ = torch.nn.init.zeros_(p)
    >>> round(float(log_partition_from_torchcrf(crf, torch.zeros(2, 1, 3)).exp()), 6)
    9.0
    """
    from ..crf import log_partition
    kw = _potentials(crf, emissions, mask, "log_partition_from_torchcrf")
    return log_partition(**kw, backend=backend, n_threads=n_threads)
