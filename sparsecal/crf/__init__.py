"""Linear-chain CRF marginals: tokens, tag pairs, spans, Viterbi and k-best.

Needs PyTorch (``pip install "sparsecal[torch]"``): the first use of a name
without it raises an ImportError naming that install; ``import sparsecal`` and
``import sparsecal.crf`` import no torch.

Model (:mod:`.potentials`): log-space potentials, ``emissions [B, N, C]``,
``transitions [C, C]`` (``a -> b``), optional ``start``/``end`` [C] and an
``allowed [C, C]`` mask; padded batches with ``lengths [B]`` or a ``mask [B, N]``.

Public API (Nguyen & O'Connor 2015, Section 4.2; Jagannatha & Yu 2020, eqs. 5-6):

- :func:`marginals`: ``p(y_t = c | x)`` ``[B, N, C]`` (rows sum to 1 on real
  tokens, 0 on padding);
- :func:`pair_marginals`: ``p(y_t = a, y_{t+1} = b | x)`` ``[B, N-1, C, C]``;
- :func:`span_marginals`: ``p(y_s .. y_{s+l-1} = tags | x)``, or its
  length-normalised geometric mean ``p ** (1/l)``;
- :func:`log_partition`: ``log Z`` (differentiable, to train a CRF);
- :func:`viterbi` and :func:`kbest`: the best / k best tag sequences with their
  probabilities (:mod:`.decoding`);
- :func:`stream_entries`: token marginals of a whole corpus, batch by batch,
  thresholded into :class:`sparsecal.Entries` without the dense matrix
  (:mod:`.streaming`).

Modules, from the inputs to the public functions:

- ``_torch``: the optional torch import, thread control, arrays as tensors;
- ``potentials``: validation into a :class:`~.potentials.Chain`;
- ``scaled``: the lean backend, a scaled forward-backward on matrix products;
- ``logspace``: the exact log-space forward-backward (reference and fallback);
- ``torch_struct_backend``: ``torch_struct.LinearChainCRF`` as a reference;
- ``backends``: the choice of backend and the lean backend's fallback;
- ``posteriors``, ``decoding``, ``streaming``: the public functions.

Threads: every function takes ``n_threads``, the torch intra-op threads used
*within the call* (the previous setting is restored afterwards). ``None``
(default) means ``SPARSECAL_NUM_THREADS`` if set, else 1. A second thread only
shares the per-position products (``[B, C] @ [C, C]``; the small per-position
steps stay on one thread): on a 2-core machine whose other core was idle it made
the lean backend 1.3-1.6x faster at C >= 426 but slower at C = 50; with the
other core busy it was slower at every C (1.2-1.5x in the best rounds, 1.7-3.6x
by the medians at C >= 426), and up to 100x slower with more runnable threads than
cores (OpenMP workers spin-wait between the products; docs/performance.md, "CRF
marginals"). ``0`` leaves torch's setting alone. ``torch.set_num_threads``
is process-wide: do not call these functions concurrently from several Python
threads with different settings.
"""
from .._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {
    "marginals": "posteriors", "pair_marginals": "posteriors",
    "span_marginals": "posteriors", "log_partition": "posteriors",
    "viterbi": "decoding", "kbest": "decoding", "stream_entries": "streaming",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
