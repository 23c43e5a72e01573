"""The CorefUD reader (sparsecal.io.read_coref) against a plain-Python parse: a
regex and a stack per entity over each line, on GUM and on small files, and
one clear error per malformed file."""
import lzma
import re
from pathlib import Path

import numpy as np
import pytest

from sparsecal.io import read_coref

GUM = Path(__file__).resolve().parents[2] / "shared" / "data" / "gum"
ROW = "{}\t{}\t_\t_\t_\t_\t0\t_\t_\t{}\n"


def _plain(text):
    """{(doc, start, end, id, type, depth)} and the entity ids, by a loop."""
    mentions, open_, doc, tok = [], {}, -1, -1
    for line in text.splitlines():
        if line.startswith("# newdoc"):
            doc += 1
        if not line or line.startswith("#"):
            continue
        cols = line.split("\t")
        if not cols[0].isdigit():
            continue
        tok += 1
        value = dict(a.split("=", 1) for a in cols[9].split("|") if "=" in a).get("Entity")
        for opened, closed_id in re.findall(r"\(([^()]+)|([^()]+)\)", value or ""):
            if opened:
                eid = opened.split("-")[0]
                etype = opened.split("-")[1] if "-" in opened else ""
                depth = sum(len(v) for v in open_.values())
                open_.setdefault((doc, eid), []).append((tok, etype, depth))
            else:
                s, etype, depth = open_[(doc, closed_id)].pop()
                mentions.append((doc, s, tok + 1, closed_id, etype, depth))
        # a one-token mention "(id-type)" closes its own open
        for eid in re.findall(r"\(([^()-]+)[^()]*\)", value or ""):
            s, etype, depth = open_[(doc, eid)].pop()
            mentions.append((doc, s, tok + 1, eid, etype, depth))
    assert not any(open_.values())
    return mentions


def _ours(c):
    return [(int(c.mention_document[m]), int(c.start[m]), int(c.end[m]),
             c.entity_ids[c.entity[m]], c.types[c.mention_type[m]], int(c.depth[m]))
            for m in range(c.n_mentions)]


@pytest.mark.skipif(not GUM.is_dir(), reason=f"real data not available: {GUM} is absent")
@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_gum_counts_and_mentions_equal_a_plain_parse(split):
    path = GUM / f"en_gum-cc-by-{split}.conllu.xz"
    text = lzma.open(path, "rt", encoding="utf-8").read()
    want = _plain(text)
    c = read_coref(path)
    n_docs = text.count("# newdoc id")
    assert c.n_mentions == len(want) == sum(v.count("(") for v in
                                            re.findall(r"[\t|]Entity=([^|\n]*)", text))
    assert c.n_entities == len({(m[0], m[3]) for m in want})
    assert sorted(_ours(c)) == sorted(want)
    assert len(c.document_names) == n_docs == {"train": 107, "dev": 16, "test": 16}[split]
    # entity types by hand: GUM's ten, entities typed by their first mention
    assert len(c.types) == 10
    for e in (0, c.n_entities // 2, c.n_entities - 1):
        ch = c.chain(e)
        assert (c.entity[ch] == e).all() and (np.diff(ch) > 0).all()
        assert c.entity_type[e] == c.mention_type[ch[0]]
    assert (np.diff(c.chain(0)) > 0).all() and c.chain_offsets[-1] == c.n_mentions
    assert c.documents[-1] == c.forms.shape[0] and (np.diff(c.offsets) > 0).all()


def _write(tmp_path, miscs, docs=(0,)):
    text = ""
    for i, misc in enumerate(miscs):
        if i in docs:
            text += f"# newdoc id = d{i}\n"
        text += ROW.format(i + 1, f"w{i}", misc)
    path = tmp_path / "t.conllu"
    path.write_text(text + "\n", encoding="utf-8")
    return path


def test_small_file_by_hand(tmp_path):
    path = _write(tmp_path, ["Entity=(1-person-x(2-place-y)", "SpaceAfter=No|Entity=1)",
                             "_", "Entity=(1-person)|MSeg=a-b", "Entity=(5-time(1-person)5)"],
                  docs=(0, 3))
    c = read_coref(path)
    # doc 0: tokens 0-1 (entity 1 over both, entity 2 inside); doc 1: tokens 2-4
    assert c.start.tolist() == [0, 0, 3, 4, 4] and c.end.tolist() == [2, 1, 4, 5, 5]
    assert c.depth.tolist() == [0, 1, 0, 0, 1]
    assert c.mention_document.tolist() == [0, 0, 1, 1, 1]
    assert c.entity.tolist() == [0, 1, 2, 3, 2]        # "1" in doc d3 is a new entity
    assert c.entity_ids.tolist() == ["1", "2", "1", "5"]
    assert [c.types[t] for t in c.entity_type] == ["person", "place", "person", "time"]
    assert c.document_names == ("d0", "d3") and c.documents.tolist() == [0, 3, 5]
    assert c.lines.tolist() == [2, 3, 4, 6, 7]


@pytest.mark.parametrize("miscs, line, message", [
    (["Entity=(1-person", "_"], 2, "never closed"),
    (["Entity=(1-person", "Entity=2)"], 3, "no open mention"),
    (["Entity=1)"], 2, "no open mention"),
    (["Entity=(1[1/2]-person)"], 2, "discontinuous"),
    (["Entity=x(1-person)"], 2, "outside the brackets"),
    (["Entity=(1-person)x"], 2, "outside the brackets"),
    (["Entity=(1-person)|Entity=(2-person)"], 2, "twice"),
    (["Entity=abc"], 2, "without brackets"),
    (["Entity=(1-person", "Entity=)"], 3, "without an entity id"),
])
def test_malformed_entities_are_refused_naming_the_line(tmp_path, miscs, line, message):
    path = _write(tmp_path, miscs)
    with pytest.raises(ValueError, match=rf"t\.conllu' line {line}: .*{message}"):
        read_coref(path)


def test_a_mention_does_not_run_across_documents(tmp_path):
    path = _write(tmp_path, ["Entity=(1-person", "Entity=1)"], docs=(0, 1))
    with pytest.raises(ValueError, match="line 4: a closing bracket of an entity with no open"):
        read_coref(path)


def test_entity_on_a_multiword_token_is_refused(tmp_path):
    path = tmp_path / "t.conllu"
    path.write_text("1-2\tab\t_\t_\t_\t_\t_\t_\t_\tEntity=(1-x)\n" + ROW.format(1, "a", "_")
                    + ROW.format(2, "b", "_") + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 1: Entity= on a multiword token"):
        read_coref(path)


def test_files_without_mentions(tmp_path):
    c = read_coref(_write(tmp_path, ["_", "SpaceAfter=No"]))
    assert (c.n_mentions, c.n_entities, c.document_names) == (0, 0, ("d0",))
    assert c.chain_offsets.tolist() == [0] and c.forms.tolist() == ["w0", "w1"]
    empty = tmp_path / "empty.conllu"
    empty.write_text("", encoding="utf-8")
    c = read_coref(empty)
    assert (c.n_mentions, len(c.document_names), c.documents.tolist()) == (0, 0, [0])
