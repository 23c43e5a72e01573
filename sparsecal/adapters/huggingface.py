"""Hugging Face token classification: word-level tag probabilities by the
pipeline's aggregations of a word's sub-words (``tokenizer.word_ids()``):
``"first"`` (the first sub-word's softmax), ``"mean"`` (the pipeline's
``"average"``) or ``"max"`` (the sub-word of the largest top probability),
never renormalised, so the scores are those a pipeline user sees.
"""
import numbers
from itertools import count, islice

import numpy as np

from ..core.dispatch import LIBRARY_OUTPUTS, takes_data
from .._extras import require
from ..core.entries import threshold as _threshold
from ..core.entry_buffer import EntryBuffer
from ..core.validation import (as_array, as_float_array, check_choice, check_positive_int,
                               check_python_types, check_unit_interval)
from .labels import _gold_and_lengths
from .._docs import fill_doc

__all__ = ["label_names", "stream_word_entries", "word_probabilities"]

AGGREGATIONS = ("first", "mean", "max")


def label_names(config):
    """The model's label names in column order, from ``config.id2label`` (ids
    ``0..n_labels-1``, possibly as strings).

    Parameters
    ----------
    config : PretrainedConfig, model, or mapping

    Returns
    -------
    list of str

    Examples
    --------
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
        The logits of B sequences of T sub-words (a tensor is detached, on the CPU).
    word_ids : list of lists of int or None, shape (B, T) (or (T,))
        ``[encoding.word_ids(i) for i in range(B)]``; every word needs a sub-word.
    aggregation : {"first", "mean", "max"}, default "first"
        How a word's sub-words combine (see the module).

    Returns
    -------
    ndarray, shape (n_words, C), dtype of ``logits``
        One distribution per word, sequence after sequence.

    Examples
    --------
    >>> import numpy as np
    >>> logits = np.log(np.array([[[.5, .5], [.9, .1], [.2, .8], [.6, .4], [.5, .5]]]))
    >>> word_probabilities(logits, [[None, 0, 1, 1, None]], aggregation="mean").round(3).tolist()
    [[0.9, 0.1], [0.4, 0.6]]
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
    short = np.flatnonzero(n_words > valid.sum(axis=1))   # more words than sub-words
    if short.size:   # (found before the per-word counts are allocated)
        s = int(short[0])
        have = np.append(np.unique(ids[s][valid[s]]), -1)   # -1: past the last word
        missing = int(np.argmax(have != np.arange(have.size)))
        raise ValueError(f"word_ids[{s}] has no sub-word for word {missing} "
                         f"(words 0..{n_words[s] - 1} must each have one)")
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
    """``word_ids`` as int64 [B, T], -1 for None (no Python loop over sub-words):
    integers (not booleans, floats or strings) and None."""
    ids = np.array(word_ids, dtype=object)
    if ids.shape != (B, T):
        raise ValueError(f"word_ids has shape {ids.shape}, expected ({B}, {T}) like "
                         "logits (lists of integers and None, one per sub-word, of equal "
                         "lengths: tokenizer(...).word_ids(i) of a padded batch)")
    check_python_types(ids.ravel().tolist(), "word_ids", (numbers.Integral, type(None)),
                       "word indices (integers) or None")
    none = ids == None   # noqa: E711 - elementwise
    real = ids[~none]
    if real.size and (real.min() < 0 or real.max() >= 2 ** 62):
        raise ValueError("word_ids must be non-negative integers or None")
    ids[none] = -1
    return ids.astype(np.int64)


@fill_doc
def stream_word_entries(model, tokenizer, sentences, *, batch_size=32, threshold=0.01,
                        aggregation="first", max_length=None, missing_gold="negatives",
                        unknown="error"):
    """Run a token-classification model over a corpus, ``batch_size`` sentences at a
    time (eval mode, no grad), and keep thresholded word entries: only one batch's
    dense matrix is ever held.

    Parameters
    ----------
    model : transformers model for token classification
        Its ``config.id2label`` is the tag inventory; runs on its own device.
    tokenizer : fast tokenizer (``PreTrainedTokenizerFast``)
    sentences : iterable of (words, labels) pairs
        Words and gold labels (names or ids), read once, lazily.
    batch_size : int, default 32
    threshold : float, default 0.01
    aggregation : {"first", "mean", "max"}, default "first"
    max_length : int, optional
        Truncate to this many sub-words (a sentence that loses words raises).
    {missing_gold}
    {gold_unknown}

    Returns
    -------
    Entries
        ``token`` numbers the words over the corpus.

    Examples
    --------
    With a model, its fast tokenizer and a ``datasets`` split ``ds``::

        entries = stream_word_entries(model, tokenizer, zip(ds["tokens"], ds["ner_tags"]))
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
