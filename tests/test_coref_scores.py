"""MUC, B-cubed and CEAF-e (sparsecal.structured.coreference_scores): Bagga &
Baldwin (1998)'s example worked by hand, and the definitions written as loops
(CEAF-e's alignment by trying every permutation) on random clusterings."""
import itertools

import numpy as np
import pytest

from sparsecal.structured import coreference_scores


def test_bagga_baldwin_example_by_hand():
    """Key {1-5} {6,7} {8-12}; response {1-5} {6-12}: MUC P = 9/10 and R = 1
    (B&B Section 3), B-cubed P = (5 + 2 * 2/7 + 5 * 5/7) / 12 = 16/21, CEAF-e
    aligns {1-5} with itself (phi 1) and {8-12} with {6-12} (phi 10/12)."""
    s = coreference_scores([0] * 5 + [1] * 2 + [2] * 5, [7] * 5 + [3] * 7)
    assert (s["muc"]["precision"], s["muc"]["recall"]) == pytest.approx((0.9, 1.0))
    assert (s["b3"]["precision"], s["b3"]["recall"]) == pytest.approx((16 / 21, 1.0))
    best = 1 + 10 / 12
    assert (s["ceafe"]["precision"], s["ceafe"]["recall"]) == pytest.approx((best / 2, best / 3))
    f = [2 * p * r / (p + r) for p, r in ((0.9, 1), (16 / 21, 1), (best / 2, best / 3))]
    assert s["conll"] == pytest.approx(np.mean(f))


def _clusters(labels):
    return [set(np.flatnonzero(labels == v)) for v in np.unique(labels)]


def _by_definition(gold, pred):
    K, R = _clusters(gold), _clusters(pred)

    def muc(K, R):   # Vilain et al.: sum |k| - |partition of k by R| over sum |k| - 1
        num = sum(len(k) - sum(1 for r in R if k & r) for k in K)
        den = sum(len(k) - 1 for k in K)
        return num / den if den else 0.0

    def b3(K, R):
        return np.mean([len(k & r) / len(k) for m in range(gold.size)
                        for k in K if m in k for r in R if m in r])

    phi = lambda k, r: 2 * len(k & r) / (len(k) + len(r))   # noqa: E731
    small, big = (K, R) if len(K) <= len(R) else (R, K)
    best = max(sum(phi(a, b) for a, b in zip(small, perm))
               for perm in itertools.permutations(big, len(small)))
    return {"muc": (muc(R, K), muc(K, R)), "b3": (b3(R, K), b3(K, R)),
            "ceafe": (best / len(R), best / len(K))}


@pytest.mark.parametrize("seed", range(12))
def test_random_clusterings_match_the_definitions(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 8))
    gold, pred = rng.integers(0, 4, n), rng.integers(10, 14, n)
    got, want = coreference_scores(gold, pred), _by_definition(gold, pred)
    for name, (p, r) in want.items():
        assert got[name]["precision"] == pytest.approx(p, abs=1e-12)
        assert got[name]["recall"] == pytest.approx(r, abs=1e-12)


def test_identical_clusterings_score_one_and_all_singletons_have_no_muc_links():
    s = coreference_scores([3, 3, 1, 2, 2], [0, 0, 5, 9, 9])
    assert all(s[k]["f1"] == pytest.approx(1.0) for k in ("muc", "b3", "ceafe"))
    s = coreference_scores([0, 1, 2], [0, 1, 2])
    assert s["muc"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert s["b3"]["f1"] == s["ceafe"]["f1"] == 1.0


@pytest.mark.parametrize("gold, pred, match", [
    ([0, 1], [0], "same non-empty mentions"), (np.zeros(0, int), [], "same non-empty"),
    ([0.5, 1], [0, 1], "gold must be a 1-D integer"), ([0, 1], [[0, 1]], "predicted must"),
])
def test_bad_input_names_the_argument(gold, pred, match):
    with pytest.raises(ValueError, match=match):
        coreference_scores(np.asarray(gold), np.asarray(pred, dtype=np.asarray(gold).dtype))
