"""Gold tags from annotated corpora: CoNLL-U (any column) and CoNLL-2003-style
whitespace column files.

Both readers return the gold tag id of every token and the sentence structure
needed to line the tokens up with a tagger's score matrix (sentence boundaries
as offsets, the word forms, the line of each token). They read the file in one
call (:func:`~sparsecal.io.textfile.read_lines`: plain, ``.gz``, ``.bz2`` or
``.xz``; BOM, CRLF), split it with ``str.split`` and look tags up with
:func:`~sparsecal.io.tagids.tag_ids`: the per-line work runs in C (``map`` over
built-in string methods) and NumPy, never in a Python loop over tokens.

Tags missing from the tag index are reported (``unknown="error"``, the
default: one error listing them with their lines), added (``"extend"``) or
mapped to one id (``unknown=k``); never dropped.
"""
import io
import operator
import re
from dataclasses import dataclass, field

import numpy as np

from .tagids import check_unknown, tag_ids
from .textfile import read_lines
from .._extras import require
from ..core.groups import _resolve_tag_index

__all__ = ["CorpusTags", "read_conllu", "read_conll_columns", "CONLLU_FIELDS"]

#: The ten CoNLL-U columns, in file order (https://universaldependencies.org/format.html).
CONLLU_FIELDS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps",
                 "misc")
_SKIPPED_ID = re.compile(r"[0-9]+-[0-9]+|[0-9]+\.[0-9]+")   # multiword ranges, empty nodes


@dataclass(frozen=True)
class CorpusTags:
    """Gold tags of a corpus, token by token, with its sentences.

    Attributes
    ----------
    gold : ndarray of int64, shape (n_tokens,)
        The tag id (score-matrix column) of each token; ``-1`` only where
        ``unknown=-1`` mapped a tag there.
    offsets : ndarray of int64, shape (n_sentences + 1,)
        Sentence ``i`` is ``gold[offsets[i]:offsets[i + 1]]``; ``offsets[0] = 0``
        and ``offsets[-1] = n_tokens``.
    tag_index : dict of str to int
        The tag index used: the one given, extended with ``unknown="extend"``,
        or built from the corpus (code-point order) when none was given.
    forms : ndarray of object (str), shape (n_tokens,)
        The word form of each token (to check the alignment with a tagger's
        tokens).
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
    """

    gold: np.ndarray
    offsets: np.ndarray
    tag_index: dict
    forms: np.ndarray = field(repr=False)
    lines: np.ndarray = field(repr=False)

    @property
    def n_tokens(self):
        return int(self.gold.shape[0])

    @property
    def n_sentences(self):
        return int(self.offsets.shape[0] - 1)

    def sentence(self, i):
        """The gold ids of sentence ``i`` (a view)."""
        return self.gold[self.offsets[i]:self.offsets[i + 1]]


def _field(lines, column, sep=None):
    """Field ``column`` of every line split at ``sep`` (None: whitespace runs),
    in C. Each line's list of fields is freed at once: a million live lists
    would make the cyclic garbage collector rescan them again and again."""
    return list(map(operator.itemgetter(column), map(operator.methodcaller("split", sep),
                                                     lines)))


def _take(values, index):
    """``values[i]`` for each ``i`` of ``index``, in C (``map`` over ``__getitem__``)."""
    return values if index.size == len(values) else list(map(values.__getitem__,
                                                              index.tolist()))


def _flags(method, values, *args):
    """A bool array of ``value.method(*args)`` over ``values``, computed in C."""
    return np.fromiter(map(operator.methodcaller(method, *args), values), dtype=bool,
                       count=len(values))


def _sentence_offsets(breaks, token_rows):
    """Offsets of the sentences: a sentence ends at each break line (blank line,
    ``-DOCSTART-``) between two tokens."""
    sentence = np.cumsum(breaks)[token_rows]
    starts = np.flatnonzero(np.diff(sentence)) + 1
    ends = [token_rows.size] if token_rows.size else []
    return np.concatenate([[0], starts, ends]).astype(np.int64)


def _build(tags, forms, rows, breaks, tag_index, unknown, path):
    """The :class:`CorpusTags` of the tokens at line indices ``rows``."""
    ids, index = tag_ids(tags, _resolve_tag_index(tag_index), unknown=unknown,
                         lines=rows + 1, source=str(path))
    return CorpusTags(ids, _sentence_offsets(breaks, rows), index,
                      np.asarray(forms, dtype=object).reshape(-1),
                      (rows + 1).astype(np.int64))


def _bad_line(path, rows, bad, problem):
    i = int(np.flatnonzero(bad)[0])
    return ValueError(f"{str(path)!r} line {rows[i] + 1}: {problem(i)}")


def read_conllu(path, column="upos", tag_index=None, *, unknown="error", engine="numpy"):
    """Gold tags of one CoNLL-U column (UPOS, XPOS, FEATS, DEPREL, ...).

    Word lines (integer ID) are the tokens; multiword-token ranges (``1-2``)
    and empty nodes (``8.1``) are skipped, as a tagger tags syntactic words;
    comment lines (``#``) are skipped and blank lines end sentences. Values
    are taken verbatim (``_`` is the tag ``"_"``; FEATS is the string
    ``"Number=Sing|PronType=Dem"``, not parsed).

    Parameters
    ----------
    path : str or os.PathLike
        A ``.conllu`` file, plain or compressed (``.gz``, ``.bz2``, ``.xz``).
    column : str, default="upos"
        One of the CoNLL-U fields other than ``id``: ``form``, ``lemma``,
        ``upos``, ``xpos``, ``feats``, ``head``, ``deprel``, ``deps``, ``misc``
        (case-insensitive).
    tag_index : dict, str or os.PathLike, optional
        Tag string to score-matrix column (or a JSON file of it). None: built
        from the corpus's tags in code-point order.
    unknown : {"error", "extend"} or int, default="error"
        A tag missing from ``tag_index``: an error listing the unknown tags
        with their lines; ``"extend"``: new columns after the largest one
        (code-point order); an id ``k >= -1`` (``-1``: no gold tag).
    engine : {"numpy", "conllu"}, default="numpy"
        ``"numpy"``: the vectorised reader of this module (tab-separated ten
        columns; no dependency). ``"conllu"``: the ``conllu`` package's parser
        (``pip install "sparsecal[conllu]"``), which also parses the other
        fields' syntax; slower (a Python loop per token), the same result on
        valid files; errors name token positions rather than lines.

    Returns
    -------
    CorpusTags
        ``gold``, sentence ``offsets``, ``tag_index``, ``forms``, ``lines``
        (``lines`` is all zeros with the ``conllu`` engine, which gives none).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        Naming the file: not UTF-8, a word line without ten tab-separated
        columns or with a bad ID (naming the line), unknown tags (with
        ``unknown="error"``), a bad ``column``, ``unknown`` or ``engine``.
    ImportError
        With ``engine="conllu"`` if the ``conllu`` package is missing.

    References
    ----------
    Nguyen & O'Connor 2015, Section 5 (POS tagging and NER corpora, one gold
    tag per token); Kranzlein, Liu & Schneider 2021, Section 4 (the tagged
    corpora whose tag scores are calibrated). CoNLL-U format:
    https://universaldependencies.org/format.html.

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
    lines = read_lines(path, "CoNLL-U")
    blank = _flags("isspace", lines) | (np.fromiter(map(len, lines), np.int64, len(lines)) == 0)
    rows = np.flatnonzero(~blank & ~_flags("startswith", lines, "#"))
    body = _take(lines, rows)
    tabs = np.fromiter(map(operator.methodcaller("count", "\t"), body), np.int64, len(body))
    if np.any(tabs != 9):
        raise _bad_line(path, rows, tabs != 9, lambda i: "a CoNLL-U word line has 10 "
                        f"tab-separated columns, this one has {tabs[i] + 1}")
    ids = _field(body, 0, "\t")
    word = _flags("isdecimal", ids) & _flags("isascii", ids)
    skipped = np.fromiter(map(bool, map(_SKIPPED_ID.fullmatch, ids)), bool, len(ids))
    if np.any(~word & ~skipped):
        raise _bad_line(path, rows, ~word & ~skipped,
                        lambda i: f"bad ID {ids[i]!r} (an integer, a range 1-2 or an "
                                  "empty node 1.1)")
    words = np.flatnonzero(word)
    kept = _take(body, words)
    return _build(_field(kept, CONLLU_FIELDS.index(name), "\t"), _field(kept, 1, "\t"),
                  rows[words], blank, tag_index, unknown, path)


def _read_conllu_package(path, column, tag_index, unknown):
    """:func:`read_conllu` with the ``conllu`` package's parser."""
    conllu = require("conllu", "conllu", "read_conllu(engine='conllu')")
    text = "\n".join(read_lines(path, "CoNLL-U")) + "\n"
    raw = {column: lambda line, i: line[i], "form": lambda line, i: line[i]}
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


def read_conll_columns(path, column=-1, tag_index=None, *, unknown="error", form_column=0):
    """Gold tags of one column of a CoNLL-2003-style file.

    One token per line, columns separated by whitespace (spaces or tabs), a
    blank line between sentences; ``-DOCSTART-`` lines (document boundaries)
    are skipped and end a sentence. Every token line must have the same number
    of columns.

    Parameters
    ----------
    path : str or os.PathLike
        The column file, plain or compressed (``.gz``, ``.bz2``, ``.xz``).
    column : int, default=-1
        The tag column (0-based; negative counts from the end: ``-1`` is the
        NER tag of CoNLL-2003, ``1`` its POS tag).
    tag_index : dict, str or os.PathLike, optional
        Tag string to score-matrix column (or a JSON file of it). None: built
        from the file's tags in code-point order.
    unknown : {"error", "extend"} or int, default="error"
        As for :func:`read_conllu`.
    form_column : int, default=0
        The word-form column.

    Returns
    -------
    CorpusTags

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        Naming the file: not UTF-8, a line whose number of columns differs
        from the first token line's, a column out of range (naming the line),
        unknown tags (with ``unknown="error"``), a bad ``column``.

    References
    ----------
    Nguyen & O'Connor 2015, Section 5 (the CoNLL 2003 NER data, one gold tag
    per token); Tjong Kim Sang & De Meulder 2003 (the CoNLL-2003 format).

    Examples
    --------
    >>> from sparsecal.io import read_conll_columns
    >>> with open("ner.txt", "w") as f:
    ...     _ = f.write("-DOCSTART- -X- -X- O\\n\\nEU NNP B-NP B-ORG\\n"
    ...                 "rejects VBZ B-VP O\\n\\nPeter NNP B-NP B-PER\\n")
    >>> corpus = read_conll_columns("ner.txt", column=-1, tag_index={"O": 0, "B-ORG": 1})
    Traceback (most recent call last):
    ...
    ValueError: 'ner.txt' line 6: unknown tag 'B-PER' (not in the tag index); 1 token in all: 'B-PER' (line 6); pass unknown='extend' to add the tags to the index, or unknown=<id> to map them to one id
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
    lines = read_lines(path, "CoNLL")
    width = np.fromiter(map(len, map(str.split, lines)), np.int64, len(lines))
    docstart = np.zeros(len(lines), bool)
    nonblank = np.flatnonzero(width)
    docstart[nonblank] = np.asarray(_field(_take(lines, nonblank), 0),
                                    dtype=object) == "-DOCSTART-"
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
    kept = _take(lines, rows)
    return _build(_field(kept, column), _field(kept, form_column), rows,
                  breaks, tag_index, unknown, path)
