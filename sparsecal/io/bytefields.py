"""Fields of a text located on its raw bytes with NumPy (line bounds, byte counts,
distinct fields with each line's id), so a corpus reader decodes each distinct
tag or word once instead of building a string per token.

The bytes come from :func:`~sparsecal.io.textfile.read_bytes` (UTF-8 checked,
BOM removed, newlines made ``\\n``).
"""
import numpy as np

__all__ = ["Lines", "distinct_fields", "joined_fields", "digit_fields", "digit_values",
           "SPACE_LEADS"]

_CHUNK_BYTES = 1 << 24   # bound on the words of one chunk of fields
#: ``_MASKS[k]``: the low k bytes of a 64-bit word
_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], np.uint64)

#: the ASCII bytes ``str.split()`` splits at (``str.isspace``): tab, newline, vertical
#: tab, form feed, carriage return, the four information separators, space
_ASCII_SPACE = np.zeros(256, bool)
_ASCII_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True
#: the UTF-8 encodings of the other code points ``str.split()`` splits at
_UNICODE_SPACES = [chr(c).encode("utf-8") for c in range(128, 0x3001) if chr(c).isspace()]
_UNICODE_LEADS = np.zeros(256, bool)
_UNICODE_LEADS[[code[0] for code in _UNICODE_SPACES]] = True
#: the first bytes of every whitespace character, ASCII or UTF-8
SPACE_LEADS = _ASCII_SPACE | _UNICODE_LEADS
#: the last bytes of every whitespace character, ASCII or UTF-8
_SPACE_LASTS = _ASCII_SPACE.copy()
_SPACE_LASTS[[code[-1] for code in _UNICODE_SPACES]] = True


class Lines:
    """The line table of a text: ``starts[i]:ends[i]`` are line ``i``'s bytes."""

    def __init__(self, data):
        self.data = data
        self.buf = np.frombuffer(data, dtype=np.uint8)
        newlines = np.flatnonzero(self.buf == 10)
        self.starts = np.concatenate([[0], newlines + 1]).astype(np.int64)
        self.ends = np.concatenate([newlines, [self.buf.size]]).astype(np.int64)
        if data.endswith(b"\n"):   # the newline ends the last line
            self.starts, self.ends = self.starts[:-1], self.ends[:-1]

    def __len__(self):
        return int(self.starts.size)

    def positions(self, byte):
        """The offsets of every ``byte`` in the text."""
        return np.flatnonzero(self.buf == ord(byte))

    def count(self, byte, positions=None):
        pos = self.positions(byte) if positions is None else positions
        return np.searchsorted(pos, self.ends) - np.searchsorted(pos, self.starts)

    def whitespace_fields(self):
        """``(starts, ends, counts)``: the byte ranges of every line's fields split as by
        ``str.split()``, and the number of fields of each line.
        """
        bounded = np.ones(self.buf.size + 2, bool)   # a space before and after the text
        space = bounded[1:-1]
        np.take(_ASCII_SPACE, self.buf, out=space)
        if self.buf.size and self.buf.max() >= 0xC2:   # UTF-8 spaces start at 0xC2
            leads = np.flatnonzero(_UNICODE_LEADS[self.buf])
            for code in _UNICODE_SPACES:   # a loop over the 25 other space characters
                at = leads[self.buf[leads] == code[0]]
                for k in range(1, len(code)):
                    at = at[at + k < self.buf.size]
                    at = at[self.buf[at + k] == code[k]]
                for k in range(len(code)):
                    space[at + k] = True
        change = np.flatnonzero(bounded[1:] != bounded[:-1])   # starts, ends alternate
        starts, ends = change[0::2], change[1::2]
        # fields never span lines, and no field starts between a line's end and
        # the next line's start (a newline): a line's fields run up to the next's
        first = np.searchsorted(starts, self.starts)
        counts = np.diff(first, append=starts.size)
        return starts, ends, counts

    def stripped(self):
        """``(starts, ends)`` of each line stripped as by ``str.strip()``."""
        edge = self.ends > self.starts   # lines that may start or end with whitespace
        edge[edge] = (SPACE_LEADS[self.buf[self.starts[edge]]]
                      | _SPACE_LASTS[self.buf[self.ends[edge] - 1]])
        if not edge.any():
            return self.starts, self.ends
        starts, ends, counts = self.whitespace_fields()
        first = np.cumsum(counts) - counts
        some = counts > 0
        line_starts = self.starts.copy()
        line_starts[some] = starts[first[some]]
        line_ends = self.starts.copy()
        line_ends[some] = ends[(first + counts - 1)[some]]
        return line_starts, line_ends

    def text(self, i):
        return self.data[self.starts[i]:self.ends[i]].decode("utf-8")


def joined_fields(buf, starts, ends):
    """The fields ``buf[starts[i]:ends[i]]`` (no newline in them) as a list of str,
    gathered, decoded and split in one call each.
    """
    if starts.size == 0:
        return []
    joined, after = _gather(buf, starts, ends - starts + 1)   # each field and one byte
    joined[after - 1] = 10
    return joined.tobytes().decode("utf-8").split("\n")[:-1]


def _gather(buf, starts, sizes):
    """The ``sizes[i]`` bytes from each ``starts[i]``, concatenated, and where each
    run ends in the result.
    """
    after = np.cumsum(sizes)
    if buf.size == 0:
        return np.zeros(int(after[-1]) if after.size else 0, np.uint8), after
    index = np.arange(after[-1] if after.size else 0) + np.repeat(starts - (after - sizes),
                                                                  sizes)
    return buf[np.minimum(index, buf.size - 1)], after


def digit_fields(buf, starts, ends):
    """Whether each field ``buf[starts[i]:ends[i]]`` is one or more ASCII digits."""
    lengths = ends - starts
    if lengths.size == 0:
        return np.zeros(0, bool)
    data, after = _gather(buf, starts, lengths)
    bad = np.zeros(data.size + 1, np.int64)
    np.cumsum((data - np.uint8(48)) > 9, out=bad[1:])   # uint8: below '0' wraps round
    return (lengths > 0) & (bad[after] == bad[after - lengths])


def digit_values(buf, starts, ends):
    """The int64 value of each field of 1 to 18 ASCII digits (not checked)."""
    lengths = ends - starts
    values = np.zeros(lengths.size, np.int64)
    for j in range(int(lengths.max(initial=0))):   # a loop over digit places (<= 18)
        more = lengths > j
        digit = buf[np.minimum(starts + j, buf.size - 1)].astype(np.int64) - 48
        values = np.where(more, values * 10 + digit, values)
    return values


def _loads(buf, at):
    """The 8 bytes from each offset ``at`` as a little-endian word (zeros past the
    end), through a byte-strided view (no copy of the text).
    """
    n = buf.size
    k = min(n, 8)
    tail = np.zeros(16, np.uint8)
    tail[:k] = buf[n - k:]
    tail_loads = np.ndarray((9,), np.dtype("<u8"), tail, 0, (1,))
    if n < 8:
        return tail_loads[at]
    loads = np.ndarray((n - 7,), np.dtype("<u8"), buf, 0, (1,))
    out = loads[np.minimum(at, n - 8)]
    late = np.flatnonzero(at > n - 8)
    out[late] = tail_loads[at[late] - (n - k)]
    return out


def _words(buf, starts, lengths, n_words):
    """Each field as ``n_words`` little-endian words: its bytes, then zeros."""
    words = np.empty((starts.size, n_words), np.uint64)
    for j in range(n_words):   # a loop over the 8-byte words of a field
        left = np.clip(lengths - 8 * j, 0, 8)
        words[:, j] = _loads(buf, np.minimum(starts + 8 * j, buf.size)) & _MASKS[left]
    return words


def _first_and_inverse(keys):
    """``np.unique(keys, return_index=True, return_inverse=True)[1:]``, the first
    occurrences by ``np.minimum.at`` (3x faster than a stable argsort).
    """
    _, inverse = np.unique(keys, return_inverse=True)
    inverse = inverse.reshape(-1)
    first = np.full(int(inverse.max(initial=-1)) + 1, keys.size, np.int64)
    np.minimum.at(first, inverse, np.arange(keys.size))
    return first, inverse


def _distinct_rows(words, lengths):
    """``(first, inverse)`` of the distinct fields: keyed by the word itself when a
    field fits one, else by a hash of its words, collisions checked exactly.
    """
    key = words[:, 0].copy()
    for j in range(1, words.shape[1]):   # a loop over the 8-byte words of a field
        key = key * np.uint64(0x100000001B3) + words[:, j]
    first, inverse = _first_and_inverse(key)
    if not (np.array_equal(lengths[first][inverse], lengths)
            and np.array_equal(words[first][inverse], words)):
        exact = np.column_stack([words, lengths.astype(np.uint64)])
        first, inverse = _first_and_inverse(exact.view(f"V{exact.shape[1] * 8}").ravel())
    return first, inverse


def distinct_fields(buf, starts, ends):
    """``(values, inverse)``: the distinct fields ``buf[starts[i]:ends[i]]``, decoded
    in order of first occurrence, and ``values[inverse[i]]`` is field ``i``.
    """
    lengths = ends - starts
    n_words = max(1, -(-int(lengths.max(initial=0)) // 8))
    step = max(1, _CHUNK_BYTES // (8 * n_words))
    reps, inverses = [], []
    for lo in range(0, lengths.size, step):   # a loop over chunks of fields
        part = lengths[lo:lo + step]
        first, inverse = _distinct_rows(_words(buf, starts[lo:lo + step], part, n_words),
                                        part)
        inverses.append(inverse + sum(r.size for r in reps))
        reps.append(lo + first)
    if not reps:
        return [], np.zeros(0, np.int64)
    reps = np.concatenate(reps)
    first, merged = _distinct_rows(_words(buf, starts[reps], lengths[reps], n_words),
                                   lengths[reps])
    order = np.argsort(reps[first])   # the distinct fields in text order
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    inverse = rank[merged[np.concatenate(inverses)]].astype(np.int64)
    at = reps[first][order]
    return joined_fields(buf, starts[at], ends[at]), inverse
