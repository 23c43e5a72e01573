"""The transformers ``Trainer``'s ``compute_metrics``: SMCE, GMCE by TFG groups and
top-label ECE of a token-classification model's word-level probabilities.

Words: with ``word_ids`` (the eval set's ``encoding.word_ids(i)``, in order), as
:func:`~sparsecal.adapters.word_probabilities` aggregates them, the gold tag of a
word being the label of its first sub-word; without them, the first-sub-word rule
of the transformers examples (``label_all_tokens=False``): every sub-word whose
label is not -100 is one word, scored by its own softmax. Words whose gold is -100
are left out. Needs NumPy only (the ``Trainer`` itself: the ``trainer`` extra).
"""
import numpy as np

from ..core.dispatch import LIBRARY_OUTPUTS, takes_data
from ..core.entries import threshold as _threshold
from ..core.groups import TagGroups, check_groups
from ..core.binning import check_fixed_bins
from ..core.validation import (TAG_BYTES, as_float_array, check_choice, check_size,
                               check_unit_interval)
from ..metrics.marginal import check_ce_options, smce, smce_and_gmce
from ..metrics.toplabel import top_label_ece
from .huggingface import AGGREGATIONS, _softmax, _word_id_array, _word_probabilities

__all__ = ["eval_word_scores", "trainer_compute_metrics"]


@takes_data(refuse=LIBRARY_OUTPUTS)
def trainer_compute_metrics(*, word_ids=None, aggregation="first", threshold=0.01,
                            groups=None, train_counts=None, train_labels=None, n_groups=5,
                            n_bins=None, top_label_bins=20):
    """A ``compute_metrics(eval_prediction)`` for ``transformers.Trainer``.

    Parameters
    ----------
    word_ids : list of lists of int or None, optional
        Per eval example, its sub-words' word ids (see the module).
    aggregation : {"first", "mean", "max"}, default "first"
        With ``word_ids``, as in :func:`~sparsecal.adapters.word_probabilities`.
    threshold : float, default 0.01
    groups : TagGroups, optional
        The GMCE's tag groups; or TFG groups of ``train_counts`` (per tag) or of
        ``train_labels`` (the training set's label ids, -100 ignored).
    n_groups : int, default 5
        TFG groups from ``train_counts`` or ``train_labels``.
    n_bins : int, optional
        SMCE and GMCE bins (:func:`sparsecal.smce`'s default).
    top_label_bins : int, default 20

    Returns
    -------
    callable
        ``EvalPrediction -> {"smce": float, "gmce_1": float, ..., "top_label_ece":
        float}`` (``gmce_<g>``, 1-based, only with groups; NaN for a group
        without entries).

    Examples
    --------
    >>> import numpy as np
    >>> from transformers import EvalPrediction
    >>> logits = np.log([[[.5, .5], [.9, .1], [.2, .8], [.7, .3]]])
    >>> metrics = trainer_compute_metrics(n_bins=2)
    >>> out = metrics(EvalPrediction(logits, np.array([[-100, 0, 1, -100]])))
    >>> {k: round(v, 4) for k, v in out.items()}
    {'smce': 0.15, 'top_label_ece': 0.15}
    """
    check_choice(aggregation, "aggregation", set(AGGREGATIONS))
    t = check_unit_interval(threshold, "threshold")
    n_groups = check_size(n_groups, "n_groups", TAG_BYTES)
    check_ce_options(n_bins, None, "equal-mass", 2, False, None)
    check_fixed_bins(top_label_bins, name="top_label_bins")
    given = [k for k, v in dict(groups=groups, train_counts=train_counts,
                                train_labels=train_labels).items() if v is not None]
    if len(given) > 1:
        raise ValueError(f"give one of groups, train_counts, train_labels, not {given}")
    if groups is not None:
        check_groups(groups)
    elif train_labels is not None:
        flat = np.concatenate([np.ravel(np.asarray(x)) for x in train_labels])
        flat = flat[flat != -100]
        if flat.dtype.kind not in "iu" or (flat.size and flat.min() < 0):
            raise ValueError("train_labels must hold label ids >= 0 (or -100, ignored), "
                             f"got dtype {flat.dtype} and minimum "
                             f"{flat.min() if flat.size else None}")
        train_counts = np.bincount(flat)
    if word_ids is not None:
        word_ids = [list(w) for w in word_ids]

    def compute_metrics(eval_prediction):
        if not hasattr(eval_prediction, "label_ids"):
            raise TypeError("eval_prediction must be a transformers EvalPrediction, got "
                            f"{type(eval_prediction).__name__}")
        logits = eval_prediction.predictions
        logits = logits[0] if isinstance(logits, tuple) else logits
        labels = np.asarray(eval_prediction.label_ids)
        probs, gold = eval_word_scores(logits, labels, word_ids, aggregation)
        C = probs.shape[1]
        tag_groups = (groups if train_counts is None else
                      TagGroups.from_counts(_padded(train_counts, C), n_groups))
        entries = _threshold(probs, gold, t)
        if tag_groups is None:
            out = {"smce": smce(entries, n_bins=n_bins).value}
        else:
            pooled, per_group = smce_and_gmce(entries, tag_groups, n_bins=n_bins)
            out = {"smce": pooled.value}
            out.update({f"gmce_{g + 1}": np.nan if ce is None else ce.value
                        for g, ce in enumerate(per_group)})
        out["top_label_ece"] = top_label_ece(_threshold(probs, gold, 0.0),
                                             n_bins=top_label_bins).value
        return {k: float(v) for k, v in out.items()}

    return compute_metrics


def _padded(counts, n_tags):
    counts = np.asarray(counts)
    if counts.ndim != 1 or counts.size > n_tags:
        raise ValueError(f"train_counts must be one count per tag, at most the model's "
                         f"{n_tags} labels, got shape {counts.shape}")
    return np.pad(counts, (0, n_tags - counts.size))


@takes_data(refuse=LIBRARY_OUTPUTS)
def eval_word_scores(logits, labels, word_ids=None, aggregation="first"):
    """Word-level probabilities and gold tags of a Trainer's eval predictions.

    Parameters
    ----------
    logits : ndarray, shape (B, T, C)
        ``EvalPrediction.predictions`` (sequences padded by the Trainer).
    labels : ndarray of int, shape (B, T)
        ``EvalPrediction.label_ids``, -100 where ignored.
    word_ids, aggregation
        As in :func:`trainer_compute_metrics`.

    Returns
    -------
    probs : ndarray, shape (n_words, C)
    gold : ndarray of int64, shape (n_words,)

    Examples
    --------
    >>> import numpy as np
    >>> logits = np.log([[[.5, .5], [.9, .1], [.2, .8], [.7, .3]]])
    >>> p, gold = eval_word_scores(logits, np.array([[-100, 0, 1, -100]]), [[None, 0, 1, 1]])
    >>> p.round(2).tolist(), gold.tolist()
    ([[0.9, 0.1], [0.2, 0.8]], [0, 1])
    """
    x = as_float_array(logits, "logits", ndim=3)
    labels = np.asarray(labels)
    if labels.shape != x.shape[:2] or labels.dtype.kind not in "iu":
        raise ValueError(f"labels must be integers of shape {x.shape[:2]} (the logits' "
                         f"first two dimensions), got {labels.dtype} {labels.shape}")
    if word_ids is None:
        keep = labels != -100
        return _softmax(x[keep]), labels[keep].astype(np.int64)
    B, T, _ = x.shape
    if len(word_ids) != B or any(len(w) > T for w in word_ids):
        raise ValueError(f"word_ids must hold {B} lists (one per eval example) of at "
                         f"most {T} sub-words")
    padded = [list(w) + [None] * (T - len(w)) for w in word_ids]
    probs, n_words = _word_probabilities(x, padded, aggregation)
    ids = _word_id_array(padded, B, T)
    b, t = np.nonzero(ids >= 0)
    gw = (np.cumsum(n_words) - n_words)[b] + ids[b, t]
    _, first = np.unique(gw, return_index=True)   # each word's first sub-word
    gold = labels[b[first], t[first]].astype(np.int64)
    keep = gold != -100
    return probs[keep], gold[keep]
