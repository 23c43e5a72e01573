"""sparsecal.adapters.huggingface against the transformers pipeline's own word
aggregation and a per-word brute force, with a tiny randomly initialised BERT and
a tokenizer built in memory (no download)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")   # the hf extra is installed by scripts/test.sh
transformers = pytest.importorskip("transformers")
from tokenizers import Tokenizer, models, pre_tokenizers, processors  # noqa: E402

import sparsecal  # noqa: E402
from sparsecal.adapters import gold_ids, label_names, stream_word_entries, \
    word_probabilities  # noqa: E402

NAMES = ["B-O", "B-LOC", "B-PER", "B-MISC"]   # all B-: the pipeline groups no words
PIECES = ["new", "york", "ber", "lin", "the", "city", "is", "big"]


@pytest.fixture(scope="module")
def tokenizer():
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3}
    for w in PIECES:
        vocab[w] = len(vocab)
        vocab["##" + w] = len(vocab)
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
        sep_token="[SEP]")


@pytest.fixture(scope="module")
def model(tokenizer):
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=37, max_position_embeddings=64,
        id2label=dict(enumerate(NAMES)))
    return transformers.BertForTokenClassification(config)


def _corpus(n, seed):
    rng = np.random.default_rng(seed)
    words = ["newyork", "is", "bigcity", "berlin", "the", "zzz", "cityis", "lin"]
    out = []
    for _ in range(n):
        k = int(rng.integers(1, 7))
        out.append(([words[i] for i in rng.integers(0, len(words), k)],
                    [NAMES[i] for i in rng.integers(0, 4, k)]))
    return out


def _brute(logits, word_ids, aggregation):
    """Per sequence, per word, in Python: the pipeline's aggregations."""
    rows = []
    for b, ids in enumerate(word_ids):
        for w in range(max([i for i in ids if i is not None], default=-1) + 1):
            subs = [np.exp(logits[b, t] - logits[b, t].max()) for t, i in enumerate(ids)
                    if i == w]
            subs = [s / s.sum() for s in subs]
            if aggregation == "first":
                rows.append(subs[0])
            elif aggregation == "mean":
                rows.append(np.mean(subs, axis=0))
            else:
                rows.append(max(subs, key=lambda s: s.max()))   # first of ties
    return np.array(rows).reshape(-1, logits.shape[-1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("aggregation", ["first", "mean", "max"])
@pytest.mark.parametrize("seed", range(4))
def test_word_probabilities_match_brute_force(aggregation, dtype, seed):
    rng = np.random.default_rng(seed)
    B, T, C = int(rng.integers(1, 4)), int(rng.integers(1, 9)), int(rng.integers(1, 5))
    logits = rng.normal(size=(B, T, C)).round(1).astype(dtype)   # rounded: ties
    word_ids = []
    for _ in range(B):
        n_real = int(rng.integers(0, T + 1))
        cuts = np.sort(rng.integers(0, 3, n_real)).cumsum() if n_real else []
        ids = [None] * T
        ids[:n_real] = [int(x) for x in np.unique(cuts, return_inverse=True)[1]]
        word_ids.append(ids)
    if seed == 0:   # a word whose sub-words tie on their top probability
        logits[0, :] = logits[0, :1]
        word_ids[0] = [0] * T
    before = logits.copy()
    got = word_probabilities(logits, word_ids, aggregation=aggregation)
    want = _brute(logits.astype(np.float64), word_ids, aggregation)
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
    np.testing.assert_array_equal(logits, before)


def test_word_probabilities_tiny_and_2d():
    logits = np.log(np.array([[0.2, 0.8]]))
    np.testing.assert_allclose(word_probabilities(logits, [0]), [[0.2, 0.8]])
    assert word_probabilities(np.zeros((2, 3)), [None, None]).shape == (0, 3)
    p = word_probabilities(np.log([[[0.5, 0.5], [0.9, 0.1]]]), [[0, 0]], aggregation="max")
    np.testing.assert_allclose(p, [[0.9, 0.1]])


@pytest.mark.parametrize("aggregation,strategy", [("first", "first"), ("mean", "average"),
                                                  ("max", "max")])
def test_word_probabilities_agree_with_the_transformers_pipeline(model, tokenizer,
                                                                 aggregation, strategy):
    model.eval()
    pipe = transformers.pipeline("token-classification", model=model, tokenizer=tokenizer,
                                 aggregation_strategy=strategy, ignore_labels=[])
    for words, _ in _corpus(5, seed=1):
        enc = tokenizer(words, is_split_into_words=True, return_tensors="pt")
        with torch.no_grad():
            logits = model(**enc).logits
        p = word_probabilities(logits, [enc.word_ids(0)], aggregation=aggregation)
        out = pipe(words, is_split_into_words=True)
        out = out[0] if out and isinstance(out[0], list) else out
        assert [o["entity_group"] for o in out] == [NAMES[i][2:] for i in p.argmax(1)]
        np.testing.assert_allclose([float(o["score"]) for o in out], p.max(1), rtol=1e-5)


def test_stream_word_entries_equal_threshold_of_the_dense_matrix(model, tokenizer):
    corpus = _corpus(7, seed=2)
    model.train()
    got = stream_word_entries(model, tokenizer, iter(corpus), batch_size=3, threshold=0.25,
                              aggregation="mean")
    assert model.training                         # mode restored
    model.eval()
    dense = []
    for words, _ in corpus:                       # one sentence at a time: no padding
        enc = tokenizer([words], is_split_into_words=True, return_tensors="pt")
        with torch.no_grad():
            logits = model(**enc).logits.numpy()
        dense.append(_brute(logits, [enc.word_ids(0)], "mean"))
    dense = np.concatenate(dense)
    gold = np.array([NAMES.index(lab) for _, labels in corpus for lab in labels])
    want = sparsecal.threshold(dense.astype(np.float32), gold, 0.25)
    assert (got.n_tokens, got.n_tags, got.threshold) == (len(gold), 4, 0.25)
    for name in ("tag", "label", "token"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    np.testing.assert_allclose(got.score, want.score, rtol=1e-5)


def test_stream_word_entries_errors(model, tokenizer):
    with pytest.raises(ValueError, match="truncated at max_length=4"):
        stream_word_entries(model, tokenizer, [(["newyork", "is", "big"], ["B-O"] * 3)],
                            max_length=4)
    with pytest.raises(ValueError, match="sentence 1 has 2 words but 1 labels"):
        stream_word_entries(model, tokenizer, [(["is"], ["B-O"]), (["is", "big"], ["B-O"])])
    with pytest.raises(ValueError, match=r"labels\[1\]\[1\] = 'I-X' is not in label_names"):
        stream_word_entries(model, tokenizer, [(["is"], ["B-O"]),
                                               (["is", "big"], ["B-O", "I-X"])], batch_size=1)
    with pytest.raises(ValueError, match="max_position_embeddings=64"):
        stream_word_entries(model, tokenizer, [(["is"] * 70, ["B-O"] * 70)])
    with pytest.raises(ValueError, match="aggregation must be one of"):
        stream_word_entries(model, tokenizer, [], aggregation="average")
    with pytest.raises(TypeError, match="sentence 0 must be a"):
        stream_word_entries(model, tokenizer, ["is big"])
    ent = stream_word_entries(model, tokenizer, [(["zzz"], ["B-ORG"])], unknown="missing",
                              threshold=0.0)
    assert ent.label.tolist() == [0, 0, 0, 0]


def test_word_probabilities_errors():
    with pytest.raises(ValueError, match=r"word_ids\[0\] has no sub-word for word 1"):
        word_probabilities(np.zeros((1, 2, 2)), [[0, 2]])
    with pytest.raises(ValueError, match=r"logits\[0, 1\] \(a real sub-word\) is not finite"):
        word_probabilities(np.array([[[0.0, 0.0], [np.nan, 0.0]]]), [[0, 1]])
    with pytest.raises(ValueError, match=r"word_ids has shape \(2,\), expected \(1, 2\)"):
        word_probabilities(np.zeros((1, 2, 2)), [0, 1])
    with pytest.raises(TypeError, match=r"word_ids must hold word indices \(integers\) or "
                                        "None; value 0 is 'a'"):
        word_probabilities(np.zeros((1, 2, 2)), [["a", 1]])
    with pytest.raises(ValueError, match="word_ids must be non-negative integers"):
        word_probabilities(np.zeros((1, 2, 2)), [[0, -1]])


def test_label_names(model):
    assert label_names(model) == NAMES
    assert label_names(model.config) == NAMES
    assert label_names({"0": "O", "1": "X"}) == ["O", "X"]
    with pytest.raises(ValueError, match="ids must be 0..n_labels-1"):
        label_names({0: "O", 2: "X"})
    with pytest.raises(ValueError, match="repeats a label name"):
        label_names({0: "O", 1: "O"})
    with pytest.raises(TypeError, match="id2label mapping"):
        label_names(3)


@pytest.mark.parametrize("seed", range(3))
def test_gold_ids_against_a_dictionary(seed):
    rng = np.random.default_rng(seed)
    names = [f"T{i}" for i in rng.permutation(int(rng.integers(1, 9)))]
    labels = [[names[i] for i in rng.integers(0, len(names), rng.integers(0, 4))]
              for _ in range(int(rng.integers(0, 5)))]
    want = [names.index(x) for s in labels for x in s]
    np.testing.assert_array_equal(gold_ids(labels, names), want)
    ids = [[names.index(x) for x in s] for s in labels]
    np.testing.assert_array_equal(gold_ids(ids, names), want)


def test_gold_ids_errors():
    with pytest.raises(ValueError, match="give label_names"):
        gold_ids([["O"]])
    with pytest.raises(ValueError, match=r"gold|labels\[1\] = 3 is out of range"):
        gold_ids([[0], [3]], ["O", "X"])
    with pytest.raises(TypeError, match="all label names or all integer ids"):
        gold_ids([[0.5]], ["O"])
    with pytest.raises(TypeError, match="sequence of sentences"):
        gold_ids("O O", ["O"])
    with pytest.raises(ValueError, match="repeats a name"):
        gold_ids([["O"]], ["O", "O"])
    # issue 25: a word with a list for its label, not NumPy's "inhomogeneous shape"
    with pytest.raises(TypeError, match=r"^labels\[1\]\[1\] is a list: each word's label "
                                        "must be one name or tag id$"):
        gold_ids([["O", "O"], ["O", ["B", "O"]]], ["O", "B"])
    with pytest.raises(TypeError, match=r"^labels\[2\]\[0\] is a tuple"):
        gold_ids([[0], [], [(0, 1)]], ["O", "B"])
    with pytest.raises(TypeError, match=r"^labels\[0\]\[0\] is a list"):
        gold_ids([[[0, 1]], [[1, 0]]], ["O", "B"])   # equal lengths: a 2-D array
