"""Inventories that disagree, and options that would be ignored (issue 30,
classes 3 and 4).

Class 3: what an input declares (a threshold, a token count, a tag inventory)
must hold of what it carries; every verb that reads a ``--tag-index`` beside
scores refuses one that places a tag beyond the score columns.

Class 4: every flag that another flag or input must enable is refused without
it, in every verb that has it (walked from the parsers); headers and JSON say
the bins that were used.
"""
import json

import numpy as np
import pytest

import sparsecal as sc
from sparsecal.cli.flags import _NEEDS
from sparsecal.cli.main import VERBS, _parser, main

RNG = np.random.default_rng(3)
SCORES = RNG.dirichlet(np.ones(4), size=60)
GOLD = RNG.integers(0, 4, 60)


# ------------------------------------------------------------- class 3 -- #

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_entries_refuse_scores_below_their_threshold(dtype):
    """The comparison is the threshold kernel's, in the scores' dtype: a score
    equal to the threshold is kept, one ulp below is refused."""
    t = dtype(0.01)
    below = np.nextafter(t, dtype(0))
    ok = sc.Entries(np.array([t, 0.5], dtype), [0, 1], [1, 0], n_tags=2, threshold=0.01)
    assert ok.threshold == 0.01
    with pytest.raises(ValueError, match=r"score\[0\] = .* is below threshold=0.01"):
        sc.Entries(np.array([below, 0.5], dtype), [0, 1], [1, 0], n_tags=2, threshold=0.01)


def test_entries_refuse_tokens_outside_n_tokens():
    sc.Entries([0.5, 0.5], [0, 1], [1, 0], [0, 2], n_tags=2, n_tokens=3)
    for token, n_tokens in (([0, 3], 3), ([-1, 0], 3), ([-1, 0], None)):
        with pytest.raises(ValueError, match=r"token\[\d\] = -?\d is out of range"):
            sc.Entries([0.5, 0.5], [0, 1], [1, 0], token, n_tags=2, n_tokens=n_tokens)


def test_recalibrated_entries_round_trip(tmp_path):
    """Recalibrated scores may fall below the selection threshold: the file
    declares their lowest score, so it reads back."""
    from sparsecal.io import load_entries, save_entries
    entries = sc.threshold(SCORES, GOLD)
    low = entries.with_scores(np.full(len(entries), 0.001))
    save_entries(tmp_path / "e.npz", low)
    back = load_entries(tmp_path / "e.npz")
    assert back.threshold == 0.001 and np.array_equal(back.score, low.score)
    save_entries(tmp_path / "raw.npz", entries)
    assert load_entries(tmp_path / "raw.npz").threshold == 0.01


#: every verb that reads --tag-index beside scores, with what else it needs
TAG_INDEX_VERBS = {
    "evaluate": ["--scores", "{s}", "--gold", "{g}"],
    "evaluate (tfg)": ["--scores", "{s}", "--gold", "{g}", "--train-counts", "{c}"],
    "fit": ["--scores", "{s}", "--gold", "{g}", "--train-counts", "{c}", "-o", "{d}/cal"],
    "compare": ["--scores", "{s}", "--gold", "{g}", "--dev-scores", "{s}", "--dev-gold", "{g}",
                "--train-counts", "{c}", "--methods", "isotonic"],
    "report": ["--scores", "{s}", "--gold", "{g}", "-o", "{d}/report"],
    "groups": ["--train-counts", "{c}", "--n-tags", "4"],
    "events": ["--scores", "{s}", "--gold", "{g}", "--lengths", "{l}"],
}


def test_every_verb_with_a_tag_index_is_enumerated():
    have = {v for v in VERBS for a in _parser([v])[1][v]._actions if a.dest == "tag_index"}
    assert have == {v.split()[0] for v in TAG_INDEX_VERBS}


@pytest.mark.parametrize("case", sorted(TAG_INDEX_VERBS))
def test_a_tag_index_beyond_the_score_columns_is_refused(case, tmp_path, capsys):
    np.save(tmp_path / "s.npy", SCORES)
    np.save(tmp_path / "g.npy", GOLD)
    (tmp_path / "l.txt").write_text("15\n" * 4)
    names = ["A", "B", "C", "D", "E", "F"]   # 6 columns for 4 score columns
    # E has a training count: not padding
    (tmp_path / "c.json").write_text(json.dumps({n: 10 - i for i, n in enumerate(names[:5])}))
    (tmp_path / "i.json").write_text(json.dumps({n: i for i, n in enumerate(names)}))
    files = {"s": tmp_path / "s.npy", "g": tmp_path / "g.npy", "c": tmp_path / "c.json",
             "l": tmp_path / "l.txt", "d": tmp_path}
    argv = [case.split()[0]] + [a.format(**files) for a in TAG_INDEX_VERBS[case]]
    rc = main(argv + ["--tag-index", str(tmp_path / "i.json"), "-q"])
    err = capsys.readouterr().err
    assert rc == 2 and "--tag-index" in err, err
    # the first tag beyond, and the columns there are (events: each named once)
    assert "'E'" in err and "4 tag columns" in err or "each of the 4 tag columns" in err, err


def test_a_name_beyond_the_columns_with_no_count_is_padding(tmp_path, capsys):
    """As load_train_counts: CCG's tag index places <PADDING> past the score columns."""
    (tmp_path / "c.json").write_text(json.dumps({"A": 9, "B": 3, "C": 2, "D": 1}))
    (tmp_path / "i.json").write_text(json.dumps({n: i for i, n in enumerate(
        ["A", "B", "C", "D", "<PAD>"])}))
    rc = main(["groups", "--train-counts", str(tmp_path / "c.json"), "--n-tags", "4",
               "--groups", "2", "--tag-index", str(tmp_path / "i.json")])
    out, err = capsys.readouterr()
    assert rc == 0 and "| 1 | 1 | 9 |" in out, err


# ------------------------------------------------------------- class 4 -- #

#: a verb's minimal inputs (for a flag of _NEEDS given without what it needs)
WITHOUT = {
    "evaluate": ["--entries", "{e}"], "fit": ["--entries", "{e}", "-o", "{d}/cal"],
    "compare": ["--entries", "{e}", "--dev-entries", "{e}"],
    "report": ["--entries", "{e}", "-o", "{d}/report"], "apply": ["{d}/cal", "--scores", "{s}",
                                                                  "-o", "{d}/out.npy"],
    "events": ["--events-file", "{v}"], "groups": ["--train-counts", "{c}"], "demo": [],
}
VALUES = {"chunk_rows": "10", "groups": "3", "threshold": "0.1", "gold_format": "npy",
          "gold_column": "2", "key": "a", "dev_key": "a", "scores_format": "crfsuite",
          "dev_scores_format": "crfsuite"}


def _needing():
    """(verb, flag, dest) of every flag of every verb that needs another (one
    the verb does not require)."""
    out = []
    for verb in VERBS:
        actions = _parser([verb])[1][verb]._actions
        optional = {a.dest for a in actions if not a.required}
        for a in actions:
            needs = _NEEDS.get(a.dest)
            if needs and not optional.isdisjoint(needs[1]):
                out.append((verb, a.option_strings[-1], a.dest))
    return out


NEEDING = _needing()


def test_the_flags_that_need_another_are_enumerated():
    got = {(v, f) for v, f, _ in NEEDING}
    assert ("evaluate", "--chunk-rows") in got and ("events", "--key") in got
    assert ("fit", "--threshold") in got and ("compare", "--dev-key") in got
    assert len(got) >= 30, sorted(got)


@pytest.mark.parametrize("verb, flag, dest", NEEDING, ids=[f"{v} {f}" for v, f, _ in NEEDING])
def test_a_flag_nothing_takes_is_refused(verb, flag, dest, tmp_path, capsys):
    from sparsecal.io import save_entries
    from sparsecal.structured import save_events, softmax_sequence_events
    e = sc.threshold(SCORES, GOLD)
    save_entries(tmp_path / "e.npz", e)
    save_events(tmp_path / "v.npz", softmax_sequence_events(
        SCORES.reshape(4, 15, 4), GOLD.reshape(4, 15), k=1))
    np.save(tmp_path / "s.npy", SCORES)
    (tmp_path / "c.json").write_text('{"0": 5, "1": 3}')
    files = {"e": tmp_path / "e.npz", "v": tmp_path / "v.npz", "s": tmp_path / "s.npy",
             "c": tmp_path / "c.json", "d": tmp_path}
    argv = [verb] + [a.format(**files) for a in WITHOUT[verb]] + [flag, VALUES[dest], "-q"]
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2 and f"error: {flag} " in err and "applies with" in err, (argv, err)


def test_chunk_rows_without_a_cluster_and_a_blank_scheduler(tmp_path, capsys):
    np.save(tmp_path / "s.npy", SCORES)
    np.save(tmp_path / "g.npy", GOLD)
    base = ["evaluate", "--scores", str(tmp_path / "s.npy"), "--gold", str(tmp_path / "g.npy")]
    assert main(base + ["--chunk-rows", "10"]) == 2
    assert "--chunk-rows applies with --scheduler or --dask only" in capsys.readouterr().err
    for blank in ("", " "):
        assert main(base + ["--scheduler", blank]) == 2
        assert "--scheduler needs the scheduler's address" in capsys.readouterr().err


def test_fit_scw_refuses_train_counts(tmp_path, capsys):
    np.save(tmp_path / "s.npy", SCORES)
    np.save(tmp_path / "g.npy", GOLD)
    (tmp_path / "c.json").write_text('{"0": 5, "1": 3}')
    rc = main(["fit", "--scores", str(tmp_path / "s.npy"), "--gold", str(tmp_path / "g.npy"),
               "--grouping", "scw", "--train-counts", str(tmp_path / "c.json"),
               "-o", str(tmp_path / "cal")])
    assert rc == 2 and "--train-counts applies to --grouping tfg or per-tag" in \
        capsys.readouterr().err


@pytest.mark.parametrize("bins, used", [(10, 10), (240, 240), (241, 240), (100000, 240)])
def test_the_header_and_json_say_the_bins_used(tmp_path, capsys, bins, used):
    """Equal-mass bins are at most one per entry: the header and the JSON say how
    many were used (the last case: the issue's 100000 of 20,166)."""
    np.save(tmp_path / "s.npy", SCORES)
    np.save(tmp_path / "g.npy", GOLD)
    rc = main(["evaluate", "--scores", str(tmp_path / "s.npy"), "--gold",
               str(tmp_path / "g.npy"), "--threshold", "0", "--bins", str(bins),
               "--json", str(tmp_path / "o.json")])
    out = capsys.readouterr().out
    assert rc == 0
    assert f"Threshold 0.0, {used} equal-mass bins" in out
    saved = json.loads((tmp_path / "o.json").read_text())
    assert saved["settings"]["n_bins"] == used == saved["smce"]["n_bins"]
    assert saved["smce"]["n"] == 240
