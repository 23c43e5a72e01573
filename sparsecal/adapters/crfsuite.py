"""sklearn-crfsuite's marginals: ``CRF.predict_marginals(X)`` as scores or entries.

``predict_marginals`` returns, per sentence, per token, a dict ``{label:
probability}`` over every label the model knows (``CRF.classes_``, in that
order). These are Python objects, so one pass over the tokens is unavoidable:
it is a single flattening step (``itertools.chain`` and ``operator.itemgetter``
mapped over the dicts, read by ``np.fromiter`` into one array, with no Python
loop body), and everything after it is vectorised.

Columns follow ``labels`` (default: the keys of the first token, i.e.
``CRF.classes_``). ``labels`` may hold names the model never saw in training
(its tag inventory can be larger than the model's): their columns are 0. A
label of the model missing from ``labels`` is an error, since its probability
would be lost.

Needs the ``crfsuite`` extra (``pip install "sparsecal[crfsuite]"``) only to
train the model; the conversion reads plain lists of dicts.
"""
from itertools import chain
from operator import itemgetter

import numpy as np

from ..core.dispatch import LIBRARY_OUTPUTS, takes_data
from ..core.entries import threshold as _threshold
from ..core.validation import check_probabilities
from .labels import _gold_and_lengths, _names

__all__ = ["crfsuite_scores", "entries_from_crfsuite"]


@takes_data(refuse=LIBRARY_OUTPUTS)
def crfsuite_scores(marginals, labels=None):
    """The dense score matrix of ``predict_marginals`` output, and its columns' labels.

    Parameters
    ----------
    marginals : list of lists of dict
        ``CRF.predict_marginals(X)``: per sentence, per token, ``{label: p}``
        with the same labels for every token.
    labels : sequence of str, optional
        The columns, in order (default: the first token's labels, which is
        ``CRF.classes_``); may include labels the model does not know (zero
        columns) but must include every label it does.

    Returns
    -------
    scores : ndarray of float64, shape (n_tokens, len(labels))
        Tokens sentence after sentence.
    labels : list of str
        The label of each column.

    Raises
    ------
    TypeError
        If ``marginals`` is not a list of lists of dicts.
    ValueError
        If a token's labels differ from the first token's, a model label is not
        in ``labels``, ``labels`` repeats a name, or a probability is outside
        [0, 1] or NaN.

    References
    ----------
    Nguyen & O'Connor (2015), Section 4.2 (CRF posterior marginals as the
    tagger's confidence); Kranzlein, Liu & Schneider (2021), Section 3.1.

    Examples
    --------
    >>> from sparsecal.adapters import crfsuite_scores
    >>> marginals = [[{"N": 0.9, "V": 0.1}, {"N": 0.3, "V": 0.7}], [{"N": 1.0, "V": 0.0}]]
    >>> scores, labels = crfsuite_scores(marginals, labels=["V", "N", "ADJ"])
    >>> scores
    array([[0.1, 0.9, 0. ],
           [0.7, 0.3, 0. ],
           [0. , 1. , 0. ]])
    >>> labels
    ['V', 'N', 'ADJ']
    """
    tokens, _ = _tokens(marginals)
    model = list(tokens[0]) if tokens else ([] if labels is None else list(labels))
    cols = model if labels is None else _names(labels).tolist()
    index = {name: j for j, name in enumerate(cols)}
    missing = [name for name in model if name not in index]
    if missing:
        raise ValueError(f"labels lacks {missing[:5]}, which the model predicts: every "
                         "label of the model needs a column")
    n, k = len(tokens), len(model)
    if n and not k:
        raise ValueError("the first token of marginals has no labels")
    sizes = np.fromiter(map(len, tokens), dtype=np.int64, count=n)
    get = itemgetter(*model) if k > 1 else (lambda d: (d[model[0]],))
    try:
        flat = np.fromiter(chain.from_iterable(map(get, tokens)), dtype=np.float64,
                           count=n * k)
    except KeyError:   # a token lacks a label: found by its size below
        flat = None
    bad = np.flatnonzero(sizes != k)
    if bad.size or flat is None:
        i = int(bad[0]) if bad.size else next(i for i, d in enumerate(tokens)
                                              if not all(m in d for m in model))
        raise ValueError(f"token {i} of marginals (counting from the first sentence) "
                         f"does not have the labels of the first token ({model})")
    values = check_probabilities(flat, "marginals").reshape(n, k)
    scores = np.zeros((n, len(cols)), dtype=np.float64)
    scores[:, [index[name] for name in model]] = values
    return scores, cols


@takes_data(refuse=LIBRARY_OUTPUTS)
def entries_from_crfsuite(marginals, gold, labels=None, *, threshold=0.01,
                          missing_gold="negatives", unknown="error"):
    """Thresholded entries of sklearn-crfsuite's ``predict_marginals`` output.

    Parameters
    ----------
    marginals : list of lists of dict
        ``CRF.predict_marginals(X)``.
    gold : list of lists of str or int
        The gold labels ``y`` of the same sentences (names, or column ids).
    labels : sequence of str, optional
        The columns, as in :func:`crfsuite_scores`; tags in the entries index it.
    threshold : float, default 0.01
        Keep entries with ``score >= threshold``.
    missing_gold : {"negatives", "drop"}, default "negatives"
        As in :func:`sparsecal.threshold`.
    unknown : {"error", "missing"}, default "error"
        A gold name not in ``labels``, as in :func:`gold_ids`.

    Returns
    -------
    Entries
        ``n_tags = len(labels)``; tokens numbered sentence after sentence.

    Raises
    ------
    TypeError, ValueError
        As in :func:`crfsuite_scores` and :func:`gold_ids`, or when a
        sentence's gold and marginals differ in length.

    References
    ----------
    Kranzlein, Liu & Schneider (2021), Section 3.1 (thresholded entries).

    Examples
    --------
    >>> from sparsecal.adapters import entries_from_crfsuite
    >>> marginals = [[{"N": 0.9, "V": 0.1}, {"N": 0.3, "V": 0.7}]]
    >>> entries = entries_from_crfsuite(marginals, [["N", "N"]], threshold=0.2)
    >>> entries.score.tolist(), entries.tag.tolist(), entries.label.tolist()
    ([0.9, 0.3, 0.7], [0, 0, 1], [1, 1, 0])
    """
    scores, cols = crfsuite_scores(marginals, labels)
    g, n_gold = _gold_and_lengths(gold, cols, unknown)
    _, n_tokens = _tokens(marginals)
    if n_gold.shape != n_tokens.shape or (n_gold != n_tokens).any():
        if n_gold.shape != n_tokens.shape:
            raise ValueError(f"gold has {n_gold.size} sentences but marginals has "
                             f"{n_tokens.size}")
        s = int(np.flatnonzero(n_gold != n_tokens)[0])
        raise ValueError(f"sentence {s} has {n_tokens[s]} tokens in marginals but "
                         f"{n_gold[s]} gold labels")
    return _threshold(scores, g, threshold, missing_gold=missing_gold)


def _tokens(marginals):
    """(every token's dict, sentence after sentence; tokens per sentence)."""
    if isinstance(marginals, (str, bytes, dict)) or not hasattr(marginals, "__iter__"):
        raise TypeError("marginals must be a list of sentences (lists of {label: p} "
                        f"dicts), got {type(marginals).__name__}")
    sentences = list(marginals)
    if not all(isinstance(s, (list, tuple)) for s in sentences):
        raise TypeError("marginals must be a list of sentences, each a list of dicts")
    tokens = list(chain.from_iterable(sentences))
    if not all(isinstance(tok, dict) for tok in tokens):
        raise TypeError("each token of marginals must be a {label: probability} dict")
    lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
    return tokens, lengths
