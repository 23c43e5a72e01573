"""The MC-dropout span example (examples/ud_ewt_spans_dropout.py, Jagannatha & Yu
2020 Sections 2.6, 3.1-3.2 and 4) on a slice of UD English-EWT: a dropout CRF
tagger trained one epoch on 300 sentences, S = 3 MC-dropout samples, top 3.

The events, their labels and their MC-dropout features are checked against
brute force: gold spans decoded by a plain loop, every tag sequence of the short
sentences enumerated under each sample's potentials."""
import copy
import itertools

import numpy as np
import pytest

from _examples import example
from _shared_data import require

torch = pytest.importorskip("torch", reason="the dropout tagger is a PyTorch model")
pytest.importorskip("sklearn", reason="the forecaster is fitted by scikit-learn")
UD_EWT = require("ud_ewt")

LIMIT, S, K = 300, 3, 3             # sentences per split, samples, top k
FAST = dict(epochs=1, lr=1e-2, batch_size=8)        # one epoch that finds names


@pytest.fixture(scope="module")
def ex():
    with example("ud_ewt_spans_dropout") as namespace:
        yield namespace


@pytest.fixture(scope="module")
def trained(ex):
    torch.set_num_threads(1)
    splits, vocab = ex["load"](UD_EWT, LIMIT)
    model = ex["train_tagger"](*splits["train"], vocab, log=lambda *a: None, **FAST)
    ids, gold, lengths = splits["dev"]
    events, samples, det = ex["mc_events"](model, ids, gold, lengths, k=K, n_samples=S,
                                           seed=0)
    return dict(model=model, splits=splits, ids=ids, gold=gold, lengths=lengths,
                events=events, samples=samples, det=det)


def test_vocabulary_lookup(ex):
    vocab = np.array(["a", "b"])
    assert ex["lookup"](np.array(["a", "zz", "b", ""]), vocab).tolist() == [2, 1, 3, 1]
    assert ex["lookup"](np.array(["a"]), np.array([], dtype=str)).tolist() == [1]
    keys = ex["token_keys"](np.array(["The", "Obama", "runs"]), np.array([1, 2]))
    assert keys["suffix"].tolist() == ["the", "ama", "uns"]
    assert (keys["shape"] % 2).tolist() == [1, 1, 0]       # sentence-initial flag


def test_mc_samples_differ_and_dropout_off_gives_the_deterministic_output(trained):
    model, ids, samples, det = trained["model"], trained["ids"], trained["samples"], \
        trained["det"]
    import sparsecal as sc
    assert samples.shape == (S,) + tuple(det.shape) and not model.training
    for a, b in itertools.combinations(range(S), 2):
        assert (samples[a] - samples[b]).abs().max() > 1e-3
    again = sc.structured.mc_dropout_samples(model, ids, n_samples=S, seed=0)
    assert torch.equal(again, samples)                  # seeded: reproducible
    off = copy.deepcopy(model)
    for m in off.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    same = sc.structured.mc_dropout_samples(off, ids, n_samples=S, seed=0)
    for s in range(S):
        torch.testing.assert_close(same[s], det, rtol=0, atol=1e-6)
    with torch.no_grad():                                # padding changes nothing
        alone = model(ids[3:4, :trained["lengths"][3]])[0]
    torch.testing.assert_close(alone, det[3, :trained["lengths"][3]], rtol=0, atol=1e-5)


def _gold_spans(gold, lengths):
    """{(sentence, start, length)} of BIO gold, by a plain loop."""
    out = set()
    for b, L in enumerate(lengths):
        t = 0
        while t < L:
            if gold[b, t] > 0:
                u = t + 1
                while u < L and gold[b, u] == 2:
                    u += 1
                out.add((b, t, u - t))
                t = u
            else:
                t += 1
    return out


def test_event_labels_are_exact_match_with_gold(trained):
    gold, lengths = trained["gold"], trained["lengths"]
    spans, _, _ = trained["events"]["span"]
    truth = _gold_spans(gold, lengths)
    assert len(spans) > 20 and 0 < spans.entries.label.sum() < len(spans)
    want = [(b, s, l) in truth for b, s, l in zip(spans.sentence, spans.start, spans.length)]
    assert spans.entries.label.astype(bool).tolist() == want
    seqs, _, _ = trained["events"]["sequence"]
    want = [bool((seqs.tags[i, :L] == gold[b, :L]).all())
            for i, (b, L) in enumerate(zip(seqs.sentence, lengths[seqs.sentence]))]
    assert seqs.entries.label.astype(bool).tolist() == want
    assert np.bincount(seqs.sentence[seqs.rank == 1]).tolist() == [1] * len(lengths)


def _enumerated(em, trans, start, end, L, C=3):
    """Every tag sequence of a sentence of length L and its probability."""
    ys = np.array(list(itertools.product(range(C), repeat=L)))
    score = em[np.arange(L), ys].sum(1) + trans[ys[:, :-1], ys[:, 1:]].sum(1) \
        + start[ys[:, 0]] + end[ys[:, -1]]
    return ys, np.exp(score - np.logaddexp.reduce(score))


def test_features_are_the_brute_force_per_sample_confidences(trained):
    """Each event's probability under each sample (and dropout off), by
    enumerating every sequence of the sentences of length <= 7: the feature
    'mean' is their mean, p_low / p_high their 10th / 90th percentiles."""
    model, lengths = trained["model"], trained["lengths"]
    pot = [p.detach().double().numpy() for p in (model.transitions, model.start, model.end)]
    outputs = [trained["det"]] + list(trained["samples"])
    checked = 0
    for kind in ("span", "sequence"):
        ev, feats, P = trained["events"][kind]
        for i in np.flatnonzero(lengths[ev.sentence] <= 7):
            b, s, l = ev.sentence[i], ev.start[i], ev.length[i]
            per = []
            for out in outputs:
                ys, p = _enumerated(out[b, :lengths[b]].double().numpy(), *pot, lengths[b])
                per.append(p[(ys[:, s:s + l] == ev.tags[i, :l]).all(1)].sum() ** (1 / l))
            per = np.array(per)
            assert feats["plain"]["p"][i] == pytest.approx(per[0], abs=1e-5)
            np.testing.assert_allclose(P[:, i], per[1:], atol=1e-5)
            assert feats["mc"]["mean"][i] == pytest.approx(per[1:].mean(), abs=1e-5)
            for col, q in (("p_low", 10), ("p_high", 90)):
                assert feats["mc"][col][i] == pytest.approx(np.percentile(per[1:], q), abs=1e-5)
            assert feats["mc"]["rank"][i] == ev.rank[i]
            assert feats["p_var"]["p"][i] == feats["plain"]["p"][i]
            assert feats["p_var"]["std"][i] == pytest.approx(per[1:].std(), abs=1e-5)
            checked += 1
    assert checked > 30


def test_top_sequence_is_the_viterbi_path_of_the_mc_mean(trained):
    from sparsecal import crf
    seqs = trained["events"]["sequence"][0]
    pot = trained["model"].potentials(trained["samples"].mean(0), trained["lengths"])
    paths, _ = crf.viterbi(**pot)
    top = np.flatnonzero(seqs.rank == 1)
    for i in top:
        L = seqs.length[i]
        assert seqs.tags[i, :L].tolist() == paths[seqs.sentence[i], :L].tolist()


def test_reranked_sequences_are_a_permutation_of_the_top_k(trained):
    import sparsecal as sc
    seqs = trained["events"]["sequence"][0]
    conf = np.random.default_rng(0).random(len(seqs))
    r = sc.structured.rerank_sequences(seqs, conf)
    order = np.lexsort((seqs.rank, -conf, seqs.sentence))
    assert r.chosen.tolist() == [order[seqs.sentence[order] == b][0]
                                 for b in range(len(trained["lengths"]))]
    for b in range(len(trained["lengths"])):
        mine = np.flatnonzero(seqs.sentence == b)
        assert sorted(seqs.rank[mine].tolist()) == list(range(1, mine.shape[0] + 1))
        assert conf[r.chosen[b]] == conf[mine].max()
        assert len({tuple(t) for t in seqs.tags[mine]}) == mine.shape[0]   # distinct
    assert r.exact_match_before == pytest.approx(seqs.entries.label[seqs.rank == 1].mean())
    assert r.exact_match_after == pytest.approx(seqs.entries.label[r.chosen].mean())


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_study_on_a_slice(ex, trained, tmp_path):
    """Steps 3-5 (events, forecasters, ECE, re-ranking, figures) for the tagger."""
    s = ex["study"](trained["model"], trained["splits"], tmp_path / "out", tmp_path / "fig",
                    n_samples=S, k_max=K, log=lambda *a: None)
    _, gold, lengths = ex["name_spans"](UD_EWT, "test", limit=LIMIT)
    n_gold = int((gold == 1).sum())              # every PROPN run starts with B-NAME
    test_seq = s["test_sequence_events"]
    assert test_seq["rank1"] == LIMIT
    for kind in ("span", "sequence"):
        res = s[kind]
        for choice in res["heuristic_k"].values():
            assert choice["k"] in (1, 2, 3) and len(choice["ece"]) == 3
        for v in res["ece_top1"].values():
            assert 0 <= v <= 1
        before = {r["span_f1_before"]["f1"] for r in res["reranking"].values()}
        assert len(before) == 1                  # the same rank-1 output for every forecaster
        for r in res["reranking"].values():
            assert r["span_f1_before"]["n_gold"] == r["span_f1_after"]["n_gold"] == n_gold
            if kind == "sequence":
                assert r["exact_match_before"] == pytest.approx(
                    test_seq["rank1_correct"] / test_seq["rank1"])
                gain = (r["exact_match_after"] - r["exact_match_before"]) * LIMIT
                assert r["made_right"] - r["made_wrong"] == round(gain)
                assert r["made_right"] + r["made_wrong"] <= r["n_changed"]
                assert 0 < r["mcnemar_p"] <= 1
    assert s["viterbi_span_f1"]["test"]["n_gold"] == n_gold
    assert (tmp_path / "out" / "summary.json").is_file()
    assert sorted(p.name for p in (tmp_path / "fig").iterdir()) == [
        "ud_ewt_dropout_sequences.png", "ud_ewt_dropout_spans.png"]


def test_ece_and_span_reranking_by_hand(ex, trained):
    """The example's ECE (J&Y eq. 4, 20 fixed bins) and span F1 after the
    cutoff, written out."""
    spans = trained["events"]["span"][0]
    conf = np.random.default_rng(1).random(len(spans))
    results, corp, reranked = ex["evaluate"]("span", spans, {"forecaster, random": conf},
                                             trained["gold"])
    top = spans.rank == 1
    c, y = conf[top], spans.entries.label[top]
    b = np.minimum((c * 20).astype(int), 19)
    want = sum(abs(y[b == i].mean() - c[b == i].mean()) * (b == i).sum()
               for i in range(20) if (b == i).any()) / c.shape[0]
    r = results["forecaster, random"]
    assert r.value == pytest.approx(want, abs=1e-12)
    assert 0 <= r.ci_low < r.ci_high <= 1
    log_loss = -np.mean(y * np.log(c) + (1 - y) * np.log(1 - c))
    assert corp["forecaster, random"].score == pytest.approx(log_loss, rel=1e-12)
    truth = _gold_spans(trained["gold"], trained["lengths"])
    for when, keep in (("before", top), ("after", conf >= 0.5)):
        pred = set(zip(spans.sentence[keep], spans.start[keep], spans.length[keep]))
        f1 = 2 * len(pred & truth) / (len(pred) + len(truth))
        got = getattr(reranked["forecaster, random"], f"spans_{when}")
        assert got.f1 == pytest.approx(f1, abs=1e-12)
