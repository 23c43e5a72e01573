"""Thresholded tag-score entries: the unit every metric and recalibrator consumes.

A tagger's dense scores ``[n_tokens, n_tags]`` are reduced to the entries with
``score >= threshold`` (Kranzlein, Liu & Schneider 2021, Section 3.1: 0.01 by
default), each with its tag, a 0/1 label (is it the gold tag?) and its token.
"""
import os
import sys
import threading

import numpy as np

from .._docs import fill_doc
from . import _threshold
from .binning import carry, immutable, remember_sort
from .progress import check_progress
from .threads import get_n_threads
from .validation import (as_array, check_choice, check_float_matrix, check_gold,
                          check_labels, check_n_tags, check_positive_int,
                          check_probabilities, check_unit_interval)
from .dispatch import takes_data

__all__ = ["Entries", "check_entries", "concatenate_entries", "threshold"]

# The kernel's unit of work: threads take row chunks of about this many bytes
# from a shared counter (small enough to balance the threads' loads, large
# enough that taking one costs nothing).
_CHUNK_BYTES = 1 << 20
# A file read with ``pread`` in a scan of under _THREAD_BYTES goes into each
# thread's buffer this many bytes at a time (whole rows): a buffer of a chunk
# (a MiB) per thread went back to the system at every call and was faulted in
# again, doubling the time of a 10 MB scan; larger scans read whole chunks
# (fewer calls).
_READ_BYTES = 256 << 10
# Input the kernel cannot read as it is (another byte order or layout, HDF5...)
# is converted to native C-ordered row blocks of about this many bytes.
_BLOCK_BYTES = 64 << 20
# A scan over more bytes than this runs in a worker thread, so that the caller
# stays responsive (progress every _POLL_S seconds, Ctrl-C).
_THREAD_BYTES = 64 << 20
_POLL_S = 0.1


class Entries:
    """Parallel arrays of thresholded entries, in row-major (token, tag) order, kept
    without copying when their dtype is right and never modified.

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
    n_tags, n_tokens : int, optional
        The columns and rows of the dense matrix.
    threshold : float, optional
        The threshold the entries were selected with.

    Examples
    --------
    >>> Entries([0.5, 0.2], [1, 0], [1, 0], n_tags=2)
    Entries(n=2, dtype=float64, n_tags=2, n_tokens=None, threshold=0.0, positives=1)
    """

    __slots__ = ("score", "tag", "label", "token", "n_tags", "n_tokens", "threshold",
                 "_splits")

    def __init__(self, score, tag, label, token=None, *, n_tags=None, n_tokens=None,
                 threshold=0.0):
        score_given, tag_given, label_given, token_given = score, tag, label, token
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
            n_tags = check_n_tags(n_tags)
        if n_tags is not None and n and tag.max() >= n_tags:
            raise ValueError(f"tag index {int(tag.max())} is out of range for "
                             f"n_tags={n_tags}")
        label = check_labels(label, "label", n)
        if n_tokens is not None:
            n_tokens = check_positive_int(n_tokens, "n_tokens", allow_zero=True)
        if token is not None:
            token = as_array(token, "token")
            if token.shape != (n,):
                raise ValueError(f"token has shape {token.shape}, expected ({n},)")
            if token.dtype.kind not in "iu":
                raise TypeError(f"token must hold integers, got dtype {token.dtype}")
            # checked in the caller's dtype: a huge uint64 must not wrap around
            if n and (token.min() < 0 or n_tokens is not None and token.max() >= n_tokens):
                bad = (token < 0) | (token >= (n_tokens if n_tokens is not None else np.inf))
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"token[{i}] = {token[i]} is out of range: tokens (rows) "
                                 f"must lie in [0, n_tokens={n_tokens})")
            token = np.ascontiguousarray(token, dtype=np.int64)
        threshold = check_unit_interval(threshold, "threshold")
        if n and score.min() < score.dtype.type(threshold):   # the threshold's comparison
            i = int(np.flatnonzero(score < score.dtype.type(threshold))[0])
            raise ValueError(f"score[{i}] = {score[i].item()!r} is below threshold="
                             f"{threshold!r}, the threshold the entries declare they were "
                             "selected with")
        given = {id(a) for a in (score_given, tag_given, label_given, token_given)}
        self._set(*(None if a is None else _read_only(a, given) for a in (
            score, np.ascontiguousarray(tag, dtype=np.int32), label, token)))
        self.n_tags = n_tags
        self.n_tokens = n_tokens
        self.threshold = threshold

    @classmethod
    def _trusted(cls, score, tag, label, token, n_tags, n_tokens, threshold, carried=None):
        """Build from arrays no one else writes to (kernel output, another Entries'
        arrays) without re-validating them; they are made read-only."""
        self = object.__new__(cls)
        for a in (score, tag, label, token):
            if a is not None:
                a.flags.writeable = False
        self._set(score, tag, label, token, carried)
        self.n_tags, self.n_tokens, self.threshold = n_tags, n_tokens, threshold
        return self

    def _set(self, score, tag, label, token, carried=None):
        self.score, self.tag, self.label, self.token = score, tag, label, token
        remember_sort(score, carried)
        self._splits = [] if immutable(tag) and immutable(label) else None

    def __reduce__(self):
        return (_rebuild, (self.score, self.tag, self.label, self.token, self.n_tags,
                           self.n_tokens, self.threshold))

    def __len__(self):
        return self.score.shape[0]

    def __repr__(self):
        return (f"Entries(n={len(self)}, dtype={self.score.dtype}, n_tags={self.n_tags}, "
                f"n_tokens={self.n_tokens}, threshold={self.threshold}, "
                f"positives={int(self.label.sum())})")

    def take(self, index):
        """The entries at ``index`` (integer array, slice or boolean mask)."""
        arrays = [None if a is None else np.ascontiguousarray(a[index])
                  for a in (self.score, self.tag, self.label, self.token)]
        keep = _kept(index, len(self))
        return Entries._trusted(
            *arrays, self.n_tags, self.n_tokens, self.threshold,
            None if keep is None else carry(self.score, lambda perm: _kept_order(perm, keep)))

    def with_scores(self, score):
        """The same entries with new (validated) scores, sharing the other arrays."""
        return self._with_scores(score)

    def _with_scores(self, score, owned=False):
        """:meth:`with_scores`; ``owned``: no one else writes to ``score`` (a
        calibrator's output), which is then kept as it is, made read-only. The sort
        is carried over where it still holds."""
        given = score
        score = check_probabilities(score, "score")
        if score.shape != self.score.shape:
            raise ValueError(f"score has shape {score.shape}, expected {self.score.shape}")
        if not owned:
            score = _read_only(score, {id(given)})
        return Entries._trusted(score, self.tag, self.label, self.token, self.n_tags,
                                self.n_tokens, self.threshold, carry(self.score))


def _rebuild(score, tag, label, token, n_tags, n_tokens, threshold):
    """An unpickled :class:`Entries` (its arrays are new copies)."""
    return Entries._trusted(score, tag, label, token, n_tags, n_tokens, threshold)


def _read_only(a, given):
    """``a`` read-only: itself if it is a new array (a copy made in validation),
    else a read-only view (the caller's array stays writable)."""
    if id(a) in given or a.base is not None:
        a = a.view()
    a.flags.writeable = False
    return a


def _kept(index, n):
    """The boolean mask of the entries ``take(index)`` keeps, if it keeps them in
    their order (a boolean mask, a slice of positive step, increasing indices)."""
    if isinstance(index, slice):
        if index.step is not None and index.step <= 0:
            return None
        keep = np.zeros(n, dtype=bool)
        keep[index] = True
        return keep
    index = np.asarray(index)
    if index.dtype == np.bool_ and index.shape == (n,):
        return index   # (a candidate order is checked before use)
    if index.dtype.kind in "iu" and index.ndim == 1 and (index.size == 0 or (
            index[0] >= 0 and (np.diff(index) > 0).all())):
        keep = np.zeros(n, dtype=bool)
        keep[index] = True
        return keep
    return None


def _kept_order(perm, keep):
    """The stable order of ``x[keep]`` given ``perm``, the stable order of ``x``."""
    return (np.cumsum(keep) - 1)[perm[keep[perm]]]


def _raise_invalid(block, row_offset):
    """Name the first NaN/inf/out-of-range value of a block of scores."""
    bad = ~((block >= 0) & (block <= 1))
    row, col = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), block.shape)
    value = block[row, col]
    what = "NaN" if np.isnan(value) else "outside [0, 1]"
    raise ValueError(f"scores[{row_offset + row}, {col}] = {value.item()!r} is {what}: "
                     "scores must be probabilities")


@takes_data
@fill_doc
def threshold(scores, gold, threshold=0.01, *, missing_gold="negatives",
              token_offset=0, n_threads=None, progress=None):
    """Entries of a dense score matrix with ``score >= threshold``.

    One parallel pass over memory that never copies the matrix (other byte orders
    and layouts are converted 64 MiB at a time); a shared file map is read with
    ``pread`` on Linux, mapping none of its pages.

    Parameters
    ----------
    scores : array_like of float32 or float64, shape (n_tokens, n_tags)
        Tag probabilities per token in [0, 1], any byte order and layout (a
        read-only memory map too).
    gold : array_like of int, shape (n_tokens,)
        Gold tag index per token; -1 for a gold tag outside the inventory.
    threshold : float, default=0.01
        Compared in the dtype of ``scores`` (Kranzlein et al. 2021, Section 3.1).
    {missing_gold}
    token_offset : int, default=0
        Index of the first row in a larger corpus, for streaming a matrix by chunks.
    {n_threads}
    progress : callable, optional
        Called as ``progress(rows_done, n_tokens)`` every 0.1 s and at the end.

    Returns
    -------
    Entries
        ``score`` keeps the dtype of ``scores``.

    Examples
    --------
    >>> entries = threshold([[0.7, 0.2, 0.1], [0.005, 0.9, 0.095]], gold=[0, 2])
    >>> entries.tag.tolist(), entries.label.tolist(), entries.token.tolist()
    ([0, 1, 2, 1, 2], [1, 0, 0, 0, 1], [0, 0, 0, 1, 1])
    """
    scores, dtype = check_float_matrix(scores, "scores")
    n_tokens, n_tags = scores.shape
    gold = check_gold(gold, n_tokens, n_tags)
    t = check_unit_interval(threshold, "threshold")
    token_offset = check_positive_int(token_offset, "token_offset", allow_zero=True)
    check_choice(missing_gold, "missing_gold", {"negatives", "drop"})
    check_progress(progress)
    n_threads = get_n_threads(n_threads, n_tokens * n_tags)

    row_bytes = n_tags * dtype.itemsize
    chunk_rows = max(1, _CHUNK_BYTES // row_bytes)
    survivors = _threshold.Survivors(n_threads, dtype.itemsize)
    source = None
    if _is_native(scores, dtype):
        blocks = [(0, scores)]
        release = _is_shared_file_map(scores)
        source = _FileSource.of(scores) if release else None
    else:   # native C-ordered copies of row blocks, one at a time
        block_rows = max(chunk_rows, _BLOCK_BYTES // row_bytes)
        blocks = _converted_blocks(scores, dtype, block_rows)
        release = False   # the copies are ours; the file's pages go in _converted_blocks
    try:
        for r0, block in blocks:
            rows = block.shape[0]
            bad = _run(survivors, block, gold[r0:r0 + rows], t, chunk_rows,
                       token_offset + r0, release, progress, r0, n_tokens, source)
            if bad == -3:
                raise OSError(survivors.read_errno, "cannot read the scores from the file "
                              "(changed or cut short since it was mapped?)", source.path)
            if bad >= 0:
                rows_bad = slice(r0 + bad, r0 + min(bad + chunk_rows, rows))
                _raise_invalid(np.asarray(scores[rows_bad]), token_offset + rows_bad.start)
    finally:
        if source is not None:
            source.close()
    size = survivors.size
    out = [np.empty(size, dtype=dt) for dt in (dtype, np.int32, np.uint8, np.int64)]
    survivors.gather(*out)
    entries = Entries._trusted(*out, n_tags, n_tokens, t)
    if missing_gold == "drop" and (gold < 0).any():
        entries = entries.take(gold[entries.token - token_offset] >= 0)
    return entries


def _is_native(scores, dtype):
    """Whether the kernel can read ``scores`` as it is (no copy)."""
    return (isinstance(scores, np.ndarray) and scores.dtype == dtype
            and scores.flags.c_contiguous)


def _converted_blocks(scores, dtype, block_rows):
    """``(r0, native C-ordered copy of rows r0:r0 + block_rows)``; a file map's pages freed."""
    raw = None
    if isinstance(scores, np.ndarray) and scores.flags.c_contiguous and \
            _is_shared_file_map(scores):
        raw = scores.reshape(-1).view(np.uint8)
    row_bytes = scores.shape[1] * scores.dtype.itemsize
    for r0 in range(0, scores.shape[0], block_rows):
        block = np.ascontiguousarray(scores[r0:r0 + block_rows], dtype=dtype)
        if raw is not None:
            _threshold.release_bytes(raw, r0 * row_bytes, (r0 + block.shape[0]) * row_bytes)
        yield r0, block


class _FileSource:
    """The file under a shared file map, read with ``pread`` (Linux; proved the mapped file)."""

    def __init__(self, fd, offset, path):
        self.fd, self.offset, self.path = fd, offset, path

    @classmethod
    def of(cls, scores):
        """The source of a native C-ordered ``scores`` in a shared file map, or None."""
        if not sys.platform.startswith("linux"):
            return None
        address = scores.__array_interface__["data"][0]
        try:
            with open("/proc/self/maps", "rb") as f:
                for line in f:
                    span, _, offset, dev, inode, *path = line.split(maxsplit=5)
                    start, end = (int(a, 16) for a in span.split(b"-"))
                    if start <= address < end:
                        break
                else:
                    return None
        except (OSError, ValueError):
            return None
        if not path or address + scores.nbytes > end:
            return None
        path = os.fsdecode(path[0].rstrip(b"\n"))
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:   # gone, or " (deleted)"
            return None
        st = os.fstat(fd)
        major, minor = (int(x, 16) for x in dev.split(b":"))
        if (st.st_ino, os.major(st.st_dev), os.minor(st.st_dev)) != (int(inode), major,
                                                                        minor):
            os.close(fd)
            return None
        return cls(fd, int(offset, 16) + address - start, path)

    def close(self):
        os.close(self.fd)


def _is_shared_file_map(scores):
    """Whether ``scores`` lies in a shared file map, whose pages may be dropped once read."""
    base = scores
    while isinstance(base, np.ndarray):
        if isinstance(base, np.memmap) and getattr(base, "mode", None) in ("r", "r+", "w+"):
            return True
        base = base.base
    return False


def _run(survivors, block, gold, t, chunk_rows, token_offset, release, progress,
         rows_before, n_tokens, source=None):
    """One scan of ``block``, a large one in a worker thread (progress every 0.1 s, Ctrl-C)."""
    piece = _READ_BYTES if block.nbytes < _THREAD_BYTES else _CHUNK_BYTES
    read = () if source is None else (
        source.fd, source.offset, max(1, piece // (block.shape[1] * block.itemsize)))
    if progress is None and block.nbytes < _THREAD_BYTES:
        return survivors.scan(block, gold, t, chunk_rows, token_offset, release, *read)
    result = []

    def work():
        try:
            result.append(survivors.scan(block, gold, t, chunk_rows, token_offset,
                                         release, *read))
        except BaseException as exc:   # re-raised in the calling thread
            result.append(exc)

    worker = threading.Thread(target=work, name="sparsecal-threshold", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(_POLL_S)
            if progress is not None and worker.is_alive():
                progress(rows_before + survivors.rows_done, n_tokens)
        if progress is not None:
            progress(rows_before + block.shape[0], n_tokens)
    except BaseException:
        survivors.cancel()
        worker.join()
        raise
    if isinstance(result[0], BaseException):
        raise result[0]
    return result[0]


def concatenate_entries(parts, n_tags, n_tokens, threshold):
    """The entries of consecutive row ranges as one :class:`Entries` of the whole matrix."""
    fields = [None if getattr(parts[0], f) is None else
              np.concatenate([getattr(p, f) for p in parts])
              for f in ("score", "tag", "label", "token")]
    return Entries._trusted(*fields, n_tags, n_tokens, threshold)


def stored_threshold(entries):
    """The threshold a file of ``entries`` declares: theirs, or their lowest score
    where recalibrated scores (:meth:`Entries.with_scores`) fall below it, so that
    every file read back holds scores >= its threshold."""
    low = entries.score.min() if len(entries) else None
    if low is not None and low < entries.score.dtype.type(entries.threshold):
        return float(low)
    return entries.threshold


def check_row_major(entries, name):
    """Raise (naming ``name``) unless entries with tokens are in row-major
    (token, tag) order with each (token, tag) once, as :func:`threshold` makes
    them."""
    if entries.token is None or len(entries) < 2:
        return
    step, tag_step = np.diff(entries.token), np.diff(entries.tag.astype(np.int64))
    bad = (step < 0) | ((step == 0) & (tag_step <= 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0]) + 1
        what = "repeats" if step[i - 1] == 0 and tag_step[i - 1] == 0 else "is out of order:"
        raise ValueError(f"{name}: entry {i} (token {entries.token[i]}, tag {entries.tag[i]}) "
                         f"{what} entries must be in (token, tag) order, each pair once")


def check_entries(entries, name="entries"):
    """``entries`` if it is a non-empty :class:`~sparsecal.Entries`."""
    if not isinstance(entries, Entries):
        raise TypeError(f"{name} must be Entries (see sparsecal.threshold), got "
                        f"{type(entries).__name__}")
    if len(entries) == 0:
        raise ValueError(f"{name} hold no entries: every score is below the threshold")
    return entries
