"""sparsecal.adapters.trainer inside a real transformers Trainer: a tiny randomly
initialised BERT tagger (built from a config, a WordPiece vocabulary written here)
trained a few steps; the logged eval metrics equal the package's functions on the
same predictions, words and gold taken from the sentences themselves."""
import numpy as np
import pytest
import torch
from transformers import (BertConfig, BertForTokenClassification, BertTokenizerFast,
                          DataCollatorForTokenClassification, EvalPrediction, Trainer,
                          TrainingArguments)

import sparsecal as sc
from sparsecal.adapters import eval_word_scores, trainer_compute_metrics, word_probabilities

N_TAGS = 6
WORDS = ["the", "cat", "dog", "sat", "ran", "on", "mat", "big", "red", "runs", "jumping",
         "quickly", "unhappily"]   # the last three split into word pieces
PIECES = ["jump", "##ing", "quick", "##ly", "un", "##happ", "##il", "##y", "##s"]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    vocab = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS[:10]
                               + PIECES) + "\n")
    return BertTokenizerFast(str(vocab), do_lower_case=True)


def _sentences(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        words = list(rng.choice(WORDS, size=rng.integers(2, 9)))
        tags = [WORDS.index(w) % N_TAGS if rng.random() < 0.8 else int(rng.integers(N_TAGS))
                for w in words]
        out.append((words, tags))
    return out


def _encode(tokenizer, sentences):
    """Features labelled on each word's first sub-word (the transformers recipe)."""
    rows, word_ids = [], []
    for words, tags in sentences:
        enc = tokenizer(words, is_split_into_words=True)
        ids = enc.word_ids()
        labels = [-100 if w is None or (k and ids[k - 1] == w) else tags[w]
                  for k, w in enumerate(ids)]
        rows.append({**enc, "labels": labels})
        word_ids.append(ids)
    return rows, word_ids


@pytest.fixture(scope="module")
def trained(tokenizer, tmp_path_factory):
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, num_labels=N_TAGS)
    model = BertForTokenClassification(config)
    train, _ = _encode(tokenizer, _sentences(64, 1))
    test_sentences = _sentences(21, 2)   # batches of 8, 8, 5: padded to unequal lengths
    test, word_ids = _encode(tokenizer, test_sentences)
    args = TrainingArguments(output_dir=str(tmp_path_factory.mktemp("out")), max_steps=4,
                             per_device_train_batch_size=16, per_device_eval_batch_size=8,
                             learning_rate=5e-3, report_to=[], use_cpu=True,
                             save_strategy="no", logging_strategy="no", seed=0)
    metrics = trainer_compute_metrics(word_ids=word_ids, aggregation="mean",
                                      train_labels=[r["labels"] for r in train], n_groups=3,
                                      n_bins=4)
    trainer = Trainer(model=model, args=args, train_dataset=train,
                      data_collator=DataCollatorForTokenClassification(tokenizer),
                      compute_metrics=metrics)
    trainer.train()
    logged = trainer.evaluate(test)
    predictions = trainer.predict(test)
    return logged, trainer.state.log_history[-1], predictions, test_sentences, word_ids, train


def test_logged_eval_values_equal_the_package_functions(trained):
    logged, history, predictions, sentences, word_ids, train = trained
    logits = predictions.predictions
    assert logits.shape[0] == len(sentences)
    T = logits.shape[1]
    probs = word_probabilities(logits, [w + [None] * (T - len(w)) for w in word_ids],
                               aggregation="mean")
    gold = np.concatenate([tags for _, tags in sentences])
    assert probs.shape[0] == gold.size
    counts = np.bincount([t for r in train for t in r["labels"] if t != -100],
                         minlength=N_TAGS)
    groups = sc.TagGroups.from_counts(counts, 3)
    entries = sc.threshold(probs, gold, 0.01)
    expected = {"eval_smce": sc.smce(entries, n_bins=4).value,
                "eval_top_label_ece": sc.top_label_ece(sc.threshold(probs, gold, 0.0)).value}
    expected.update({f"eval_gmce_{g + 1}": ce.value
                     for g, ce in enumerate(sc.gmce(entries, groups, n_bins=4))})
    for key, value in expected.items():
        assert logged[key] == pytest.approx(value, rel=1e-6, abs=1e-9), key
        assert history[key] == logged[key]
    assert expected["eval_smce"] > 0


def test_first_subword_rule_without_word_ids(trained):
    _, _, predictions, sentences, word_ids, _ = trained
    out = trainer_compute_metrics(n_bins=4)(predictions)
    logits, labels = predictions.predictions, predictions.label_ids
    probs, gold = eval_word_scores(logits, labels)
    T = logits.shape[1]
    first = word_probabilities(logits, [w + [None] * (T - len(w)) for w in word_ids])
    np.testing.assert_allclose(probs, first, rtol=1e-6)   # one word per labelled sub-word
    np.testing.assert_array_equal(gold, np.concatenate([t for _, t in sentences]))
    assert out == {"smce": sc.smce(sc.threshold(probs, gold, 0.01), n_bins=4).value,
                   "top_label_ece": sc.top_label_ece(sc.threshold(probs, gold, 0.0)).value}


def test_groups_given_and_empty_group_is_nan():
    logits = np.log([[[.5, .5, 1e-9], [.9, .1, 1e-9], [.2, .8, 1e-9]]])
    labels = np.array([[-100, 0, 1]])
    out = trainer_compute_metrics(groups=sc.TagGroups([0, 0, 1]), threshold=0.05,
                                  n_bins=2)(EvalPrediction(logits, labels))
    assert set(out) == {"smce", "gmce_1", "gmce_2", "top_label_ece"}
    assert np.isnan(out["gmce_2"]) and out["gmce_1"] == pytest.approx(out["smce"])


@pytest.mark.parametrize("kwargs, match", [
    (dict(groups=sc.TagGroups([0, 1]), train_counts=[1, 2]), "give one of"),
    (dict(aggregation="sum"), "aggregation"),
    (dict(threshold=2.0), "threshold"),
])
def test_bad_options_name_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        trainer_compute_metrics(**kwargs)


def test_bad_predictions_name_the_argument():
    with pytest.raises(TypeError, match="eval_prediction must be"):
        trainer_compute_metrics()((np.zeros((1, 3, 2)), np.zeros((1, 3), np.int64)))
    logits = np.zeros((1, 3, 2))
    with pytest.raises(ValueError, match="labels must be integers of shape"):
        eval_word_scores(logits, np.zeros((1, 4), np.int64))
    with pytest.raises(ValueError, match="word_ids must hold 1 lists"):
        eval_word_scores(logits, np.zeros((1, 3), np.int64), [[0], [0]])
    with pytest.raises(ValueError, match="train_counts must be one count per tag"):
        trainer_compute_metrics(train_counts=[1, 2, 3])(EvalPrediction(logits, np.zeros(
            (1, 3), np.int64)))


@pytest.mark.parametrize("labels", [[[0, -1, 2]], [[0.5, 1.0]]])
def test_train_labels_must_be_label_ids(labels):
    with pytest.raises(ValueError, match="train_labels must hold label ids"):
        trainer_compute_metrics(train_labels=labels)
