"""Hugging Face transformers token classification: word-level tag probabilities.

A token-classification model (``AutoModelForTokenClassification``) scores
sub-words; a tagger is evaluated on words. The fast tokenizer's
``word_ids()`` maps each sub-word to its word (None for special tokens and
padding). Here the sub-words' logits become one probability distribution per
word over the model's labels (``config.id2label``), with the word aggregations
of the transformers token-classification pipeline:

- ``"first"``: the softmax of the word's first sub-word;
- ``"mean"``: the mean of its sub-words' softmax distributions (the pipeline's
  ``"average"``);
- ``"max"``: the softmax distribution of the sub-word whose highest probability
  is the largest (ties: the first such sub-word), as the pipeline's ``"max"``.

All three aggregate *probabilities*, never logits, and each gives a
distribution (rows sum to 1) without renormalising: a mean of distributions is
one, and "max" picks one sub-word's distribution whole. A per-tag maximum over
sub-words would need renormalising and would inflate every tag's score at once,
a miscalibration the tool would then measure as the model's. Averaging logits
instead would be a different model (a product of experts) from what the
pipeline reports. The words' distributions are what a user of the pipeline
sees, so they are what calibration is measured on (Kranzlein, Liu & Schneider
2021, Section 3.1: thresholded marginal scores of every tag).

``word_probabilities`` needs NumPy only; :func:`stream_word_entries` runs a
model, and needs the ``hf`` extra (``pip install "sparsecal[hf]"``).
"""
from itertools import count, islice

import numpy as np

from ..core.dispatch import LIBRARY_OUTPUTS, takes_data
from .._extras import require
from ..core.entries import threshold as _threshold
from ..core.entry_buffer import EntryBuffer
from ..core.validation import (as_array, as_float_array, check_choice, check_positive_int,
                               check_unit_interval)
from .labels import _gold_and_lengths

__all__ = ["label_names", "stream_word_entries", "word_probabilities"]

AGGREGATIONS = ("first", "mean", "max")


def label_names(config):
    """The model's label names in column order, from ``config.id2label``.

    Parameters
    ----------
    config : PretrainedConfig, model, or mapping
        A transformers config (or a model, whose ``config`` is used) with
        ``id2label``, or the ``id2label`` mapping itself (keys may be strings of
        integers, as in a saved ``config.json``).

    Returns
    -------
    list of str
        ``names[i] = id2label[i]`` for ``i`` in ``0..n_labels-1``.

    Raises
    ------
    TypeError
        If ``config`` has no ``id2label`` mapping, or a name is not a string.
    ValueError
        If the ids are not exactly ``0..n_labels-1`` or a name repeats.

    References
    ----------
    Kranzlein, Liu & Schneider (2021), Section 3.1: every tag of the inventory
    is a column of the score matrix.

    Examples
    --------
    >>> from sparsecal.adapters import label_names
    >>> label_names({"1": "B-PER", "0": "O"})
    ['O', 'B-PER']
    """
    config = getattr(config, "config", config)
    id2label = getattr(config, "id2label", config)
    if not hasattr(id2label, "items"):
        raise TypeError(f"config must have an id2label mapping, got {type(config).__name__}")
    try:
        pairs = sorted((int(k), v) for k, v in id2label.items())
    except (TypeError, ValueError):
        raise ValueError("config.id2label keys must be integer label ids") from None
    ids = [k for k, _ in pairs]
    if ids != list(range(len(ids))) or not ids:
        raise ValueError(f"config.id2label ids must be 0..n_labels-1, got {ids}")
    names = [v for _, v in pairs]
    if not all(isinstance(v, str) for v in names):
        raise TypeError("config.id2label values must be label names (strings)")
    if len(set(names)) != len(names):
        raise ValueError("config.id2label repeats a label name")
    return names


@takes_data(refuse=LIBRARY_OUTPUTS)
def word_probabilities(logits, word_ids, *, aggregation="first"):
    """Word-level tag probabilities from a token-classification model's logits.

    Parameters
    ----------
    logits : array_like or Tensor, shape (B, T, C) or (T, C)
        The model's output ``logits`` for a batch of B sequences of T sub-words
        (or one sequence), C labels; float32 or float64 (other floats are cast to
        float64). A tensor is detached and copied to the CPU.
    word_ids : list of lists of int or None, shape (B, T) (or (T,))
        ``[encoding.word_ids(i) for i in range(B)]`` of the fast tokenizer:
        each sub-word's word index in its sequence, None for special tokens and
        padding. Every word ``0..max`` of a sequence must have a sub-word.
    aggregation : {"first", "mean", "max"}, default "first"
        How a word's sub-words combine (see the module: probabilities, as the
        transformers pipeline's ``"first"``, ``"average"`` and ``"max"``).

    Returns
    -------
    ndarray, shape (n_words, C), dtype of ``logits`` (float32 or float64)
        One row per word, sequence after sequence, words in order; each row
        sums to 1.

    Raises
    ------
    TypeError
        If ``logits`` does not hold real numbers or ``word_ids`` holds something
        other than integers and None.
    ValueError
        On shapes that disagree, a negative word id, a word without sub-words,
        non-finite logits of a real sub-word, or an unknown aggregation.

    References
    ----------
    Kranzlein, Liu & Schneider (2021), Section 3.1 (scores of every tag of
    every token); the transformers token-classification pipeline's word
    aggregation strategies.

    Examples
    --------
    Two words; the second has two sub-words ([CLS] and [SEP] have no word):

    >>> import numpy as np
    >>> from sparsecal.adapters import word_probabilities
    >>> logits = np.log(np.array([[[.5, .5], [.9, .1], [.2, .8], [.6, .4], [.5, .5]]]))
    >>> ids = [[None, 0, 1, 1, None]]
    >>> word_probabilities(logits, ids).round(3)
    array([[0.9, 0.1],
           [0.2, 0.8]])
    >>> word_probabilities(logits, ids, aggregation="mean").round(3)
    array([[0.9, 0.1],
           [0.4, 0.6]])
    >>> word_probabilities(logits, ids, aggregation="max").round(3)
    array([[0.9, 0.1],
           [0.2, 0.8]])
    """
    return _word_probabilities(logits, word_ids, aggregation)[0]


def _word_probabilities(logits, word_ids, aggregation):
    """(probabilities [n_words, C], words per sequence int64 [B])."""
    check_choice(aggregation, "aggregation", set(AGGREGATIONS))
    if hasattr(logits, "detach"):   # a torch tensor, on any device, with grad or not
        logits = logits.detach().cpu()
    arr = as_array(logits, "logits")
    if arr.ndim == 2:
        arr, word_ids = arr[None], [word_ids]
    x = as_float_array(arr, "logits", ndim=3)
    B, T, C = x.shape
    ids = _word_id_array(word_ids, B, T)
    valid = ids >= 0
    b, t = np.nonzero(valid)                      # sub-words in sequence order
    w = ids[b, t]
    n_words = ids.max(axis=1, initial=-1) + 1     # [B]
    start = np.concatenate([[0], np.cumsum(n_words)])
    gw = start[b] + w                             # global word of each sub-word
    counts = np.bincount(gw, minlength=start[-1])
    if (counts == 0).any():
        g = int(np.flatnonzero(counts == 0)[0])
        s = int(np.searchsorted(start, g, side="right") - 1)
        raise ValueError(f"word_ids[{s}] has no sub-word for word {g - start[s]} "
                         f"(words 0..{n_words[s] - 1} must each have one)")
    sub = x[b, t]                                 # [n_sub, C]
    if sub.size and not np.isfinite(sub).all():
        i = int(np.flatnonzero(~np.isfinite(sub).all(1))[0])
        raise ValueError(f"logits[{b[i]}, {t[i]}] (a real sub-word) is not finite")
    if not gw.size:
        return np.empty((0, C), dtype=x.dtype), n_words
    p = _softmax(sub)
    order = np.argsort(gw, kind="stable")         # words' sub-words together, in order
    p, gw = p[order], gw[order]
    first = np.flatnonzero(np.r_[True, gw[1:] != gw[:-1]])   # word k starts here
    if aggregation == "first":
        out = p[first]
    elif aggregation == "mean":
        out = np.add.reduceat(p, first, axis=0) / counts[:, None].astype(p.dtype)
    else:   # the sub-word with the largest top probability (the first of ties)
        top = p.max(axis=1)
        hit = np.flatnonzero(top == np.maximum.reduceat(top, first)[gw])
        _, keep = np.unique(gw[hit], return_index=True)
        out = p[hit[keep]]
    return np.ascontiguousarray(out, dtype=x.dtype), n_words


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _word_id_array(word_ids, B, T):
    """``word_ids`` as int64 [B, T], -1 for None (converted by NumPy: None -> NaN,
    no Python loop over sub-words)."""
    try:
        ids = np.array(word_ids, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("word_ids must be lists of integers and None (one per sub-word, "
                        "of equal lengths: tokenizer(...).word_ids(i) of a padded "
                        "batch)") from None
    if ids.shape != (B, T):
        raise ValueError(f"word_ids has shape {ids.shape}, expected ({B}, {T}) like "
                         "logits")
    real = ~np.isnan(ids)
    if (ids[real] < 0).any() or (ids[real] != np.floor(ids[real])).any():
        raise ValueError("word_ids must be non-negative integers or None")
    return np.where(real, ids, -1).astype(np.int64)


def stream_word_entries(model, tokenizer, sentences, *, batch_size=32, threshold=0.01,
                        aggregation="first", max_length=None, missing_gold="negatives",
                        unknown="error"):
    """Run a token-classification model over a corpus and keep thresholded word entries.

    Sentences are tokenized and scored ``batch_size`` at a time (``model.eval()``
    and ``torch.no_grad()``; the model's training mode is restored afterwards),
    each batch's word probabilities (:func:`word_probabilities`) are thresholded
    against the gold (:func:`sparsecal.threshold`) and only the surviving
    entries are kept: the corpus' dense ``[n_words, n_labels]`` matrix is never
    held, only one batch's.

    Parameters
    ----------
    model : transformers model for token classification
        Called as ``model(**tokenizer(...)).logits``; its ``config.id2label``
        gives the tag inventory (:func:`label_names`). Runs on its own device.
    tokenizer : fast tokenizer (``PreTrainedTokenizerFast``)
        Called with ``is_split_into_words=True``; its ``word_ids()`` maps
        sub-words to words.
    sentences : iterable of (words, labels) pairs
        Per sentence, its words (list of str) and their gold labels (names in
        ``config.id2label`` or ids), e.g. ``zip(ds["tokens"], ds["ner_tags"])`` of
        a Hugging Face dataset. Read once, lazily.
    batch_size : int, default 32
        Sentences per model call.
    threshold : float, default 0.01
        Keep word entries with ``score >= threshold``.
    aggregation : {"first", "mean", "max"}, default "first"
        As in :func:`word_probabilities`.
    max_length : int, optional
        Truncate tokenized sentences to this many sub-words (default: no
        truncation). A sentence that loses words raises (its words would be
        missing from the evaluation).
    missing_gold : {"negatives", "drop"}, default "negatives"
        Words whose gold is -1 (or an unknown name with ``unknown="missing"``),
        as in :func:`sparsecal.threshold`.
    unknown : {"error", "missing"}, default "error"
        A gold name not in ``config.id2label``, as in :func:`gold_ids`.

    Returns
    -------
    Entries
        ``token`` indexes words over the whole corpus, in order; ``n_tokens``
        is the number of words and ``n_tags`` the number of labels.

    Raises
    ------
    ImportError
        Without torch or transformers (``pip install "sparsecal[hf]"``).
    TypeError
        If ``tokenizer`` is not a fast tokenizer, or a sentence is not a (words,
        labels) pair of lists.
    ValueError
        On an invalid ``batch_size``, ``threshold`` or ``aggregation``, a
        sentence whose labels and words differ in number, a sentence that is
        longer than the model's ``max_position_embeddings`` or loses words to
        ``max_length``, or gold labels outside the inventory.

    References
    ----------
    Kranzlein, Liu & Schneider (2021), Section 3.1 (thresholded entries of
    every tag of every token).

    Examples
    --------
    A tiny randomly initialised BERT with a tokenizer built in memory:

    >>> from tokenizers import Tokenizer, models, pre_tokenizers
    >>> from transformers import (BertConfig, BertForTokenClassification,
    ...                           PreTrainedTokenizerFast)
    >>> vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "new": 4,
    ...          "york": 5, "##er": 6}
    >>> tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    >>> tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    >>> tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]",
    ...                                     unk_token="[UNK]")
    >>> config = BertConfig(vocab_size=7, hidden_size=8, num_hidden_layers=1,
    ...                     num_attention_heads=2, intermediate_size=8,
    ...                     id2label={0: "O", 1: "B-LOC", 2: "I-LOC"})
    >>> model = BertForTokenClassification(config)
    >>> corpus = [(["new", "yorker"], ["B-LOC", "O"]), (["york"], ["B-LOC"])]
    >>> entries = stream_word_entries(model, tokenizer, corpus, threshold=0.0)
    >>> entries.n_tokens, entries.n_tags, len(entries)
    (3, 3, 9)
    >>> entries.label.tolist()
    [0, 1, 0, 1, 0, 0, 0, 1, 0]
    """
    torch = require("torch", "hf", "stream_word_entries")
    require("transformers", "hf", "stream_word_entries")
    batch_size = check_positive_int(batch_size, "batch_size")
    t = check_unit_interval(threshold, "threshold")
    check_choice(aggregation, "aggregation", set(AGGREGATIONS))
    if max_length is not None:
        max_length = check_positive_int(max_length, "max_length")
    if not getattr(tokenizer, "is_fast", False):
        raise TypeError("tokenizer must be a fast tokenizer (PreTrainedTokenizerFast): "
                        "word_ids() needs one")
    names = label_names(model)
    limit = getattr(model.config, "max_position_embeddings", None)
    buf = EntryBuffer()
    it = iter(sentences)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for first in count(0, batch_size):
                batch = list(islice(it, batch_size))
                if not batch:
                    break
                words, labels = _unzip(batch, first)
                enc = tokenizer(words, is_split_into_words=True, padding=True,
                                truncation=max_length is not None, max_length=max_length,
                                return_tensors="pt")
                n_sub = enc["input_ids"].shape[1]
                if limit is not None and n_sub > limit:
                    raise ValueError(f"a sentence of batch {first}..{first + len(batch) - 1}"
                                     f" has {n_sub} sub-words, more than the model's "
                                     f"max_position_embeddings={limit}: give max_length")
                logits = model(**enc.to(model.device)).logits
                probs, n_words = _word_probabilities(
                    logits, [enc.word_ids(i) for i in range(len(batch))], aggregation)
                gold, n_gold = _gold_and_lengths(labels, names, unknown, first)
                _check_words(words, n_words, n_gold, first, max_length)
                buf.append(_threshold(probs, gold, t, missing_gold=missing_gold),
                           probs.shape[0])
    finally:
        model.train(was_training)
    return buf.entries(len(names), t)


def _unzip(batch, first):
    """(words, labels) of a batch of (words, labels) pairs."""
    for k, pair in enumerate(batch):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2
                and all(isinstance(x, (list, tuple)) for x in pair)):
            raise TypeError(f"sentence {first + k} must be a (words, labels) pair of lists")
    return [list(w) for w, _ in batch], [list(lab) for _, lab in batch]


def _check_words(words, n_words, n_gold, first, max_length):
    """Every sentence's words all scored (none truncated) and labelled."""
    n_in = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    bad = np.flatnonzero(n_gold != n_in)
    if bad.size:
        k = int(bad[0])
        raise ValueError(f"sentence {first + k} has {n_in[k]} words but {n_gold[k]} labels")
    bad = np.flatnonzero(n_words != n_in)
    if bad.size:
        k = int(bad[0])
        why = (f"truncated at max_length={max_length}" if max_length
               else "words the tokenizer turned into no sub-word")
        raise ValueError(f"sentence {first + k} has {n_in[k]} words but the model scored "
                         f"{n_words[k]} ({why})")
