"""sklearn-crfsuite's marginals: ``CRF.predict_marginals(X)``, a ``{label: p}``
dict per token, as scores or entries (one flattening pass over the dicts, the
rest vectorised; a string or a boolean among the values is refused). Columns follow ``labels`` (default: the first token's keys),
which may add labels the model never saw but must hold every one it knows.
"""
import numbers
from itertools import chain
from operator import itemgetter

import numpy as np

from ..core.dispatch import LIBRARY_OUTPUTS, takes_data
from ..core.entries import threshold as _threshold
from ..core.validation import check_probabilities, check_python_types
from .labels import _gold_and_lengths, _names
from .._docs import fill_doc

__all__ = ["crfsuite_scores", "entries_from_crfsuite"]


@takes_data(refuse=LIBRARY_OUTPUTS)
@fill_doc
def crfsuite_scores(marginals, labels=None):
    """The dense score matrix of ``predict_marginals`` output, and its columns' labels.

    Parameters
    ----------
    {crfsuite_marginals}
    labels : sequence of str, optional
        The columns (see the module).

    Returns
    -------
    scores : ndarray of float64, shape (n_tokens, len(labels))
    labels : list of str

    Examples
    --------
    >>> scores, labels = crfsuite_scores([[{"N": 0.9, "V": 0.1}]], labels=["V", "N", "ADJ"])
    >>> scores.tolist(), labels
    ([[0.1, 0.9, 0.0]], ['V', 'N', 'ADJ'])
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
        flat = list(chain.from_iterable(map(get, tokens)))
    except KeyError:   # a token lacks a label: found by its size below
        flat = None
    bad = np.flatnonzero(sizes != k)
    if bad.size or flat is None:
        i = int(bad[0]) if bad.size else next(i for i, d in enumerate(tokens)
                                              if not all(m in d for m in model))
        raise ValueError(f"token {i} of marginals (counting from the first sentence) "
                         f"does not have the labels of the first token ({model})")
    check_python_types(flat, "marginals", numbers.Real, "probabilities (real numbers)",
                       lambda i: f"token {i // k} (counting from the first sentence), "
                                 f"label {model[i % k]!r},")
    values = check_probabilities(np.array(flat, dtype=np.float64), "marginals").reshape(n, k)
    scores = np.zeros((n, len(cols)), dtype=np.float64)
    scores[:, [index[name] for name in model]] = values
    return scores, cols


@takes_data(refuse=LIBRARY_OUTPUTS)
@fill_doc
def entries_from_crfsuite(marginals, gold, labels=None, *, threshold=0.01,
                          missing_gold="negatives", unknown="error"):
    """Thresholded entries of sklearn-crfsuite's ``predict_marginals`` output.

    Parameters
    ----------
    {crfsuite_marginals}
    gold : list of lists of str or int
        The gold labels of the same sentences (names, or column ids).
    labels : sequence of str, optional
        The columns, as in :func:`crfsuite_scores`.
    threshold : float, default 0.01
    {missing_gold}
    {gold_unknown}

    Returns
    -------
    Entries

    Examples
    --------
    >>> entries = entries_from_crfsuite([[{"N": 0.9, "V": 0.1}, {"N": 0.3, "V": 0.7}]],
    ...                                 [["N", "N"]], threshold=0.2)
    >>> entries.tag.tolist(), entries.label.tolist()
    ([0, 0, 1], [1, 1, 0])
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
