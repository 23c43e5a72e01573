"""Shared by the examples that train a neural CRF tagger: the negative
log-likelihood of the gold tag sequences, ``log Z(x) - score(y_gold, x)``,
with ``log Z`` from :func:`sparsecal.crf.log_partition` (differentiable)."""
from sparsecal import crf


def crf_nll(em, transitions, start, end, gold, lengths):
    """Mean negative log-likelihood per token of the gold sequences.

    ``em`` [B, N, C] emissions, ``transitions`` [C, C], ``start`` / ``end`` [C]
    (torch tensors), ``gold`` [B, N] tag ids (``-1`` past a sentence's end),
    ``lengths`` [B]. The gold score is ``sum_t em[t, y_t] + sum_t T[y_{t-1}, y_t]
    + start[y_0] + end[y_{L-1}]``.
    """
    real = gold >= 0
    g = gold.clamp(min=0)
    score = (em.gather(2, g.unsqueeze(-1)).squeeze(-1) * real).sum(1)
    pair = transitions[g[:, :-1], g[:, 1:]] * real[:, 1:]
    score = score + pair.sum(1) + start[g[:, 0]]
    score = score + end[g.gather(1, (lengths - 1).unsqueeze(1)).squeeze(1)]
    # backend="lean": scaled forward on matrix products, differentiable.
    log_z = crf.log_partition(em, transitions, lengths=lengths, start=start, end=end,
                              backend="lean")
    return (log_z - score).sum() / lengths.sum()
