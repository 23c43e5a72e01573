"""Gold tags from corpora (sparsecal/io/corpora.py, tagids.py, textfile.py):
CoNLL-U against the ``conllu`` package's own parse and a brute-force line loop,
CoNLL-2003 column files against a brute-force loop, ``.txt`` gold, unknown tags,
compressed files, BOM / CRLF / trailing blank lines, and the real UD EWT files."""
import gzip
import sys
from pathlib import Path

import numpy as np
import pytest

from sparsecal.io import CorpusTags, load_gold, read_conll_columns, read_conllu

conllu = pytest.importorskip("conllu")

UD = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ud_ewt"
FIELDS = ["id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc"]
UPOS = ["NOUN", "VERB", "DET", "ADP", "PROPN", "_", "X"]


# ------------------------------------------------------------- references -- #

def brute_force(text, word):
    """Tags, forms, 1-based lines and sentence lengths, one line at a time;
    ``word(line)`` is None for a sentence break, False for a skipped line, else
    the (tag, form) of a token."""
    tags, forms, lines, lengths, current = [], [], [], [], 0
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    for number, line in enumerate(text.split("\n"), 1):
        token = word(line)
        if token is None and current:
            lengths.append(current)
        if token is None:
            current = 0
        elif token:
            tags.append(token[0])
            forms.append(token[1])
            lines.append(number)
            current += 1
    if current:
        lengths.append(current)
    return tags, forms, lines, lengths


def brute_conllu(text, column):
    col = FIELDS.index(column)

    def word(line):
        if line.strip() == "":
            return None
        cols = line.split("\t")
        return not line.startswith("#") and "-" not in cols[0] and "." not in cols[0] \
            and (cols[col], cols[1])

    return brute_force(text, word)


def brute_conll(text, column):
    def word(line):
        cols = line.split()
        return None if not cols or cols[0] == "-DOCSTART-" else (cols[column], cols[0])

    return brute_force(text, word)


def check_against(corpus, ref, index):
    tags, forms, lines, lengths = ref
    assert isinstance(corpus, CorpusTags)
    assert corpus.gold.dtype == np.int64 and corpus.offsets.dtype == np.int64
    np.testing.assert_array_equal(corpus.gold, [index[t] for t in tags])
    assert corpus.forms.tolist() == forms
    np.testing.assert_array_equal(corpus.lines, lines)
    np.testing.assert_array_equal(corpus.offsets, np.concatenate([[0], np.cumsum(lengths)]))
    assert corpus.n_tokens == len(tags) and corpus.n_sentences == len(lengths)


def random_conllu(rng, n_sentences):
    """Sentences with comments, multiword ranges and empty nodes; random tags."""
    out = []
    for s in range(n_sentences):
        out.append(f"# sent_id = s{s}\n# text = t{s}")
        n = int(rng.integers(1, 6))
        for i in range(1, n + 1):
            if rng.random() < 0.2 and i < n:
                out.append(f"{i}-{i + 1}\tmw{i}\t_\t_\t_\t_\t_\t_\t_\t_")
            tag, xpos = UPOS[rng.integers(len(UPOS))], f"X{rng.integers(3)}"
            feats = "_" if rng.random() < 0.5 else f"Number=Sing|Case={rng.integers(2)}"
            out.append(f"{i}\tw{s}.{i}\tl\t{tag}\t{xpos}\t{feats}\t0\tdep{rng.integers(3)}\t_\t_")
            if rng.random() < 0.1:
                out.append(f"{i}.1\tempty\t_\t_\t_\t_\t_\t_\t_\t_")
        out.append("")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------- CoNLL-U -- #

EDGE_CASES = {
    "comments, multiword, empty node": (
        "# newdoc\n# text = I'm\n1-2\tI'm\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "1\tI\tI\tPRON\tPRP\tCase=Nom\t2\tnsubj\t_\t_\n2\t'm\tbe\tAUX\tVBP\t_\t0\troot\t_\t_\n"
        "2.1\tgone\t_\tVERB\t_\t_\t_\t_\t_\t_\n\n# text = Go\n1\tGo\tgo\tVERB\tVB\t_\t0\troot\t_\t_\n\n"),
    "CRLF and BOM": "\ufeff1\tA\ta\tDET\tDT\t_\t2\tdet\t_\t_\r\n2\tdog\tdog\tNOUN\tNN\t_\t0\troot"
                    "\t_\t_\r\n\r\n1\tRun\trun\tVERB\tVB\t_\t0\troot\t_\t_\r\n\r\n",
    "trailing blank lines": "1\tA\ta\tDET\tDT\t_\t2\tdet\t_\t_\n\n\n\n1\tB\tb\tX\tX\t_\t0\troot"
                            "\t_\t_\n\n\n\n",
    "no final newline": "1\tA\ta\tDET\tDT\t_\t0\troot\t_\t_\n\n1\tB\tb\tX\tX\t_\t0\troot\t_\t_",
    "one token": "1\tA\ta\tDET\tDT\t_\t0\troot\t_\t_\n",
    "empty": "",
}


@pytest.mark.parametrize("case", list(EDGE_CASES))
@pytest.mark.parametrize("column", ["upos", "xpos", "feats", "deprel"])
def test_conllu_edge_cases_against_conllu_package_and_brute_force(tmp_path, case, column):
    text = EDGE_CASES[case]
    path = tmp_path / "c.conllu"
    path.write_bytes(text.encode("utf-8"))
    ref = brute_conllu(text, column)
    index = {t: i for i, t in enumerate(sorted(set(ref[0])))}
    mine = read_conllu(path, column)
    assert mine.tag_index == index
    check_against(mine, ref, index)
    package = read_conllu(path, column, index, engine="conllu")
    np.testing.assert_array_equal(package.gold, mine.gold)
    np.testing.assert_array_equal(package.offsets, mine.offsets)
    assert package.forms.tolist() == mine.forms.tolist()


def test_conllu_package_parse_itself_agrees(tmp_path):
    """The reference reference: conllu.parse on the text, words only."""
    rng = np.random.default_rng(3)
    text = random_conllu(rng, 40)
    (tmp_path / "r.conllu").write_text(text)
    mine = read_conllu(tmp_path / "r.conllu", "xpos")
    sentences = conllu.parse(text, field_parsers={"xpos": lambda line, i: line[i]})
    words = [[t for t in s if isinstance(t["id"], int)] for s in sentences]
    tags = [t["xpos"] for s in words for t in s]
    np.testing.assert_array_equal(mine.gold, [mine.tag_index[t] for t in tags])
    np.testing.assert_array_equal(np.diff(mine.offsets), [len(s) for s in words])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_sentences", [1, 2, 60])
def test_conllu_random_against_brute_force(tmp_path, seed, n_sentences):
    rng = np.random.default_rng(seed)
    text = random_conllu(rng, n_sentences)
    path = tmp_path / "r.conllu"
    path.write_text(text)
    for column in ("upos", "feats", "deprel"):
        ref = brute_conllu(text, column)
        index = {t: i for i, t in enumerate(sorted(set(ref[0])))}
        check_against(read_conllu(path, column.upper()), ref, index)


def test_compressed_files_read_like_plain(tmp_path):
    text = random_conllu(np.random.default_rng(0), 20)
    (tmp_path / "a.conllu").write_text(text)
    with gzip.open(tmp_path / "a.conllu.gz", "wt") as f:
        f.write(text)
    a, b = read_conllu(tmp_path / "a.conllu"), read_conllu(tmp_path / "a.conllu.gz")
    np.testing.assert_array_equal(a.gold, b.gold)
    np.testing.assert_array_equal(a.offsets, b.offsets)


# ------------------------------------------------------------ unknown tags -- #

def test_unknown_tags_error_lists_tags_and_lines(tmp_path):
    text = ("1\tA\ta\tDET\t_\t_\t0\troot\t_\t_\n2\tB\tb\tFOO\t_\t_\t0\troot\t_\t_\n\n"
            "1\tC\tc\tBAR\t_\t_\t0\troot\t_\t_\n2\tD\td\tFOO\t_\t_\t0\troot\t_\t_\n")
    (tmp_path / "u.conllu").write_text(text)
    with pytest.raises(ValueError) as info:
        read_conllu(tmp_path / "u.conllu", tag_index={"DET": 0})
    msg = str(info.value)
    assert "u.conllu' line 2: unknown tag 'FOO'" in msg
    assert "3 tokens in all: 'FOO' (lines 2, 5), 'BAR' (line 4)" in msg
    extended = read_conllu(tmp_path / "u.conllu", tag_index={"DET": 3}, unknown="extend")
    assert extended.tag_index == {"DET": 3, "BAR": 4, "FOO": 5}
    assert extended.gold.tolist() == [3, 5, 4, 5]
    mapped = read_conllu(tmp_path / "u.conllu", tag_index={"DET": 0}, unknown=-1)
    assert mapped.gold.tolist() == [0, -1, -1, -1] and mapped.tag_index == {"DET": 0}


def test_many_unknown_tags_are_summarised(tmp_path):
    lines = [f"w T{i % 12}" for i in range(40)]
    (tmp_path / "u.conll").write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"40 tokens in all: 'T0' \(lines 1, 13, 25, 37\), "
                                         r".*'T9' \(lines 10, 22, 34\) and 2 more; pass"):
        read_conll_columns(tmp_path / "u.conll", tag_index={"X": 0})


@pytest.mark.parametrize("kwargs,match", [
    (dict(column="id"), "column must be one of"),
    (dict(column=3), "column must be one of"),
    (dict(unknown="drop"), "unknown must be 'error', 'extend' or a tag id >= -1"),
    (dict(unknown=-2), "unknown must be"),
    (dict(unknown=True), "unknown must be"),
    (dict(engine="pandas"), "engine must be 'numpy' or 'conllu'"),
    (dict(tag_index={"A": -1}), "column of tag 'A' must be an integer"),
])
def test_bad_arguments_are_named(tmp_path, kwargs, match):
    (tmp_path / "a.conllu").write_text("1\tA\ta\tDET\t_\t_\t0\troot\t_\t_\n")
    with pytest.raises(ValueError, match=match):
        read_conllu(tmp_path / "a.conllu", **kwargs)


@pytest.mark.parametrize("text,match", [
    ("1\tA\ta\tDET\n", r"line 1: a CoNLL-U word line has 10 tab-separated columns, this one "
                       r"has 4"),
    ("# c\n1\tA\ta\tDET\t_\t_\t0\troot\t_\t_\nx\tB\tb\tX\t_\t_\t0\troot\t_\t_\n",
     r"line 3: bad ID 'x'"),
    ("1 A a DET _ _ 0 root _ _\n", "line 1: a CoNLL-U word line has 10"),
])
def test_malformed_conllu_names_the_line(tmp_path, text, match):
    (tmp_path / "m.conllu").write_text(text)
    with pytest.raises(ValueError, match=match):
        read_conllu(tmp_path / "m.conllu")


def test_not_utf8_and_missing_file(tmp_path):
    (tmp_path / "l.conllu").write_bytes("1\tN\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"l\.conllu' is not a UTF-8 text file: line 1"):
        read_conllu(tmp_path / "l.conllu")
    with pytest.raises(FileNotFoundError, match="CoNLL-U file .*nope.conllu' does not exist"):
        read_conllu(tmp_path / "nope.conllu")
    (tmp_path / "bad.conllu.xz").write_bytes(b"not xz")
    with pytest.raises(ValueError, match="cannot read CoNLL-U file"):
        read_conllu(tmp_path / "bad.conllu.xz")


def test_missing_conllu_extra_names_the_install(tmp_path, monkeypatch):
    (tmp_path / "a.conllu").write_text("1\tA\ta\tDET\t_\t_\t0\troot\t_\t_\n")
    monkeypatch.setitem(sys.modules, "conllu", None)
    with pytest.raises(ImportError, match=r'pip install "sparsecal\[conllu\]"'):
        read_conllu(tmp_path / "a.conllu", engine="conllu")
    assert read_conllu(tmp_path / "a.conllu").gold.tolist() == [0]   # numpy engine: no extra


# ------------------------------------------------------- CoNLL-2003 columns -- #

def random_conll(rng, n_sentences, sep=" "):
    out = ["-DOCSTART- -X- -X- O", ""]
    for s in range(n_sentences):
        for i in range(int(rng.integers(1, 7))):
            out.append(sep.join([f"w{s}_{i}", f"P{rng.integers(4)}", "B-NP",
                                 ["O", "B-PER", "I-PER", "B-LOC"][rng.integers(4)]]))
        out.append("")
        if rng.random() < 0.2:
            out += ["-DOCSTART- -X- -X- O", ""]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n_sentences", [1, 2, 50])
@pytest.mark.parametrize("column", [-1, 1])
def test_conll_columns_against_brute_force(tmp_path, seed, n_sentences, column):
    text = random_conll(np.random.default_rng(seed), n_sentences, sep=" \t"[seed % 2])
    (tmp_path / "r.conll").write_text(text)
    ref = brute_conll(text, column)
    index = {t: i for i, t in enumerate(sorted(set(ref[0])))}
    corpus = read_conll_columns(tmp_path / "r.conll", column)
    assert corpus.tag_index == index
    check_against(corpus, ref, index)


def test_conll_crlf_bom_and_docstart_without_blank(tmp_path):
    text = "\ufeff-DOCSTART- O\r\nEU B-ORG\r\nsays O\r\n-DOCSTART- O\r\nHi O\r\n\r\n\r\n"
    (tmp_path / "c.conll").write_bytes(text.encode("utf-8"))
    corpus = read_conll_columns(tmp_path / "c.conll", tag_index={"O": 0, "B-ORG": 1})
    assert corpus.gold.tolist() == [1, 0, 0] and corpus.offsets.tolist() == [0, 2, 3]
    assert corpus.lines.tolist() == [2, 3, 5]
    check_against(corpus, brute_conll(text, -1), {"O": 0, "B-ORG": 1})


@pytest.mark.parametrize("text,kwargs,match", [
    ("a B C\nb D\n", {}, r"line 2: 2 columns, but line 1 has 3"),
    ("a B\n", dict(column=2), "column 2 is out of range: the lines have 2 columns"),
    ("a B\n", dict(column=-3), "column -3 is out of range"),
    ("a B\n", dict(column=1.0), "column must be an integer column number"),
    ("a B\n", dict(form_column="0"), "form_column must be an integer"),
])
def test_bad_conll_input(tmp_path, text, kwargs, match):
    (tmp_path / "b.conll").write_text(text)
    with pytest.raises(ValueError, match=match):
        read_conll_columns(tmp_path / "b.conll", **kwargs)


# ----------------------------------------------------------------- .txt gold -- #

@pytest.mark.parametrize("n", [0, 1, 2, 500])
def test_txt_gold_against_per_line_loop(tmp_path, n):
    rng = np.random.default_rng(n)
    tags = ["N", "NP", "S[dcl]/NP", "é"]
    index = {t: i for i, t in enumerate(tags)}
    chosen = [tags[k] for k in rng.integers(0, 4, n)]
    (tmp_path / "g.txt").write_text("".join(f" {t}\n" for t in chosen) + "\n")
    np.testing.assert_array_equal(load_gold(tmp_path / "g.txt", tag_index=index),
                                  [index[t] for t in chosen])
    ints = rng.integers(-1, 40, n)
    (tmp_path / "i.txt").write_bytes("".join(f"{v}\r\n" for v in ints).encode())
    got = load_gold(tmp_path / "i.txt")
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, ints)


@pytest.mark.parametrize("line", ["٣", "1.0", "--1", "-", "1" * 19, "+1", "x"])
def test_txt_gold_refuses_what_is_not_an_index(tmp_path, line):
    (tmp_path / "g.txt").write_text(f"0\n{line}\n")
    with pytest.raises(ValueError, match=r"line 2: .* is not a tag index"):
        load_gold(tmp_path / "g.txt")


def test_load_gold_reads_corpora_by_extension_or_format(tmp_path):
    (tmp_path / "a.conllu").write_text("1\tA\ta\tDET\tDT\t_\t0\troot\t_\t_\n")
    (tmp_path / "a.txt").write_text("A DT O\n")
    index = {"DET": 0, "DT": 1, "O": 2, "root": 3}
    assert load_gold(tmp_path / "a.conllu", tag_index=index).tolist() == [0]
    assert load_gold(tmp_path / "a.conllu", tag_index=index, column="xpos").tolist() == [1]
    assert load_gold(tmp_path / "a.txt", tag_index=index, format="conll").tolist() == [2]
    assert load_gold(tmp_path / "a.txt", tag_index=index, format="conll",
                     column="1").tolist() == [1]
    with pytest.raises(ValueError, match="holds tag strings: pass a tag index"):
        load_gold(tmp_path / "a.conllu")
    with pytest.raises(ValueError, match="column of a CoNLL file is a number, got 'upos'"):
        load_gold(tmp_path / "a.txt", tag_index=index, format="conll", column="upos")
    with pytest.raises(ValueError, match="a gold column is only read from CoNLL"):
        load_gold(tmp_path / "a.txt", column=1)


def test_inputs_are_not_modified(tmp_path):
    (tmp_path / "a.conll").write_text("A X\n")
    index = {"Y": 0}
    read_conll_columns(tmp_path / "a.conll", tag_index=index, unknown="extend")
    assert index == {"Y": 0}


# -------------------------------------------------------------- UD English-EWT -- #

@pytest.mark.skipif(not UD.is_dir(), reason=f"real data not available: {UD} is absent")
def test_ud_ewt_dev_against_conllu_package_and_brute_force():
    import lzma
    path = UD / "en_ewt-ud-dev.conllu.xz"
    text = lzma.open(path, "rt", encoding="utf-8").read()
    for column in ("upos", "xpos", "feats", "deprel"):
        mine = read_conllu(path, column)
        check_against(mine, brute_conllu(text, column), mine.tag_index)
    upos = read_conllu(path, "upos")
    assert len(upos.tag_index) == 17 and upos.n_sentences == 2001   # UD v2's 17 UPOS tags
    package = read_conllu(path, "upos", upos.tag_index, engine="conllu")
    np.testing.assert_array_equal(package.gold, upos.gold)
    np.testing.assert_array_equal(package.offsets, upos.offsets)
    assert package.forms.tolist() == upos.forms.tolist()
