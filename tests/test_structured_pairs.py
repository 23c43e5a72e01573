"""Tag-pair entries (issue 14, item 6, first half; Nguyen & O'Connor 2015, Section
4.2.3, Figure 4(b)): thresholded pair-marginal entries against brute-force
enumeration, the top-pair selection against a counter, and per-pair CE."""
import collections

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import sparsecal as sc  # noqa: E402
from sparsecal import crf  # noqa: E402
from sparsecal.structured import most_frequent_pairs, pair_entries, pair_groups  # noqa: E402

from test_structured_events import brute, random_crf  # noqa: E402


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("t", [0.0, 0.01, 0.2])
def test_pair_entries_match_brute_force(dtype, t):
    rng = np.random.default_rng(21)
    em, T, start, end, allowed, lengths = random_crf(rng, B=4, N=4)
    gold = rng.integers(-1, 3, size=(4, 4))
    pm = crf.pair_marginals(em.astype(dtype), T.astype(dtype), lengths=lengths,
                            start=start.astype(dtype), end=end.astype(dtype),
                            allowed=allowed)
    ent = pair_entries(pm, gold, lengths=lengths, threshold=t)
    want, row = [], 0
    for b in range(4):
        L = lengths[b]
        seqs, p = brute(em[b, :L], T, start, end, allowed, L)
        for s in range(L - 1):
            for a in range(3):
                for c in range(3):
                    q = p[(seqs[:, s] == a) & (seqs[:, s + 1] == c)].sum()
                    if q >= t:
                        want.append((row, a * 3 + c, q,
                                     int(gold[b, s] == a and gold[b, s + 1] == c)))
            row += 1
    assert ent.n_tags == 9 and ent.score.dtype == dtype
    assert ent.token.tolist() == [w[0] for w in want]
    assert ent.tag.tolist() == [w[1] for w in want]
    assert ent.label.tolist() == [w[3] for w in want]
    np.testing.assert_allclose(ent.score, [w[2] for w in want],
                               atol=1e-12 if dtype == np.float64 else 1e-6)


def test_pair_entries_tiny():
    em = np.zeros((1, 1, 2))                                  # one token: no pair
    pm = crf.pair_marginals(em, np.zeros((2, 2)))
    none = pair_entries(pm, [[1]])
    assert len(none) == 0 and none.n_tags == 4 and none.threshold == 0.01
    pm = crf.pair_marginals(np.zeros((1, 2, 2)), np.zeros((2, 2)))
    ent = pair_entries(pm, [[1, 0]], threshold=0.0)
    assert ent.score.tolist() == [0.25] * 4 and ent.label.tolist() == [0, 0, 1, 0]


def test_most_frequent_pairs_match_a_counter():
    rng = np.random.default_rng(22)
    gold = rng.choice([-1, 0, 1, 2, 3, 4], p=[0.05, 0.4, 0.3, 0.1, 0.1, 0.05],
                      size=(300, 9))
    lengths = rng.integers(1, 10, size=300)
    c = collections.Counter()
    for b in range(300):
        for s in range(lengths[b] - 1):
            if gold[b, s] >= 0 and gold[b, s + 1] >= 0:
                c[gold[b, s] * 5 + gold[b, s + 1]] += 1
    ranked = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))
    for n in (1, 5, 100):
        pairs, counts = most_frequent_pairs(gold, 5, n=n, lengths=lengths)
        assert list(zip(pairs.tolist(), counts.tolist())) == ranked[:n]
    assert len(most_frequent_pairs(gold, 5, n=100, lengths=lengths)[0]) == len(c) <= 25


def test_per_pair_calibration_error_through_pair_groups():
    rng = np.random.default_rng(23)
    em, T, start, end, allowed, lengths = random_crf(rng, B=200, N=6)
    gold = crf.viterbi(em, T, lengths=lengths, allowed=allowed)[0].numpy()
    flip = rng.random(gold.shape) < 0.2
    gold = np.where(flip & (gold >= 0), rng.integers(0, 3, size=gold.shape), gold)
    pm = crf.pair_marginals(em, T, lengths=lengths, allowed=allowed)
    ent = pair_entries(pm, gold, lengths=lengths)
    pairs, _ = most_frequent_pairs(gold, 3, n=5, lengths=lengths)
    groups = pair_groups(pairs, 3, tag_names=["O", "B", "I"])
    per_pair = sc.gmce(ent, groups)
    for i, p in enumerate(pairs):
        one = ent.tag == p
        ref = sc.calibration_error(ent.score[one], ent.label[one], n_bins=10)
        assert float(per_pair[i].value) == pytest.approx(float(ref.value), abs=1e-12)
    assert groups.tag_names[int(pairs[0])] == f"{'OBI'[pairs[0] // 3]} {'OBI'[pairs[0] % 3]}"


@pytest.mark.parametrize("call,err,match", [
    (lambda pm: pair_entries(pm[0], [[0, 0]]), ValueError, "4-dimensional"),
    (lambda pm: pair_entries(pm, [[0, 0, 0]]), ValueError, "gold has shape"),
    (lambda pm: pair_entries(pm, [[0, 2]]), ValueError, r"gold\[0, 1\]"),
    (lambda pm: pair_entries(pm * 5, [[0, 0]]), ValueError,
     r"pair_marginals must lie in \[0, 1\]"),
    (lambda pm: pair_entries(pm, [[0, 0]], lengths=[3]), ValueError, "lengths"),
    (lambda pm: most_frequent_pairs([[0, 1]], 2, n=0), ValueError, "n must"),
    (lambda pm: pair_groups([1, 1], 2), ValueError, "distinct"),
    (lambda pm: pair_groups([4], 2), ValueError, "pairs"),
    (lambda pm: pair_groups([1], 2, tag_names=["a"]), ValueError, "tag_names"),
])
def test_bad_input(call, err, match):
    pm = np.full((1, 1, 2, 2), 0.25)
    with pytest.raises(err, match=match):
        call(pm)
