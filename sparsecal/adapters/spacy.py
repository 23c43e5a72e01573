"""spaCy's trainable ``tagger`` and ``morphologizer``: the softmax of the
component's model over its ``labels`` (the column order) for every token, and gold
from ``Example``s aligned to the predicted tokens as the component's own loss
aligns them (a misaligned or unannotated token has no gold tag, -1).
"""
import numpy as np

from .._extras import require
from ..core.entries import threshold as _threshold
from ..core.validation import check_choice, check_unit_interval
from .._docs import fill_doc
from .huggingface import _softmax

__all__ = ["entries_from_spacy", "spacy_scores"]


def _component(nlp, component, purpose):
    spacy = require("spacy", "spacy", purpose)
    if not isinstance(nlp, spacy.language.Language):
        raise TypeError(f"nlp must be a spaCy Language (pipeline), got {type(nlp).__name__}")
    if component not in nlp.pipe_names:
        raise ValueError(f"component={component!r} is not in the pipeline "
                         f"{nlp.pipe_names}")
    proc = nlp.get_pipe(component)
    kinds = (spacy.pipeline.Tagger, spacy.pipeline.Morphologizer)
    if not isinstance(proc, kinds):
        raise TypeError(f"component {component!r} is a {type(proc).__name__}: a tagger "
                        "or morphologizer (spacy.pipeline.Tagger or Morphologizer) is needed")
    return proc


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
    docs = [doc.copy() for doc in docs]
    for name, before in nlp.pipeline:
        if name == component:
            break
        docs = list(before.pipe(docs))
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
    """Thresholded entries of a tagger's or morphologizer's scores on ``Example``s.

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
