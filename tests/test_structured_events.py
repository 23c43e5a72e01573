"""Events of interest (issue 14, item 1): top-k sequence and span events of a CRF
and of a softmax tagger, against brute-force enumeration of every sequence
(C^N = 81 for C = 3, N = 4), and span decoding against a reference state machine."""
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import sparsecal as sc  # noqa: E402
from sparsecal.structured import (  # noqa: E402
    Events, crf_event_probabilities, crf_sequence_events, crf_span_events, decode_spans,
    parse_tag_names, softmax_event_probabilities, softmax_sequence_events,
    softmax_span_events)

BIO = ["O", "B-X", "I-X"]
SCHEME_NAMES = {"bio": ["O", "B-X", "I-X", "B-Y", "I-Y"],
                "bioes": ["O", "B-X", "I-X", "E-X", "S-X", "B-Y", "E-Y"],
                "io": ["O", "I-X", "I-Y"]}
OPEN = {"io": "I", "bio": "BI", "bioes": "BI"}
CONT = {"io": "I", "bio": "I", "bioes": "IE"}


def ref_spans(seq, names, scheme):
    """Spans (start, length, type) of one sequence, by a plain state machine."""
    spans, prev = [], None                   # prev: (prefix, type) at t - 1
    for t, tag in enumerate(seq):
        if tag < 0 or names[tag] == "O":
            prev = None
            continue
        p, typ = names[tag].split("-", 1)
        if prev is not None and prev[1] == typ and prev[0] in OPEN[scheme] \
                and p in CONT[scheme]:
            s, l, _ = spans[-1]
            spans[-1] = (s, l + 1, typ)
        else:
            spans.append((t, 1, typ))
        prev = (p, typ)
    return spans


def brute(em, T, start=None, end=None, allowed=None, L=None):
    """Every sequence of one sentence with its probability (float64)."""
    em = np.asarray(em, np.float64)
    L = em.shape[0] if L is None else L
    C = em.shape[1]
    T = np.where(allowed, T, -np.inf) if allowed is not None else np.asarray(T, np.float64)
    seqs = np.array(list(itertools.product(range(C), repeat=L)))
    score = em[np.arange(L), seqs].sum(1) + T[seqs[:, :-1], seqs[:, 1:]].sum(1)
    if start is not None:
        score += start[seqs[:, 0]]
    if end is not None:
        score += end[seqs[:, -1]]
    with np.errstate(invalid="ignore"):
        p = np.exp(score - np.logaddexp.reduce(score))
    return seqs, p


def random_crf(rng, B=3, N=4, C=3, constrained=True):
    em = rng.normal(size=(B, N, C)) * 1.5
    T = rng.normal(size=(C, C))
    start, end = rng.normal(size=C), rng.normal(size=C)
    allowed = np.ones((C, C), bool)
    if constrained:
        allowed[0, 2] = False                # BIO: O -> I-X forbidden
    lengths = rng.integers(1, N + 1, size=B)
    lengths[0] = N
    return em, T, start, end, allowed, lengths


# ---- span decoding ------------------------------------------------------- #

@pytest.mark.parametrize("scheme", sorted(SCHEME_NAMES))
def test_decode_spans_matches_reference_state_machine(scheme):
    names = SCHEME_NAMES[scheme]
    rng = np.random.default_rng(len(scheme))
    tags = rng.integers(-1, len(names), size=(200, 7))
    lengths = rng.integers(1, 8, size=200)
    spans = decode_spans(tags, names, scheme, lengths)
    got = list(zip(spans.sentence.tolist(), spans.start.tolist(), spans.length.tolist(),
                   [spans.type_names[t] for t in spans.type]))
    want = [(b, s, l, typ) for b in range(200)
            for s, l, typ in ref_spans(tags[b, :lengths[b]], names, scheme)]
    assert got == want


@pytest.mark.parametrize("scheme,seq,want", [
    ("bioes", ["B-X", "I-X", "E-X", "S-X"], [(0, 3), (3, 1)]),
    ("bioes", ["B-X", "E-X", "E-X"], [(0, 2), (2, 1)]),
    ("bioes", ["S-X", "I-X", "E-X"], [(0, 1), (1, 2)]),
    ("bio", ["I-X", "I-X", "B-X", "O", "I-X"], [(0, 2), (2, 1), (4, 1)]),
    ("bio", ["B-X", "I-Y"], [(0, 1), (1, 1)]),
    ("io", ["I-X", "I-X", "I-Y", "O", "I-Y"], [(0, 2), (2, 1), (4, 1)]),
])
def test_decode_spans_known_cases(scheme, seq, want):
    names = sorted(set(seq) | {"O"})
    spans = decode_spans([[names.index(t) for t in seq]], names, scheme)
    assert list(zip(spans.start.tolist(), spans.length.tolist())) == want


def test_decode_spans_tiny_and_empty():
    spans = decode_spans([[1]], BIO)
    assert (spans.start.tolist(), spans.length.tolist()) == ([0], [1])
    assert len(decode_spans([[0, 0]], BIO)) == 0
    assert len(decode_spans([[1, 2]], BIO, lengths=[1])) == 1
    assert decode_spans([[1, 2]], BIO, lengths=[1]).length.tolist() == [1]


@pytest.mark.parametrize("call,err,match", [
    (lambda: decode_spans([[0, 1]], BIO, "bilou"), ValueError, "scheme"),
    (lambda: decode_spans([[0, 1]], ["O", "B-X", "E-X"], "bio"), ValueError,
     r"tag_names\[2\] = 'E-X'"),
    (lambda: decode_spans([[0, 3]], BIO), ValueError, r"tags\[0, 1\] = 3"),
    (lambda: decode_spans([0, 1], BIO), ValueError, "2-dimensional"),
    (lambda: decode_spans([[0.0, 1.0]], BIO), TypeError, "integer"),
    (lambda: decode_spans([[0, 1]], BIO, lengths=[3]), ValueError, r"lengths\[0\] = 3"),
    (lambda: parse_tag_names("O", "bio"), TypeError, "sequence of strings"),
    (lambda: parse_tag_names(["O", "B-"], "bio"), ValueError, "tag_names"),
])
def test_decode_spans_bad_input(call, err, match):
    with pytest.raises(err, match=match):
        call()


# ---- sequence events ----------------------------------------------------- #

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_crf_sequence_events_match_brute_force(dtype):
    rng = np.random.default_rng(1)
    em, T, start, end, allowed, lengths = random_crf(rng)
    gold = rng.integers(0, 3, size=(3, 4))
    k = 5
    ev = crf_sequence_events(em.astype(dtype), T.astype(dtype), gold, k, lengths=lengths,
                             start=start.astype(dtype), end=end.astype(dtype),
                             allowed=allowed)
    tol = 1e-9 if dtype == np.float64 else 2e-6
    for b in range(3):
        L = lengths[b]
        seqs, p = brute(em[b, :L], T, start, end, allowed, L)
        order = np.argsort(-p, kind="stable")[:min(k, int((p > 0).sum()))]
        mine = np.flatnonzero(ev.sentence == b)
        assert ev.rank[mine].tolist() == list(range(1, len(order) + 1))
        np.testing.assert_allclose(ev.entries.score[mine], p[order], rtol=0, atol=tol)
        for i, j in zip(mine, order):
            assert ev.tags[i, :L].tolist() == seqs[j].tolist()
            assert ev.entries.label[i] == int((seqs[j] == gold[b, :L]).all())
        assert (ev.length[mine] == L).all() and (ev.start[mine] == 0).all()
    assert ev.entries.n_tags == k and ev.type.tolist() == (ev.rank - 1).tolist()
    assert ev.entries.token.tolist() == ev.sentence.tolist()


def test_crf_sequence_events_labels_plant_gold_and_fewer_sequences():
    rng = np.random.default_rng(2)
    em, T, start, end, allowed, lengths = random_crf(rng, B=2, N=2, C=2, constrained=False)
    allowed = np.array([[False, True], [True, True]])      # 3 sequences of length 2
    best = crf_sequence_events(em, T, -np.ones((2, 2), int), 1, allowed=allowed)
    gold = best.tags.copy()
    ev = crf_sequence_events(em, T, gold, 4, allowed=allowed)
    assert ev.rank.tolist() == [1, 2, 3, 1, 2, 3]           # no 4th sequence
    assert ev.entries.label.tolist() == [1, 0, 0, 1, 0, 0]
    np.testing.assert_allclose(np.bincount(ev.sentence, ev.entries.score), 1.0)
    assert best.entries.label.tolist() == [0, 0]            # gold -1 matches nothing


def test_softmax_sequence_events_match_brute_force():
    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.ones(3), size=(4, 4))
    probs[1, 2] = [0.5, 0.5, 0.0]
    lengths = np.array([4, 2, 1, 3])
    gold = rng.integers(0, 3, size=(4, 4))
    ev = softmax_sequence_events(probs, gold, k=4, lengths=lengths)
    for b in range(4):
        L = lengths[b]
        seqs = np.array(list(itertools.product(range(3), repeat=L)))
        p = probs[b, np.arange(L), seqs].prod(1)
        want = np.sort(p)[::-1][:4]
        want = want[want > 0]
        mine = np.flatnonzero(ev.sentence == b)
        np.testing.assert_allclose(ev.entries.score[mine], want, rtol=1e-12)
        for i in mine:
            assert ev.entries.label[i] == int((ev.tags[i, :L] == gold[b, :L]).all())
            assert np.isclose(probs[b, np.arange(L), ev.tags[i, :L]].prod(),
                              ev.entries.score[i])


def test_sequence_events_feed_metrics_and_grouped_calibrators():
    rng = np.random.default_rng(4)
    em, T, start, end, allowed, lengths = random_crf(rng, B=40, N=4)
    gold = crf_sequence_events(em, T, -np.ones((40, 4), int), 1, lengths=lengths).tags
    ev = crf_sequence_events(em, T, np.where(rng.random((40, 4)) < 0.9, gold, 0), 3,
                             lengths=lengths)
    assert float(sc.smce(ev.entries).value) == float(sc.calibration_error(
        ev.entries.score, ev.entries.label, n_bins=10).value)
    groups = sc.TagGroups.per_tag(3)                      # one group per rank
    cal = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups, min_entries=1)
    out = cal.fit(ev.entries).transform(ev.entries).score
    for r in (1, 2, 3):
        one = ev.rank == r
        alone = sc.IsotonicCalibrator().fit(ev.entries.score[one], ev.entries.label[one])
        np.testing.assert_allclose(out[one], alone.predict(ev.entries.score[one]))


# ---- span events --------------------------------------------------------- #

def brute_span_prob(seqs, p, s, tags):
    l = len(tags)
    return p[(seqs[:, s:s + l] == tags).all(1)].sum()


@pytest.mark.parametrize("normalize", [False, True])
def test_crf_span_events_match_brute_force(normalize):
    rng = np.random.default_rng(5)
    em, T, start, end, allowed, lengths = random_crf(rng, B=4, N=4)
    gold = rng.integers(0, 3, size=(4, 4))
    k = 3
    ev = crf_span_events(em, T, gold, BIO, k=k, lengths=lengths, start=start, end=end,
                         allowed=allowed, normalize=normalize)
    for b in range(4):
        L = lengths[b]
        seqs, p = brute(em[b, :L], T, start, end, allowed, L)
        top = seqs[np.argsort(-p, kind="stable")[:k]]
        want = {}
        for r, seq in enumerate(top, 1):
            for s, l, typ in ref_spans(seq, BIO, "bio"):
                want.setdefault((s, l), (r, tuple(seq[s:s + l])))
        gold_spans = {(s, l) for s, l, _ in ref_spans(gold[b, :L], BIO, "bio")}
        mine = np.flatnonzero(ev.sentence == b)
        got = {(ev.start[i], ev.length[i]): i for i in mine}
        assert set(got) == set(want)
        for key, i in got.items():
            r, tags = want[key]
            assert ev.rank[i] == r and tuple(ev.tags[i, :key[1]]) == tags
            q = brute_span_prob(seqs, p, key[0], np.array(tags))
            if normalize:
                q = q ** (1 / key[1])
            assert abs(ev.entries.score[i] - q) < 1e-9
            assert ev.entries.label[i] == int(key in gold_spans)


def test_softmax_span_events_match_product_of_token_probabilities():
    names = SCHEME_NAMES["bioes"]
    rng = np.random.default_rng(6)
    probs = rng.dirichlet(np.ones(len(names)) * 0.3, size=(30, 5))
    gold = rng.integers(0, len(names), size=(30, 5))
    ev = softmax_span_events(probs, gold, names, k=2, scheme="bioes")
    assert len(ev) > 20
    for i in range(len(ev)):
        b, s, l = ev.sentence[i], ev.start[i], ev.length[i]
        assert np.isclose(ev.entries.score[i],
                          probs[b, np.arange(s, s + l), ev.tags[i, :l]].prod())
        truth = {(x[0], x[1], x[2]) for x in ref_spans(gold[b], names, "bioes")}
        assert ev.entries.label[i] == int((s, l, ev.type_names[ev.type[i]]) in truth)
    norm = softmax_span_events(probs, gold, names, k=2, scheme="bioes", normalize=True)
    np.testing.assert_allclose(norm.entries.score, ev.entries.score ** (1 / ev.length))


def test_event_probabilities_rescore_events_exactly():
    rng = np.random.default_rng(7)
    em, T, start, end, allowed, lengths = random_crf(rng)
    gold = rng.integers(0, 3, size=(3, 4))
    seq = crf_sequence_events(em, T, gold, 3, lengths=lengths, allowed=allowed)
    np.testing.assert_allclose(
        crf_event_probabilities(seq, em, T, lengths=lengths, allowed=allowed),
        seq.entries.score, rtol=1e-9)
    span = crf_span_events(em, T, gold, BIO, 2, lengths=lengths, allowed=allowed)
    em2 = em + rng.normal(size=em.shape)                  # another "sample"
    p2 = crf_event_probabilities(span, em2, T, lengths=lengths, allowed=allowed)
    for i in range(len(span)):
        b, s, l = span.sentence[i], span.start[i], span.length[i]
        seqs, p = brute(em2[b, :lengths[b]], T, None, None, allowed, lengths[b])
        assert abs(p2[i] - brute_span_prob(seqs, p, s, span.tags[i, :l])) < 1e-9
    probs = rng.dirichlet(np.ones(3), size=(3, 4))
    np.testing.assert_allclose(
        softmax_event_probabilities(span, probs),
        [probs[b, np.arange(s, s + l), span.tags[i, :l]].prod()
         for i, (b, s, l) in enumerate(zip(span.sentence, span.start, span.length))])


def test_inputs_are_not_modified():
    rng = np.random.default_rng(8)
    probs = rng.dirichlet(np.ones(3), size=(2, 3))
    gold = rng.integers(0, 3, size=(2, 3))
    copies = probs.copy(), gold.copy()
    softmax_span_events(probs, gold, BIO, k=2)
    np.testing.assert_array_equal(probs, copies[0])
    np.testing.assert_array_equal(gold, copies[1])


@pytest.mark.parametrize("call,err,match", [
    (lambda p, g: softmax_sequence_events(p, g[:1]), ValueError, r"gold has shape"),
    (lambda p, g: softmax_sequence_events(p, g + 3), ValueError, r"gold\[0, 0\]"),
    (lambda p, g: softmax_sequence_events(p * 2, g), ValueError, "scores must lie"),
    (lambda p, g: softmax_sequence_events(p[0], g), ValueError, "3-dimensional"),
    (lambda p, g: softmax_sequence_events(p, g, k=0), ValueError, "k must be"),
    (lambda p, g: softmax_sequence_events(p, g, lengths=[1, 4]), ValueError, "lengths"),
    (lambda p, g: softmax_span_events(p, g, BIO[:2]), ValueError, "tag_names has 2"),
    (lambda p, g: softmax_span_events(p, g, BIO, scheme="x"), ValueError, "scheme"),
    (lambda p, g: softmax_event_probabilities("ev", p), TypeError, "Events"),
    (lambda p, g: crf_sequence_events(p, np.zeros((3, 3)), g.astype(float)), TypeError,
     "gold"),
])
def test_bad_input(call, err, match):
    rng = np.random.default_rng(9)
    probs = rng.dirichlet(np.ones(3), size=(2, 3))
    gold = np.zeros((2, 3), int)
    with pytest.raises(err, match=match):
        call(probs, gold)
