"""Entries of a stream of batches, gathered into arrays grown in place, so that a
corpus' dense matrix is never held and its entries are never held twice.
"""
import numpy as np

from .entries import Entries

__all__ = ["EntryBuffer"]


class EntryBuffer:
    """Entry arrays grown in place (``ndarray.resize``), batch after batch, with each
    batch's tokens shifted by the tokens before it.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.core.entries import threshold
    >>> from sparsecal.core.entry_buffer import EntryBuffer
    >>> buf = EntryBuffer()
    >>> buf.append(threshold(np.array([[0.9, 0.1]]), [0], 0.05), n_tokens=1)
    >>> buf.append(threshold(np.array([[0.3, 0.7]]), [1], 0.05), n_tokens=1)
    >>> ent = buf.entries(n_tags=2, threshold=0.05)
    >>> ent.token.tolist(), ent.tag.tolist(), ent.n_tokens
    ([0, 0, 1, 1], [0, 1, 0, 1], 2)
    """

    def __init__(self):
        self.arrays = None
        self.size = 0
        self.n_tokens = 0

    def append(self, ent, n_tokens):
        """Append a batch's entries (tokens from 0) taken from ``n_tokens`` tokens."""
        n = len(ent)
        parts = (ent.score, ent.tag, ent.label, ent.token)
        if self.arrays is None:
            self.arrays = [np.empty(max(n, 1 << 16), dtype=a.dtype) for a in parts]
        elif ent.score.dtype != self.arrays[0].dtype:
            dt = np.result_type(ent.score.dtype, self.arrays[0].dtype)
            self.arrays[0] = self.arrays[0].astype(dt)
        need = self.size + n
        if need > self.arrays[0].shape[0]:
            cap = max(need, self.arrays[0].shape[0] * 3 // 2)
            for a in self.arrays:
                a.resize(cap, refcheck=False)
        lo = self.size
        for a, p in zip(self.arrays, parts):
            a[lo:need] = p
        self.arrays[3][lo:need] += self.n_tokens
        self.size = need
        self.n_tokens += n_tokens

    def entries(self, n_tags, threshold):
        """All appended entries as one :class:`Entries` (the buffer is spent)."""
        if self.arrays is None:
            arrays = (np.empty(0, np.float64), np.empty(0, np.int32), np.empty(0, np.uint8),
                      np.empty(0, np.int64))
        else:
            for a in self.arrays:
                a.resize(self.size, refcheck=False)
            arrays = self.arrays
        return Entries._trusted(*arrays, n_tags, self.n_tokens, threshold)
