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
# Input the kernel cannot read as it is (another byte order or layout, HDF5...)
# is converted to native C-ordered row blocks of about this many bytes.
_BLOCK_BYTES = 64 << 20
# A scan over more bytes than this runs in a worker thread, so that the caller
# stays responsive (progress every _POLL_S seconds, Ctrl-C).
_THREAD_BYTES = 64 << 20
_POLL_S = 0.1


class Entries:
    """Parallel arrays of thresholded entries, in row-major (token, tag) order.

    Arrays are validated and kept without copying when their dtype is right; an
    ``Entries`` never modifies them. :func:`sparsecal.io.to_arrow` and
    :func:`sparsecal.io.write_parquet` convert them (``core`` imports no extra).

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
        self.score = score
        self.tag = np.ascontiguousarray(tag, dtype=np.int32)
        self.label = label
        self.token = token
        self.n_tags = n_tags
        self.n_tokens = n_tokens
        self.threshold = threshold

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
        """The entries at ``index`` (integer array, slice or boolean mask), with the same
        ``n_tags``, ``n_tokens`` and ``threshold``.
        """
        return Entries._trusted(
            self.score[index], self.tag[index], self.label[index],
            None if self.token is None else self.token[index],
            self.n_tags, self.n_tokens, self.threshold)

    def with_scores(self, score):
        """The same entries with new (validated) scores, sharing the other arrays."""
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


@takes_data
@fill_doc
def threshold(scores, gold, threshold=0.01, *, missing_gold="negatives",
              token_offset=0, n_threads=None, progress=None):
    """Entries of a dense score matrix with ``score >= threshold``.

    One pass over memory, in parallel row chunks; the matrix is never copied
    (other byte orders and layouts are converted 64 MiB at a time) and memory is
    bounded by the survivors. A shared file map (``np.load(..., mmap_mode="r")``)
    is read on Linux with ``pread``, mapping none of its pages, and elsewhere
    through the map, its pages released once read.

    Parameters
    ----------
    scores : array_like of float32 or float64, shape (n_tokens, n_tags)
        Tag probabilities per token in [0, 1], any byte order and layout (a
        read-only memory map too); never modified.
    gold : array_like of int, shape (n_tokens,)
        Gold tag index per token; -1 for a gold tag outside the inventory.
    threshold : float, default=0.01
        Keep ``score >= threshold``, compared in the dtype of ``scores``
        (Kranzlein et al. 2021, Section 3.1).
    {missing_gold}
    token_offset : int, default=0
        Index of the first row in a larger corpus (added to the tokens and to the
        row named in errors), for streaming a matrix chunk by chunk.
    {n_threads}
    progress : callable, optional
        Called as ``progress(rows_done, n_tokens)`` every 0.1 s and at the end.

    Returns
    -------
    Entries
        ``score`` keeps the dtype of ``scores`` (native byte order).

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
    """``(r0, native C-ordered copy of rows r0:r0 + block_rows)``; pages of a shared
    file map are given back once copied.
    """
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
    """The file under a shared file map, read with ``pread`` into a small buffer per
    thread instead of faulting its pages into the process. Used only where the
    file is proved to be the one mapped (Linux: same device and inode as the map's
    line in ``/proc/self/maps``).
    """

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
    """Whether ``scores`` lies in a shared file map (``np.memmap`` mode 'r', 'r+' or
    'w+'), whose pages may be dropped once read.
    """
    base = scores
    while isinstance(base, np.ndarray):
        if isinstance(base, np.memmap) and getattr(base, "mode", None) in ("r", "r+", "w+"):
            return True
        base = base.base
    return False


def _run(survivors, block, gold, t, chunk_rows, token_offset, release, progress,
         rows_before, n_tokens, source=None):
    """One scan of ``block``; a large one (or one with ``progress``) runs in a worker
    thread, so that ``progress`` is called every 0.1 s and Ctrl-C stops it.
    """
    read = () if source is None else (source.fd, source.offset)
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
    """The entries of consecutive row ranges (tokens numbered in the whole matrix),
    as one :class:`Entries` of the whole matrix.
    """
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
