"""``sparsecal events`` (issue 14, item 8): every number the verb prints or writes
equals the library call on the same arrays (events against brute-force enumeration
of every tag sequence of a tiny CRF); bad input exits 2 with one line naming the
option or file, and writes nothing. The readers it adds (sparsecal.io:
load_potentials, load_lengths, load_gold_sentences, pad_sentences) are tested here
too."""
import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sklearn")

import sparsecal as sc  # noqa: E402
from sparsecal.calibration import Forecaster, heuristic_k  # noqa: E402
from sparsecal.cli.main import main  # noqa: E402
from sparsecal.io import (load_entries, load_gold_sentences, load_lengths,  # noqa: E402
                          load_potentials, pad_sentences)
from sparsecal.structured import (crf_sequence_events, crf_span_events,  # noqa: E402
                                  rerank_sequences, rerank_spans, softmax_sequence_events,
                                  softmax_span_events)
from test_structured_events import brute, random_crf, ref_spans  # noqa: E402

NAMES = ["O", "B-X", "I-X"]


def pad(flat, lengths, fill):
    """pad_sentences by a loop over sentences (the reference)."""
    out = np.full((len(lengths), max(lengths)) + flat.shape[1:], fill, flat.dtype)
    at = 0
    for i, n in enumerate(lengths):
        out[i, :n] = flat[at:at + n]
        at += n
    return out


class Corpus:
    """A tiny CRF and a softmax tagger's outputs for B sentences, and their files."""

    def __init__(self, root, seed, B=8, N=4, dtype=np.float64):
        rng = np.random.default_rng(seed)
        self.root = root
        em, T, start, end, allowed, lengths = random_crf(rng, B=B, N=N)
        self.crf = dict(emissions=em.astype(dtype), transitions=T.astype(dtype),
                        start=start.astype(dtype), end=end.astype(dtype), allowed=allowed)
        self.lengths = lengths
        n = int(lengths.sum())
        self.gold_flat = rng.integers(0, 3, size=n)
        if seed % 2:      # plant the Viterbi path in half the sentences: positives
            for b in range(0, B, 2):
                seqs, p = brute(em[b, :lengths[b]], T, start, end, allowed, lengths[b])
                at = lengths[:b].sum()
                self.gold_flat[at:at + lengths[b]] = seqs[np.argmax(p)]
        self.gold = pad(self.gold_flat, lengths, -1)
        self.probs_flat = rng.dirichlet(np.full(3, 0.5), size=n).astype(dtype)
        self.probs = pad(self.probs_flat, lengths, 0.0)
        np.savez(self.p("crf.npz"), lengths=lengths, **self.crf)
        np.save(self.p("gold.npy"), self.gold_flat)
        np.save(self.p("probs.npy"), self.probs_flat)
        np.savetxt(self.p("lengths.txt"), lengths, fmt="%d")
        with open(self.p("tags.json"), "w") as f:
            json.dump({t: i for i, t in enumerate(NAMES)}, f)
        sentences = np.split(self.gold_flat, np.cumsum(lengths)[:-1])
        with open(self.p("gold.conll"), "w") as f:
            f.write("\n".join("\n".join(f"w{t} {NAMES[g]}" for t, g in enumerate(s)) + "\n"
                              for s in sentences))

    def p(self, name):
        return os.path.join(self.root, name)


@pytest.fixture
def corpus(tmp_path):
    return Corpus(str(tmp_path), seed=1)


@pytest.fixture
def dev(tmp_path):
    (tmp_path / "dev").mkdir()
    return Corpus(str(tmp_path / "dev"), seed=3, B=60)


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


def per_type(entries, ev):
    return sc.evaluate(entries, sc.TagGroups.per_tag(ev.entries.n_tags), ci=None,
                       top_label=True)


def as_dict(result):
    return json.loads(result.to_json())


def assert_same_entries(got, want):
    for name in ("score", "tag", "label", "token"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    assert (got.n_tags, got.n_tokens) == (want.n_tags, want.n_tokens)


# ---- events, their entries and their table -------------------------------- #

def test_crf_sequences_equal_the_library_and_brute_force(corpus, capsys):
    c = corpus
    out = run(capsys, "events", "--potentials", c.p("crf.npz"), "--gold", c.p("gold.npy"),
              "--k", 3, "-o", c.p("ev.npz"), "--json", c.p("ev.json"))
    want = crf_events(c, 3)
    got = load_entries(c.p("ev.npz"))
    assert_same_entries(got, want.entries)
    # each event against enumerating every sequence of its sentence
    for b in range(len(c.lengths)):
        seqs, p = brute(c.crf["emissions"][b, :c.lengths[b]], c.crf["transitions"],
                        c.crf["start"], c.crf["end"], c.crf["allowed"], c.lengths[b])
        order = np.argsort(-p, kind="stable")[:3]
        mine = np.flatnonzero(got.token == b)
        np.testing.assert_allclose(got.score[mine], p[order][:mine.size], rtol=1e-9)
        np.testing.assert_array_equal(
            got.label[mine], (seqs[order][:mine.size] == c.gold[b, :c.lengths[b]]).all(1))
    table = per_type(want.entries, want)
    assert table.to_markdown() in out
    saved = json.loads(open(c.p("ev.json")).read())
    assert saved["evaluation"] == as_dict(table)
    assert saved["n_events"] == len(want) and saved["type_names"] == list(want.type_names)
    # the written entries are what `sparsecal evaluate --entries` reads
    run(capsys, "evaluate", "--entries", c.p("ev.npz"), "--json", c.p("e.json"), "-q")
    plain = sc.evaluate(want.entries, ci=None, top_label=True)
    assert json.loads(open(c.p("e.json")).read()) == as_dict(plain)


def test_interval_and_binning_flags_equal_the_api(corpus, capsys):
    c = corpus
    run(capsys, "events", "--potentials", c.p("crf.npz"), "--gold", c.p("gold.npy"),
        "--k", 2, "--ci", "--level", "0.9", "--seed", 3, "--n-resamples", 500,
        "--bins", 4, "--norm", 1, "--json", c.p("j.json"), "-q")
    ev = crf_events(c, 2)
    spec = sc.ConfidenceInterval("simulation", confidence_level=0.9, n_resamples=500,
                                 random_state=3)
    want = sc.evaluate(ev.entries, sc.TagGroups.per_tag(2), ci=spec, n_bins=4, norm=1,
                       top_label=True)
    got = json.loads(open(c.p("j.json")).read())["evaluation"]
    assert got == as_dict(want) and got["smce"]["ci_level"] == 0.9


@pytest.mark.parametrize("scheme,normalize", [("bio", False), ("io", True)])
def test_softmax_spans_with_sentences_from_conll_gold(corpus, capsys, scheme, normalize):
    c = corpus
    if scheme == "io":   # I-X only: a tag index with I-X, I-Y
        names = ["O", "I-X", "I-Y"]
        with open(c.p("io.json"), "w") as f:
            json.dump({t: i for i, t in enumerate(names)}, f)
        index = c.p("io.json")
        np.save(c.p("gold.npy"), c.gold_flat)
        gold = ["--gold", c.p("gold.npy"), "--lengths", c.p("lengths.txt")]
    else:
        names, index = NAMES, c.p("tags.json")
        gold = ["--gold", c.p("gold.conll")]
    run(capsys, "events", "--scores", c.p("probs.npy"), *gold, "--tag-index", index,
        "--events", "spans", "--k", 2, "--scheme", scheme, "-o", c.p("sp.npz"), "-q",
        *(["--normalize"] if normalize else []))
    want = softmax_span_events(c.probs, c.gold, names, k=2, scheme=scheme,
                               lengths=c.lengths, normalize=normalize)
    got = load_entries(c.p("sp.npz"))
    assert_same_entries(got, want.entries)
    assert len(want) > 5
    for i in range(len(want)):    # the product of the span's token probabilities
        b, s, l = want.sentence[i], want.start[i], want.length[i]
        q = c.probs[b, np.arange(s, s + l), want.tags[i, :l]].prod()
        assert got.score[i] == pytest.approx(q ** (1 / l) if normalize else q, rel=1e-12)
        truth = ref_spans(c.gold[b, :c.lengths[b]], names, scheme)
        assert got.label[i] == int((s, l, names[want.tags[i, 0]].split("-")[1]) in truth)


def test_float32_potentials_give_the_float64_events(tmp_path, capsys):
    c64 = Corpus(str(tmp_path), 5)
    (tmp_path / "f32").mkdir()
    c32 = Corpus(str(tmp_path / "f32"), 5, dtype=np.float32)
    for c in (c64, c32):
        run(capsys, "events", "--potentials", c.p("crf.npz"), "--gold", c.p("gold.npy"),
            "--k", 2, "-o", c.p("ev.npz"), "-q")
    a, b = load_entries(c64.p("ev.npz")), load_entries(c32.p("ev.npz"))
    np.testing.assert_array_equal(a.label, b.label)
    np.testing.assert_allclose(a.score, b.score, atol=1e-5)


def test_softmax_sequences_and_one_sentence_of_one_token(tmp_path, capsys):
    probs = np.array([[0.3, 0.7]])
    np.save(tmp_path / "p.npy", probs)
    np.save(tmp_path / "g.npy", np.array([1]))
    np.save(tmp_path / "l.npy", np.array([1]))
    run(capsys, "events", "--scores", tmp_path / "p.npy", "--lengths", tmp_path / "l.npy",
        "--gold", tmp_path / "g.npy", "--k", 2, "-o", tmp_path / "e.npz", "-q")
    got = load_entries(tmp_path / "e.npz")
    want = softmax_sequence_events(probs[None], [[1]], k=2)
    assert_same_entries(got, want.entries)
    np.testing.assert_allclose(got.score, [0.7, 0.3])
    np.testing.assert_array_equal(got.label, [1, 0])


# ---- calibration, choice of k, re-ranking --------------------------------- #

def features(ev):
    return {"mean": ev.entries.score, **ev.features}


def crf_events(c, k, fn=crf_sequence_events, **kw):
    return fn(c.crf["emissions"], c.crf["transitions"], c.gold, k=k, lengths=c.lengths,
              start=c.crf["start"], end=c.crf["end"], allowed=c.crf["allowed"], **kw)


def test_forecaster_fit_save_apply_and_choice_of_k(corpus, dev, capsys):
    c = corpus
    flags = ["events", "--potentials", c.p("crf.npz"), "--gold", c.p("gold.npy"), "--k", 2]
    out = run(capsys, *flags, "--dev-potentials", dev.p("crf.npz"), "--dev-gold",
              dev.p("gold.npy"), "--choose-k", 1, 2, "--save-calibrator", c.p("fc"),
              "--calibrated-output", c.p("cal.npz"), "--json", c.p("j.json"))
    test_ev, dev_ev = crf_events(c, 2), crf_events(dev, 2)
    choice = heuristic_k(features(dev_ev), dev_ev.entries.label, ks=(1, 2),
                         forecaster=Forecaster(random_state=0))
    saved = json.loads(open(c.p("j.json")).read())
    assert saved["choice_of_k"] == choice.to_dict()
    assert f"heuristic k = {choice.k}" in out
    want = choice.forecaster.predict(features(test_ev))
    got = load_entries(c.p("cal.npz"))
    np.testing.assert_allclose(got.score, want, rtol=1e-12)
    np.testing.assert_array_equal(got.label, test_ev.entries.label)
    table = per_type(test_ev.entries.with_scores(want), test_ev)
    assert saved["calibrated_evaluation"] == as_dict(table)
    assert table.to_markdown() in out
    np.testing.assert_allclose(Forecaster.load(c.p("fc")).predict(features(test_ev)), want)
    # a second run applies the saved forecaster: the same numbers
    run(capsys, *flags, "--calibrator", c.p("fc"), "--calibrated-output", c.p("cal2.npz"),
        "--json", c.p("j2.json"))
    np.testing.assert_array_equal(load_entries(c.p("cal2.npz")).score, got.score)
    assert json.loads(open(c.p("j2.json")).read())["calibrated_evaluation"] == \
        saved["calibrated_evaluation"]


def test_registered_method_equals_a_grouped_calibrator(corpus, dev, capsys):
    c = corpus
    run(capsys, "events", "--scores", c.p("probs.npy"), "--gold", c.p("gold.conll"),
        "--tag-index", c.p("tags.json"), "--dev-scores", dev.p("probs.npy"),
        "--dev-gold", dev.p("gold.conll"), "--method", "platt", "--events", "spans",
        "--k", 2, "--calibrated-output", c.p("cal.npz"), "--save-calibrator", c.p("pl"),
        "-q")
    test_ev = softmax_span_events(c.probs, c.gold, NAMES, k=2, lengths=c.lengths)
    dev_ev = softmax_span_events(dev.probs, dev.gold, NAMES, k=2, lengths=dev.lengths)
    model = sc.GroupedCalibrator(sc.PlattCalibrator(), sc.TagGroups.scw(1), min_entries=1)
    want = model.fit(dev_ev.entries).transform(test_ev.entries).score
    np.testing.assert_allclose(load_entries(c.p("cal.npz")).score, want, rtol=1e-12)
    assert not np.allclose(want, test_ev.entries.score)   # it did calibrate
    from sparsecal.calibration.loading import load_calibrator
    np.testing.assert_allclose(load_calibrator(c.p("pl")).transform(test_ev.entries).score,
                               want)


def test_rerank_sequences_and_spans_equal_the_library(corpus, dev, capsys):
    c = corpus
    common = ["--potentials", c.p("crf.npz"), "--gold", c.p("gold.npy"), "--tag-index",
              c.p("tags.json"), "--dev-potentials", dev.p("crf.npz"), "--dev-gold",
              dev.p("gold.npy"), "--k", 3, "--rerank", "--scheme", "bio"]
    out = run(capsys, "events", *common, "--json", c.p("seq.json"))
    test_ev, dev_ev = crf_events(c, 3), crf_events(dev, 3)
    conf = Forecaster().fit(features(dev_ev), dev_ev.entries.label).predict(
        features(test_ev))
    r = rerank_sequences(test_ev, conf, c.gold, NAMES, "bio")
    got = json.loads(open(c.p("seq.json")).read())["reranking"]
    assert got["exact_match_before"] == r.exact_match_before
    assert got["exact_match_after"] == r.exact_match_after
    assert got["spans_after"] == r.spans_after.to_dict() and got["n_changed"] == r.n_changed
    assert f"exact match {r.exact_match_before:.4f} -> {r.exact_match_after:.4f}" in out
    # exact match before = the share of sentences whose Viterbi path is gold
    viterbi = [np.array_equal(test_ev.tags[i, :test_ev.length[i]],
                              c.gold[test_ev.sentence[i], :test_ev.length[i]])
               for i in np.flatnonzero(test_ev.rank == 1)]
    assert got["exact_match_before"] == pytest.approx(np.mean(viterbi))
    run(capsys, "events", *common, "--events", "spans", "--cutoff", 0.3, "--json",
        c.p("sp.json"), "-q")
    sp_test, sp_dev = (crf_events(x, 3, crf_span_events, tag_names=NAMES)
                       for x in (c, dev))
    conf = Forecaster().fit(features(sp_dev), sp_dev.entries.label).predict(
        features(sp_test))
    r = rerank_spans(sp_test, conf, c.gold, NAMES, "bio", cutoff=0.3)
    got = json.loads(open(c.p("sp.json")).read())["reranking"]
    assert got["spans_before"] == r.spans_before.to_dict()
    assert got["spans_after"] == r.spans_after.to_dict()


# ---- bad input: exit 2, one line naming the option or file, nothing written -- #

def bad_cases(c):
    crf, gold = ["--potentials", c.p("crf.npz")], ["--gold", c.p("gold.npy")]
    np.savez(c.p("nan.npz"), emissions=np.where(np.arange(3) == 2, np.nan,
                                                c.crf["emissions"]),
             transitions=c.crf["transitions"], lengths=c.lengths)
    np.savetxt(c.p("short.txt"), c.lengths[:-1], fmt="%d")
    np.save(c.p("gold_short.npy"), c.gold_flat[:-1])
    return {
        "missing file": (["--potentials", c.p("nope.npz"), *gold], "nope.npz"),
        "missing gold": ([*crf, "--gold", c.p("nope.npy")], "nope.npy"),
        "k < 1": ([*crf, *gold, "--k", "0"], "--k"),
        "NaN potentials": (["--potentials", c.p("nan.npz"), *gold], "nan.npz"),
        "lengths vs rows": (["--scores", c.p("probs.npy"), "--lengths", c.p("short.txt"),
                             *gold], "short.txt"),
        "gold vs sentences": ([*crf, "--gold", c.p("gold_short.npy")], "gold_short.npy"),
        "no sentences": (["--scores", c.p("probs.npy"), *gold], "--lengths"),
        "spans without names": ([*crf, *gold, "--events", "spans"], "--tag-index"),
        "choose-k without dev": ([*crf, *gold, "--choose-k", "1", "2"], "--choose-k"),
        "unknown method": ([*crf, *gold, "--dev-potentials", c.p("crf.npz"), "--dev-gold",
                            c.p("gold.npy"), "--method", "magic"], "--method"),
        "both inputs": ([*crf, "--scores", c.p("probs.npy"), *gold], "--potentials"),
        "normalize sequences": ([*crf, *gold, "--normalize"], "--normalize"),
        "cutoff": ([*crf, *gold, "--cutoff", "1.5"], "--cutoff"),
        "spans of unknown names": ([*crf, *gold, "--events", "spans", "--tag-index",
                                    c.p("bad_tags.json")], "bad_tags.json"),
    }


@pytest.mark.parametrize("case", [
    "missing file", "missing gold", "k < 1", "NaN potentials", "lengths vs rows",
    "gold vs sentences", "no sentences", "spans without names", "choose-k without dev",
    "unknown method", "both inputs", "normalize sequences", "cutoff",
    "spans of unknown names"])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(corpus, capsys, case):
    c = corpus
    with open(c.p("bad_tags.json"), "w") as f:
        json.dump({"O": 0, "B-X": 1}, f)        # 2 names for 3 tags
    argv, named = bad_cases(c)[case]
    outputs = [c.p("out.npz"), c.p("out.json")]
    rc = main(["events", *argv, "-o", outputs[0], "--json", outputs[1]])
    err = capsys.readouterr().err
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sparsecal events: error: ")
    assert named in lines[0], lines[0]
    assert not any(os.path.exists(p) for p in outputs)


@pytest.fixture
def no_work(monkeypatch):
    """The k-best search of every events function fails the test if it runs."""
    from sparsecal.structured import sequences, spans

    def kbest(*args, **kwargs):
        raise AssertionError("the events were made before the inputs were checked")

    for module in (sequences, spans):
        monkeypatch.setattr(module, "kbest_paths", kbest)
        monkeypatch.setattr(module, "softmax_kbest", kbest)


def test_inputs_are_checked_before_the_work(corpus, tmp_path, capsys, no_work):
    """Tag names outside --scheme (every name wrong took 13 s and 0.9 GB on 4,000
    sentences before the error, which blamed the potentials file) and dev
    outputs of another tag count: refused before any event is made, naming the
    flags."""
    c = corpus
    with open(c.p("pos.json"), "w") as f:
        json.dump({"NN": 0, "VB": 1, "JJ": 2}, f)
    np.savez(c.p("wide.npz"), emissions=np.zeros((2, 3, 4)), transitions=np.zeros((4, 4)),
             lengths=np.array([3, 2]))
    np.save(c.p("wide_gold.npy"), np.zeros(5, int))
    crf = ["--potentials", c.p("crf.npz"), "--gold", c.p("gold.npy")]
    for argv, named in [
            ([*crf, "--events", "spans", "--tag-index", c.p("pos.json")],
             "--tag-index '" + c.p("pos.json") + "' with --scheme bio: tag_names[0] = 'NN'"),
            ([*crf, "--rerank", "--scheme", "bioes", "--tag-index", c.p("pos.json")],
             "with --scheme bioes"),
            ([*crf, "--dev-potentials", c.p("wide.npz"), "--dev-gold", c.p("wide_gold.npy")],
             "dev has 4 tags but test has 3")]:
        rc = main(["events", *argv, "--json", c.p("o.json")])
        lines = capsys.readouterr().err.strip().splitlines()
        assert rc == 2 and len(lines) == 1 and named in lines[0], (argv, lines)
        assert not os.path.exists(c.p("o.json"))


def test_unknown_scheme_is_a_usage_error(corpus, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["events", "--potentials", corpus.p("crf.npz"), "--gold",
              corpus.p("gold.npy"), "--scheme", "bilou"])
    assert exc.value.code == 2 and "--scheme" in capsys.readouterr().err


# ---- the readers ----------------------------------------------------------- #

@pytest.mark.parametrize("lengths", [[1], [2], [3, 1, 2], [1] * 7])
def test_pad_sentences_equals_a_loop(lengths):
    rng = np.random.default_rng(len(lengths))
    flat = rng.random((sum(lengths), 2)).astype(np.float32)
    before = flat.copy()
    got = pad_sentences(flat, lengths, fill=-1)
    np.testing.assert_array_equal(got, pad(flat, lengths, -1))
    assert got.dtype == np.float32 and np.array_equal(flat, before)
    with pytest.raises(ValueError, match="sum to"):
        pad_sentences(flat[1:], lengths)
    with pytest.raises(ValueError, match="lengths"):
        pad_sentences(flat, [0] + lengths)
    with pytest.raises(ValueError, match=r"^values is not an array of numbers: it is ragged "
                                         r"\(rows of different lengths\): row 1 has 1 value, "
                                         "row 0 has 2 values$"):
        pad_sentences([[4, 5], [6]], [2, 1])   # values are per token, not per sentence


def test_load_potentials_and_lengths(tmp_path, corpus):
    got = load_potentials(corpus.p("crf.npz"))
    for key, value in corpus.crf.items():
        np.testing.assert_array_equal(got[key], value)
    np.testing.assert_array_equal(got["lengths"], corpus.lengths)
    np.testing.assert_array_equal(load_lengths(corpus.p("lengths.txt")), corpus.lengths)
    np.savez(tmp_path / "a.npz", emissions=np.zeros((2, 3, 4)), transitions=np.zeros((4, 4)))
    assert load_potentials(tmp_path / "a.npz")["lengths"].tolist() == [3, 3]
    for bad, match in [(dict(transitions=np.zeros((4, 4))), "missing arrays"),
                       (dict(emissions=np.zeros((2, 3, 4)), transitions=np.zeros((3, 3))),
                        "transitions has shape"),
                       (dict(emissions=np.zeros((2, 3, 4)), transitions=np.zeros((4, 4)),
                             extra=np.zeros(1)), "unknown arrays"),
                       (dict(emissions=np.zeros((2, 3, 4)), transitions=np.full((4, 4), np.inf)),
                        "transitions"),
                       (dict(emissions=np.zeros((2, 3, 4)), transitions=np.zeros((4, 4)),
                             lengths=np.array([3, 4])), "lengths")]:
        np.savez(tmp_path / "b.npz", **bad)
        with pytest.raises(ValueError, match=match):
            load_potentials(tmp_path / "b.npz")
    np.savez(tmp_path / "c.npz", emissions=np.zeros((1, 2, 2)),
             transitions=np.array([[0, -np.inf], [0, 0]]))
    assert np.isneginf(load_potentials(tmp_path / "c.npz")["transitions"][0, 1])
    (tmp_path / "l.txt").write_text("2\nx\n")
    with pytest.raises(ValueError, match="line 2.*not a sentence length"):
        load_lengths(tmp_path / "l.txt")
    np.save(tmp_path / "l.npy", np.array([2, 0]))
    with pytest.raises(ValueError, match="at least 1"):
        load_lengths(tmp_path / "l.npy")


def test_load_gold_sentences(corpus):
    gold, offsets = load_gold_sentences(corpus.p("gold.conll"),
                                        tag_index=corpus.p("tags.json"))
    np.testing.assert_array_equal(gold, corpus.gold_flat)
    np.testing.assert_array_equal(np.diff(offsets), corpus.lengths)
    gold, offsets = load_gold_sentences(corpus.p("gold.npy"))
    assert offsets is None and np.array_equal(gold, corpus.gold_flat)


def test_the_verb_imports_only_what_it_runs(corpus):
    """Events without dev outputs need torch (k-best), not scikit-learn, matplotlib
    or a calibrator; the parser of every other verb imports nothing of this one."""
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    argv = ["events", "--potentials", corpus.p("crf.npz"), "--gold", corpus.p("gold.npy"),
            "--k", "2", "-q"]
    unused = ("sklearn", "matplotlib", "scipy.optimize", "sparsecal.calibration.forecaster",
              "sparsecal.calibration.grouped")
    code = ("import sys\nfrom sparsecal.cli import main\n"
            f"assert main({argv!r}) == 0\n"
            "assert 'torch' in sys.modules\n"
            f"print(sorted(m for m in {unused!r} if m in sys.modules))\n"
            "from sparsecal.cli.main import build_parser\n"
            "for m in [m for m in sys.modules if m == 'sparsecal.cli.events']: "
            "del sys.modules[m]\n"
            "build_parser('evaluate')\n"
            "print('sparsecal.cli.events' in sys.modules)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(root)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=root, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[-3:-1] == ["[]", "False"]


# ---- --grouping of a registered method (event types as tags) --------------- #

@pytest.mark.parametrize("grouping,extra", [("per-type", ["--group-min-entries", "30"]),
                                            ("tfg", ["--groups", "2", "--group-min-entries",
                                                     "30"]),
                                            ("per-type", ["--groups", "1",
                                                          "--group-min-entries", "1000"])])
def test_grouping_equals_the_grouped_calibrator(corpus, dev, capsys, grouping, extra):
    c = corpus
    run(capsys, "events", "--potentials", c.p("crf.npz"), "--gold", c.p("gold.npy"),
        "--k", 3, "--dev-potentials", dev.p("crf.npz"), "--dev-gold", dev.p("gold.npy"),
        "--method", "isotonic", "--grouping", grouping, *extra,
        "--calibrated-output", c.p("cal.npz"), "--save-calibrator", c.p("iso"), "-q")
    test_ev, dev_ev = crf_events(c, 3), crf_events(dev, 3)
    counts = np.bincount(dev_ev.entries.tag, minlength=3)
    opts = dict(zip(extra[::2], extra[1::2]))
    tfg = sc.TagGroups.from_counts({str(t): n for t, n in enumerate(counts)},
                                   int(opts.get("--groups", 5)))
    kw = ({"min_entries": int(opts["--group-min-entries"])}
          if "--group-min-entries" in opts else {})
    if grouping == "tfg":
        model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), tfg, **kw)
    else:
        model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.per_tag(3),
                                     fallback=tfg, **kw)
    with pytest.warns(UserWarning):    # fewer than 200 dev events per group
        want = model.fit(dev_ev.entries).transform(test_ev.entries).score
    got = load_entries(c.p("cal.npz")).score
    np.testing.assert_allclose(got, want, rtol=1e-12)
    scw = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(3), min_entries=1)
    with pytest.warns(UserWarning):
        pooled = scw.fit(dev_ev.entries).transform(test_ev.entries).score
    if grouping == "per-type" and "1000" in extra:   # every type falls back: unchanged
        np.testing.assert_array_equal(got, test_ev.entries.score)
    else:   # one calibrator per rank (per-type) or per group differs from one for all
        assert counts.min() >= 30 and not np.allclose(got, pooled)
        assert len(model.calibrators_) == (2 if grouping == "tfg" else 3)
    from sparsecal.calibration.loading import load_calibrator
    assert load_calibrator(c.p("iso")).tag_to_calibrator_.tolist() == \
        model.tag_to_calibrator_.tolist()


def test_per_type_falls_back_to_one_calibrator_of_all_types(corpus, dev, capsys):
    """Each rank has at most 60 dev events: with --group-min-entries 61 and one TFG group
    every type uses the calibrator of all dev events, i.e. the SCW calibrator."""
    c = corpus
    common = ["events", "--potentials", c.p("crf.npz"), "--gold", c.p("gold.npy"), "--k",
              3, "--dev-potentials", dev.p("crf.npz"), "--dev-gold", dev.p("gold.npy"),
              "--method", "platt", "-q"]
    run(capsys, *common, "--grouping", "per-type", "--groups", 1, "--group-min-entries", 61,
        "--calibrated-output", c.p("a.npz"))
    run(capsys, *common, "--calibrated-output", c.p("b.npz"))
    a, b = load_entries(c.p("a.npz")), load_entries(c.p("b.npz"))
    np.testing.assert_allclose(a.score, b.score, rtol=1e-12)
    assert not np.allclose(a.score, crf_events(c, 3).entries.score)


# ---- saved events: fit and evaluate from files ------------------------------ #

def assert_same_events(got, want):
    assert_same_entries(got.entries, want.entries)
    for name in ("sentence", "start", "length", "rank", "type", "tags"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    assert (got.kind, got.type_names) == (want.kind, want.type_names)


@pytest.mark.parametrize("method", ["forecaster", "platt"])
def test_fitting_from_saved_events_equals_fitting_from_outputs(corpus, dev, capsys, method):
    c = corpus
    spans = ["--tag-index", c.p("tags.json"), "--events", "spans"]
    test_in = ["--potentials", c.p("crf.npz"), "--gold", c.p("gold.npy")]
    dev_in = ["--dev-potentials", dev.p("crf.npz"), "--dev-gold", dev.p("gold.npy")]
    run(capsys, "events", *test_in, *spans, "--k", 2, "-o", c.p("test_ev.npz"), "-q")
    run(capsys, "events", "--potentials", dev.p("crf.npz"), "--gold", dev.p("gold.npy"),
        *spans, "--k", 2, "-o", c.p("dev_ev.npz"), "-q")
    from sparsecal.structured import load_events
    test_ev = crf_events(c, 2, crf_span_events, tag_names=NAMES)
    assert_same_events(load_events(c.p("test_ev.npz")), test_ev)
    flags = ["--method", method, "--json"]
    run(capsys, "events", *test_in, *spans, "--k", 2, *dev_in, *flags, c.p("a.json"),
        "--calibrated-output", c.p("a.npz"), "-q")
    for i, inputs in enumerate([["--events-file", c.p("test_ev.npz"), "--dev-events-file",
                                 c.p("dev_ev.npz")],
                                [*test_in, *spans, "--k", 2, "--dev-events-file",
                                 c.p("dev_ev.npz")],
                                ["--events-file", c.p("test_ev.npz"), *dev_in,
                                 "--tag-index", c.p("tags.json")]]):
        run(capsys, "events", *inputs, *flags, c.p(f"b{i}.json"),
            "--calibrated-output", c.p(f"b{i}.npz"), "-q")
        a, b = (json.loads(open(c.p(f)).read()) for f in ("a.json", f"b{i}.json"))
        assert a == b
        assert_same_events(load_events(c.p(f"b{i}.npz")), load_events(c.p("a.npz")))
    # and against the library: the fitted model on the dev events
    dev_ev = crf_events(dev, 2, crf_span_events, tag_names=NAMES)
    if method == "forecaster":
        want = Forecaster().fit(features(dev_ev), dev_ev.entries.label).predict(
            features(test_ev))
    else:
        model = sc.GroupedCalibrator(sc.PlattCalibrator(), sc.TagGroups.scw(1),
                                     min_entries=1)
        with pytest.warns(UserWarning):
            want = model.fit(dev_ev.entries).transform(test_ev.entries).score
    np.testing.assert_allclose(load_entries(c.p("b0.npz")).score, want, rtol=1e-12)


def test_events_file_round_trip_dtype_and_one_event(tmp_path):
    from sparsecal.structured import load_events, save_events
    probs = np.array([[[0.3, 0.7]]], dtype=np.float32)
    ev = softmax_sequence_events(probs, [[1]], k=1)
    save_events(tmp_path / "e.npz", ev)
    got = load_events(tmp_path / "e.npz")
    assert_same_events(got, ev)
    assert got.entries.score.dtype == ev.entries.score.dtype
    assert got.features.keys() == ev.features.keys()
    f32 = ev.entries.with_scores(ev.entries.score.astype(np.float32))
    save_events(tmp_path / "f.npz", type(ev)(**{**ev.__dict__, "entries": f32}))
    assert load_events(tmp_path / "f.npz").entries.score.dtype == np.float32
    with pytest.raises(TypeError, match="events must be an Events"):
        save_events(tmp_path / "x.npz", ev.entries)
    save_events(tmp_path / "g.npz", ev, features={"p_low": np.float32([0.25])})
    got, extra = load_events(tmp_path / "g.npz", features=True)
    assert extra.keys() == {"p_low"} and extra["p_low"].tolist() == [0.25]
    assert load_events(tmp_path / "f.npz", features=True)[1] == {}
    for bad, error, match in [({"p": [0.1, 0.2]}, ValueError, "shape"),
                              ({"p": [np.nan]}, ValueError, "p"),
                              ({"": [0.1]}, ValueError, "names"),
                              ({"p": ["a"]}, TypeError, "p")]:
        with pytest.raises(error, match=match):
            save_events(tmp_path / "h.npz", ev, features=bad)
    from sparsecal.io import save_entries
    with pytest.raises(ValueError, match="'score'"):
        save_entries(tmp_path / "c.npz", ev.entries, extra_arrays={"score": np.zeros(1)})
    with pytest.raises(ValueError, match="'n_tags'"):
        save_entries(tmp_path / "c.npz", ev.entries, extra_metadata={"n_tags": 2})
    data = dict(np.load(tmp_path / "g.npz"))
    for name, change, match in [("nof.npz", lambda d: d.pop("feature_p_low"),
                                 "feature_p_low"),
                                ("inf.npz", lambda d: d.update(feature_p_low=np.array(
                                    [np.inf])), "feature_p_low")]:
        d = dict(data)
        change(d)
        np.savez(tmp_path / name, **d)
        with pytest.raises(ValueError, match=match):
            load_events(tmp_path / name, features=True)


def bad_event_files(c):
    """Events files broken one way each, and what the error names."""
    from sparsecal.io import save_entries
    from sparsecal.structured import save_events
    ev = crf_events(c, 2)
    save_entries(c.p("plain.npz"), ev.entries)
    save_events(c.p("good.npz"), ev)
    data = dict(np.load(c.p("good.npz")))
    cases = {"plain.npz": "no events"}
    for name, change, named in [
            ("norank.npz", lambda d: d.pop("event_rank"), "event_rank"),
            ("floatlen.npz", lambda d: d.update(event_length=d["event_length"] * 1.0),
             "event_length"),
            ("shortstart.npz", lambda d: d.update(event_start=d["event_start"][1:]),
             "event_start"),
            ("rank0.npz", lambda d: d.update(event_rank=d["event_rank"] - 1), "event_rank"),
            ("names.npz", lambda d: d.update(metadata=np.array(
                str(d["metadata"]).replace('"rank 2"', '1'))), "type_names"),
            ("kind.npz", lambda d: d.update(metadata=np.array(
                str(d["metadata"]).replace('"sequence"', '"tree"'))), "kind")]:
        d = dict(data)
        change(d)
        np.savez(c.p(name), **d)
        cases[name] = named
    return cases


def test_bad_events_files_exit_2_naming_the_file(corpus, capsys):
    c = corpus
    for name, named in bad_event_files(c).items():
        for flags in (["--events-file", c.p(name)],
                      ["--potentials", c.p("crf.npz"), "--gold", c.p("gold.npy"),
                       "--dev-events-file", c.p(name)]):
            rc = main(["events", *flags, "-o", c.p("out.npz")])
            lines = capsys.readouterr().err.strip().splitlines()
            assert rc == 2 and len(lines) == 1, (name, lines)
            assert name in lines[0] and named in lines[0], lines[0]
            assert not os.path.exists(c.p("out.npz"))


def test_events_file_flag_conflicts_exit_2(corpus, capsys):
    c = corpus
    from sparsecal.structured import save_events
    save_events(c.p("seq.npz"), crf_events(c, 2))
    save_events(c.p("sp.npz"), crf_events(c, 2, crf_span_events, tag_names=NAMES))
    ev = ["--events-file", c.p("seq.npz")]
    crf = ["--potentials", c.p("crf.npz"), "--gold", c.p("gold.npy")]
    for argv, named in [
            ([*ev, *crf], "--events-file"),
            ([*ev, "--gold", c.p("gold.npy")], "--gold"),
            ([*ev, "--k", "2"], "--k"),
            ([*ev, "--rerank"], "--rerank"),
            ([*ev, "--events", "spans"], "holds sequences"),
            ([*ev, "--dev-events-file", c.p("sp.npz")], "spans"),
            ([*ev, "--dev-events-file", c.p("seq.npz"), "--choose-k", "1", "3"], "seq.npz"),
            ([*ev, "--dev-events-file", c.p("seq.npz"), "--dev-scores", c.p("probs.npy")],
             "--dev-events-file"),
            ([*ev, "--dev-events-file", c.p("seq.npz"), "--grouping", "tfg"], "forecaster"),
            ([*ev, "--dev-events-file", c.p("seq.npz"), "--method", "platt", "--groups",
              "2"], "not scw"),
            ([*ev, "--dev-events-file", c.p("seq.npz"), "--method", "platt", "--grouping",
              "per-type", "--group-min-entries", "0"], "--group-min-entries"),
            ([*ev, "--grouping", "tfg"], "dev outputs")]:
        rc = main(["events", *argv, "--json", c.p("o.json")])
        lines = capsys.readouterr().err.strip().splitlines()
        assert rc == 2 and len(lines) == 1 and named in lines[0], (argv, lines)
        assert not os.path.exists(c.p("o.json"))


# ---- --samples: MC-dropout / ensemble features of the forecaster ------------ #

def write_samples(c, S, seed):
    """S per-token softmax samples around the tagger's scores, stacked [S, n, C]."""
    rng = np.random.default_rng(seed)
    samples = np.stack([rng.dirichlet(50 * c.probs_flat[i] + 0.1) for _ in range(S)
                        for i in range(len(c.probs_flat))]).reshape(S, -1, 3)
    np.save(c.p("samples.npy"), samples)
    return samples


def brute_sample_features(ev, samples, lengths, normalize):
    """Each event's probability under each sample as a product over its tokens."""
    P = np.empty((samples.shape[0], len(ev)))
    for s in range(samples.shape[0]):
        padded = pad(samples[s], lengths, 0.0)
        for i in range(len(ev)):
            b, st, ln = ev.sentence[i], ev.start[i], ev.length[i]
            q = padded[b, np.arange(st, st + ln), ev.tags[i, :ln]].prod()
            P[s, i] = q ** (1 / ln) if normalize else q
    return {"mean": P.mean(0), "p_low": np.percentile(P, 10, axis=0),
            "p_high": np.percentile(P, 90, axis=0), "std": P.std(0)}


@pytest.mark.parametrize("events", ["sequences", "spans"])
def test_samples_give_the_forecaster_jy_uncertainty_features(corpus, dev, capsys, events):
    c = corpus
    samples = {x: write_samples(x, S, seed) for x, S, seed in ((c, 5, 1), (dev, 3, 2))}
    spans = events == "spans"
    run(capsys, "events", "--scores", c.p("probs.npy"), "--gold", c.p("gold.conll"),
        "--samples", c.p("samples.npy"), "--tag-index", c.p("tags.json"),
        "--events", events, "--k", 2, *(["--normalize"] if spans else []),
        "--dev-scores", dev.p("probs.npy"), "--dev-gold", dev.p("gold.conll"),
        "--dev-samples", dev.p("samples.npy"), "--save-calibrator", c.p("fc"),
        "--calibrated-output", c.p("cal.npz"), "-q")
    fn = softmax_span_events if spans else softmax_sequence_events
    kw = dict(tag_names=NAMES, normalize=True) if spans else {}
    feats = {}
    for x in (c, dev):
        ev = fn(x.probs, x.gold, k=2, lengths=x.lengths, **kw)
        feats[x] = (ev, {"mean": ev.entries.score, **ev.features,
                         **brute_sample_features(ev, samples[x], x.lengths, spans)})
    (test_ev, test_f), (dev_ev, dev_f) = feats[c], feats[dev]
    assert not np.allclose(test_f["p_low"], test_f["p_high"])
    fc = Forecaster.load(c.p("fc"))
    assert fc.feature_names_in_ == ("length", "mean", "p_high", "p_low", "rank", "std",
                                    "type")
    want = Forecaster().fit(dev_f, dev_ev.entries.label).predict(test_f)
    np.testing.assert_allclose(load_entries(c.p("cal.npz")).score, want, rtol=1e-9)
    # the saved forecaster applied to the same test samples: the same scores
    run(capsys, "events", "--scores", c.p("probs.npy"), "--gold", c.p("gold.conll"),
        "--samples", c.p("samples.npy"), "--tag-index", c.p("tags.json"),
        "--events", events, "--k", 2, *(["--normalize"] if spans else []),
        "--calibrator", c.p("fc"), "--calibrated-output", c.p("cal2.npz"), "-q")
    np.testing.assert_array_equal(load_entries(c.p("cal2.npz")).score,
                                  load_entries(c.p("cal.npz")).score)
    # from events files saved with their sample features: the same scores again
    from sparsecal.structured import load_events
    for x, name in ((c, "t.npz"), (dev, "d.npz")):
        run(capsys, "events", "--scores", x.p("probs.npy"), "--gold", x.p("gold.conll"),
            "--samples", x.p("samples.npy"), "--tag-index", c.p("tags.json"),
            "--events", events, "--k", 2, *(["--normalize"] if spans else []),
            "-o", c.p(name), "-q")
        got, extra = load_events(c.p(name), features=True)
        assert_same_events(got, feats[x][0])
        for key in ("mean", "p_low", "p_high", "std"):
            np.testing.assert_allclose(extra[key], feats[x][1][key], rtol=1e-9, atol=1e-15)
    run(capsys, "events", "--events-file", c.p("t.npz"), "--dev-events-file", c.p("d.npz"),
        "--calibrated-output", c.p("cal3.npz"), "-q")
    np.testing.assert_allclose(load_entries(c.p("cal3.npz")).score,
                               load_entries(c.p("cal.npz")).score, rtol=1e-12)
    # dev events with sample features, test events without: refused, naming them
    run(capsys, "events", "--scores", c.p("probs.npy"), "--gold", c.p("gold.conll"),
        "--tag-index", c.p("tags.json"), "--events", events, "--k", 2,
        *(["--normalize"] if spans else []), "-o", c.p("plain.npz"), "-q")
    rc = main(["events", "--events-file", c.p("plain.npz"), "--dev-events-file",
               c.p("d.npz")])
    lines = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and "p_low" in lines[0], lines


def test_bad_samples_exit_2_with_one_line(corpus, capsys):
    c = corpus
    write_samples(c, 2, 0)
    np.save(c.p("flat.npy"), c.probs_flat)
    seq = softmax_sequence_events(c.probs, c.gold, k=1, lengths=c.lengths)
    sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(1), min_entries=1).fit(
        seq.entries).save(c.p("iso"))   # not a forecaster: --samples would be ignored
    sc_in = ["--scores", c.p("probs.npy"), "--lengths", c.p("lengths.txt"), "--gold",
             c.p("gold.npy")]
    dev_in = ["--dev-scores", c.p("probs.npy"), "--dev-lengths", c.p("lengths.txt"),
              "--dev-gold", c.p("gold.npy")]
    for argv, named in [
            ([*sc_in, *dev_in, "--samples", c.p("flat.npy"), "--dev-samples",
              c.p("samples.npy")], "flat.npy"),
            (["--potentials", c.p("crf.npz"), "--gold", c.p("gold.npy"), "--samples",
              c.p("samples.npy")], "--scores"),
            ([*sc_in, *dev_in, "--samples", c.p("samples.npy"), "--dev-samples",
              c.p("samples.npy"), "--method", "platt"], "--method platt"),
            ([*sc_in, *dev_in, "--samples", c.p("samples.npy")], "--dev-samples"),
            ([*sc_in, "--samples", c.p("samples.npy")], "--calibrator"),
            ([*sc_in, "--samples", c.p("samples.npy"), "--calibrator", c.p("iso")],
             "is not a forecaster")]:
        rc = main(["events", *argv, "--json", c.p("o.json")])
        lines = capsys.readouterr().err.strip().splitlines()
        assert rc == 2 and len(lines) == 1 and named in lines[0], (argv, lines)
        assert not os.path.exists(c.p("o.json"))
