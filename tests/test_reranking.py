"""Re-ranking the top k by calibrated confidence (Jagannatha & Yu 2020, Section 4,
Tables 2 and 4): exact match and span F1 against a brute-force reference, a
calibrated case that must change nothing, and a planted miscalibration that a
forecaster must repair."""
import numpy as np
import pytest

from sparsecal.structured import (decode_spans, rerank_sequences, rerank_spans, span_f1,
                                  softmax_sequence_events, softmax_span_events)

NAMES = ["O", "B-A", "I-A", "B-B", "I-B"]

pytestmark = pytest.mark.usefixtures("one_thread_by_default")


def _tagger(rng, B, N=5, C=len(NAMES)):
    scores = rng.dirichlet(np.ones(C), size=(B, N))
    lengths = rng.integers(1, N + 1, B)
    gold = rng.integers(0, C, (B, N))
    gold[np.arange(N)[None] >= lengths[:, None]] = -1
    return scores, gold, lengths


def _spans_of(tags, length):
    s = decode_spans(np.asarray(tags)[None, :length], NAMES)
    return {(int(a), int(b), int(c)) for a, b, c in zip(s.start, s.length, s.type)}


def _f1(pred, gold):
    c = sum(len(p & g) for p, g in zip(pred, gold))
    n_p, n_g = sum(map(len, pred)), sum(map(len, gold))
    return 2 * c / (n_p + n_g) if n_p + n_g else 0.0


@pytest.mark.parametrize("B", [1, 2, 40])
def test_sequences_match_brute_force(B):
    rng = np.random.default_rng(B)
    scores, gold, lengths = _tagger(rng, B)
    ev = softmax_sequence_events(scores, gold, k=3, lengths=lengths)
    conf = np.round(rng.random(len(ev)), 1)                  # many ties
    r = rerank_sequences(ev, conf, gold, NAMES)
    chosen, before = [], []
    for b in range(B):
        idx = [i for i in range(len(ev)) if ev.sentence[i] == b]
        chosen.append(max(idx, key=lambda i: (conf[i], -ev.rank[i])))
        before.append([i for i in idx if ev.rank[i] == 1][0])
    assert r.chosen.tolist() == chosen
    assert r.exact_match_before == pytest.approx(np.mean([ev.entries.label[i] for i in before]))
    assert r.exact_match_after == pytest.approx(np.mean([ev.entries.label[i] for i in chosen]))
    assert r.n_changed == sum(ev.rank[i] != 1 for i in chosen)
    truth = [_spans_of(gold[b], lengths[b]) for b in range(B)]
    for idx, scores_ in ((before, r.spans_before), (chosen, r.spans_after)):
        pred = [_spans_of(ev.tags[i], lengths[b]) for b, i in enumerate(idx)]
        assert scores_.f1 == pytest.approx(_f1(pred, truth), abs=1e-15)
        assert scores_.n_gold == sum(map(len, truth))


def test_calibrated_order_changes_nothing():
    """A confidence in the model's own order (here its probabilities, or any
    increasing map of them) re-ranks nothing."""
    rng = np.random.default_rng(1)
    scores, gold, lengths = _tagger(rng, 60)
    ev = softmax_sequence_events(scores, gold, k=4, lengths=lengths)
    for conf in (ev.entries.score, np.sqrt(ev.entries.score)):
        r = rerank_sequences(ev, conf, gold, NAMES)
        assert r.n_changed == 0 and (ev.rank[r.chosen] == 1).all()
        assert r.exact_match_after == r.exact_match_before
        assert r.spans_after == r.spans_before


def _planted(rng, n, flip_rate=0.4):
    """Sentences of 3 tokens whose gold is the top-1 sequence, except where
    ``flip``: there the gold tag of token 1 scores 0.35 against another tag's
    0.45, so the gold sequence is exactly the rank-2 one."""
    C = len(NAMES)
    gold = rng.integers(0, C, (n, 3))
    other = (gold[:, 1] + rng.integers(1, C, n)) % C
    flip = rng.random(n) < flip_rate
    scores = np.full((n, 3, C), 0.4 / (C - 1))
    scores[np.arange(n)[:, None], np.arange(3)[None], gold] = 0.6
    scores[flip, 1] = 0.2 / (C - 2)
    scores[flip, 1, gold[flip, 1]] = 0.35
    scores[flip, 1, other[flip]] = 0.45
    return scores, gold, flip


def test_forecaster_repairs_a_planted_miscalibration():
    from sparsecal.calibration import Forecaster
    pytest.importorskip("sklearn", reason="the forecaster is fitted by scikit-learn")
    rng = np.random.default_rng(2)

    def events(n):
        scores, gold, flip = _planted(rng, n)
        ev = softmax_sequence_events(scores, gold, k=3)
        return ev, gold, flip, {**ev.features, "mean": ev.entries.score,
                                "flip": flip[ev.sentence].astype(float)}

    dev, _, _, dev_features = events(600)
    test, gold, flip, test_features = events(400)
    conf = Forecaster(max_iter=30, min_samples_leaf=5).fit(
        dev_features, dev.entries.label).predict(test_features)
    r = rerank_sequences(test, conf, gold, NAMES)
    assert r.exact_match_before == pytest.approx(1 - flip.mean())
    assert r.exact_match_after == 1.0 and r.spans_after.f1 == 1.0
    assert r.n_changed == flip.sum()
    assert r.spans_before.f1 < 0.95
    # the model's own probabilities keep the wrong order
    same = rerank_sequences(test, test.entries.score, gold, NAMES)
    assert same.exact_match_after == same.exact_match_before


@pytest.mark.parametrize("B", [1, 2, 40])
def test_spans_match_brute_force(B):
    rng = np.random.default_rng(10 + B)
    scores, gold, lengths = _tagger(rng, B)
    ev = softmax_span_events(scores, gold, NAMES, k=3, lengths=lengths)
    conf = np.round(rng.random(len(ev)), 1)
    truth = [_spans_of(gold[b], lengths[b]) for b in range(B)]

    def spans(keep):
        out = [set() for _ in range(B)]
        for i in np.flatnonzero(keep):
            out[ev.sentence[i]].add((int(ev.start[i]), int(ev.length[i]), int(ev.type[i])))
        return out
    for cutoff in (0.0, 0.5, 1.0):
        r = rerank_spans(ev, conf, gold, NAMES, cutoff=cutoff)
        assert r.spans_after.f1 == pytest.approx(_f1(spans(conf >= cutoff), truth), abs=1e-15)
        assert r.spans_before.f1 == pytest.approx(_f1(spans(ev.rank == 1), truth), abs=1e-15)
        assert r.n_changed == int(((conf >= cutoff) != (ev.rank == 1)).sum())
        assert r.exact_match_after is None
    top1 = [_spans_of(ev_tags, lengths[b]) for b, ev_tags in enumerate(
        np.take_along_axis(np.argmax(scores, 2), np.arange(5)[None].repeat(B, 0), 1))]
    assert rerank_spans(ev, conf, gold, NAMES).spans_before.f1 == pytest.approx(_f1(top1, truth))


def test_span_f1_values():
    g = decode_spans([[1, 2, 0, 3, 0]], NAMES)
    assert span_f1(g, g, 5).to_dict() == {"precision": 1.0, "recall": 1.0, "f1": 1.0,
                                          "n_pred": 2, "n_gold": 2, "n_correct": 2}
    p = decode_spans([[1, 0, 0, 3, 4]], NAMES)               # A wrong length, B longer
    assert span_f1(p, g, 5).f1 == 0.0
    empty = decode_spans([[0, 0, 0, 0, 0]], NAMES)
    s = span_f1(empty, g, 5)
    assert (s.precision, s.recall, s.f1) == (0.0, 0.0, 0.0)
    assert span_f1(empty, empty, 5).f1 == 0.0


def test_bad_input_is_named():
    rng = np.random.default_rng(3)
    scores, gold, lengths = _tagger(rng, 5)
    seq = softmax_sequence_events(scores, gold, k=2, lengths=lengths)
    spans = softmax_span_events(scores, gold, NAMES, k=2, lengths=lengths)
    conf = np.full(len(seq), 0.5)
    before = conf.copy()
    cases = [
        (lambda: rerank_sequences("x", conf), TypeError, "events must be an Events"),
        (lambda: rerank_sequences(spans, np.full(len(spans), 0.5)), ValueError,
         "must be sequence events"),
        (lambda: rerank_spans(seq, conf, gold, NAMES), ValueError, "must be span events"),
        (lambda: rerank_sequences(seq, conf[:-1]), ValueError, "confidence has"),
        (lambda: rerank_sequences(seq, conf + 1), ValueError, "confidence must lie in"),
        (lambda: rerank_sequences(seq, conf, gold), ValueError, "gold and tag_names"),
        (lambda: rerank_sequences(seq, conf, gold[:2], NAMES), ValueError,
         r"gold must have shape \(5, N\)"),
        (lambda: rerank_spans(spans, np.full(len(spans), 0.5), gold, NAMES, cutoff=1.5),
         ValueError, "cutoff"),
        (lambda: span_f1("a", decode_spans(gold, NAMES), 5), TypeError, "pred must be a Spans"),
    ]
    for call, exc, message in cases:
        with pytest.raises(exc, match=message):
            call()
    np.testing.assert_array_equal(conf, before)
