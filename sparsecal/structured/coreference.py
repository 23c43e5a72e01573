"""Nguyen & O'Connor (2015)'s antecedent coreference model and its sampling-based
inference (Section 5, Definition 2; Section 6): each mention independently
picks an earlier mention or NEW, entities are the connected components of the
links, and samples give the probability of any event of the clustering.
"""
import numpy as np

from ..core.dispatch import takes_data
from ..core.entries import Entries
from ..core.validation import (as_array, as_float_array, check_allocation,
                               check_positive_int)
from ..metrics.intervals import check_random_state

__all__ = ["sample_entities", "coreference_probabilities", "coreference_entries"]

#: why a document's functions refuse distributed data
ONE_DOCUMENT = "its entities and antecedent probabilities are those of one document, in memory"


def _check_antecedents(probabilities):
    P = np.asarray(as_float_array(probabilities, "probabilities", ndim=2), dtype=np.float64)
    M = P.shape[0]
    if M == 0 or P.shape[1] != M:
        raise ValueError(f"probabilities must be a non-empty square matrix [M, M] (row i: "
                         f"the antecedents j < i, NEW on the diagonal), got shape {P.shape}")
    if np.isnan(P).any() or (P < 0).any() or (P > 1).any():
        i, j = np.argwhere(np.isnan(P) | (P < 0) | (P > 1))[0]
        raise ValueError(f"probabilities[{i}, {j}] = {P[i, j].item()!r} is not in [0, 1]")
    upper = np.triu(P, 1)
    if upper.any():
        i, j = np.argwhere(upper)[0]
        raise ValueError(f"probabilities[{i}, {j}] = {P[i, j].item()!r}: a mention's antecedent "
                         f"must come before it (j <= i)")
    bad = np.abs(P.sum(1) - 1) > 1e-6
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"probabilities row {i} sums to {P[i].sum().item()!r}, not 1")
    return P


@takes_data(refuse=ONE_DOCUMENT)
def sample_entities(probabilities, n_samples, random_state=0):
    """Sample antecedents independently; each mention's entity per sample.

    Parameters
    ----------
    probabilities : array_like of float, shape (M, M)
        ``P[i, j] = p(a_i = j)`` for ``j < i``, ``P[i, i] = p(a_i = NEW)``, zero
        above the diagonal, rows summing to 1.
    n_samples : int
    random_state : None, int or numpy.random.Generator, default 0

    Returns
    -------
    ndarray of int64, shape (n_samples, M)
        Each mention's entity, named by its first mention.

    Examples
    --------
    >>> import numpy as np
    >>> e = sample_entities(np.array([[1.0, 0, 0], [0.9, 0.1, 0], [0, 0, 1.0]]), 1000)
    >>> coreference_probabilities(e)[0].round(1).tolist()
    [1.0, 0.9, 0.0]
    """
    P = _check_antecedents(probabilities)
    S = check_positive_int(n_samples, "n_samples")
    rng = check_random_state(random_state)
    M = P.shape[0]
    check_allocation(S * M * M, f"n_samples={S} ({M} mentions: S M^2 comparisons)")
    u = rng.random((S, M))
    cdf = np.cumsum(P, axis=1)
    cdf[np.triu_indices(M)] = np.inf          # NEW (the diagonal) takes the rest of [0, 1)
    # inverse CDF: a_i = the first j whose cumulative probability exceeds u
    root = (cdf[None] <= u[:, :, None]).sum(axis=2)
    for _ in range(max(int(M - 1).bit_length(), 1)):   # pointer jumping: log2 M rounds
        root = np.take_along_axis(root, root, axis=1)
    return root


def coreference_probabilities(entities):
    """``p(i and j are coreferent)``: the fraction of samples in which they share an entity.

    Parameters
    ----------
    entities : array_like of int, shape (S, M)
        Entity labels per sample (:func:`sample_entities`).

    Returns
    -------
    ndarray of float64, shape (M, M)

    Examples
    --------
    See :func:`sample_entities`.
    """
    e = as_array(entities, "entities")
    if e.ndim != 2 or e.shape[0] == 0 or e.shape[1] == 0 or e.dtype.kind not in "iu":
        raise ValueError(f"entities must be a non-empty 2-D integer array [S, M], got "
                         f"shape {e.shape} and dtype {e.dtype}")
    M = e.shape[1]
    together = np.zeros((M, M))
    for row in e:                                        # a loop over samples
        together += row[:, None] == row[None, :]
    return together / e.shape[0]


@takes_data(refuse=ONE_DOCUMENT)
def coreference_entries(probabilities, gold_entities):
    """Entries of the mention pairs ``i < j`` in row-major order: score ``p(i ~ j)``,
    label 1 when gold puts them in one entity, tag 0, token the pair index.

    Parameters
    ----------
    probabilities : array_like of float, shape (M, M)
    gold_entities : array_like of int, shape (M,)

    Returns
    -------
    Entries

    Examples
    --------
    >>> e = coreference_entries([[1, 0.8, 0.1], [0.8, 1, 0.3], [0.1, 0.3, 1]], [0, 0, 1])
    >>> e.score.tolist(), e.label.tolist()
    ([0.8, 0.1, 0.3], [1, 0, 0])
    """
    P = np.asarray(as_float_array(probabilities, "probabilities", ndim=2), dtype=np.float64)
    gold = as_array(gold_entities, "gold_entities")
    if P.shape[0] != P.shape[1] or gold.shape != (P.shape[0],):
        raise ValueError(f"probabilities must be [M, M] and gold_entities [M], got "
                         f"{P.shape} and {gold.shape}")
    i, j = np.triu_indices(P.shape[0], 1)
    score = P[i, j]
    if np.isnan(score).any() or (score < 0).any() or (score > 1).any():
        raise ValueError("probabilities must lie in [0, 1]")
    return Entries(score, np.zeros(score.shape[0], np.int32),
                   (gold[i] == gold[j]).astype(np.uint8),
                   np.arange(score.shape[0], dtype=np.int64), n_tags=1,
                   n_tokens=max(score.shape[0], 1))
