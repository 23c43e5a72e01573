"""sparsecal.adapters.crfsuite with a small sklearn-crfsuite CRF trained in the test,
against a per-token dictionary look-up and sparsecal.threshold of that matrix; and
every adapter's missing-extra error."""
import sys

import numpy as np
import pytest

import sparsecal
from sparsecal.adapters import crfsuite_scores, entries_from_crfsuite

sklearn_crfsuite = pytest.importorskip("sklearn_crfsuite")


def _sentences(n, seed):
    rng = np.random.default_rng(seed)
    lexicon = {"the": "DET", "a": "DET", "dog": "N", "cat": "N", "runs": "V", "sees": "V",
               "big": "ADJ", "old": "ADJ"}
    words = list(lexicon)
    X, y = [], []
    for _ in range(n):
        sent = [words[i] for i in rng.integers(0, len(words), rng.integers(1, 6))]
        X.append([{"w": w, "suffix": w[-2:]} for w in sent])
        y.append([lexicon[w] for w in sent])
    return X, y


@pytest.fixture(scope="module")
def trained():
    X, y = _sentences(40, 0)
    crf = sklearn_crfsuite.CRF(algorithm="lbfgs", c2=1.0, max_iterations=30)
    crf.fit(X, y)
    Xt, yt = _sentences(12, 1)
    return crf, crf.predict_marginals(Xt), yt


def test_scores_follow_the_labels_order(trained):
    crf, marginals, _ = trained
    labels = list(crf.classes_)[::-1] + ["UNSEEN"]
    scores, cols = crfsuite_scores(marginals, labels=labels)
    want = np.array([[tok.get(lab, 0.0) for lab in labels] for s in marginals for tok in s])
    assert cols == labels
    np.testing.assert_array_equal(scores, want)
    np.testing.assert_allclose(scores.sum(1), 1.0, rtol=1e-9)
    default, cols = crfsuite_scores(marginals)
    assert cols == list(crf.classes_)
    np.testing.assert_array_equal(default, want[:, :-1][:, ::-1])


@pytest.mark.parametrize("threshold", [0.0, 0.05, 0.5])
def test_entries_equal_threshold_of_the_dense_matrix(trained, threshold):
    crf, marginals, y = trained
    labels = ["UNSEEN"] + list(crf.classes_)
    got = entries_from_crfsuite(marginals, y, labels=labels, threshold=threshold)
    dense = np.array([[tok.get(lab, 0.0) for lab in labels] for s in marginals for tok in s])
    gold = np.array([labels.index(t) for s in y for t in s])
    want = sparsecal.threshold(dense, gold, threshold)
    for name in ("score", "tag", "label", "token"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    assert (got.n_tags, got.n_tokens) == (len(labels), len(gold))


def test_tiny_and_errors(trained):
    _, marginals, y = trained
    one = entries_from_crfsuite([[{"A": 0.25, "B": 0.75}]], [["B"]], threshold=0.0)
    assert one.score.tolist() == [0.25, 0.75] and one.label.tolist() == [0, 1]
    with pytest.raises(ValueError, match="empty"):   # as sparsecal.threshold
        entries_from_crfsuite([], [])
    with pytest.raises(ValueError, match="labels lacks"):
        crfsuite_scores(marginals, labels=["N"])
    with pytest.raises(ValueError, match="token 1 of marginals"):
        crfsuite_scores([[{"A": 1.0}, {"B": 1.0}]])
    with pytest.raises(ValueError, match="token 1 of marginals"):
        crfsuite_scores([[{"A": 1.0}, {"A": 0.5, "B": 0.5}]])
    with pytest.raises(ValueError, match="marginals"):
        crfsuite_scores([[{"A": 1.5}]])
    with pytest.raises(TypeError, match="list of sentences"):
        crfsuite_scores({"A": 1.0})
    with pytest.raises(TypeError, match=r"^marginals must hold probabilities \(real numbers\); "
                                        r"token 2 \(counting from the first sentence\), "
                                        r"label 'B', is \[0.5, 0.5\] \(list\)$"):
        crfsuite_scores([[{"A": 1.0, "B": 0.0}], [{"A": 0.5, "B": 0.5},
                                                  {"A": 0.0, "B": [0.5, 0.5]}]])
    with pytest.raises(ValueError, match="sentence 1 has 1 tokens in marginals but 2"):
        entries_from_crfsuite([[{"A": 1.0}], [{"A": 1.0}]], [["A"], ["A", "A"]])
    with pytest.raises(ValueError, match="gold has 1 sentences but marginals has 2"):
        entries_from_crfsuite([[{"A": 1.0}], [{"A": 1.0}]], [["A"]])
    with pytest.raises(ValueError, match=r"labels\[0\]\[0\] = 'Z' is not in label_names"):
        entries_from_crfsuite([[{"A": 1.0}]], [["Z"]])


@pytest.mark.parametrize("module,extra,call", [
    ("transformers", "hf", lambda: sparsecal.adapters.stream_word_entries(None, None, [])),
    ("torch", "hf", lambda: sparsecal.adapters.stream_word_entries(None, None, [])),
    ("torchcrf", "crf", lambda: sparsecal.adapters.marginals_from_torchcrf(None, None)),
    ("torchcrf", "crf", lambda: sparsecal.adapters.log_partition_from_torchcrf(None, None)),
])
def test_a_missing_extra_names_its_pip_install(monkeypatch, module, extra, call):
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match=rf'pip install "sparsecal\[{extra}\]"'):
        call()
