"""sparsecal.adapters.spacy on a tagger and a morphologizer trained here in
seconds on UD English-EWT sentences: the scores are the softmax of the
component's model, their argmax is what the component sets, and the entries are
sparsecal's of those scores against the reference annotation."""
import lzma
import pathlib
import random

import conllu
import numpy as np
import pytest
import spacy
from scipy.special import softmax
from spacy.morphology import Morphology
from spacy.tokens import Doc
from spacy.training import Example

import sparsecal as sc
from sparsecal.adapters import entries_from_spacy, spacy_scores, spancat_entries

DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "ud_ewt"


def _sentences(n):
    out = []
    with lzma.open(DATA / "en_ewt-ud-train.conllu.xz", "rt", encoding="utf-8") as f:
        for sent in conllu.parse_incr(f):
            toks = [t for t in sent if isinstance(t["id"], int)]   # no ranges, no empty nodes
            out.append(dict(words=[t["form"] for t in toks], tags=[t["xpos"] for t in toks],
                            pos=[t["upos"] for t in toks],
                            morphs=["|".join(f"{k}={v}" for k, v in sorted(
                                (t["feats"] or {}).items())) for t in toks]))
            if len(out) == n:
                return out


@pytest.fixture(scope="module")
def trained():
    nlp = spacy.blank("en")
    nlp.add_pipe("tagger")
    nlp.add_pipe("morphologizer")
    sents = _sentences(240)
    examples = [Example(Doc(nlp.vocab, words=s["words"]), Doc(nlp.vocab, **s)) for s in sents]
    return _trained(nlp, examples[:200], examples[200:])


def _trained(nlp, train, dev):
    """``(nlp, dev)`` after 3 epochs on ``train``, in batches of 16."""
    random.seed(0)
    spacy.util.fix_random_seed(0)
    optimizer = nlp.initialize(lambda: train)
    for _ in range(3):
        for batch in spacy.util.minibatch(train, 16):
            nlp.update(batch, sgd=optimizer)
    return nlp, dev


def _annotated(nlp, dev):
    return list(nlp.pipe(Doc(nlp.vocab, words=[t.text for t in eg.predicted]) for eg in dev))


def test_tagger_scores_are_the_models_softmax_and_argmax_its_tag(trained):
    nlp, dev = trained
    scores, labels = spacy_scores(nlp, [eg.predicted for eg in dev])
    tagger = nlp.get_pipe("tagger")
    assert labels == tagger.labels
    logits = np.concatenate(tagger.model.predict([eg.predicted for eg in dev]))
    np.testing.assert_allclose(scores, softmax(logits.astype(np.float64), axis=1),
                               rtol=1e-5, atol=1e-7)
    predicted = [t.tag_ for doc in _annotated(nlp, dev) for t in doc]
    assert np.array(labels)[scores.argmax(1)].tolist() == predicted
    assert len(set(predicted)) > 5   # a trained tagger, not one constant tag
    softmax_layer = tagger.model.get_ref("softmax")
    softmax_layer.attrs["softmax_normalize"] = True   # the model normalising itself
    try:
        probs = np.concatenate(tagger.model.predict([eg.predicted for eg in dev]))
        np.testing.assert_array_equal(spacy_scores(nlp, [eg.predicted for eg in dev])[0],
                                      probs)
    finally:
        softmax_layer.attrs["softmax_normalize"] = False


def test_morphologizer_argmax_is_its_morph_and_pos(trained):
    nlp, dev = trained
    scores, labels = spacy_scores(nlp, [eg.predicted for eg in dev], "morphologizer")
    assert labels == nlp.get_pipe("morphologizer").labels
    feats = [Morphology.feats_to_dict(labels[k]) for k in scores.argmax(1)]
    tokens = [t for doc in _annotated(nlp, dev) for t in doc]
    assert [f.pop("POS", "") for f in feats] == [t.pos_ for t in tokens]
    assert feats == [t.morph.to_dict() for t in tokens]


@pytest.mark.parametrize("component, gold_of", [
    ("tagger", lambda s, labels: [labels.index(t) if t in labels else -1 for t in s["tags"]]),
    ("morphologizer", lambda s, labels: [labels.index(m) if m in labels else -1 for m in (
        "|".join(sorted(filter(None, m.split("|") + [f"POS={p}"])))   # features sorted
        for m, p in zip(s["morphs"], s["pos"]))]),
])
def test_entries_are_thresholded_scores_against_the_reference(trained, component, gold_of):
    nlp, dev = trained
    scores, labels = spacy_scores(nlp, [eg.predicted for eg in dev], component)
    sents = _sentences(240)[200:]
    gold = np.concatenate([gold_of(s, list(labels)) for s in sents])
    assert (gold >= 0).mean() > 0.9
    for missing_gold in ("negatives", "drop"):
        got = entries_from_spacy(nlp, dev, component, threshold=0.02, missing_gold=missing_gold)
        want = sc.threshold(scores, gold, 0.02, missing_gold=missing_gold)
        for name in ("score", "tag", "label", "token"):
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
        assert got.n_tags == len(labels) and got.n_tokens == gold.size


@pytest.mark.parametrize("first_tags, first_gold", [(["NNP", "NN"], None),
                                                    (["NNP", "NNP"], "NNP")])
def test_merged_token_gold_is_spacys_alignment(trained, first_tags, first_gold):
    nlp, _ = trained
    ref = Doc(nlp.vocab, words=["New", "York", "is", "big"], tags=first_tags + ["VBZ", "JJ"])
    eg = Example(Doc(nlp.vocab, words=["New York", "is", "big"]), ref)
    got = entries_from_spacy(nlp, [eg], threshold=0.0)
    labels = nlp.get_pipe("tagger").labels
    assert got.n_tokens == 3
    # "New York" covers two gold tokens: their tag if they agree, else none (spaCy's rule)
    assert got.tag[(got.token == 0) & (got.label == 1)].tolist() == (
        [] if first_gold is None else [labels.index(first_gold)])
    assert got.tag[(got.token == 1) & (got.label == 1)].tolist() == [labels.index("VBZ")]
    assert eg.predicted[1].tag_ == ""   # scored on a copy


def test_bad_arguments_name_them(trained):
    nlp, dev = trained
    with pytest.raises(ValueError, match="component='parser' is not in the pipeline"):
        spacy_scores(nlp, [], "parser")
    with pytest.raises(TypeError, match="nlp must be a spaCy Language"):
        entries_from_spacy("en_core_web_sm", dev)
    other = spacy.blank("en")
    other.add_pipe("sentencizer")
    with pytest.raises(TypeError, match="'sentencizer' is a Sentencizer: a spacy.pipeline"):
        spacy_scores(other, [], "sentencizer")
    with pytest.raises(ValueError, match="threshold"):
        entries_from_spacy(nlp, dev, threshold=1.5)
    assert spacy_scores(nlp, [Doc(nlp.vocab, words=[])])[0].shape == (0, len(
        nlp.get_pipe("tagger").labels))


def _runs(pos, wanted=("PROPN", "NUM")):
    """Maximal runs of the same wanted UPOS, as (start, end, label) spans."""
    out, k = [], 0
    while k < len(pos):
        end = k + 1
        while end < len(pos) and pos[end] == pos[k]:
            end += 1
        if pos[k] in wanted:
            out.append((k, end, pos[k]))
        k = end
    return out


@pytest.fixture(scope="module")
def spancat():
    nlp = spacy.blank("en")
    nlp.add_pipe("spancat", config={"suggester": {"@misc": "spacy.ngram_suggester.v1",
                                                  "sizes": [1, 2]}})
    examples = []
    for s in _sentences(200):
        ref = Doc(nlp.vocab, words=s["words"])
        ref.spans["sc"] = [ref.char_span(ref[a].idx, ref[b - 1].idx + len(ref[b - 1]),
                                         label=lab) for a, b, lab in _runs(s["pos"])]
        examples.append(Example(Doc(nlp.vocab, words=s["words"]), ref))
    return _trained(nlp, examples[:170], examples[170:])


def test_spancat_entries_are_its_scores_and_gold_spans(spancat):
    nlp, dev = spancat
    proc = nlp.get_pipe("spancat")
    entries, spans = spancat_entries(nlp, dev, threshold=0.0)
    indices, scores = proc.predict([eg.predicted for eg in dev])
    assert entries.n_tokens == len(spans) == scores.shape[0]
    assert len(entries) == scores.size   # threshold 0: every (span, label)
    np.testing.assert_array_equal(entries.score.reshape(scores.shape), scores)
    gold = {(k, s.start, s.end, s.label_) for k, eg in enumerate(dev)
            for s in eg.reference.spans["sc"]}
    want = [(int(k), int(a), int(b), proc.labels[t]) in gold
            for (k, a, b), t in zip(spans[entries.token], entries.tag)]
    assert entries.label.tolist() == want and sum(want) > 10
    # what the component sets: the (span, label) pairs at or above its threshold
    docs = list(nlp.pipe(Doc(nlp.vocab, words=[t.text for t in eg.predicted]) for eg in dev))
    predicted = {(k, s.start, s.end, s.label_) for k, d in enumerate(docs) for s in d.spans["sc"]}
    kept = entries.score >= proc.cfg["threshold"]
    assert predicted == {(int(k), int(a), int(b), proc.labels[t]) for (k, a, b), t in
                         zip(spans[entries.token[kept]], entries.tag[kept])}
    assert len(predicted) > 0
    above = spancat_entries(nlp, dev, threshold=0.05)[0]
    assert len(above) == int((scores >= np.float32(0.05)).sum())


def test_spancat_entries_refuses_a_tagger(trained):
    nlp, dev = trained
    with pytest.raises(TypeError, match="a spacy.pipeline.SpanCategorizer is needed"):
        spancat_entries(nlp, dev, "tagger")
