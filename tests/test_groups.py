"""Tests of ``sparsecal.groups``: SCW / per-tag / TFG (docs/architecture.md, Semantics 6), count
loading, the group summary (Kranzlein et al. 2021, Table 1's bottom rows), and
the real CCG / LSR training counts of the paper's release."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

import sparsecal as sc
from sparsecal import Entries, TagGroups, load_train_counts, threshold
from sparsecal.core.groups import partition_by_group
from sparsecal.datasets.synthetic import make_tagger_outputs

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


# --------------------------------------------------------------------------- #
# Reference TFG, written from docs/architecture.md, Semantics 6 / Kranzlein et al. Section 3.3      #
# --------------------------------------------------------------------------- #

def ref_tfg(counts, n_groups):
    """Sort tags by descending count (ties: tag index); add whole tags to the
    current group until its count reaches total / G (exact integer comparison
    count * G >= total), then start the next; the last group takes the rest,
    including tags never seen in training."""
    counts = [int(c) for c in counts]
    total = sum(counts)
    order = sorted(range(len(counts)), key=lambda t: (-counts[t], t))
    mapping = [None] * len(counts)
    group, acc = 0, 0
    for t in order:
        if counts[t] == 0:
            mapping[t] = n_groups - 1
            continue
        mapping[t] = group
        acc += counts[t]
        if group < n_groups - 1 and acc * n_groups >= total:
            group, acc = group + 1, 0
    return mapping


def random_counts(rng, n_tags, kind):
    if kind == "zipf":
        c = rng.multinomial(20000, 1 / np.arange(1, n_tags + 1) / np.sum(1 / np.arange(1, n_tags + 1)))
    elif kind == "ties":
        c = rng.integers(0, 4, n_tags) * 10          # many equal counts, some zeros
    elif kind == "giant":
        c = rng.integers(0, 20, n_tags)
        c[rng.integers(n_tags)] = 50 * n_tags        # one tag far above the quota
    elif kind == "sparse":
        c = np.where(rng.random(n_tags) < 0.3, rng.integers(1, 1000, n_tags), 0)
        if c.sum() == 0:
            c[0] = 1
    else:
        raise AssertionError(kind)
    return c.astype(np.int64)


@pytest.mark.parametrize("kind", ["zipf", "ties", "giant", "sparse"])
@pytest.mark.parametrize("n_groups", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("seed", range(4))
def test_tfg_matches_reference_on_random_counts(kind, n_groups, seed):
    rng = np.random.default_rng([seed, n_groups, len(kind)])
    n_tags = int(rng.integers(1, 60)) if seed else 426
    counts = random_counts(rng, n_tags, kind)
    g = TagGroups.from_counts(dict(enumerate(counts.tolist())), n_groups, n_tags=n_tags)
    assert g.tag_to_group.tolist() == ref_tfg(counts, n_groups)
    assert g.n_groups == n_groups and g.kind == "tfg" and g.n_tags == n_tags
    np.testing.assert_array_equal(g.train_counts, counts)
    # every group but the last reaches the quota; zero-count tags are in the last
    total = counts.sum()
    for k in range(n_groups - 1):
        gc = counts[g.tag_to_group == k].sum()
        if k < g.tag_to_group[counts > 0].max():
            assert gc * n_groups >= total
    assert (g.tag_to_group[counts == 0] == n_groups - 1).all()
    # groups are contiguous in the frequency order
    order = np.lexsort((np.arange(n_tags), -counts))
    pos = g.tag_to_group[order][counts[order] > 0]
    assert (np.diff(pos) >= 0).all()


@pytest.mark.parametrize("counts,n_groups,expected", [
    # one tag bigger than the quota: it alone is group 0; the rest never reach a
    # quota again, so they stay in group 1 and group 2 is empty
    ([100, 1, 1, 1], 3, [0, 1, 1, 1]),
    # ties by tag index; a group that hits the quota exactly closes
    ([5, 5, 5, 5], 2, [0, 0, 1, 1]),
    ([5, 5, 5, 5], 4, [0, 1, 2, 3]),
    # zero counts go to the last group even when an earlier group is open
    ([0, 3, 0, 1], 3, [2, 0, 2, 1]),
    ([0, 7], 4, [3, 0]),
    # quota 12/3 = 4: 6 overflows group 0; 3 + 2 (tag 4 before tag 2) closes
    # group 1; tag 2 and the unseen tag 3 are the last group
    ([6, 3, 1, 0, 2], 3, [0, 1, 2, 2, 1]),
    # G = 1 is SCW
    ([3, 0, 2], 1, [0, 0, 0]),
])
def test_tfg_hand_cases(counts, n_groups, expected):
    g = TagGroups.from_gold(np.repeat(np.arange(len(counts)), counts), n_groups,
                            n_tags=len(counts))
    assert g.tag_to_group.tolist() == expected == ref_tfg(counts, n_groups)
    assert TagGroups.from_counts(counts, n_groups) == g   # an array of per-tag counts


def test_tfg_paper_figure_1_example():
    """45 training instances, 3 groups (quota 15): the most frequent tag (16)
    overflows group 1, as in Kranzlein et al.'s Figure 1."""
    counts = {"circle": 16, "square": 9, "triangle": 8, "star": 5, "heart": 4, "moon": 3}
    index = {name: i for i, name in enumerate(counts)}
    g = TagGroups.from_counts(counts, 3, tag_index=index)
    assert g.tag_to_group.tolist() == [0, 1, 1, 2, 2, 2]
    assert [g.train_counts[g.tag_to_group == k].sum() for k in range(3)] == [16, 17, 12]
    assert g.tag_names == list(counts)


def test_tfg_all_zero_counts_raise():
    with pytest.raises(ValueError, match="all zero"):
        TagGroups.from_counts({0: 0, 1: 0}, 2)
    with pytest.raises(ValueError, match="n_groups"):
        TagGroups.from_counts({0: 1}, 0)


def test_scw_and_per_tag():
    scw = TagGroups.scw(7)
    assert scw.n_groups == 1 and scw.kind == "scw" and scw.tag_to_group.tolist() == [0] * 7
    pt = TagGroups.per_tag(7)
    assert pt.n_groups == 7 and pt.kind == "per-tag"
    assert pt.tag_to_group.tolist() == list(range(7))
    assert TagGroups.tfg({i: 1 for i in range(7)}, 1) == scw
    assert TagGroups.tfg({i: 1 for i in range(7)}, 7) == pt
    assert scw != pt and "n_groups=7" in repr(pt)
    with pytest.raises(ValueError, match="n_tags"):
        TagGroups.scw(0)
    with pytest.raises(ValueError):
        pt.tag_to_group[0] = 3     # read-only


def test_constructor_validation():
    with pytest.raises(ValueError, match="non-empty"):
        TagGroups([])
    with pytest.raises(TypeError, match="integers"):
        TagGroups([0.0, 1.0])
    with pytest.raises(ValueError, match=r"\[0, 2\)"):
        TagGroups([0, 2], 2)
    with pytest.raises(ValueError, match=r"\[0, 2\)"):
        TagGroups([0, -1], 2)
    with pytest.raises(ValueError, match="one count per tag"):
        TagGroups([0, 1], train_counts=[1, 2, 3])
    with pytest.raises(ValueError, match="one name per tag"):
        TagGroups([0, 1], tag_names=["a"])
    g = TagGroups([1, 1, 0], 4)     # empty groups allowed
    assert g.n_groups == 4 and g.members(1).tolist() == [0, 1]
    assert g.members(3).tolist() == []


# --------------------------------------------------------------------------- #
# Loading counts                                                               #
# --------------------------------------------------------------------------- #

def test_counts_from_json_files(tmp_path):
    names = ["NN", "VB", "DT", "JJ", "<UNK>"]
    index = {n: i for i, n in enumerate(names)}
    index["<PAD>"] = 5                       # not a column: no count, ignored
    counts = {"VB": 30, "NN": 50, "DT": 20, "JJ": 5}
    (tmp_path / "counts.json").write_text(json.dumps(counts))
    (tmp_path / "index.json").write_text(json.dumps(index))
    arr = load_train_counts(tmp_path / "counts.json", n_tags=5,
                            tag_index=str(tmp_path / "index.json"))
    assert arr.tolist() == [50, 30, 20, 5, 0] and arr.dtype == np.int64
    g = TagGroups.from_counts(str(tmp_path / "counts.json"), 3, n_tags=5,
                              tag_index=tmp_path / "index.json")
    assert g.tag_to_group.tolist() == ref_tfg([50, 30, 20, 5, 0], 3)
    assert g.tag_names == names
    # without n_tags the inventory runs to the largest index in tag_index
    assert load_train_counts(counts, tag_index=index).shape == (6,)
    # counts keyed by column indices, no tag_index
    (tmp_path / "by_index.json").write_text(json.dumps({"0": 50, "3": 5, "1": 30}))
    assert load_train_counts(tmp_path / "by_index.json").tolist() == [50, 30, 0, 5]
    assert load_train_counts(tmp_path / "by_index.json", n_tags=6).tolist() == \
        [50, 30, 0, 5, 0, 0]


def test_counts_from_mapping_with_names_equals_array_of_gold_tags():
    rng = np.random.default_rng(3)
    names = [f"tag{i}" for i in range(40)]
    index = {n: i for i, n in enumerate(names)}
    gold = rng.integers(0, 35, 5000)           # tags 35..39 never seen
    by_name = {names[t]: int(c) for t, c in enumerate(np.bincount(gold)) if c}
    a = TagGroups.from_counts(by_name, 5, tag_index=index)
    b = TagGroups.from_gold(gold, 5, n_tags=40)
    c = TagGroups.from_gold(gold.astype(np.int32), 5, n_tags=40)
    d = TagGroups.from_counts(np.bincount(gold, minlength=40), 5)
    assert a == b == c == d
    np.testing.assert_array_equal(a.train_counts, np.bincount(gold, minlength=40))
    np.testing.assert_array_equal(d.train_counts, a.train_counts)
    assert a.tag_names == names and b.tag_names is None
    assert (a.tag_to_group[35:] == 4).all()
    assert TagGroups.from_gold(gold, 5).n_tags == 35   # the largest gold tag + 1


def test_an_array_of_per_tag_counts_is_not_read_as_gold_tags():
    """Issue 25: 60 per-tag counts (summing to 50,555) are 60 tags, not 50,555."""
    zipf = 1.0 / np.arange(1, 61)
    counts = np.floor(50555 * zipf / zipf.sum()).astype(np.int64)
    counts[0] += 50555 - counts.sum()
    g = TagGroups.from_counts(counts, 5)
    assert g.n_tags == 60 and g.tag_to_group.tolist() == ref_tfg(counts, 5)
    np.testing.assert_array_equal(load_train_counts(counts.tolist()), counts)
    with pytest.raises(ValueError, match=r"train_counts has 60 counts but n_tags=61: .*"
                                         r"TagGroups\.from_gold\(train_gold, n_groups, "
                                         r"n_tags=61\)"):
        TagGroups.from_counts(counts, 5, n_tags=61)
    gold = np.repeat(np.arange(60), counts)
    with pytest.raises(ValueError, match="train_counts has 50555 counts but n_tags=60"):
        TagGroups.from_counts(gold, 5, n_tags=60)
    assert TagGroups.from_gold(gold, 5, n_tags=60) == g


@pytest.mark.parametrize("counts,kw,exc,match", [
    ({"NN": 3, "XX": 1}, dict(tag_index={"NN": 0}), ValueError, "unknown tag 'XX'"),
    ({"NN": 3}, {}, ValueError, "tag_index"),
    ({0: 3, 7: 1}, dict(n_tags=5), ValueError, "n_tags"),
    ({0: 3, -1: 1}, {}, ValueError, "non-negative"),
    ({0: 3, 1: -1}, {}, ValueError, "count of tag 1 must be a non-negative integer"),
    ({0: 3, 1: 1.5}, {}, ValueError, "count of tag 1 must be a non-negative integer"),
    ({0: 3, 1: 2.0}, {}, ValueError, r"count of tag 1 .* got 2\.0"),
    ({0: 3, 1: True}, {}, ValueError, "count of tag 1 .* got True"),
    ({0: 3, 1: np.bool_(True)}, {}, ValueError, "count of tag 1 .* got "),
    ({0: 3, 1: "4"}, {}, ValueError, "count of tag 1 .* got '4'"),
    ({0: 3, 1: None}, {}, ValueError, "count of tag 1 .* got None"),
    ({0: 3, 1: 2 ** 63 - 1}, {}, ValueError, r"at most 2\*\*53"),
    ({0: 2 ** 53, 1: 2 ** 53}, {}, ValueError, r"add up to more than 2\*\*53"),
    ({"1": 3, "01": 1}, {}, ValueError, "count twice for one column"),
    ({0: 3, 2 ** 40: 1}, {}, ValueError, "below 2\\*\\*31"),
    ({"N": 3}, dict(tag_index={"N": 0, "NP": 0}), ValueError, "'N' and 'NP' share column 0"),
    ({"N": 3}, dict(tag_index={"N": True}), ValueError, "column of tag 'N'"),
    ({"N": 3}, dict(tag_index={"N": -2}), ValueError, "column of tag 'N'"),
    ({"N": 3}, dict(tag_index={"N": 1.0}), ValueError, "column of tag 'N'"),
    ({"N": 3}, dict(tag_index=["N"]), ValueError, "tag_index must map"),
    ({0: 3}, dict(n_tags=2.5), ValueError, "n_tags"),
    ({0: 3}, dict(n_tags=2 ** 40), ValueError, "n_tags must be at most"),
    (np.array([0, 1], dtype=np.uint64), dict(n_tags=2 ** 31), ValueError, "n_tags must be at most"),
    (np.array([0, 1, -1]), {}, ValueError, r"train_counts\[2\] = -1: .* non-negative"),
    (np.array([0, 2 ** 60]), {}, ValueError, r"at most 2\*\*53"),
    (np.array([2 ** 53, 2 ** 53]), {}, ValueError, r"add up to more than 2\*\*53"),
    (np.array([0, 5]), dict(n_tags=3), ValueError, "train_counts has 2 counts but n_tags=3"),
    (np.array([], dtype=int), {}, ValueError, "n_tags"),
    (np.array([0.0, 1.0]), {}, TypeError, "train_counts must be a mapping, .* got dtype float64"),
    (np.array([[0, 1]]), {}, TypeError, r"1-D .* got shape \(1, 2\)"),
    ([[0, 1], [1]], {}, ValueError, "train_counts is not an array of numbers: it is ragged"),
])
def test_count_errors(counts, kw, exc, match):
    with pytest.raises(exc, match=match):
        load_train_counts(counts, **kw)
    with pytest.raises(exc, match=match):
        TagGroups.from_counts(counts, 2, **kw)


@pytest.mark.parametrize("gold,kw,exc,match", [
    (np.array([0, 2 ** 40]), {}, ValueError, "out of range"),
    (np.array([0, 1, -1]), {}, ValueError, "train_gold must hold non-negative"),
    (np.array([0, 5]), dict(n_tags=3), ValueError, "training gold tag 5 is out of range"),
    (np.array([0, 1], dtype=np.uint64), dict(n_tags=2 ** 31), ValueError, "n_tags must be at most"),
    (np.array([0.0, 1.0]), {}, TypeError, "train_gold must be a 1-D integer array"),
    ({0: 3}, {}, TypeError, "train_gold must be a 1-D integer array"),
])
def test_gold_errors(gold, kw, exc, match):
    with pytest.raises(exc, match=match):
        TagGroups.from_gold(gold, 2, **kw)


def test_count_and_gold_arrays_of_every_integer_dtype_agree():
    gold = np.array([0, 2, 2, 1, 2])
    counts = np.array([1, 1, 3])
    want = TagGroups.from_gold(gold, 2)
    for dtype in ("u1", "<u8", ">i8", "<i2", ">u4"):
        assert TagGroups.from_gold(gold.astype(dtype), 2) == want
        np.testing.assert_array_equal(load_train_counts(counts.astype(dtype)), counts)
        assert TagGroups.from_counts(counts.astype(dtype), 2) == want


def test_json_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="train counts file .*missing.json' does not"):
        load_train_counts(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="is a directory, not a file"):
        load_train_counts(tmp_path)
    (tmp_path / "nested.json").write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(ValueError, match="nested.json' is nested too deeply"):
        load_train_counts(tmp_path / "nested.json")
    (tmp_path / "null.json").write_text("null")
    with pytest.raises(ValueError, match="null.json' must hold a JSON object, got null"):
        load_train_counts(tmp_path / "null.json")
    (tmp_path / "nan.json").write_text('{"0": NaN}')
    with pytest.raises(ValueError, match="nan.json' is not valid JSON: the non-standard "
                                         "constant NaN"):
        load_train_counts(tmp_path / "nan.json")
    (tmp_path / "twice.json").write_text('{"0": 1, "0": 5}')
    with pytest.raises(ValueError, match="twice.json' is not valid JSON: the key '0' appears"):
        load_train_counts(tmp_path / "twice.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_train_counts(tmp_path / "bad.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="JSON object"):
        load_train_counts(tmp_path / "list.json")
    (tmp_path / "c.json").write_text('{"a": 1}')
    with pytest.raises(FileNotFoundError, match="tag index file .*nope.json' does not"):
        load_train_counts(tmp_path / "c.json", tag_index=tmp_path / "nope.json")
    (tmp_path / "dup.json").write_text('{"a": 0, "b": 0}')
    with pytest.raises(ValueError, match="tag index .*dup.json': tags 'a' and 'b' share"):
        load_train_counts(tmp_path / "c.json", tag_index=tmp_path / "dup.json")


def test_unknown_tags_in_queries():
    g = TagGroups.from_counts({0: 5, 1: 3, 2: 1}, 2)
    assert g.group_of([2, 0, 1]).tolist() == [1, 0, 1]
    with pytest.raises(ValueError, match="unknown tag 3"):
        g.group_of([0, 3])
    with pytest.raises(ValueError, match="unknown tag -1"):
        g.group_of([-1])
    e = Entries([0.5, 0.6], [0, 3], [1, 0])
    with pytest.raises(ValueError, match="unknown tag"):
        g.partition(e)
    with pytest.raises(ValueError, match="n_tags"):
        g.partition(Entries([0.5], [0], [1], n_tags=4))


def test_partition_by_group_is_stable():
    rng = np.random.default_rng(5)
    tag = rng.integers(0, 30, 5000)
    mapping = rng.integers(0, 6, 30)
    mapping[mapping == 2] = 3                  # group 2 empty
    perm, offsets = partition_by_group(tag, mapping, 6)
    np.testing.assert_array_equal(perm, np.argsort(mapping[tag], kind="stable"))
    np.testing.assert_array_equal(offsets, np.concatenate(
        ([0], np.cumsum(np.bincount(mapping[tag], minlength=6)))))
    assert offsets[3] == offsets[2]


# --------------------------------------------------------------------------- #
# Summary (Table 1 bottom rows)                                                #
# --------------------------------------------------------------------------- #

def ref_summary(groups, counts, entries):
    share = counts / counts.sum()
    rows = []
    for g in range(groups.n_groups):
        members = [t for t in range(len(counts)) if groups.tag_to_group[t] == g]
        in_g = np.isin(entries.tag, members)
        row = {"group": g + 1, "tag_types": len(members),
               "train_count": int(sum(counts[t] for t in members)),
               "entries": int(in_g.sum()),
               "tokens": len(set(entries.token[in_g].tolist()))}
        if members:
            row["train_share_min"] = min(share[t] for t in members)
            row["train_share_max"] = max(share[t] for t in members)
        rows.append(row)
    return rows


def check_summary(rows, ref):
    assert len(rows) == len(ref)
    for row, r in zip(rows, ref):
        for key in ("group", "tag_types", "train_count", "entries", "tokens"):
            assert row[key] == r[key], key
        if "train_share_min" in r:
            assert row["train_share_min"] == pytest.approx(r["train_share_min"], rel=1e-12)
            assert row["train_share_max"] == pytest.approx(r["train_share_max"], rel=1e-12)
        else:
            assert math.isnan(row["train_share_min"]) and math.isnan(row["train_share_max"])


@pytest.mark.parametrize("n_groups", [1, 3, 5])
def test_summary_matches_brute_force(n_groups):
    out = make_tagger_outputs(n_tokens=1500, n_tags=80, split_seed=3, tagger_seed=4)
    counts = np.array([out.train_counts[t] for t in range(80)])
    e = threshold(out.scores, out.gold, 0.01)
    g = TagGroups.from_counts(out.train_counts, n_groups, n_tags=80)
    rows = g.summary(e)
    check_summary(rows, ref_summary(g, counts, e))
    assert sum(r["entries"] for r in rows) == len(e)
    assert sum(r["tag_types"] for r in rows) == 80
    # entries not in token order (built by hand): tokens still counted once each
    p = np.random.default_rng(0).permutation(len(e))
    shuffled = Entries(e.score[p], e.tag[p], e.label[p], e.token[p], n_tags=80)
    check_summary(g.summary(shuffled), ref_summary(g, counts, shuffled))


def test_summary_without_counts_or_tokens_and_empty_group():
    g = TagGroups([0, 0, 2], 3)
    rows = g.summary()
    assert rows == [{"group": 1, "tag_types": 2}, {"group": 2, "tag_types": 0},
                    {"group": 3, "tag_types": 1}]
    e = Entries([0.5, 0.2, 0.9], [0, 2, 0], [1, 0, 0])          # no token
    rows = g.summary(e)
    assert [r["entries"] for r in rows] == [2, 0, 1]
    assert all("tokens" not in r for r in rows)
    g2 = TagGroups.from_counts({0: 4, 1: 1, 2: 0}, 3)
    e2 = Entries([0.5, 0.2, 0.9], [0, 2, 0], [1, 0, 0], token=[0, 0, 1])
    rows = g2.summary(e2)
    assert [r["tokens"] for r in rows] == [2, 0, 1]
    assert [r["tag_types"] for r in rows] == [1, 1, 1]
    assert rows[2]["train_share_max"] == 0.0


# --------------------------------------------------------------------------- #
# Real data: the paper's CCG and LSR training counts                           #
# --------------------------------------------------------------------------- #

def _real(task, n_tags):
    folder = DATA / task
    counts, index = folder / "training_tag_frequencies.json", folder / "tag_indexes.json"
    if not (counts.is_file() and index.is_file()):
        pytest.skip(f"real data not available: {folder} (the shared/data folder next to "
                    "the repository) lacks training_tag_frequencies.json/tag_indexes.json")
    return TagGroups.from_counts(counts, 5, n_tags=n_tags, tag_index=index), counts, index


def _pct(x):
    return round(100 * x, 1)


def test_real_ccg_groups():
    g, counts_path, index_path = _real("ccg", 426)
    counts = json.loads(counts_path.read_text())
    index = json.loads(index_path.read_text())
    assert g.n_tags == 426 and g.n_groups == 5
    assert g.train_counts.sum() == 927497 == sum(counts.values())
    rows = g.summary()
    # group 1 is the single tag N, 22.2% of training tokens (Table 1)
    assert [g.tag_names[t] for t in g.members(0)] == ["N"]
    assert _pct(rows[0]["train_share_min"]) == _pct(rows[0]["train_share_max"]) == 22.2
    # group 5: the rarest tags, each at most 0.4%; <UNKNOWN> (no count) is there
    last = g.members(4)
    share = g.train_counts / g.train_counts.sum()
    assert all(_pct(s) <= 0.4 for s in share[last])
    assert _pct(rows[4]["train_share_max"]) == 0.4
    assert g.group_of([index["<UNKNOWN>"]])[0] == 4
    assert g.tag_to_group.tolist() == ref_tfg(g.train_counts, 5)
    assert sum(r["tag_types"] for r in rows) == 426


def test_real_lsr_groups():
    g, counts_path, _ = _real("lsr", 598)
    assert g.n_tags == 598
    assert g.train_counts.sum() == 44801
    rows = g.summary()
    # group 1: 3 tags spanning 7.1%-10.3%
    assert rows[0]["tag_types"] == 3
    assert _pct(rows[0]["train_share_min"]) == 7.1
    assert _pct(rows[0]["train_share_max"]) == 10.3
    share = g.train_counts / g.train_counts.sum()
    assert all(_pct(s) <= 0.1 for s in share[g.members(4)])
    assert g.tag_to_group.tolist() == ref_tfg(g.train_counts, 5)
    # Table 1's GMCE groups: every group but the last holds >= 1/5 of the tokens
    for r in rows[:4]:
        assert r["train_count"] * 5 >= 44801


def test_real_ccg_gold_tags_in_range():
    path = DATA / "ccg" / "test_gold.npy"
    if not path.is_file():
        pytest.skip(f"real data not available: {path}")
    g, _, _ = _real("ccg", 426)
    gold = np.load(path)
    assert gold.shape == (55371,)
    groups = g.group_of(gold)            # every gold column is a known tag
    assert np.bincount(groups, minlength=5).sum() == 55371
    assert sc.TagGroups.from_gold(gold, 5, n_tags=426).n_tags == 426
