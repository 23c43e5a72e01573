"""N&O's antecedent coreference model (Section 5, Definition 2): sampled entities
against enumerating every antecedent vector."""
import itertools

import numpy as np
import pytest

from sparsecal.structured import (coreference_entries, coreference_probabilities,
                                  sample_entities, sample_percentiles)


def _random_antecedents(rng, M):
    P = np.tril(rng.dirichlet(np.ones(M), size=M))
    P[np.arange(M), np.arange(M)] += 1 - P.sum(1)       # the rest of each row is NEW
    return P


def _exact(P):
    """Pairwise coreference probabilities and the expected number of entities, by
    enumerating every antecedent vector a (a_i = i for NEW)."""
    M = P.shape[0]
    together, n_entities = np.zeros((M, M)), 0.0
    for a in itertools.product(*[range(i + 1) for i in range(M)]):
        p = np.prod([P[i, a[i]] for i in range(M)])
        root = list(range(M))
        for i in range(M):
            root[i] = i if a[i] == i else root[a[i]]
        root = np.array(root)
        together += p * (root[:, None] == root[None, :])
        n_entities += p * np.sum(root == np.arange(M))
    return together, n_entities


@pytest.mark.parametrize("M", [1, 2, 5])
def test_sampled_pairs_and_entity_counts_converge_to_enumeration(M):
    rng = np.random.default_rng(M)
    P = _random_antecedents(rng, M)
    P[-1, :] = 0
    P[-1, 0] = 1.0 if M > 1 else 0.0                  # a certain link, and ties of 0
    P[-1, -1] += 1.0 - P[-1].sum()
    S = 20000
    e = sample_entities(P, S, random_state=1)
    exact, expected_count = _exact(P)
    est = coreference_probabilities(e)
    exact = np.clip(exact, 0, 1)
    se = np.sqrt(exact * (1 - exact) / S)
    assert (np.abs(est - exact) <= 5 * se + 1e-12).all()
    counts = (e == np.arange(M)).sum(1)
    assert abs(counts.mean() - expected_count) <= 5 * counts.std() / np.sqrt(S) + 1e-12
    assert expected_count == pytest.approx(np.trace(P))   # each NEW starts one entity
    interval = sample_percentiles(counts)               # the entity count's interval (N&O §6)
    assert (interval.low, interval.high) == (np.percentile(counts, 2.5),
                                             np.percentile(counts, 97.5))
    assert (sample_entities(P, S, random_state=1) == e).all()   # seeded


def test_entries_of_pairs():
    probs = np.array([[1, 0.8, 0.1], [0.8, 1, 0.3], [0.1, 0.3, 1]])
    e = coreference_entries(probs, [5, 5, 7])
    assert e.score.tolist() == [0.8, 0.1, 0.3] and e.label.tolist() == [1, 0, 0]
    assert e.n_tags == 1


def test_bad_input_is_named():
    good = np.array([[1.0, 0], [0.5, 0.5]])
    cases = [
        (lambda: sample_entities(np.ones((2, 3)), 5), "square"),
        (lambda: sample_entities([[0.5, 0.5], [0.5, 0.5]], 5), "must come before it"),
        (lambda: sample_entities([[1.0, 0], [0.5, 0.4]], 5), "row 1 sums to"),
        (lambda: sample_entities([[1.0, 0], [1.5, -0.5]], 5), r"\[1, 0\] = 1.5 is not in"),
        (lambda: sample_entities(good, 0), "n_samples"),
        (lambda: coreference_probabilities([[0.5, 1.0]]), "integer"),
        (lambda: coreference_entries(good, [0, 1, 2]), "gold_entities"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()
