"""Span decoding for the BIO, BIOES and IO tagging schemes, the one home of the
rules: position ``t`` continues the span at ``t - 1`` when its prefix is in
``CONT`` and the tag at ``t - 1`` has the same type and a prefix in ``OPEN``;
any other non-``O`` tag begins a span (lenient, as Jagannatha & Yu 2020,
Appendix A.3).

========  ==========  ==========  ==========
scheme    prefixes    ``CONT``    ``OPEN``
========  ==========  ==========  ==========
``io``    I           I           I
``bio``   B, I        I           B, I
``bioes`` B, I, E, S  I, E        B, I
========  ==========  ==========  ==========
"""
from dataclasses import dataclass

import numpy as np

from ..core.dispatch import SENTENCE_EVENTS, takes_data
from ..core.validation import check_choice, check_lengths, check_tag_matrix
from ..io.tables import plural, summary
from .._docs import fill_doc

__all__ = ["Spans", "decode_spans", "parse_tag_names"]

#: scheme -> (admitted prefixes, prefixes that continue a span, prefixes a span goes on after)
SCHEMES = {"io": ("I", "I", "I"), "bio": ("BI", "I", "BI"), "bioes": ("BIES", "IE", "BI")}
_PREFIX_CODE = {"B": 1, "I": 2, "E": 3, "S": 4}


@dataclass(frozen=True)
class Spans:
    """Spans decoded from tag sequences: parallel int64 arrays ``sentence``,
    ``start``, ``length`` and ``type``, in (sentence, start) order, and the
    ``type_names`` (in order of first appearance in the tag names).

    Examples
    --------
    See :func:`decode_spans`.
    """

    sentence: np.ndarray
    start: np.ndarray
    length: np.ndarray
    type: np.ndarray
    type_names: tuple

    def __len__(self):
        return self.start.shape[0]

    def __repr__(self):
        names = list(self.type_names[:3]) + (["..."] if len(self.type_names) > 3 else [])
        return summary(self, plural(len(self), "span"),
                       f"{plural(len(self.type_names), 'type')}: {', '.join(names)}"
                       if names else "")

    def keys(self, n_positions):
        """One int64 per span, equal exactly for the same span (``n_positions``: padded length)."""
        n_types = max(len(self.type_names), 1)
        if (max(int(self.sentence.max(initial=0)) + 1, 1) * n_positions * (n_positions + 1)
                * n_types >= 2 ** 62):
            raise ValueError(f"n_positions={n_positions}: too many sentences, positions "
                             "and types to key spans in int64: split the batch")
        return ((self.sentence * n_positions + self.start) * (n_positions + 1)
                + self.length) * n_types + self.type


def parse_tag_names(tag_names, scheme):
    """Prefix code (0 ``O``, 1 ``B``, 2 ``I``, 3 ``E``, 4 ``S``) and type index (-1
    for ``O``) of every tag name, and the type names.

    Parameters
    ----------
    tag_names : sequence of str
    scheme : {"bio", "bioes", "io"}

    Returns
    -------
    prefix : ndarray of int8, shape (n_tags,)
    type : ndarray of int64, shape (n_tags,)
    type_names : tuple of str

    Examples
    --------
    >>> parse_tag_names(["O", "B-LOC", "I-LOC"], "bio")[1:]
    (array([-1,  0,  0]), ('LOC',))
    """
    check_choice(scheme, "scheme", tuple(SCHEMES))
    if isinstance(tag_names, str) or not all(isinstance(n, str) for n in tag_names):
        raise TypeError("tag_names must be a sequence of strings, one per tag index")
    if len(tag_names) == 0:
        raise ValueError("tag_names is empty")
    admitted = SCHEMES[scheme][0]
    prefix = np.zeros(len(tag_names), np.int8)
    types = np.full(len(tag_names), -1, np.int64)
    index = {}
    for i, name in enumerate(tag_names):      # one loop over the tag inventory
        if name == "O":
            continue
        head, sep, kind = name.partition("-")
        if not sep or not kind or head not in admitted or len(head) != 1:
            raise ValueError(f"tag_names[{i}] = {name!r} is not 'O' or one of the prefixes "
                             f"{', '.join(admitted)} of scheme {scheme!r} followed by '-' "
                             "and a type")
        prefix[i] = _PREFIX_CODE[head]
        types[i] = index.setdefault(kind, len(index))
    return prefix, types, tuple(index)


def _check_tags(tags, n_tags, lengths):
    """Tag matrix [B, N] with -1 replaced by 0, and the mask of its real positions."""
    arr = check_tag_matrix(tags, n_tags, "tags")
    L = check_lengths(lengths, arr.shape[0], arr.shape[1])
    real = (arr >= 0) & (np.arange(arr.shape[1])[None] < L[:, None])
    return np.where(real, arr, 0), real


@takes_data(refuse=SENTENCE_EVENTS)
@fill_doc
def decode_spans(tags, tag_names, scheme="bio", lengths=None):
    """The spans of every row of a tag-index matrix (-1 and positions past a row's
    length are outside every span).

    Parameters
    ----------
    tags : array_like of int, shape (B, N)
    {tag_names}
    {lengths}

    Returns
    -------
    Spans

    Examples
    --------
    >>> spans = decode_spans([[1, 2, 0, 4, 3]], ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"])
    >>> spans.start.tolist(), spans.length.tolist(), [spans.type_names[t] for t in spans.type]
    ([0, 3, 4], [2, 1, 1], ['PER', 'LOC', 'LOC'])
    """
    prefix_of, type_of, type_names = parse_tag_names(tag_names, scheme)
    idx, real = _check_tags(tags, len(tag_names), lengths)
    _, cont_set, open_set = SCHEMES[scheme]
    px = np.where(real, prefix_of[idx], 0)
    ty = np.where(real, type_of[idx], -1)
    cont_codes = [_PREFIX_CODE[c] for c in cont_set]
    open_codes = [_PREFIX_CODE[c] for c in open_set]
    cont = np.zeros(px.shape, bool)
    cont[:, 1:] = ((ty[:, 1:] >= 0) & np.isin(px[:, 1:], cont_codes)
                   & (ty[:, 1:] == ty[:, :-1]) & np.isin(px[:, :-1], open_codes))
    begin = (ty >= 0) & ~cont
    sentence, start = np.nonzero(begin)
    span_id = np.cumsum(begin.ravel()) - 1
    inside = (begin | cont).ravel()
    length = np.bincount(span_id[inside], minlength=sentence.shape[0])
    return Spans(sentence.astype(np.int64), start.astype(np.int64),
                 length.astype(np.int64), ty[sentence, start].astype(np.int64), type_names)
