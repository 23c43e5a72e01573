"""Thresholded tag-score entries: the unit every metric and recalibrator consumes.

A tagger's dense scores ``[n_tokens, n_tags]`` are reduced to the entries with
``score >= threshold`` (Kranzlein, Liu & Schneider 2021, Section 3.1: 0.01 by
default), each with its tag, a 0/1 label (is it the gold tag?) and its token.
"""
import numpy as np

from . import _threshold
from .threads import get_n_threads
from .validation import (as_array, check_choice, check_float_matrix, check_gold,
                          check_labels, check_positive_int, check_probabilities,
                          check_unit_interval)

__all__ = ["Entries", "check_entries", "threshold"]

# A row chunk of about this many bytes stays in the last-level cache between the
# counting and the filling pass, so the matrix is read from memory once.
_CHUNK_BYTES = 8 << 20
_BLOCKS_PER_THREAD = 4


class Entries:
    """Parallel arrays of thresholded entries, in row-major (token, tag) order.

    Parameters
    ----------
    score : ndarray of float32 or float64, shape (n,)
        Scores in [0, 1].
    tag : ndarray of int, shape (n,)
        Tag (column) index of each entry, stored as int32.
    label : ndarray of {0, 1} or bool, shape (n,)
        1 where the tag is the token's gold tag, stored as uint8.
    token : ndarray of int, shape (n,), optional
        Token (row) index of each entry, stored as int64.
    n_tags : int, optional
        Size of the tag inventory (columns of the dense matrix).
    n_tokens : int, optional
        Number of tokens (rows) the entries were taken from.
    threshold : float, optional
        The threshold the entries were selected with.

    Arrays are validated and stored without copying when they already have the
    right dtype; an ``Entries`` never modifies them.

    Raises
    ------
    TypeError
        If ``tag`` or ``token`` does not hold integers, or ``score``/``label``
        has a non-numeric dtype.
    ValueError
        If a shape differs from ``score``'s, a score is outside [0, 1] or NaN,
        a label is not 0/1, a tag is negative, beyond int32 or ``>= n_tags``,
        ``n_tags`` is not a positive integer, ``n_tokens`` not a non-negative
        integer, or ``threshold`` is outside [0, 1].

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.1 (the above-threshold
    confidence scores of all tokens and tags) and Section 3.2, eq. 2.

    Examples
    --------
    >>> from sparsecal.core.entries import Entries
    >>> Entries([0.5, 0.2], [1, 0], [1, 0], n_tags=2)
    Entries(n=2, dtype=float64, n_tags=2, n_tokens=None, threshold=0.0, positives=1)
    """

    __slots__ = ("score", "tag", "label", "token", "n_tags", "n_tokens", "threshold")

    def __init__(self, score, tag, label, token=None, *, n_tags=None, n_tokens=None,
                 threshold=0.0):
        score = check_probabilities(score, "score")
        n = score.shape[0]
        tag = as_array(tag, "tag")
        if tag.shape != (n,):
            raise ValueError(f"tag has shape {tag.shape}, expected ({n},) like score")
        if tag.dtype.kind not in "iu":
            raise TypeError(f"tag must hold integers, got dtype {tag.dtype}")
        if n and (tag.min() < 0 or tag.max() > np.iinfo(np.int32).max):
            raise ValueError("tag indices must be non-negative int32 values")
        if n_tags is not None:
            n_tags = check_positive_int(n_tags, "n_tags")
        if n_tags is not None and n and tag.max() >= n_tags:
            raise ValueError(f"tag index {int(tag.max())} is out of range for "
                             f"n_tags={n_tags}")
        label = check_labels(label, "label", n)
        if token is not None:
            token = as_array(token, "token")
            if token.shape != (n,):
                raise ValueError(f"token has shape {token.shape}, expected ({n},)")
            if token.dtype.kind not in "iu":
                raise TypeError(f"token must hold integers, got dtype {token.dtype}")
            token = np.ascontiguousarray(token, dtype=np.int64)
        self.score = score
        self.tag = np.ascontiguousarray(tag, dtype=np.int32)
        self.label = label
        self.token = token
        self.n_tags = n_tags
        self.n_tokens = None if n_tokens is None else check_positive_int(
            n_tokens, "n_tokens", allow_zero=True)
        self.threshold = check_unit_interval(threshold, "threshold")

    @classmethod
    def _trusted(cls, score, tag, label, token, n_tags, n_tokens, threshold):
        """Build from kernel output without re-validating it."""
        self = object.__new__(cls)
        self.score, self.tag, self.label, self.token = score, tag, label, token
        self.n_tags, self.n_tokens, self.threshold = n_tags, n_tokens, threshold
        return self

    def __len__(self):
        return self.score.shape[0]

    def __repr__(self):
        return (f"Entries(n={len(self)}, dtype={self.score.dtype}, n_tags={self.n_tags}, "
                f"n_tokens={self.n_tokens}, threshold={self.threshold}, "
                f"positives={int(self.label.sum())})")

    def take(self, index):
        """The entries at ``index`` (integer array, slice or boolean mask).

        Parameters
        ----------
        index : array_like of int or bool, or slice

        Returns
        -------
        Entries
            Same ``n_tags``, ``n_tokens`` and ``threshold``.

        Raises
        ------
        IndexError
            If ``index`` is out of range or a mask of another length.

        References
        ----------
        Kranzlein, Liu & Schneider 2021, Section 3.3 (entries of a subset of
        tags, e.g. one tag group).

        Examples
        --------
        >>> import numpy as np
        >>> from sparsecal.core.entries import threshold
        >>> entries = threshold(np.array([[0.7, 0.2, 0.1], [0.005, 0.9, 0.095]]), [0, 2])
        >>> entries.take(entries.label == 1).tag
        array([0, 2], dtype=int32)
        """
        return Entries._trusted(
            self.score[index], self.tag[index], self.label[index],
            None if self.token is None else self.token[index],
            self.n_tags, self.n_tokens, self.threshold)

    def with_scores(self, score):
        """Same entries with new scores (e.g. recalibrated), validated.

        Parameters
        ----------
        score : array_like of float, shape (n,)
            Probabilities in [0, 1].

        Returns
        -------
        Entries
            Sharing ``tag``, ``label`` and ``token`` with ``self``.

        Raises
        ------
        TypeError
            If ``score`` does not hold real numbers.
        ValueError
            If ``score`` is outside [0, 1], NaN or of another shape.

        References
        ----------
        Kranzlein, Liu & Schneider 2021, Section 2.2 (recalibration maps each
        confidence score to a new one).

        Examples
        --------
        >>> import numpy as np
        >>> from sparsecal.core.entries import threshold
        >>> entries = threshold(np.array([[0.7, 0.2, 0.1], [0.005, 0.9, 0.095]]), [0, 2])
        >>> entries.with_scores(entries.score / 2).score
        array([0.35  , 0.1   , 0.05  , 0.45  , 0.0475])
        """
        score = check_probabilities(score, "score")
        if score.shape != self.score.shape:
            raise ValueError(f"score has shape {score.shape}, expected {self.score.shape}")
        return Entries._trusted(score, self.tag, self.label, self.token,
                                self.n_tags, self.n_tokens, self.threshold)


def _raise_invalid(block, row_offset):
    """Name the first NaN/inf/out-of-range value of a block of scores."""
    bad = ~((block >= 0) & (block <= 1))
    row, col = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), block.shape)
    value = block[row, col]
    what = "NaN" if np.isnan(value) else "outside [0, 1]"
    raise ValueError(f"scores[{row_offset + row}, {col}] = {value.item()!r} is {what}: "
                     "scores must be probabilities")


def threshold(scores, gold, threshold=0.01, *, missing_gold="negatives",
              token_offset=0, n_threads=None, progress=None):
    """Entries of a dense score matrix with ``score >= threshold``.

    Streams over row chunks of ``scores`` (a memory map is read once, in order),
    so memory stays bounded by the survivors: the matrix is never copied.

    Parameters
    ----------
    scores : array_like of float32 or float64, shape (n_tokens, n_tags)
        Tag probabilities per token; ``np.memmap`` (read-only too) welcome, of
        either byte order and any memory layout (read chunk by chunk, as
        native C-ordered rows; never modified). Values must lie in [0, 1]; NaN
        or out-of-range values raise.
    gold : array_like of int, shape (n_tokens,)
        Gold tag index per token; -1 marks a token whose gold tag is not in the
        inventory.
    threshold : float, default=0.01
        Keep entries with ``score >= threshold``, compared in the dtype of
        ``scores`` (as NumPy compares an array with a Python float).
        Kranzlein et al. 2021, Section 3.1.
    missing_gold : {"negatives", "drop"}, default="negatives"
        Tokens with gold -1 contribute negative entries only, or are dropped.
    token_offset : int, default=0
        Index of the first row of ``scores`` in a larger corpus: added to the
        entries' tokens and to the row named in error messages, for callers
        that stream a matrix chunk by chunk.
    n_threads : int, optional
        Threads for the kernel (see :func:`sparsecal.core.threads.get_n_threads`).
    progress : callable, optional
        Called as ``progress(rows_done, n_tokens)`` after each row chunk.

    Returns
    -------
    Entries
        In row-major (token, tag) order; ``score`` keeps the dtype of ``scores``
        (in native byte order).

    Raises
    ------
    TypeError
        If ``scores`` is not float32/float64 (or cannot be read as an array) or
        ``gold`` does not hold integers.
    ValueError
        If ``scores`` is not 2-D or empty, a score is NaN or outside [0, 1]
        (the first one is named), ``gold`` is out of range or of another
        length, or ``threshold``, ``token_offset`` or ``missing_gold`` is
        invalid, or ``n_threads`` is not a positive integer.

    Warns
    -----
    RuntimeWarning
        When ``n_threads`` is clamped (see :func:`sparsecal.core.threads.check_n_threads`).

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.1 (thresholding before both
    recalibration and evaluation); docs/architecture.md, Semantics 1.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.core.entries import threshold
    >>> scores = np.array([[0.7, 0.2, 0.1], [0.005, 0.9, 0.095]])
    >>> entries = threshold(scores, gold=[0, 2], threshold=0.01)
    >>> entries
    Entries(n=5, dtype=float64, n_tags=3, n_tokens=2, threshold=0.01, positives=2)
    >>> entries.tag, entries.label, entries.token
    (array([0, 1, 2, 1, 2], dtype=int32), array([1, 0, 0, 0, 1], dtype=uint8), array([0, 0, 0, 1, 1]))
    """
    scores, dtype = check_float_matrix(scores, "scores")
    n_tokens, n_tags = scores.shape
    gold = check_gold(gold, n_tokens, n_tags)
    t = check_unit_interval(threshold, "threshold")
    token_offset = check_positive_int(token_offset, "token_offset", allow_zero=True)
    check_choice(missing_gold, "missing_gold", {"negatives", "drop"})
    n_threads = get_n_threads(n_threads, n_tokens * n_tags)

    row_bytes = n_tags * dtype.itemsize
    chunk_rows = max(1, _CHUNK_BYTES // row_bytes)
    n_blocks_max = n_threads * _BLOCKS_PER_THREAD
    capacity = int(min(n_tokens * n_tags, max(1 << 16, n_tokens * n_tags // 64)))
    out = [np.empty(capacity, dtype=dt) for dt in (dtype, np.int32, np.uint8, np.int64)]
    size = 0
    for r0 in range(0, n_tokens, chunk_rows):
        # A view if native and C-ordered; else a native C-ordered copy of the chunk.
        block = np.ascontiguousarray(scores[r0:r0 + chunk_rows], dtype=dtype)
        rows = block.shape[0]
        rows_per_block = -(-rows // n_blocks_max)
        n_blocks = -(-rows // rows_per_block)
        kept = np.empty(n_blocks, dtype=np.int64)
        n_invalid = np.empty(n_blocks, dtype=np.int64)
        _threshold.threshold_count(block, t, rows_per_block, kept, n_invalid, n_threads)
        if n_invalid.any():
            _raise_invalid(block, token_offset + r0)
        start = size + np.concatenate(([0], np.cumsum(kept[:-1])))
        need = size + int(kept.sum())
        if need > capacity:
            capacity = max(need, capacity + capacity // 2)
            for arr in out:   # realloc: large arrays grow in place (mremap)
                arr.resize(capacity, refcheck=False)
        _threshold.threshold_fill(block, gold[r0:r0 + rows], t, rows_per_block, start,
                             token_offset + r0, *out, n_threads)
        size = need
        if progress is not None:
            progress(r0 + rows, n_tokens)
    for arr in out:
        arr.resize(size, refcheck=False)
    entries = Entries._trusted(*out, n_tags, n_tokens, t)
    if missing_gold == "drop" and (gold < 0).any():
        entries = entries.take(gold[entries.token - token_offset] >= 0)
    return entries


def check_entries(entries, name="entries"):
    """``entries`` if it is a non-empty :class:`~sparsecal.Entries`.

    Raises
    ------
    TypeError
        If it is not an ``Entries``.
    ValueError
        If it holds no entry (every score below the threshold).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.core.entries import check_entries, threshold
    >>> len(check_entries(threshold(np.array([[0.7, 0.3]]), np.array([0]), 0.01)))
    2
    """
    if not isinstance(entries, Entries):
        raise TypeError(f"{name} must be Entries (see sparsecal.threshold), got "
                        f"{type(entries).__name__}")
    if len(entries) == 0:
        raise ValueError(f"{name} hold no entries: every score is below the threshold")
    return entries
