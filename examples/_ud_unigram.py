"""A count-based UD English-EWT tagger, NumPy only: the tagger of the report
tests (tests/test_report_values.py) and of the MCE study
(benchmarks/mce_defaults.py), which need real tag scores without training a CRF.

Tags are the morphological ``UPOS|FEATS`` of ``ud_ewt_crf.py`` (a sparse,
long-tailed tagset). The tagger scores each token by its word alone:
``p(t | w) = (c(w, t) + k p(t)) / (c(w) + k)`` with training counts ``c`` and
the training tag distribution ``p(t)`` as the prior of unseen words (add-k
smoothing towards the prior); a real tagger's scores, overconfident where
the counts are few.
"""
import os

import numpy as np

from sparsecal.io import read_conllu

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data",
                    "ud_ewt")


def _split(data, name, limit):
    """(forms, "UPOS|FEATS" tag strings) of the first ``limit`` sentences."""
    path = os.path.join(data, f"en_ewt-ud-{name}.conllu.xz")
    upos, feats = read_conllu(path, "upos"), read_conllu(path, "feats")
    end = upos.offsets[min(limit, upos.offsets.shape[0] - 1)]
    names = [np.array(sorted(c.tag_index, key=c.tag_index.get), dtype=object)
             for c in (upos, feats)]
    tags = names[0][upos.gold[:end]] + "|" + names[1][feats.gold[:end]]
    return np.asarray(upos.forms[:end]), tags


def load(data=DATA, *, train=3000, dev=600, test=600, k=1.0):
    """Scores of the unigram tagger on the first ``dev`` / ``test`` sentences,
    trained on the first ``train`` sentences.

    Returns
    -------
    dict
        ``tag_names`` (training tags by count, then ``<UNK>`` for tags unseen in
        training), ``train_counts`` ({tag index: count}), and for "dev" and
        "test": ``(scores [n_tokens, n_tags] float32, gold int64)``.
    """
    forms, tags = _split(data, "train", train)
    names, counts = np.unique(tags, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    tag_names = [str(t) for t in names[order]] + ["<UNK>"]
    column = {t: i for i, t in enumerate(tag_names)}
    n_tags = len(tag_names)
    words, word_of = np.unique(forms, return_inverse=True)
    gold = np.array([column[t] for t in tags])
    joint = np.zeros((words.shape[0], n_tags))
    np.add.at(joint, (word_of, gold), 1.0)
    prior = np.bincount(gold, minlength=n_tags) / gold.shape[0]
    table = (joint + k * prior) / (joint.sum(1, keepdims=True) + k)
    out = {"tag_names": tag_names,
           "train_counts": {i: int(c) for i, c in enumerate(np.bincount(gold, minlength=n_tags))
                            if c}}
    for split, limit in (("dev", dev), ("test", test)):
        f, t = _split(data, split, limit)
        row = np.searchsorted(words, f)
        known = (row < words.shape[0]) & (words[np.minimum(row, words.shape[0] - 1)] == f)
        scores = np.where(known[:, None], table[np.minimum(row, words.shape[0] - 1)], prior)
        out[split] = (scores.astype(np.float32),
                      np.array([column.get(x, n_tags - 1) for x in t], dtype=np.int64))
    return out
