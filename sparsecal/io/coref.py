"""Coreference from CorefUD CoNLL-U files (the ``Entity=`` attribute of MISC):
mentions as token spans and entities as chains.

The brackets are located on the file's bytes with NumPy: ``(id-type-...``
opens a mention, ``id)`` closes the latest open mention of ``id`` in the
document, ``(id-type-...)`` is a one-token mention; opens and closes are
matched per (document, id) by their bracket depth, with no Python loop over
tokens or brackets. Rules: ids are per document (``# newdoc``); a mention's
sentence is that of its first token (it may run on); its nesting depth is the
number of mentions open when it opens; its entity's type is that of the
entity's first mention. Refused, naming the file and line: a close without an
open mention, a mention never closed, a discontinuous mention (``id[1/2]``),
``Entity=`` twice in a MISC or on a multiword token or empty node, and text
outside the brackets. Other CorefUD attributes (``SplitAnte``, ``Bridge``) are
not read.
"""
from dataclasses import dataclass

import numpy as np

from .bytefields import distinct_fields, joined_fields
from .corpora import _conllu_lines, _equals, _sentence_offsets

__all__ = ["CorefCorpus", "read_coref"]

_ENTITY = np.frombuffer(b"Entity=", np.uint8)


@dataclass(frozen=True)
class CorefCorpus:
    """Tokens, mentions and entities of a CorefUD corpus (arrays, immutable).

    Tokens: ``forms``, ``lines`` (1-based), ``offsets`` (sentence ``i`` is tokens
    ``offsets[i]:offsets[i + 1]``), ``documents`` (document ``d`` is tokens
    ``documents[d]:documents[d + 1]``) and ``document_names``. Mentions, in
    order of their opening bracket: ``start``/``end`` (token span, end
    exclusive), ``mention_document``, ``mention_sentence``, ``entity``,
    ``mention_type`` (index into ``types``) and ``depth``. Entities, in order
    of their first mention: ``entity_ids`` (as written), ``entity_document``,
    ``entity_type``; entity ``e``'s mentions are
    ``chain_mentions[chain_offsets[e]:chain_offsets[e + 1]]``.

    Examples
    --------
    See :func:`read_coref`.
    """

    forms: np.ndarray
    lines: np.ndarray
    offsets: np.ndarray
    documents: np.ndarray
    document_names: tuple
    start: np.ndarray
    end: np.ndarray
    mention_document: np.ndarray
    mention_sentence: np.ndarray
    entity: np.ndarray
    mention_type: np.ndarray
    depth: np.ndarray
    types: tuple
    entity_ids: np.ndarray
    entity_document: np.ndarray
    entity_type: np.ndarray
    chain_offsets: np.ndarray
    chain_mentions: np.ndarray

    def __repr__(self):
        return (f"CorefCorpus(n_tokens={self.forms.shape[0]}, n_documents="
                f"{len(self.document_names)}, n_mentions={self.n_mentions}, "
                f"n_entities={self.n_entities})")

    @property
    def n_mentions(self):
        return int(self.start.shape[0])

    @property
    def n_entities(self):
        return int(self.entity_ids.shape[0])

    def chain(self, e):
        """The mentions of entity ``e``, in text order."""
        return self.chain_mentions[self.chain_offsets[e]:self.chain_offsets[e + 1]]


def _error(path, line, problem):
    return ValueError(f"{str(path)!r} line {int(line)}: {problem}")


def _documents(lines, comment, rows):
    """Each row's document number (a ``# newdoc`` comment starts one) and the
    names of the ``# newdoc id = NAME`` lines."""
    cand = np.flatnonzero(comment)
    ends = np.minimum(lines.starts[cand] + 8, lines.ends[cand])
    newdoc = cand[_equals(lines.buf, lines.starts[cand], ends, b"# newdoc")]
    number = np.zeros(len(lines), np.int64)
    number[newdoc] = 1
    names = [""] + [lines.text(i).partition("=")[2].strip()   # a loop over documents
                    for i in newdoc]
    return np.cumsum(number)[rows], names


def _entity_values(path, lines, misc, row_lines):
    """The byte ranges ``[vs, ve)`` of the ``Entity=`` values and their row."""
    ms, me = misc
    buf = lines.buf
    cand = np.flatnonzero(buf[:max(buf.size - 6, 0)] == ord("E"))
    cand = cand[(buf[cand[:, None] + np.arange(7)] == _ENTITY).all(axis=1)]
    row = np.searchsorted(ms, cand, side="right") - 1
    keep = (row >= 0) & (cand < me[np.maximum(row, 0)])
    cand, row = cand[keep], row[keep]
    keep = (cand == ms[row]) | (buf[cand - 1] == ord("|"))
    cand, row = cand[keep], row[keep]
    twice = np.flatnonzero(np.diff(row) == 0)
    if twice.size:
        raise _error(path, row_lines[row[twice[0]]], "Entity= appears twice in MISC")
    pipes = np.flatnonzero(buf == ord("|"))
    nxt = np.r_[pipes, buf.size][np.searchsorted(pipes, cand)]
    return cand + 7, np.minimum(nxt, me[row]), row


def _brackets(path, buf, vs, ve, value_lines):
    """The brackets of the values: ``(opens, closes)``, each a tuple of byte
    position, value index and id bounds; opens also carry type bounds and
    ``single`` (closed by the next byte's bracket)."""
    at = np.flatnonzero((buf == ord("(")) | (buf == ord(")")))
    val = np.searchsorted(vs, at, side="right") - 1
    keep = (val >= 0) & (at < ve[np.maximum(val, 0)])
    at, val = at[keep], val[keep]
    has = np.zeros(vs.size, bool)
    has[val] = True
    if not has.all():
        raise _error(path, value_lines[np.flatnonzero(~has)[0]], "an Entity= value without "
                     "brackets")
    is_open = buf[at] == ord("(")
    first = np.r_[True, val[1:] != val[:-1]]
    last = np.r_[val[1:] != val[:-1], True]
    prev_open = np.r_[False, is_open[:-1]] & ~first
    # text before a bracket that follows a close or starts the value: a close's id
    seg_start = np.where(first, vs[val], np.r_[0, at[:-1] + 1])
    bad = is_open & (seg_start < at) & ~prev_open
    trailing = last & ~is_open & (at + 1 < ve[val])
    if bad.any() or trailing.any():
        i = np.flatnonzero(bad | trailing)[0]
        raise _error(path, value_lines[val[i]], "text outside the brackets of Entity=")
    closes = np.flatnonzero(~is_open & ~prev_open)
    if np.any(seg_start[closes] == at[closes]):
        i = closes[seg_start[closes] == at[closes]][0]
        raise _error(path, value_lines[val[i]], "a closing bracket without an entity id")
    opens = np.flatnonzero(is_open)
    o_end = np.where(last[opens], ve[val[opens]], at[np.minimum(opens + 1, at.size - 1)])
    single = ~last[opens] & ~is_open[np.minimum(opens + 1, at.size - 1)]
    o_start = at[opens] + 1
    # the id ends at the first '-' of the open's text, the type at the second
    dashes = np.flatnonzero(buf == ord("-"))
    k = np.searchsorted(dashes, o_start)
    dashes = np.r_[dashes, buf.size, buf.size]
    d1, d2 = dashes[k], dashes[k + 1]
    id_end = np.minimum(d1, o_end)
    type_end = np.where(d1 < o_end, np.minimum(d2, o_end), id_end)
    type_start = np.minimum(d1 + 1, type_end)
    return ((at[opens], val[opens], o_start, id_end, type_start, type_end, single),
            (at[closes], val[closes], seg_start[closes], at[closes]))


def _match(path, key, sign, line):
    """Pair each open (+1) with its close (-1) of the same key, events in text
    order: at equal bracket depth within a key they alternate."""
    order = np.argsort(key, kind="stable")
    k, s = key[order], sign[order]
    run = np.cumsum(s)
    first = np.r_[True, k[1:] != k[:-1]]
    before = np.r_[0, run[:-1]]
    # an open's depth after it, a close's before it
    depth = run - before[np.flatnonzero(first)][np.cumsum(first) - 1] + (s < 0)
    if np.any(depth <= 0):
        i = order[np.flatnonzero(depth <= 0)[0]]
        raise _error(path, line[i], "a closing bracket of an entity with no open mention")
    level = np.lexsort((np.arange(k.size), depth, k))
    k, d, s = k[level], depth[level], s[level]
    cut = np.r_[True, (k[1:] != k[:-1]) | (d[1:] != d[:-1])]
    pos = np.arange(k.size) - np.maximum.accumulate(np.where(cut, np.arange(k.size), 0))
    unclosed = (s > 0) & np.r_[cut[1:], True]
    if unclosed.any():
        i = order[level[np.flatnonzero(unclosed)[0]]]
        raise _error(path, line[i], "a mention that is never closed (in its document)")
    ev = order[level]
    even = pos % 2 == 0
    return ev[even], ev[~even]


def read_coref(path):
    """Mentions and entities of a CorefUD CoNLL-U file (``Entity=`` in MISC).

    Parameters
    ----------
    path : str or os.PathLike
        Plain or compressed (``.gz``, ``.bz2``, ``.xz``).

    Returns
    -------
    CorefCorpus

    Examples
    --------
    >>> from sparsecal.io import read_coref
    >>> row = "{}\\t{}\\t_\\t_\\t_\\t_\\t0\\t_\\t_\\t{}\\n"
    >>> with open("tiny_coref.conllu", "w") as f:
    ...     _ = f.write("# newdoc id = d1\\n" + row.format(1, "Mary", "Entity=(1-person)")
    ...                 + row.format(2, "saw", "_")
    ...                 + row.format(3, "her", "Entity=(2-person(1-person)")
    ...                 + row.format(4, "dog", "Entity=2)") + "\\n")
    >>> c = read_coref("tiny_coref.conllu")
    >>> c.start.tolist(), c.end.tolist(), c.entity.tolist(), c.depth.tolist()
    ([0, 2, 2], [1, 4, 3], [0, 1, 0], [0, 0, 1])
    >>> c.chain(0).tolist(), c.types, c.entity_ids.tolist()
    ([0, 2], ('person',), ['1', '2'])
    """
    lines, blank, rows, field, word = _conllu_lines(path)
    comment = ~blank & (lines.ends > lines.starts)
    comment[comment] = lines.buf[lines.starts[comment]] == ord("#")
    doc_of_row, names = _documents(lines, comment, rows)
    row_lines = rows + 1
    vs, ve, vrow = _entity_values(path, lines, field(9), row_lines)
    if not word[vrow].all():
        raise _error(path, row_lines[vrow[~word[vrow]][0]], "Entity= on a multiword token "
                     "or empty node")
    words = np.flatnonzero(word)
    token_of_row = np.cumsum(word) - 1
    vtok, vline = token_of_row[vrow], row_lines[vrow]
    buf = lines.buf
    (o_at, o_val, o_s, o_ide, t_s, t_e, single), (c_at, c_val, c_s, c_e) = \
        _brackets(path, buf, vs, ve, vline)
    ids, id_of = distinct_fields(buf, np.r_[o_s, c_s], np.r_[o_ide, c_e])
    broken = [i for i, name in enumerate(ids) if "[" in name or not name]
    if broken:
        at = np.flatnonzero(np.isin(id_of, broken))[0]
        raise _error(path, np.r_[vline[o_val], vline[c_val]][at],
                     f"entity id {ids[id_of[at]]!r}: discontinuous mentions (id[1/2]) and "
                     "empty ids are not read")
    doc = np.unique(doc_of_row[words], return_inverse=True)[1].reshape(-1)
    n_docs = int(doc.max()) + 1 if doc.size else 0
    names = [names[d] for d in np.unique(doc_of_row[words])]
    key = doc[np.r_[vtok[o_val], vtok[c_val]]] * len(ids) + id_of
    n_o = o_at.size
    multi = np.flatnonzero(~single)
    ev_key = np.r_[key[multi], key[n_o:]]
    ev_sign = np.r_[np.ones(multi.size, np.int64), -np.ones(c_at.size, np.int64)]
    ev_pos = np.r_[o_at[multi], c_at]
    order = np.argsort(ev_pos, kind="stable")           # events in text order
    ev_line = np.r_[vline[o_val[multi]], vline[c_val]][order]
    o_ev, c_ev = _match(path, ev_key[order], ev_sign[order], ev_line)
    close_tok = vtok[o_val].copy()                      # one-token mentions end there
    close_tok[multi[order[o_ev]]] = vtok[c_val[order[c_ev] - multi.size]]
    # depth: mentions open before this one opens (a one-token mention closes at once)
    pos = np.r_[o_at, c_at, o_at[single]]
    sign = np.r_[np.ones(n_o, np.int64), -np.ones(c_at.size + single.sum(), np.int64)]
    srt = np.lexsort((-sign, pos))
    running = np.empty(pos.size, np.int64)
    running[srt] = np.cumsum(sign[srt]) - sign[srt]
    depth = running[:n_o]
    types, type_of = distinct_fields(buf, t_s, t_e)
    names_sorted = np.argsort(np.array(types, dtype=object)) if types else np.zeros(0, int)
    rank = np.empty(len(types), np.int64)
    rank[names_sorted] = np.arange(len(types))
    m_type = rank[type_of] if types else np.zeros(0, np.int64)
    m_key = key[:n_o]
    first_of, inv = np.unique(m_key, return_index=True, return_inverse=True)[1:]
    ent_order = np.argsort(first_of, kind="stable")
    ent_rank = np.empty_like(ent_order)
    ent_rank[ent_order] = np.arange(ent_order.size)
    entity = ent_rank[inv.reshape(-1)]
    first_mention = first_of[ent_order]
    chain = np.argsort(entity, kind="stable")
    start = vtok[o_val]
    sent_offsets = _sentence_offsets(blank, rows[words])
    forms = np.empty(words.size, dtype=object)
    forms[:] = joined_fields(buf, *field(1, words))
    return CorefCorpus(
        forms=forms, lines=row_lines[words].astype(np.int64), offsets=sent_offsets,
        documents=np.searchsorted(doc, np.arange(n_docs + 1)).astype(np.int64),
        document_names=tuple(names), start=start.astype(np.int64),
        end=(close_tok + 1).astype(np.int64), mention_document=doc[start],
        mention_sentence=np.searchsorted(sent_offsets, start, side="right") - 1,
        entity=entity.astype(np.int64), mention_type=m_type.astype(np.int64),
        depth=depth, types=tuple(sorted(types)),
        entity_ids=np.array([ids[i] for i in id_of[first_mention]], dtype=object),
        entity_document=doc[start[first_mention]], entity_type=m_type[first_mention],
        chain_offsets=np.r_[0, np.cumsum(np.bincount(entity, minlength=ent_order.size))],
        chain_mentions=chain.astype(np.int64))
