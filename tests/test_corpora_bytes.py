"""The byte-level corpus readers (io/bytefields.py) against a per-line Python
reference (``str.split``, ``str.isspace``) on random files: Unicode and ASCII
whitespace of every kind, NUL bytes, fields longer than one 64-bit word, fields
that differ only by trailing NULs, CRLF, blank and whitespace-only lines,
comments, multiword ranges, ``-DOCSTART-``; tiny (1, 2 tokens) and larger sizes,
chunked and not."""
import numpy as np
import pytest

from sparsecal.io import bytefields, read_conll_columns, read_conllu
from sparsecal.io.bytefields import Lines, distinct_fields, joined_fields

SPACES = [" ", "\t", "\x0b", "\x0c", "\x1c", "\x1f", "\u00a0", "\u0085", "\u1680", "\u2003",
          "\u2028", "\u202f", "\u205f", "\u3000"]
LETTERS = ["a", "B", "é", "’", "漢", "\x00", "-", "1", "ß", "\u200b"]   # U+200B is no space


def _word(rng, max_len=20):
    n = int(rng.integers(1, max_len + 1)) if rng.random() < 0.3 else int(rng.integers(1, 4))
    return "".join(LETTERS[i] for i in rng.integers(0, len(LETTERS), n))   # NULs kept


def _sep(rng):
    return "".join(SPACES[i] for i in rng.integers(0, len(SPACES), int(rng.integers(1, 3))))


def _conll(rng, n_tokens, n_cols):
    """Random lines of a column file, and the newline convention."""
    out = []
    for _ in range(n_tokens):
        r = rng.random()
        if r < 0.1:
            out.append("")
        elif r < 0.15:
            out.append(_sep(rng))   # whitespace only: a sentence break
        elif r < 0.18:
            out.append(_sep(rng) + "-DOCSTART-" + _sep(rng) + "O")
        lead = _sep(rng) if rng.random() < 0.2 else ""
        tail = _sep(rng) if rng.random() < 0.2 else ""
        out.append(lead + _sep(rng).join(_word(rng) for _ in range(n_cols)) + tail)
    return out


def _reference_columns(lines, column, form_column):
    tags, forms, rows, offsets = [], [], [], [0]
    for i, line in enumerate(lines):
        cols = line.split()
        if not cols or cols[0] == "-DOCSTART-":
            if len(tags) > offsets[-1]:
                offsets.append(len(tags))
            continue
        tags.append(cols[column])
        forms.append(cols[form_column])
        rows.append(i + 1)
    if len(tags) > offsets[-1]:
        offsets.append(len(tags))
    index = {t: k for k, t in enumerate(sorted(set(tags)))}
    return [index[t] for t in tags], offsets, index, forms, rows


def _write(path, lines, rng):
    newline = ["\n", "\r\n"][int(rng.integers(2))]
    path.write_bytes((newline.join(lines) + (newline if rng.random() < 0.7 else "")).encode())


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("n_tokens", [1, 2, 60, 400])
def test_conll_columns_match_str_split(tmp_path, seed, n_tokens, monkeypatch):
    rng = np.random.default_rng([seed, n_tokens])
    if seed % 3 == 0:
        monkeypatch.setattr(bytefields, "_CHUNK_BYTES", 64)   # many chunks to merge
    n_cols = int(rng.integers(1, 4))
    lines = _conll(rng, n_tokens, n_cols)
    _write(tmp_path / "c.conll", lines, rng)
    column, form_column = int(rng.integers(-n_cols, n_cols)), int(rng.integers(0, n_cols))
    gold, offsets, index, forms, rows = _reference_columns(lines, column, form_column)
    corpus = read_conll_columns(tmp_path / "c.conll", column, form_column=form_column)
    assert corpus.gold.tolist() == gold
    assert corpus.offsets.tolist() == offsets
    assert corpus.tag_index == index
    assert corpus.forms.tolist() == forms
    assert corpus.lines.tolist() == rows


def _conllu(rng, n_tokens):
    out, k = [], 1
    for _ in range(n_tokens):
        r = rng.random()
        if r < 0.08:
            out.append(["", _sep(rng)][int(rng.integers(2))])
            k = 1
        elif r < 0.12:
            out.append("# " + _word(rng))
        elif r < 0.16:
            out.append("\t".join([f"{k}-{k + 1}"] + [_word(rng) for _ in range(9)]))
        elif r < 0.18:
            out.append("\t".join([f"{k}.1"] + [_word(rng) for _ in range(9)]))
        out.append("\t".join([str(k)] + [_word(rng) for _ in range(9)]))
        k += 1
    return out


def _reference_conllu(lines, field):
    tags, forms, rows, offsets = [], [], [], [0]
    for i, line in enumerate(lines):
        if line == "" or line.isspace():
            if len(tags) > offsets[-1]:
                offsets.append(len(tags))
            continue
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        if cols[0].isdecimal() and cols[0].isascii():
            tags.append(cols[field])
            forms.append(cols[1])
            rows.append(i + 1)
    if len(tags) > offsets[-1]:
        offsets.append(len(tags))
    index = {t: k for k, t in enumerate(sorted(set(tags)))}
    return [index[t] for t in tags], offsets, index, forms, rows


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("n_tokens", [1, 2, 60, 400])
def test_conllu_matches_str_split(tmp_path, seed, n_tokens, monkeypatch):
    rng = np.random.default_rng([seed, n_tokens, 1])
    if seed % 3 == 0:
        monkeypatch.setattr(bytefields, "_CHUNK_BYTES", 64)
    lines = _conllu(rng, n_tokens)
    _write(tmp_path / "c.conllu", lines, rng)
    name = ["upos", "xpos", "feats", "deprel", "misc"][seed % 5]
    field = ["id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps",
             "misc"].index(name)
    gold, offsets, index, forms, rows = _reference_conllu(lines, field)
    corpus = read_conllu(tmp_path / "c.conllu", name)
    assert corpus.gold.tolist() == gold
    assert corpus.offsets.tolist() == offsets
    assert corpus.tag_index == index
    assert corpus.forms.tolist() == forms
    assert corpus.lines.tolist() == rows


@pytest.mark.parametrize("seed", range(20))
def test_distinct_and_joined_fields_are_exact(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 50))
    words = [_word(rng, max_len=int(rng.choice([3, 8, 9, 30]))) for _ in range(n)]
    words += ["a", "a\x00", "a\x00\x00", "\x00"] * int(rng.integers(0, 2))   # trailing NULs
    rng.shuffle(words)
    text = " ".join(words).encode()
    buf = np.frombuffer(text, np.uint8)
    lengths = np.array([len(w.encode()) for w in words], np.int64)
    starts = np.cumsum(lengths + 1) - (lengths + 1)
    ends = starts + lengths
    values, inverse = distinct_fields(buf, starts, ends)
    assert [values[i] for i in inverse] == words
    assert sorted(values) == sorted(set(words))
    assert values == list(dict.fromkeys(words))   # in the order of first occurrence
    assert joined_fields(buf, starts, ends) == words


def test_whitespace_fields_count_like_str_split():
    text = "a\u3000b\x1cc\u00a0\n\u2003\n\n d\u200be \r"
    lines = Lines(text.encode())
    starts, ends, counts = lines.whitespace_fields()
    assert counts.tolist() == [len(line.split()) for line in text.split("\n")]
    got = [text.encode()[s:e].decode() for s, e in zip(starts, ends)]
    assert got == text.split()
