"""Hugging Face transformers: the calibration of a token-classification model.

Fine-tunes a small, randomly initialised BERT (``BertForTokenClassification``,
two layers, a word-piece vocabulary of the training words; nothing downloaded) on
a slice of UD English-EWT with morphological ``UPOS|FEATS`` tags, labelling each
word's first sub-word, then runs it over the test sentences with
``sparsecal.adapters.stream_word_entries`` (word probabilities from the sub-words'
distributions, thresholded batch by batch: the dense matrix is never held) and
evaluates the entries: SMCE, GMCE per tag-frequency group, top-label ECE, with
the calibration curves. Needs ``pip install ".[hf]"`` in the checkout.

Usage::

    python examples/adapter_huggingface.py --train 300 --test 150 --out hf_out
"""
import numpy as np
import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import BertConfig, BertForTokenClassification, PreTrainedTokenizerFast

from sparsecal.adapters import stream_word_entries
from _ud_slice import report, start


def make_model(train, tags):
    """A word-piece tokenizer of the training words (and their 3-letter endings as
    sub-words) and an untrained two-layer BERT tagger over ``tags``."""
    words = sorted({w for ws, _ in train for w in ws})
    pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"] + words + sorted({f"##{w[-3:]}" for w in words})
    tok = Tokenizer(models.WordPiece({p: i for i, p in enumerate(dict.fromkeys(pieces))},
                                     unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]",
                                        unk_token="[UNK]")
    config = BertConfig(vocab_size=tok.get_vocab_size(), hidden_size=64, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=128,
                        id2label=dict(enumerate(tags)), label2id={t: i for i, t in enumerate(tags)})
    return tokenizer, BertForTokenClassification(config)


def first_subword_labels(encoding, sentences, tag_index):
    """Gold ids at each word's first sub-word, -100 (ignored) elsewhere."""
    labels = torch.full(encoding["input_ids"].shape, -100, dtype=torch.long)
    for i, (_, ts) in enumerate(sentences):
        previous = None
        for j, word in enumerate(encoding.word_ids(i)):
            if word is not None and word != previous:
                labels[i, j] = tag_index[ts[word]]
            previous = word
    return labels


def main(argv=None):
    args, train, test, tags = start(__doc__, argv, epochs=4)
    tag_index = {t: i for i, t in enumerate(tags)}
    tokenizer, model = make_model(train, tags)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    rng = np.random.default_rng(0)
    model.train()
    for _ in range(args.epochs):
        order = rng.permutation(len(train))
        for first in range(0, len(train), 16):
            chunk = [train[i] for i in order[first:first + 16]]
            enc = tokenizer([w for w, _ in chunk], is_split_into_words=True, padding=True,
                            return_tensors="pt")
            loss = model(**enc, labels=first_subword_labels(enc, chunk, tag_index)).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    entries = stream_word_entries(model, tokenizer, test, batch_size=32,
                                  aggregation="first")
    report(entries, train, tags, args.out)


if __name__ == "__main__":
    main()
