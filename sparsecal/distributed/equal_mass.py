"""Exact equal-mass bins of distributed entries by radix selection over mergeable
per-chunk counts (docs/scale.md): the single machine's bins bit for bit."""
import numpy as np

from ..core.binning import BinStats, equal_mass_bin_starts
from .chunks import add_tables, key_scores, runs, sorted_sets
from .fixedpoint import fixed_parts, fixed_value
from .reduce import SPLIT_EVERY, per_block, persist_with, tree, tree_merge

__all__ = ["GATHER_MAX", "MERGE_BYTES", "equal_mass_bin_stats"]

_DIGIT = 16
_RADIX = 1 << _DIGIT
#: a cut whose bucket holds at most this many entries (all chunks) is finished
#: by gathering the bucket's keys instead of further radix rounds
GATHER_MAX = 1 << 17
_EMPTY = np.empty(0, np.uint64)
#: distinct top digits of scores in [0, 1] (0x3F80 + 1 for float32 keys,
#: 0x3FF0 + 1 for float64): the ids of one set's first-round counts
_TOP_IDS = 1 << 14
#: bytes of partial digit counts one merge task takes in (about)
MERGE_BYTES = 32 << 20


def _split_every(n_sets):
    """Partial digit counts merged per task, fewer for many sets (docs/scale.md, "Memory")."""
    return int(np.clip(MERGE_BYTES // (n_sets * _TOP_IDS * 16), 2, SPLIT_EVERY))


def _prepare(block, index, pooled, tag_to_group, n_groups):
    return sorted_sets(block, pooled, tag_to_group, n_groups)


def _spans(keys, starts, w):
    """Positions ``[a, b)`` in ``keys`` of the buckets of ``2**w`` keys at ``starts``."""
    last = starts + np.uint64((1 << w) - 1)
    return (np.searchsorted(keys, starts.astype(keys.dtype), side="left"),
            np.searchsorted(keys, last.astype(keys.dtype), side="right"))


def _digit_counts(keys, starts, w):
    """Counts of the next 16-bit digit in each bucket (ids ``bucket * 2**16 + digit``)."""
    ids, counts = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
    shift = w - _DIGIT
    for j, (a, b) in enumerate(zip(*_spans(keys, starts, w))):   # a loop over buckets
        digit, _, n = runs((keys[a:b].astype(np.uint64) - starts[j]) >> np.uint64(shift))
        ids.append(j * _RADIX + digit.astype(np.int64))
        counts.append(n)
    return np.concatenate(ids), np.concatenate(counts)


def _query(sets, index, w, refine, finish):
    """One round on one chunk: per set, digit counts in ``refine`` and keys in ``finish``."""
    counts, found = [], []
    for (keys, _), r, f in zip(sets, refine, finish):
        counts.append(_digit_counts(keys, r, w))
        a, b = _spans(keys, f, w)
        found.append(b - a if w == 0 else [keys[i:j] for i, j in zip(a, b)])
    return counts, [(index, found)]


def _merge_round(parts):
    return ([add_tables(*zip(*per_set)) for per_set in zip(*[p[0] for p in parts])],
            [f for p in parts for f in p[1]])


class _Cuts:
    """The client's state of one set's cuts, then each cut's key, chunk and tie rank."""

    def __init__(self, ranks):
        self.lo = np.zeros(ranks.size, np.uint64)
        self.rest = ranks.astype(np.int64)
        self.size = np.zeros(ranks.size, np.int64)
        self.key = np.zeros(ranks.size, np.uint64)
        self.chunk = np.zeros(ranks.size, np.int64)
        self.tie = np.zeros(ranks.size, np.int64)
        self.refine = np.arange(ranks.size)     # cuts being refined
        self.finish = np.empty(0, np.int64)     # cuts being finished

    def descend(self, counts, buckets, shift):
        ids, cnt = counts
        for t in self.refine:   # a loop over cuts (bins)
            j = np.searchsorted(buckets, self.lo[t])
            a, b = np.searchsorted(ids, [j * _RADIX, (j + 1) * _RADIX])
            cum = np.cumsum(cnt[a:b])
            d = np.searchsorted(cum, self.rest[t], side="right")
            self.rest[t] -= cum[d - 1] if d else 0
            self.size[t] = cnt[a + d]
            self.lo[t] += np.uint64(int(ids[a + d] - j * _RADIX) << shift)

    def settle(self, buckets, found, w):
        """Key, chunk and tie rank of each finished cut from the found keys (or counts)."""
        chunks = np.array([c for c, _ in found], dtype=np.int64)
        bucket = np.searchsorted(buckets, self.lo[self.finish])
        for f in np.unique(bucket):   # a loop over buckets: each sorted once
            cut = self.finish[bucket == f]
            rest = self.rest[cut]
            if w == 0:
                cum = np.cumsum([per_chunk[f] for _, per_chunk in found])
                c = np.searchsorted(cum, rest, side="right")
                self.key[cut], self.chunk[cut] = self.lo[cut], chunks[c]
                self.tie[cut] = rest - np.where(c > 0, cum[c - 1], 0)
                continue
            parts = [per_chunk[f] for _, per_chunk in found]
            begin = np.cumsum([0] + [p.size for p in parts])
            keys = np.concatenate(parts)
            e = np.argsort(keys, kind="stable")[rest]
            c = np.searchsorted(begin, e, side="right") - 1
            self.key[cut], self.chunk[cut] = keys[e], chunks[c]
            # the rank of the cut's entry among its chunk's entries tied at its key
            self.tie[cut] = e - begin[c] - [np.searchsorted(parts[i], k)
                                            for i, k in zip(c, keys[e])]

    def plan(self, w):
        done = (self.size[self.refine] <= GATHER_MAX) | (w == 0)
        self.refine, self.finish = self.refine[~done], self.refine[done]
        return np.unique(self.lo[self.refine]), np.unique(self.lo[self.finish])


def _select(prepared, ranks, bits, first):
    """Per set, the cuts at ``ranks[s]``: key, chunk and rank among the chunk's ties."""
    cuts = [_Cuts(r) for r in ranks]
    w, result = bits, first
    refine, finish = [np.zeros(1, np.uint64)] * len(ranks), [_EMPTY] * len(ranks)
    while True:
        counts, found = result
        found = sorted(found, key=lambda item: item[0])
        for s, cut in enumerate(cuts):
            cut.settle(finish[s], [(c, per_set[s]) for c, per_set in found], w)
            cut.descend(counts[s], refine[s], w - _DIGIT)
        w -= _DIGIT
        refine, finish = map(list, zip(*[cut.plan(w) for cut in cuts]))
        if not any(r.size or f.size for r, f in zip(refine, finish)):
            return [(c.key, c.chunk, c.tie) for c in cuts]
        result = tree_merge(_query, _merge_round, prepared, w, refine, finish,
                            split_every=_split_every(len(ranks)))


def _bin_sums(sets, index, cuts):
    """Per set: bin sums of the chunk's sorted entries cut at ``cuts`` (None: skipped)."""
    out = []
    for (keys, labels), cut in zip(sets, cuts):
        if cut is None:
            out.append(None)
            continue
        key, chunk, tie = cut
        k = key.astype(keys.dtype)
        left = np.searchsorted(keys, k, side="left")
        # this chunk's entries tied at a cut's key: before the cut if the chunk
        # comes before the cut's chunk, after it if after, ``tie`` of them if it
        pos = np.where(chunk > index, np.searchsorted(keys, k, side="right"),
                       np.where(chunk < index, left, left + tie))
        bounds = np.concatenate(([0], pos, [keys.size]))
        count = np.diff(bounds)
        full = count > 0
        lo = np.full(count.size, np.iinfo(np.uint64).max, dtype=np.uint64)
        hi = np.zeros(count.size, dtype=np.uint64)
        lo[full], hi[full] = keys[bounds[:-1][full]], keys[bounds[1:][full] - 1]
        positives = np.concatenate(([0], np.cumsum(labels, dtype=np.int64)))
        scores = keys.view(np.float32 if keys.dtype == np.uint32 else np.float64)
        out.append((count, positives[bounds[1:]] - positives[bounds[:-1]],
                    fixed_parts(scores, bounds), lo, hi))
    return out


def _merge_sums(parts):
    merged = []
    for per_group in zip(*parts):
        if per_group[0] is None:
            merged.append(None)
            continue
        count, label, fixed, lo, hi = per_group[0]
        for c, y, f, a, b in per_group[1:]:
            count, label, fixed = count + c, label + y, fixed + f
            lo, hi = np.minimum(lo, a), np.maximum(hi, b)
        merged.append((count, label, fixed, lo, hi))
    return merged


def equal_mass_bin_stats(entries, tag_to_group=None, n_groups=1, *, n_bins=None,
                         bin_size=None, pooled=False):
    """Equal-mass ``BinStats`` of distributed entries, pooled (``pooled`` or no
    ``tag_to_group``) then per group, every set in the same rounds; None if empty."""
    if n_bins is None and bin_size is None:
        n_bins = 10
    equal_mass_bin_starts(1, n_bins=n_bins, bin_size=bin_size)   # checks the bins first
    pooled = pooled or tag_to_group is None
    n_sets = int(pooled) + (0 if tag_to_group is None else n_groups)
    bits = 32 if entries.dtype == np.float32 else 64
    # each chunk sorted once, kept on the workers while the entries are; the
    # first round counts every key by its top digit: the sets' sizes
    prepared = per_block(_prepare, entries.blocks, pooled, tag_to_group, n_groups)
    first = tree(per_block(_query, prepared, bits, [np.zeros(1, np.uint64)] * n_sets,
                           [_EMPTY] * n_sets), _merge_round, _split_every(n_sets))
    prepared, first = persist_with(entries.blocks, prepared, first)
    sizes = [int(cnt.sum()) for _, cnt in first[0]]
    starts = [equal_mass_bin_starts(n, n_bins=n_bins, bin_size=bin_size) if n else None
              for n in sizes]
    ranks = [np.empty(0, np.int64) if s is None else s[1:-1] for s in starts]
    cuts = _select(prepared, ranks, bits, first)
    cuts = [None if s is None else c for s, c in zip(starts, cuts)]
    sums = tree_merge(_bin_sums, _merge_sums, prepared, cuts)
    return [None if s is None else
            BinStats(s[0], fixed_value(s[2]), s[1].astype(np.float64),
                     key_scores(s[3], entries.dtype), key_scores(s[4], entries.dtype))
            for s in sums]
