"""The supervised HMM (Nguyen & O'Connor 2015, Section 4.2): add-k counts checked
against a count written out here, and its posteriors through the CRF
forward-backward checked against enumerating every tag sequence."""
import itertools
from collections import Counter

import numpy as np
import pytest

from sparsecal.structured import WORD_CLASSES, SupervisedHMM, word_classes

torch = pytest.importorskip("torch", reason="the posteriors come from sparsecal.crf")
from sparsecal import crf  # noqa: E402


def _corpus(rng, n_sentences, C=3, vocab=("a", "b", "c", "Dd", "e-f", "going", "x1")):
    lengths = rng.integers(1, 5, n_sentences)
    words = rng.choice(vocab, lengths.sum())
    tags = rng.integers(0, C, lengths.sum())
    return words, tags, lengths


def test_word_classes_by_hand():
    words = ["1,000", "3.5", "12/31", "well-known", "Obama", "IBM", "running", "walked",
             "quickly", "nation", "cats", "dog", "-", "", "Running"]
    expected = ["number", "number", "number", "hyphenated", "capitalised", "capitalised",
                "-ing", "-ed", "-ly", "-tion", "-s", "other", "hyphenated", "other",
                "capitalised"]
    assert [WORD_CLASSES[c] for c in word_classes(words)] == expected


@pytest.mark.parametrize("a,b", [(1.0, 1.0), (0.1, 2.5)])
def test_counts_match_the_formulas(a, b):
    rng = np.random.default_rng(0)
    words, tags, lengths = _corpus(rng, 30, vocab=("a", "b", "c", "Dd", "e-f", "going",
                                                   "x1", "rare1", "Rare", "23"))
    hmm = SupervisedHMM(a, b).fit(words, tags, lengths, n_tags=4)      # tag 3 never seen
    C, sents = 4, np.split(np.arange(len(words)), np.cumsum(lengths)[:-1])
    start = Counter(tags[s[0]] for s in sents)
    stop = Counter(tags[s[-1]] for s in sents)
    pair = Counter((tags[i], tags[i + 1]) for s in sents for i in s[:-1])
    n_tag = Counter(tags.tolist())
    count = Counter(words.tolist())
    vocab = sorted(count)
    V, K = len(vocab), len(WORD_CLASSES)
    emit = np.zeros((C, V + K))
    for w, t in zip(words, tags):
        emit[t, vocab.index(w)] += 1
        if count[w] == 1:
            emit[t, V + word_classes([w])[0]] += 1
    for x in range(C):
        assert hmm.log_start_[x] == pytest.approx(np.log((start[x] + a) / (30 + C * a)))
        assert hmm.log_end_[x] == pytest.approx(
            np.log((stop[x] + a) / (n_tag[x] + (C + 1) * a)))
        for y in range(C):
            assert hmm.log_transitions_[x, y] == pytest.approx(
                np.log((pair[x, y] + a) / (n_tag[x] + (C + 1) * a)))
    np.testing.assert_allclose(hmm.log_emissions_, np.log(
        (emit + b) / (emit.sum(1, keepdims=True) + (V + K) * b)), rtol=1e-13)
    assert hmm.vocabulary_.tolist() == vocab
    # proper distributions: emissions over words + classes, transitions + STOP
    np.testing.assert_allclose(np.exp(hmm.log_emissions_).sum(1), 1, rtol=1e-13)
    np.testing.assert_allclose(np.exp(hmm.log_transitions_).sum(1) + np.exp(hmm.log_end_), 1,
                               rtol=1e-13)
    np.testing.assert_allclose(np.exp(hmm.log_start_).sum(), 1, rtol=1e-13)


def test_posteriors_equal_enumeration():
    """p(y | x) ∝ pi(y0) prod A(y_t-1, y_t) A(y_L-1, STOP) prod B(y_t, x_t), over
    every tag sequence, for sentences with known and unknown words."""
    rng = np.random.default_rng(1)
    hmm = SupervisedHMM(0.5, 0.3).fit(*_corpus(rng, 40))
    test = ["a", "Dd", "unseen", "going", "b", "12", "c", "Zz", "a", "b"]
    lengths = np.array([4, 1, 2, 3])
    pot = hmm.potentials(test, lengths)
    marg = crf.marginals(**pot).numpy()
    pairs = crf.pair_marginals(**pot).numpy()
    log_z = crf.log_partition(**pot).numpy()
    col = hmm.emission_columns(test)
    offset = np.concatenate([[0], np.cumsum(lengths)])
    C = hmm.n_tags_
    for s, L in enumerate(lengths):
        c = col[offset[s]:offset[s + 1]]
        seqs = np.array(list(itertools.product(range(C), repeat=L)))
        logp = (hmm.log_start_[seqs[:, 0]] + hmm.log_end_[seqs[:, -1]]
                + hmm.log_emissions_[seqs, c[None]].sum(1)
                + hmm.log_transitions_[seqs[:, :-1], seqs[:, 1:]].sum(1))
        assert log_z[s] == pytest.approx(np.logaddexp.reduce(logp), rel=1e-12)
        p = np.exp(logp - np.logaddexp.reduce(logp))
        for t in range(L):
            np.testing.assert_allclose(marg[s, t], np.bincount(seqs[:, t], p, C), atol=1e-12)
        for t in range(L - 1):
            ref = np.bincount(seqs[:, t] * C + seqs[:, t + 1], p, C * C).reshape(C, C)
            np.testing.assert_allclose(pairs[s, t], ref, atol=1e-12)


def test_bad_input_is_named_and_inputs_are_unchanged():
    rng = np.random.default_rng(2)
    words, tags, lengths = _corpus(rng, 5)
    copies = words.copy(), tags.copy(), lengths.copy()
    hmm = SupervisedHMM().fit(words, tags, lengths)
    hmm.potentials(words, lengths)
    for x, y in zip((words, tags, lengths), copies):
        np.testing.assert_array_equal(x, y)
    cases = [
        (lambda: SupervisedHMM().fit([1, 2], [0, 1], [2]), TypeError, "words must hold strings"),
        (lambda: SupervisedHMM().fit(words, tags[:-1], lengths), ValueError, "one tag per word"),
        (lambda: SupervisedHMM().fit(words, tags + 0.5, lengths), TypeError, "integer tag"),
        (lambda: SupervisedHMM().fit(words, tags, lengths, n_tags=2), ValueError,
         r"tags\[\d+\] = 2 is outside \[0, 2\)"),
        (lambda: SupervisedHMM().fit(words, tags, lengths + 1), ValueError, "lengths sum to"),
        (lambda: SupervisedHMM().fit([], [], [1]), ValueError, "no tokens"),
        (lambda: SupervisedHMM(0.0).fit(words, tags, lengths), ValueError,
         "transition_pseudocount"),
        (lambda: SupervisedHMM(1.0, -1).fit(words, tags, lengths), ValueError,
         "emission_pseudocount"),
        (lambda: hmm.potentials(words, [0, len(words)]), ValueError, "lengths"),
        (lambda: SupervisedHMM().potentials(words, lengths), ValueError, "not fitted"),
    ]
    for call, exc, message in cases:
        with pytest.raises(exc, match=message):
            call()
