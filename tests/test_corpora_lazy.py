"""Lazy corpus fields and ``.txt`` gold on the byte path.

``CorpusTags.forms`` and ``.lines`` are made on first access: they must equal
the eager values (the ``conllu`` package's parse, a per-line Python reference)
on non-ASCII forms, CRLF, comments, multiword tokens, empty nodes, ``.gz``/``.xz``.
``load_gold`` of a ``.txt`` file must equal the per-line ``str`` reader it
replaced (strip, dict lookup or ``int``), errors included, on random files.
"""
import gzip
import lzma
import pickle
import re
from dataclasses import FrozenInstanceError

import numpy as np
import pytest

from sparsecal.io import load_gold, read_conll_columns, read_conllu
from sparsecal.io.tagids import tag_ids

FORMS = ["a", "Zürich", "漢字", "’s", "naïve", "x-y", "Ω", "1"]
COMPRESS = {"": lambda b: b, ".gz": gzip.compress, ".xz": lzma.compress}


def _conllu_text(rng, n_words):
    """A CoNLL-U text with comments, multiword ranges and empty nodes."""
    out, k = ["# sent_id = 1"], 1
    for _ in range(n_words):
        r = rng.random()
        if r < 0.1 and k > 1:   # a sentence break after a word (no empty sentence)
            out += ["", f"# sent_id = {len(out)}"]
            k = 1
        elif r < 0.2:
            out.append("\t".join([f"{k}-{k + 1}", "du"] + ["_"] * 8))
        elif r < 0.25:
            out.append("\t".join([f"{k}.1", "e"] + ["_"] * 8))
        form = FORMS[rng.integers(len(FORMS))]
        tag = ["NOUN", "VERB", "ADJ", "X"][rng.integers(4)]
        out.append("\t".join([str(k), form, form.lower(), tag, "_", "_", "0", "dep", "_",
                              "_"]))
        k += 1
    return out


def _write(tmp_path, name, lines, newline, suffix):
    path = tmp_path / (name + suffix)
    path.write_bytes(COMPRESS[suffix]((newline.join(lines) + newline).encode()))
    return path


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_words", [1, 2, 150])
@pytest.mark.parametrize("suffix", ["", ".gz", ".xz"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_lazy_conllu_fields_equal_the_conllu_package(tmp_path, seed, n_words, suffix,
                                                     newline):
    rng = np.random.default_rng(seed)
    lines = _conllu_text(rng, n_words)
    path = _write(tmp_path, "c.conllu", lines, newline, suffix)
    lazy = read_conllu(path, "upos")
    eager = read_conllu(path, "upos", engine="conllu")
    assert type(lazy._forms).__name__ == "_LazyForms"   # nothing decoded yet
    np.testing.assert_array_equal(lazy.gold, eager.gold)
    np.testing.assert_array_equal(lazy.offsets, eager.offsets)
    assert lazy.tag_index == eager.tag_index
    assert lazy.forms.dtype == object and lazy.forms.tolist() == eager.forms.tolist()
    assert lazy.forms is lazy.forms                       # decoded once
    word_lines = [i + 1 for i, line in enumerate(lines)
                  if re.match(r"[0-9]+\t", line)]
    assert lazy.lines.dtype == np.int64 and lazy.lines.tolist() == word_lines


@pytest.mark.parametrize("suffix", ["", ".xz"])
def test_lazy_conll_fields_and_immutability(tmp_path, suffix):
    lines = ["-DOCSTART- -X- O", "", "Zürich NNP B-LOC", "漢字 NN O", "", "naïve JJ O"]
    path = _write(tmp_path, "c.conll", lines, "\r\n", suffix)
    corpus = read_conll_columns(path)
    assert corpus.forms.tolist() == ["Zürich", "漢字", "naïve"]
    assert corpus.lines.tolist() == [3, 4, 6]
    assert corpus.offsets.tolist() == [0, 2, 3] and corpus.gold.tolist() == [0, 1, 1]
    for name in ("gold", "forms", "lines", "tag_index"):
        with pytest.raises(FrozenInstanceError):
            setattr(corpus, name, None)
    with pytest.raises(FrozenInstanceError):
        del corpus.gold
    again = pickle.loads(pickle.dumps(read_conll_columns(path)))   # forms not read yet
    assert again.forms.tolist() == corpus.forms.tolist()
    assert again.lines.tolist() == corpus.lines.tolist()
    assert repr(corpus) == "CorpusTags(n_tokens=3, n_sentences=2, n_tags=2)"


# ---- .txt gold: the byte path against the per-line str reader it replaced ----

def _old_txt(data, tag_index, unknown, source):
    """The previous reader: decode, universal newlines, one blank last line
    allowed, ``str.strip``, then ``tag_ids`` or ``int`` per line."""
    text = data.decode("utf-8").removeprefix("\ufeff")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if lines and lines[-1].strip() == "":
        lines.pop()
    stripped = [line.strip() for line in lines]
    if tag_index is not None:
        return tag_ids(stripped, tag_index, unknown=unknown,
                       lines=np.arange(1, len(stripped) + 1), source=source)[0]
    for i, s in enumerate(stripped):
        if not re.fullmatch(r"-?[0-9]{1,18}", s):
            raise ValueError(f"{source!r} line {i + 1}: {s!r} is not a tag index (pass a tag index "
                             "JSON to read tag strings)")
    return np.array([int(s) for s in stripped], dtype=np.int64)


INTS = ["0", "7", "42", "-1", "007", "-0", "9" * 18, "-" + "9" * 18]
BAD_INTS = ["9" * 19, "-", "--1", "+3", "1.5", "٣", "1 2", ""]
NAMES = ["NOUN", "B-ORG", "Zürich", "漢", "S[dcl]/NP", "a b", "x" * 20, "1"]
PADS = ["", " ", "\t", "\u00a0", "\u3000 ", "\x0c"]


def _txt(rng, n, kind):
    pool = {"ints": INTS, "names": NAMES, "mixed": INTS + NAMES,
            "bad": INTS * 3 + BAD_INTS}[kind]
    body = [PADS[rng.integers(len(PADS))] * (rng.random() < 0.2)
            + pool[rng.integers(len(pool))]
            + PADS[rng.integers(len(PADS))] * (rng.random() < 0.2) for _ in range(n)]
    newline = ["\n", "\r\n", "\r"][rng.integers(3)]
    text = newline.join(body) + newline * int(rng.integers(0, 3))
    return ("\ufeff" if rng.random() < 0.3 else "") + text


def _outcome(fn):
    try:
        return fn()
    except ValueError as exc:
        return str(exc)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("n", [1, 2, 9, 300])
@pytest.mark.parametrize("kind", ["ints", "names", "mixed", "bad"])
def test_txt_gold_equals_the_str_reader(tmp_path, seed, n, kind):
    rng = np.random.default_rng(seed)
    data = _txt(rng, n, kind).encode()
    path = tmp_path / "G"
    path.write_bytes(data)
    index = {t: i for i, t in enumerate(NAMES[: 1 + seed % len(NAMES)])}
    cases = [(None, "error")] if kind in ("ints", "bad") else []
    cases += [(index, "error"), (index, "extend"), (index, -1)]
    for tag_index, unknown in cases:
        got = _outcome(lambda: load_gold(path, tag_index=tag_index, unknown=unknown,
                                         format="txt"))
        want = _outcome(lambda: _old_txt(data, tag_index, unknown, str(path)))
        if isinstance(want, str):
            assert got == want
        else:
            assert got.dtype == np.int64 and got.tolist() == want.tolist()


def test_txt_gold_edge_cases(tmp_path):
    path = tmp_path / "g.txt"
    path.write_bytes(b"\xef\xbb\xbf3\r\n-1\r\n999999999999999999\r\n\r\n")
    assert load_gold(path).tolist() == [3, -1, 999_999_999_999_999_999]
    path.write_bytes(b"1\n9999999999999999999\n")      # 19 digits: not an index
    with pytest.raises(ValueError, match=r"line 2: '9999999999999999999' is not a tag"):
        load_gold(path)
    path.write_bytes(b"1\n\n2\n")                      # a blank line inside
    with pytest.raises(ValueError, match=r"line 2: '' is not a tag index"):
        load_gold(path)
    path.write_bytes(b"")
    assert load_gold(path).tolist() == [] and load_gold(path).dtype == np.int64
    path.write_bytes(" N \nX\nX\n\u00a0N\n".encode())
    with pytest.raises(ValueError, match=r"'.*g.txt' line 2: unknown tag 'X' .* 2 tokens "
                                         r"in all: 'X' \(lines 2, 3\)"):
        load_gold(path, tag_index={"N": 0})
    assert load_gold(path, tag_index={"N": 0}, unknown="extend").tolist() == [0, 1, 1, 0]
    for pad in ("\u00a0", "\u2003", "\u3000", "\x1f"):   # only a line's end is space
        path.write_bytes(f"N{pad}\nV\n".encode())
        assert load_gold(path, tag_index={"N": 0, "V": 1}).tolist() == [0, 1]
    path.write_bytes(b"\n".join([b"N", b"V"] * 3) + b"\n")
    with gzip.open(tmp_path / "g.txt.gz", "wb") as f:
        f.write(path.read_bytes())
    assert load_gold(tmp_path / "g.txt.gz", tag_index={"N": 4, "V": 2}).tolist() == \
        [4, 2] * 3
