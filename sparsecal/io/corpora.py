"""Gold tags from annotated corpora: CoNLL-U (any column) and CoNLL-2003-style
whitespace column files.

Both readers return the gold tag id of every token with the sentence
boundaries, forms and lines that line the tokens up with a tagger's score
matrix. They read the file at once (:func:`~sparsecal.io.textfile.read_bytes`)
and locate lines and fields on the bytes with NumPy
(:mod:`~sparsecal.io.bytefields`), looking up each distinct tag once: no
Python loop over tokens.
"""
import io
import re
from dataclasses import FrozenInstanceError, dataclass

import numpy as np

from .._docs import fill_doc
from .bytefields import (SPACE_LEADS, Lines, digit_fields, distinct_fields,
                         joined_fields)
from .tagids import check_unknown, field_tag_ids, tag_ids
from .textfile import read_bytes, read_lines
from .._extras import require
from ..core.groups import _resolve_tag_index

__all__ = ["CorpusTags", "read_conllu", "read_conll_columns", "CONLLU_FIELDS"]

#: The ten CoNLL-U columns, in file order (https://universaldependencies.org/format.html).
CONLLU_FIELDS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps",
                 "misc")
#: IDs other than a word's, as the ``conllu`` package reads them: a multiword
#: range (whose end is not before its start) and an empty node
_SKIPPED_ID = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)|[0-9]+\.[1-9][0-9]*")
#: the fields that may hold spaces (https://universaldependencies.org/format.html)
_SPACES_ALLOWED = ("form", "lemma", "misc")


class CorpusTags:
    """Gold tags of a corpus, token by token, with its sentences (immutable).

    ``forms`` and ``lines`` are made from the file's bytes when first read, so
    reading only ``gold`` costs no string per token.

    Attributes
    ----------
    gold : ndarray of int64, shape (n_tokens,)
        The tag id (score-matrix column) of each token.
    offsets : ndarray of int64, shape (n_sentences + 1,)
        Sentence ``i`` is ``gold[offsets[i]:offsets[i + 1]]``.
    tag_index : dict of str to int
        The tag index used (given, extended, or built from the corpus).
    forms : ndarray of str objects, shape (n_tokens,)
        The word form of each token.
    lines : ndarray of int64, shape (n_tokens,)
        The 1-based line of each token in the file.

    Examples
    --------
    >>> from sparsecal.io import read_conll_columns
    >>> with open("tiny.conll", "w") as f:
    ...     _ = f.write("EU NNP B-ORG\\nrejects VBZ O\\n\\nPeter NNP B-PER\\n")
    >>> corpus = read_conll_columns("tiny.conll")
    >>> corpus.gold.tolist(), corpus.offsets.tolist(), corpus.n_sentences
    ([0, 2, 1], [0, 2, 3], 2)
    >>> corpus.sentence(1).tolist(), corpus.tag_index
    ([1], {'B-ORG': 0, 'B-PER': 1, 'O': 2})
    >>> corpus.forms.tolist(), corpus.lines.tolist()
    (['EU', 'rejects', 'Peter'], [1, 2, 4])
    """

    __slots__ = ("gold", "offsets", "tag_index", "_forms", "_lines")

    def __init__(self, gold, offsets, tag_index, forms, lines):
        for name, value in (("gold", gold), ("offsets", offsets), ("tag_index", tag_index),
                            ("_forms", forms), ("_lines", lines)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self):
        return CorpusTags, (self.gold, self.offsets, self.tag_index, self.forms, self.lines)

    def __repr__(self):
        return (f"CorpusTags(n_tokens={self.n_tokens}, n_sentences={self.n_sentences}, "
                f"n_tags={len(self.tag_index)})")

    @property
    def forms(self):
        if isinstance(self._forms, _LazyForms):
            object.__setattr__(self, "_forms", self._forms.decode())
        return self._forms

    @property
    def lines(self):
        if isinstance(self._lines, _LazyLines):
            object.__setattr__(self, "_lines", self._lines.rows + 1)
        return self._lines

    @property
    def n_tokens(self):
        return int(self.gold.shape[0])

    @property
    def n_sentences(self):
        return int(self.offsets.shape[0] - 1)

    def sentence(self, i):
        """The gold ids of sentence ``i`` (a view)."""
        return self.gold[self.offsets[i]:self.offsets[i + 1]]


@dataclass(frozen=True)
class _LazyForms:
    """The word forms, not yet decoded: the file's bytes and each form's byte range."""

    buf: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    def decode(self):
        forms = np.empty(self.starts.size, dtype=object)
        forms[:] = joined_fields(self.buf, self.starts, self.ends)
        return forms


@dataclass(frozen=True)
class _LazyLines:
    """The 0-based line indices of the tokens, not yet made 1-based."""

    rows: np.ndarray


def _sentence_offsets(breaks, token_rows):
    """Sentence offsets: a sentence ends at each break line (blank, ``-DOCSTART-``)."""
    sentence = np.cumsum(breaks)[token_rows]
    starts = np.flatnonzero(np.diff(sentence)) + 1
    ends = [token_rows.size] if token_rows.size else []
    return np.concatenate([[0], starts, ends]).astype(np.int64)


def _build(buf, tags, forms, rows, breaks, tag_index, unknown, path):
    """The :class:`CorpusTags` of the tokens at line indices ``rows``."""
    ids, index = field_tag_ids(buf, *tags, _resolve_tag_index(tag_index), unknown=unknown,
                               lines=rows + 1, source=str(path))
    return CorpusTags(ids, _sentence_offsets(breaks, rows), index, _LazyForms(buf, *forms),
                      _LazyLines(rows.astype(np.int64, copy=False)))


def _blank(lines):
    """Lines that are empty or only whitespace."""
    blank = lines.ends == lines.starts
    maybe = np.flatnonzero(~blank)
    maybe = maybe[SPACE_LEADS[lines.buf[lines.starts[maybe]]]]
    if maybe.size:
        blank[maybe] = lines.whitespace_fields()[2][maybe] == 0
    return blank


def _equals(buf, starts, ends, word):
    same = (ends - starts) == len(word)
    cand = starts[same]
    same[same] = (buf[cand[:, None] + np.arange(len(word))] == np.frombuffer(word, np.uint8)
                  ).all(axis=1)
    return same


def _bad_line(path, rows, bad, problem):
    i = int(np.flatnonzero(bad)[0])
    return ValueError(f"{str(path)!r} line {rows[i] + 1}: {problem(i)}")


@fill_doc
def read_conllu(path, column="upos", tag_index=None, *, unknown="error", engine="numpy"):
    """Gold tags of one CoNLL-U column (UPOS, XPOS, FEATS, DEPREL, ...).

    Word lines are the tokens; multiword-token ranges (``1-2``), empty nodes
    (``8.1``) and comments are skipped; blank lines end sentences. Values are
    taken verbatim (FEATS is not parsed).

    Parameters
    ----------
    path : str or os.PathLike
        Plain or compressed (``.gz``, ``.bz2``, ``.xz``).
    column : str, default="upos"
        A CoNLL-U field other than ``id`` (case-insensitive).
    {tag_index}
    {unknown}
    engine : {"numpy", "conllu"}, default="numpy"
        This module's vectorised reader, or the slower ``conllu`` package's
        parser (``pip install "sparsecal[conllu]"``; no ``lines``).

    Returns
    -------
    CorpusTags

    Examples
    --------
    >>> from sparsecal.io import read_conllu
    >>> with open("tiny.conllu", "w") as f:
    ...     _ = f.write("# text = I'm here\\n"
    ...                 "1-2\\tI'm\\t_\\t_\\t_\\t_\\t_\\t_\\t_\\t_\\n"
    ...                 "1\\tI\\tI\\tPRON\\tPRP\\tCase=Nom\\t3\\tnsubj\\t_\\t_\\n"
    ...                 "2\\t'm\\tbe\\tAUX\\tVBP\\t_\\t3\\tcop\\t_\\t_\\n"
    ...                 "3\\there\\there\\tADV\\tRB\\t_\\t0\\troot\\t_\\t_\\n\\n")
    >>> corpus = read_conllu("tiny.conllu", tag_index={"ADV": 0, "AUX": 1, "PRON": 2})
    >>> corpus.gold.tolist(), corpus.forms.tolist(), corpus.lines.tolist()
    ([2, 1, 0], ['I', "'m", 'here'], [3, 4, 5])
    >>> read_conllu("tiny.conllu", column="deprel").tag_index
    {'cop': 0, 'nsubj': 1, 'root': 2}
    """
    name = column.lower() if isinstance(column, str) else column
    if name not in CONLLU_FIELDS[1:]:
        raise ValueError(f"column must be one of {list(CONLLU_FIELDS[1:])}, got {column!r}")
    check_unknown(unknown)
    if engine == "conllu":
        return _read_conllu_package(path, name, tag_index, unknown)
    if engine != "numpy":
        raise ValueError(f"engine must be 'numpy' or 'conllu', got {engine!r}")
    lines, blank, rows, field, word = _conllu_lines(path)
    words = np.flatnonzero(word)
    return _build(lines.buf, field(CONLLU_FIELDS.index(name), words), field(1, words),
                  rows[words], blank, tag_index, unknown, path)


def _conllu_lines(path):
    """The lines of a CoNLL-U file checked as the format has them, whichever
    engine then reads them: ``(lines, blank, rows, field, word)``, the body rows
    (word lines, ranges, empty nodes), ``field(k, keep)`` the bounds of their
    field ``k`` and ``word`` which rows are words.

    A body row has 10 tab-separated fields, none empty (``_`` is "no value"),
    no space but in FORM, LEMMA and MISC, and an ID as the ``conllu`` package
    reads it: a word ``0`` or ``1``, ``2``, ... without leading zeros, a range
    ``1-2`` not ending before it starts, an empty node ``1.1``.
    """
    lines = Lines(read_bytes(path, "CoNLL-U"))
    blank = _blank(lines)
    comment = lines.ends > lines.starts
    comment[comment] = lines.buf[lines.starts[comment]] == ord("#")
    rows = np.flatnonzero(~blank & ~comment)
    tab_at = lines.positions(b"\t")
    first_tab = np.searchsorted(tab_at, lines.starts)   # no tab between two lines
    tabs = np.diff(first_tab, append=tab_at.size)[rows]
    if np.any(tabs != 9):
        raise _bad_line(path, rows, tabs != 9, lambda i: "a CoNLL-U word line has 10 "
                        f"tab-separated columns, this one has {tabs[i] + 1}")
    first_tab = first_tab[rows]

    def field(k, keep=slice(None)):
        """Field k of each body row (between tabs k-1 and k)."""
        return ((lines.starts[rows] if k == 0 else tab_at[first_tab + k - 1] + 1)[keep],
                (lines.ends[rows] if k == 9 else tab_at[first_tab + k])[keep])
    space_at = lines.positions(b" ")
    for k, name in enumerate(CONLLU_FIELDS):
        start, end = field(k)
        if np.any(end == start):
            raise _bad_line(path, rows, end == start, lambda i: f"the {name.upper()} field "
                            "is empty (CoNLL-U writes _ for no value)")
        if name not in _SPACES_ALLOWED:
            spaced = np.searchsorted(space_at, end) > np.searchsorted(space_at, start)
            if np.any(spaced):
                raise _bad_line(path, rows, spaced, lambda i: f"the {name.upper()} field "
                                "holds a space (only FORM, LEMMA and MISC may)")
    start, end = field(0)
    word = digit_fields(lines.buf, start, end)
    word &= (end - start == 1) | (lines.buf[start] != ord("0"))   # no leading zero
    other = np.flatnonzero(~word)   # multiword ranges, empty nodes, bad IDs: few
    ids, id_of = distinct_fields(lines.buf, start[other], end[other])
    matches = [_SKIPPED_ID.fullmatch(i) for i in ids]
    ok = [m is not None and (m.group(1) is None or int(m.group(2)) >= int(m.group(1)))
          for m in matches]
    bad = ~np.array(ok, bool)[id_of]
    if np.any(bad):
        raise _bad_line(path, rows[other], bad,
                        lambda i: f"bad ID {ids[id_of[i]]!r} (an integer without leading "
                                  "zeros, a range 1-2 or an empty node 1.1)")
    return lines, blank, rows, field, word


def _read_conllu_package(path, column, tag_index, unknown):
    """:func:`read_conllu` with the ``conllu`` package's parser, on a file checked
    as the NumPy engine checks it (the two refuse the same files)."""
    conllu = require("conllu", "conllu", "read_conllu(engine='conllu')")
    _conllu_lines(path)
    text = "\n".join(read_lines(path, "CoNLL-U")) + "\n"
    raw = {name: (lambda line, i: line[i]) for name in CONLLU_FIELDS[1:]}
    tags, forms, lengths = [], [], []
    try:
        for sentence in conllu.parse_incr(io.StringIO(text), field_parsers=raw):
            words = [tok for tok in sentence if isinstance(tok["id"], int)]
            tags += [tok[column] for tok in words]
            forms += [tok["form"] for tok in words]
            lengths.append(len(words))
    except conllu.exceptions.ParseException as exc:
        raise ValueError(f"{str(path)!r}: {exc}") from None
    ids, index = tag_ids(tags, _resolve_tag_index(tag_index), unknown=unknown,
                         source=str(path))
    offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64)
    return CorpusTags(ids, offsets, index, np.asarray(forms, dtype=object).reshape(-1),
                      np.zeros(len(tags), np.int64))


@fill_doc
def read_conll_columns(path, column=-1, tag_index=None, *, unknown="error", form_column=0):
    """Gold tags of one column of a CoNLL-2003-style file.

    One token per line, the same number of whitespace-separated columns on every
    token line, a blank line between sentences; ``-DOCSTART-`` lines are skipped
    and end a sentence.

    Parameters
    ----------
    path : str or os.PathLike
        Plain or compressed (``.gz``, ``.bz2``, ``.xz``).
    column : int, default=-1
        The tag column (negative from the end: -1 is CoNLL-2003's NER tag).
    {tag_index}
    {unknown}
    form_column : int, default=0
        The word-form column.

    Returns
    -------
    CorpusTags

    Examples
    --------
    >>> from sparsecal.io import read_conll_columns
    >>> with open("ner.txt", "w") as f:
    ...     _ = f.write("-DOCSTART- -X- -X- O\\n\\nEU NNP B-NP B-ORG\\n"
    ...                 "rejects VBZ B-VP O\\n\\nPeter NNP B-NP B-PER\\n")
    >>> corpus = read_conll_columns("ner.txt", tag_index={"O": 0, "B-ORG": 1}, unknown=-1)
    >>> corpus.gold.tolist(), corpus.offsets.tolist(), corpus.lines.tolist()
    ([1, 0, -1], [0, 2, 3], [3, 4, 6])
    >>> read_conll_columns("ner.txt", column=1).tag_index
    {'NNP': 0, 'VBZ': 1}
    """
    for value, label in ((column, "column"), (form_column, "form_column")):
        if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{label} must be an integer column number, got {value!r}")
    check_unknown(unknown)
    lines = Lines(read_bytes(path, "CoNLL"))
    starts, ends, width = lines.whitespace_fields()
    first = np.cumsum(width) - width   # each line's first field
    nonblank = np.flatnonzero(width)
    docstart = np.zeros(len(lines), bool)
    docstart[nonblank] = _equals(lines.buf, starts[first[nonblank]], ends[first[nonblank]],
                                 b"-DOCSTART-")
    breaks = (width == 0) | docstart
    rows = np.flatnonzero(~breaks)
    if rows.size:
        expected = width[rows[0]]
        bad = width[rows] != expected
        if bad.any():
            raise _bad_line(path, rows, bad, lambda i: f"{width[rows[i]]} columns, but line "
                                                       f"{rows[0] + 1} has {expected}")
        for value, label in ((column, "column"), (form_column, "form_column")):
            if not -expected <= value < expected:
                raise ValueError(f"{str(path)!r}: {label} {value} is out of range: the "
                                 f"lines have {expected} columns")
    else:
        expected = 1
    tag, form = (first[rows] + value % expected for value in (column, form_column))
    return _build(lines.buf, (starts[tag], ends[tag]), (starts[form], ends[form]), rows,
                  breaks, tag_index, unknown, path)
