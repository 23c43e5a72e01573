"""Loaded files are checked beyond their schema (issue 30, class 7).

Every reader of saved entries (``load_entries``, ``read_parquet``, the entry
shards of a manifest, ``load_events``) is given a file whose values break the
invariants the writers keep: scores below the declared threshold, tokens
outside ``n_tokens`` or negative, entries out of (token, tag) order or twice;
events whose tags disagree with their lengths, whose sequences do not start at
their sentence or have another type than their rank; manifests naming files
outside their directory. Each is refused with one ValueError naming the file.
"""
import json
import os

import numpy as np
import pytest

import sparsecal as sc
from sparsecal.io import load_entries, save_entries
from sparsecal.io.entry_shards import load_entry_shards, new_manifest, write_manifest, \
    write_shard
from sparsecal.structured import load_events, save_events, softmax_sequence_events, \
    softmax_span_events

RNG = np.random.default_rng(11)
SCORES = RNG.dirichlet(np.ones(4), size=30)
GOLD = RNG.integers(0, 4, 30)
ENTRIES = sc.threshold(SCORES, GOLD)


def _tampered_npz(src, dst, **changes):
    """A copy of the .npz ``src`` with arrays replaced and metadata keys changed
    (``meta=dict``)."""
    with np.load(src) as data:
        arrays = dict(data)
    meta = json.loads(str(arrays["metadata"]))
    meta.update(changes.pop("meta", {}))
    arrays.update(changes, metadata=np.array(json.dumps(meta)))
    with open(dst, "wb") as f:
        np.savez(f, **arrays)
    return dst


def _swap(a, i, j):
    a = a.copy()
    a[[i, j]] = a[[j, i]]
    return a


#: tampering of an entries file -> the words of the refusal
ENTRY_TAMPERING = {
    "score below the threshold": (lambda e: {"meta": {"threshold": 0.5}}, "below threshold"),
    "n_tokens too small": (lambda e: {"meta": {"n_tokens": 3}}, "out of range"),
    "negative token": (lambda e: {"token": np.r_[-1, e.token[1:]]}, "out of range"),
    "entries twice": (lambda e: {k: np.r_[getattr(e, k)[:1], getattr(e, k)]
                                 for k in ("score", "tag", "label", "token")}, "repeats"),
    "out of order": (lambda e: {k: _swap(getattr(e, k), 0, len(e) - 1)
                                for k in ("score", "tag", "label", "token")}, "out of order"),
}


@pytest.mark.parametrize("case", sorted(ENTRY_TAMPERING))
def test_an_entries_file_that_breaks_the_invariants_is_refused(case, tmp_path):
    save_entries(tmp_path / "e.npz", ENTRIES)
    change, words = ENTRY_TAMPERING[case]
    bad = _tampered_npz(tmp_path / "e.npz", tmp_path / "bad.npz", **change(ENTRIES))
    with pytest.raises(ValueError, match=words) as info:
        load_entries(bad)
    assert str(bad) in str(info.value)


@pytest.mark.parametrize("case", sorted(ENTRY_TAMPERING))
def test_a_parquet_file_that_breaks_the_invariants_is_refused(case, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from sparsecal.io import read_parquet, to_arrow
    change, words = ENTRY_TAMPERING[case]
    changes = change(ENTRIES)
    table = to_arrow(ENTRIES)
    meta = json.loads(table.schema.metadata[b"sparsecal"])
    meta.update(changes.pop("meta", {}))
    columns = {k: changes.get(k, table.column(k).to_numpy()) for k in table.column_names}
    bad = pa.table({k: pa.array(v, type=table.schema.field(k).type) for k, v in
                    columns.items()}, metadata={b"sparsecal": json.dumps(meta).encode()})
    pq.write_table(bad, tmp_path / "bad.parquet")
    with pytest.raises(ValueError, match=words) as info:
        read_parquet(tmp_path / "bad.parquet")
    assert "bad.parquet" in str(info.value)


def _shards(directory, file_of=None):
    os.makedirs(directory, exist_ok=True)
    m = new_manifest(4, 30, 0.01, "float64")
    recs = [write_shard(directory, 0, sc.threshold(SCORES[:20], GOLD[:20]), m, (0, 20)),
            write_shard(directory, 1, sc.threshold(SCORES[20:], GOLD[20:], token_offset=20),
                        m, (20, 30))]
    if file_of is not None:
        recs[1]["file"] = file_of(directory)
    write_manifest(directory, m, recs)


@pytest.mark.parametrize("name", ["absolute", "parent", "link", "nested"])
def test_a_manifest_reaches_only_the_files_beside_it(name, tmp_path):
    """The shard named otherwise is a valid shard (the bytes of shard 1 copied
    outside), so only where it lies is wrong."""
    outside = tmp_path / "outside.npz"
    _shards(tmp_path / "ok")
    outside.write_bytes((tmp_path / "ok" / "shard-00001.npz").read_bytes())
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "sub").mkdir()
    os.symlink(outside, tmp_path / "d" / "link.npz")
    file_of = {"absolute": lambda d: str(outside), "parent": lambda d: "../outside.npz",
               "link": lambda d: "link.npz", "nested": lambda d: "sub/../../outside.npz"}[name]
    _shards(tmp_path / "d", file_of)
    np.testing.assert_array_equal(load_entry_shards(tmp_path / "ok").score, ENTRIES.score)
    with pytest.raises(ValueError, match="is not a file name of its directory"):
        load_entry_shards(tmp_path / "d")


def _events(kind):
    probs = RNG.dirichlet(np.ones(3), size=(4, 5))
    gold = probs.argmax(2)
    if kind == "sequence":
        return softmax_sequence_events(probs, gold, k=2)
    return softmax_span_events(probs, gold, ["O", "B-X", "I-X"], k=2)


def _event_tampering(ev):
    tags = ev.tags.copy()
    tags[0, ev.length[0] - 1] = -1
    start = ev.start.copy()
    start[0] += 1
    rank = ev.rank.copy()
    rank[0] += 1
    length = ev.length.copy()
    length[1] -= 1
    cases = {
        "a tag of -1 inside the event": ({"event_tags": tags}, "event_tags of -1"),
        "no type names": ({"meta": {"events": {"version": 1, "kind": ev.kind,
                                               "type_names": [], "features": []}}},
                          "type_names must be"),
        "n_tokens below the sentences": ({"meta": {"n_tokens": 1}}, "out of range"),
        "no n_tokens": ({"meta": {"n_tokens": None}}, "n_tokens"),
    }
    if ev.kind == "sequence":
        cases["a sequence not at its sentence's start"] = ({"event_start": start},
                                                           "must start at 0")
        cases["a rank that is not the type"] = ({"event_rank": rank}, "type is its rank")
        cases["sequences of one sentence of other lengths"] = (
            {"event_length": length, "event_tags": np.where(
                np.arange(ev.tags.shape[1])[None] < length[:, None], ev.tags, -1)},
            "must have its length")
    return cases


CASES = [(kind, name) for kind in ("sequence", "span")
         for name in sorted(_event_tampering(_events(kind)))]


@pytest.mark.parametrize("kind, case", CASES, ids=[f"{k}: {c}" for k, c in CASES])
def test_an_events_file_that_breaks_the_invariants_is_refused(kind, case, tmp_path, capsys):
    ev = _events(kind)
    save_events(tmp_path / "ev.npz", ev)
    load_events(tmp_path / "ev.npz")
    change, words = _event_tampering(ev)[case]
    bad = _tampered_npz(tmp_path / "ev.npz", tmp_path / "bad.npz", **change)
    with pytest.raises(ValueError, match=words) as info:
        load_events(bad)
    assert str(bad) in str(info.value)
    from sparsecal.cli.main import main
    assert main(["events", "--events-file", str(bad), "-q"]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and err.count("\n") == 1
