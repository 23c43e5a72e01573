"""spaCy's trainable ``tagger`` and ``morphologizer``: the softmax of the
component's model over its ``labels`` (the column order) for every token, and gold
from ``Example``s aligned to the predicted tokens as the component's own loss
aligns them (a misaligned or unannotated token has no gold tag, -1); and
``spancat``: every suggested span's probability of each label.
"""
import numpy as np

from .._extras import require
from ..core.entries import Entries, threshold as _threshold
from ..core.validation import check_choice, check_unit_interval
from .._docs import fill_doc
from .huggingface import _softmax

__all__ = ["entries_from_spacy", "spacy_scores", "spancat_entries"]


def _component(nlp, component, purpose, kinds=("Tagger", "Morphologizer")):
    spacy = require("spacy", "spacy", purpose)
    if not isinstance(nlp, spacy.language.Language):
        raise TypeError(f"nlp must be a spaCy Language (pipeline), got {type(nlp).__name__}")
    if component not in nlp.pipe_names:
        raise ValueError(f"component={component!r} is not in the pipeline "
                         f"{nlp.pipe_names}")
    proc = nlp.get_pipe(component)
    if not isinstance(proc, tuple(getattr(spacy.pipeline, k) for k in kinds)):
        raise TypeError(f"component {component!r} is a {type(proc).__name__}: a "
                        f"{' or '.join(f'spacy.pipeline.{k}' for k in kinds)} is needed")
    return proc


def _upstream(nlp, component, docs):
    """Copies of ``docs`` run through the components before ``component``."""
    docs = [doc.copy() for doc in docs]
    for name, before in nlp.pipeline:
        if name == component:
            return docs
        docs = list(before.pipe(docs))


def spacy_scores(nlp, docs, component="tagger"):
    """Per-token probabilities of a pipeline's tagger or morphologizer.

    Parameters
    ----------
    nlp : spacy.language.Language
    docs : iterable of Doc
        Tokenised; copies run through the components before ``component``.
    component : str, default "tagger"
        The name of a ``tagger`` or ``morphologizer`` in the pipeline.

    Returns
    -------
    scores : ndarray of float32, shape (n_tokens, n_labels)
        The softmax of the component's model, doc after doc (spaCy's models skip
        it when predicting: applied here); its argmax is the label the
        component sets.
    labels : tuple of str
        ``component.labels``, the columns.

    Examples
    --------
    With a trained pipeline ``nlp``::

        scores, labels = spacy_scores(nlp, [nlp.make_doc("A short text .")])
    """
    proc = _component(nlp, component, "spacy_scores")
    docs = _upstream(nlp, component, docs)
    n_labels = len(proc.labels)
    if not any(len(doc) for doc in docs):   # spaCy's own model needs a token
        return np.empty((0, n_labels), np.float32), proc.labels
    out = np.concatenate([proc.model.ops.to_numpy(s) for s in proc.model.predict(docs)])
    layer = proc.model.get_ref("softmax") if proc.model.has_ref("softmax") else None
    if layer is not None and not layer.attrs.get("softmax_normalize", True):
        # spaCy's default: logits when predicting; the softmax training applies
        out = _softmax(out / layer.attrs.get("softmax_temperature", 1.0))
    return out.astype(np.float32, copy=False), proc.labels


def _gold(proc, examples):
    """Gold column of every predicted token (-1: none), as the component's loss."""
    from spacy.morphology import Morphology
    from spacy.pipeline import Morphologizer
    index = {label: i for i, label in enumerate(proc.labels)}
    morphology = proc.vocab.morphology
    gold = []
    for eg in examples:
        if not isinstance(proc, Morphologizer):   # (a Morphologizer is a Tagger)
            gold += [index.get(t, -1) for t in eg.get_aligned("TAG", as_string=True)]
            continue
        for pos, morph in zip(eg.get_aligned("POS", as_string=True),
                              eg.get_aligned("MORPH", as_string=True)):
            if pos is None or morph is None or pos == morph == "":
                gold.append(-1)
                continue
            feats = Morphology.feats_to_dict(morph)
            if pos:
                feats[proc.POS_FEAT] = pos
            gold.append(index.get(proc.vocab.strings[morphology.add(feats)], -1))
    return np.array(gold, dtype=np.int64)


@fill_doc
def entries_from_spacy(nlp, examples, component="tagger", *, threshold=0.01,
                       missing_gold="negatives"):
    """Thresholded entries of a tagger's or morphologizer's scores on spaCy Examples.

    Parameters
    ----------
    nlp : spacy.language.Language
    examples : iterable of spacy.training.Example
        Scored on ``example.predicted`` (copies), gold from ``example.reference``.
    component : str, default "tagger"
    threshold : float, default 0.01
    {missing_gold}

    Returns
    -------
    Entries
        ``token`` numbers the predicted tokens, example after example.

    Examples
    --------
    With a trained pipeline ``nlp`` and a corpus ``dev`` of Examples::

        entries = entries_from_spacy(nlp, dev, "tagger")
    """
    proc = _component(nlp, component, "entries_from_spacy")
    t = check_unit_interval(threshold, "threshold")
    check_choice(missing_gold, "missing_gold", {"negatives", "drop"})
    examples = list(examples)
    scores, _ = spacy_scores(nlp, [eg.predicted for eg in examples], component)
    return _threshold(scores, _gold(proc, examples), t, missing_gold=missing_gold)


def spancat_entries(nlp, examples, component="spancat", *, threshold=0.01):
    """Entries of a ``spancat``'s suggested spans: one row per span, one column per
    label, each its probability; label 1 where the reference has that span with
    that label (aligned as the component's loss aligns it).

    Parameters
    ----------
    nlp : spacy.language.Language
    examples : iterable of spacy.training.Example
    component : str, default "spancat"
        A ``SpanCategorizer`` (the negative column of ``spancat_singlelabel`` is
        left out).
    threshold : float, default 0.01

    Returns
    -------
    entries : Entries
        ``token`` the span's row; a gold span the suggester does not propose has
        no entry (calibration, not recall).
    spans : ndarray of int64, shape (n_spans, 3)
        Each row's example, start and end (token offsets of ``example.predicted``).

    Examples
    --------
    With a trained pipeline ``nlp`` and a corpus ``dev`` of Examples::

        entries, spans = spancat_entries(nlp, dev)
    """
    proc = _component(nlp, component, "spancat_entries", ("SpanCategorizer",))
    t = check_unit_interval(threshold, "threshold")
    examples = list(examples)
    docs = _upstream(nlp, component, [eg.predicted for eg in examples])
    indices, scores = proc.predict(docs)
    n_labels = len(proc.labels)
    ops = proc.model.ops
    spans = np.zeros((0, 2), np.int64) if not indices.lengths.sum() else \
        ops.to_numpy(indices.dataXd).astype(np.int64).reshape(-1, 2)
    example = np.repeat(np.arange(len(docs)), ops.to_numpy(indices.lengths))
    spans = np.column_stack([example, spans])
    scores = ops.to_numpy(scores)[:, :n_labels] if spans.size else np.zeros((0, n_labels))
    row, tag = np.nonzero(scores >= scores.dtype.type(t))
    width = max(max((len(d) for d in docs), default=0) + 1, 1)
    key = (spans[:, 0] * width + spans[:, 1]) * width + spans[:, 2]
    gold = _gold_spans(proc, examples, width)
    entry_key = key[row] * n_labels + tag
    label = np.isin(entry_key, gold)
    entries = Entries(scores[row, tag], tag, label, row, n_tags=n_labels,
                      n_tokens=len(spans), threshold=t)
    return entries, spans


def _gold_spans(proc, examples, width):
    """``(span key) * n_labels + label`` of every aligned reference span."""
    index = {label: i for i, label in enumerate(proc.labels)}
    keys = [((k * width + s.start) * width + s.end) * len(index) + index[s.label_]
            for k, eg in enumerate(examples)
            for s in eg.get_aligned_spans_y2x(eg.reference.spans.get(proc.key, []),
                                              allow_overlap=True)
            if s.label_ in index]
    return np.array(keys, dtype=np.int64)