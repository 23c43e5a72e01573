"""Exact equal-mass bins of distributed entries, from mergeable per-chunk
statistics (no entry leaves its worker).

Equal-mass bins are cut at global ranks of the stable sort by score
(Nguyen & O'Connor 2015, Algorithm 1; docs/architecture.md, Semantics 2). The
entry at each cut rank is found by radix selection over the scores' bit
patterns (for scores in [0, 1] the bit pattern, read as an unsigned integer,
orders like the score; -0.0 is read as 0.0):

1. every chunk counts its entries per 16-bit digit of the key inside the
   buckets that hold a cut (the first round: the top 16 bits of all keys); the
   counts are summed in a tree; the client walks them to the bucket holding
   each cut rank and the cut's rank inside it; 2 rounds for float32 keys, 4
   for float64, after which each cut's exact score and its rank among the
   entries tied at that score are known;
2. every chunk counts its entries at each cut score; walking those counts in
   chunk order (the entry order) gives the chunk holding the cut entry and the
   cut's rank among its tied entries there: ties are broken by entry order,
   exactly as the stable sort does;
3. every chunk puts its entries into bins by comparing ``(score, chunk,
   rank among tied entries of the chunk)`` with the cuts, and sums each bin:
   count and label sum (integers), score sum (exact fixed point,
   :mod:`sparsecal.distributed.fixedpoint`), smallest and largest score.

Only counts travel: per round at most ``2**16`` counts per cut, and per chunk
one count per cut score. Counts and label sums are integers and score sums are
exact, so the bins are the same, bit for bit, whatever the chunking and the
order of the merges: counts, label sums, smallest and largest scores equal the
single-machine :func:`sparsecal.core.binning.equal_mass_bins`; score sums are
correctly rounded exact sums (the single-machine sums, added in rank order, are
within float rounding of them).
"""
import numpy as np

from ..core.binning import BinStats, equal_mass_bin_starts
from .chunks import key_scores, score_keys, subsets
from .fixedpoint import fixed_parts, fixed_value
from .reduce import compute_per_block, tree_merge

__all__ = ["equal_mass_bin_stats"]

_DIGIT = 16
_RADIX = 1 << _DIGIT


def _round_counts(block, index, tag_to_group, n_groups, buckets, shift):
    """Per group: counts of the group's entries per (bucket, digit), for the
    sorted bucket starts ``buckets[g]`` of width ``2**(shift + 16)`` and the
    digit ``(key - start) >> shift``; as sorted ids ``bucket * 2**16 + digit``
    and counts."""
    out = []
    width = 1 << (shift + _DIGIT)
    for (score, _), starts in zip(subsets(block, tag_to_group, n_groups), buckets):
        if starts.size == 0 or score.size == 0:
            out.append((np.empty(0, np.int64), np.empty(0, np.int64)))
            continue
        k = score_keys(score)
        j = np.searchsorted(starts, k, side="right") - 1
        inside = j >= 0
        off = k - starts[np.maximum(j, 0)]
        if width < 1 << 64:
            inside &= off < np.uint64(width)
        ids = j[inside] * _RADIX + (off[inside] >> np.uint64(shift)).astype(np.int64)
        out.append(np.unique(ids, return_counts=True))
    return out


def _merge_counts(parts):
    """Sum sparse ``(ids, counts)`` per group over partial results (exact)."""
    merged = []
    for per_group in zip(*parts):
        ids = np.concatenate([p[0] for p in per_group])
        counts = np.concatenate([p[1] for p in per_group])
        u, inv = np.unique(ids, return_inverse=True)
        merged.append((u, np.bincount(inv, weights=counts, minlength=u.size)
                       .astype(np.int64)))
    return merged


def _tie_counts(block, index, tag_to_group, n_groups, cut_keys):
    """Per group: the chunk's count of entries at each of ``cut_keys[g]``."""
    out = []
    for (score, _), keys in zip(subsets(block, tag_to_group, n_groups), cut_keys):
        k = score_keys(score)
        pos = np.searchsorted(keys, k)
        hit = pos < keys.size
        hit[hit] = keys[pos[hit]] == k[hit]
        out.append(np.bincount(pos[hit], minlength=keys.size))
    return out


def _bin_index(k, chunk, cut_key, cut_chunk, cut_tie):
    """Bin of each key of a chunk: the number of cuts ``<=`` its entry, in the
    order (key, chunk, rank among the chunk's entries tied at that key)."""
    idx = np.searchsorted(cut_key, k, side="left")
    tied = np.flatnonzero(np.searchsorted(cut_key, k, side="right") > idx)
    if tied.size:
        kt = k[tied]
        order = np.argsort(kt, kind="stable")
        rank = np.empty(tied.size, dtype=np.int64)
        rank[order] = np.arange(tied.size) - np.searchsorted(kt[order], kt[order])
        big = k.shape[0] + 2
        # a cut's tie rank as seen from this chunk: before it 0, after it never
        eff = np.where(cut_chunk < chunk, 0,
                       np.where(cut_chunk > chunk, big - 1, cut_tie))
        runs, run_of_cut = np.unique(cut_key, return_inverse=True)
        idx[tied] = np.searchsorted(run_of_cut * big + eff,
                                    np.searchsorted(runs, kt) * big + rank, side="right")
    return idx


def _bin_sums(block, index, tag_to_group, n_groups, cuts):
    """Per group: bin sums of the chunk's entries, given the cuts
    ``(key, chunk, tie rank)`` of the group (None: the group is skipped)."""
    out = []
    for (score, label), cut in zip(subsets(block, tag_to_group, n_groups), cuts):
        if cut is None:
            out.append(None)
            continue
        n_bins = cut[0].size + 1
        k = score_keys(score)
        idx = _bin_index(k, index, *cut)
        lo = np.full(n_bins, np.iinfo(np.uint64).max, dtype=np.uint64)
        hi = np.zeros(n_bins, dtype=np.uint64)
        np.minimum.at(lo, idx, k)
        np.maximum.at(hi, idx, k)
        out.append((np.bincount(idx, minlength=n_bins),
                    np.bincount(idx, weights=label, minlength=n_bins).astype(np.int64),
                    fixed_parts(score, idx, n_bins), lo, hi))
    return out


def _merge_sums(parts):
    """Add counts and sums, take minima and maxima, per group (exact)."""
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


def _select(entries, group_args, ranks, bits, top):
    """Radix selection: for each group, the key of the entry at each of
    ``ranks[g]`` (sorted) and the rank among the entries tied at that key
    (``top``: the first round's counts, over all keys)."""
    n_groups = len(ranks)
    start = [np.zeros(r.size, dtype=np.uint64) for r in ranks]   # each cut's bucket
    rest = [r.copy() for r in ranks]                                # rank inside it
    for shift in range(bits - _DIGIT, -1, -_DIGIT):
        buckets = [np.unique(s) for s in start]
        counts = top if shift == bits - _DIGIT else tree_merge(
            _round_counts, _merge_counts, entries.blocks, *group_args, buckets, shift)
        for g in range(n_groups):
            ids, cnt = counts[g]
            for t in range(ranks[g].size):   # a loop over cuts (bins)
                j = np.searchsorted(buckets[g], start[g][t])
                a, b = np.searchsorted(ids, [j * _RADIX, (j + 1) * _RADIX])
                cum = np.cumsum(cnt[a:b])
                d = np.searchsorted(cum, rest[g][t], side="right")
                rest[g][t] -= cum[d - 1] if d else 0
                start[g][t] += np.uint64(int(ids[a + d] - j * _RADIX) << shift)
    return start, rest


def _locate_ties(entries, group_args, keys, rest):
    """For each cut: the chunk holding it and its rank among that chunk's
    entries tied at its key (chunks walked in entry order)."""
    cut_keys = [np.unique(k) for k in keys]
    per_block = compute_per_block(_tie_counts, entries.blocks, *group_args, cut_keys)
    located = []
    for g, k in enumerate(keys):
        counts = np.array([b[g] for b in per_block]).reshape(len(per_block), -1)
        cum = np.cumsum(counts, axis=0)
        chunk = np.empty(k.size, dtype=np.int64)
        tie = np.empty(k.size, dtype=np.int64)
        for t in range(k.size):   # a loop over cuts (bins)
            col = cum[:, np.searchsorted(cut_keys[g], k[t])]
            chunk[t] = np.searchsorted(col, rest[g][t], side="right")
            tie[t] = rest[g][t] - (col[chunk[t] - 1] if chunk[t] else 0)
        located.append((k, chunk, tie))
    return located


def equal_mass_bin_stats(entries, tag_to_group=None, n_groups=1, *, n_bins=None,
                         bin_size=None):
    """Equal-mass bin statistics of distributed entries, pooled or per group.

    Parameters
    ----------
    entries : DaskEntries
    tag_to_group : ndarray of int64, shape (n_tags,), optional
        Group of each tag; None: all entries pooled (one group).
    n_groups : int, default=1
    n_bins, bin_size : int, optional
        As in :func:`sparsecal.core.binning.equal_mass_bin_starts` (default
        10 bins), per group.

    Returns
    -------
    list of BinStats or None
        One per group, None for a group without entries; counts, label sums,
        smallest and largest scores equal those of
        :func:`sparsecal.core.binning.equal_mass_bins` of the group's entries,
        score sums are exact sums correctly rounded.

    Raises
    ------
    ValueError
        If both or invalid ``n_bins``/``bin_size`` are given.

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 1 (equal-mass bins over the stable sort);
    Kranzlein, Liu & Schneider 2021, Section 3.2; docs/scale.md.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from sparsecal.core.binning import equal_mass_bins
    >>> from sparsecal.distributed.entries import from_arrays
    >>> x = np.array([0.9, 0.1, 0.4, 0.1, 0.7]); y = np.array([1, 0, 0, 1, 1])
    >>> (stats,) = equal_mass_bin_stats(from_arrays(da.from_array(x, chunks=2), y),
    ...                                 n_bins=2)
    >>> stats.count, stats.lower, stats.upper
    (array([2, 3]), array([0.1, 0.4]), array([0.1, 0.9]))
    """
    if n_bins is None and bin_size is None:
        n_bins = 10
    equal_mass_bin_starts(1, n_bins=n_bins, bin_size=bin_size)   # checks the bins first
    group_args = (tag_to_group, n_groups)
    bits = 32 if entries.dtype == np.float32 else 64
    # the first round counts every entry by its top digit: the group sizes
    top = tree_merge(_round_counts, _merge_counts, entries.blocks, *group_args,
                     [np.zeros(1, np.uint64)] * n_groups, bits - _DIGIT)
    sizes = [int(cnt.sum()) for _, cnt in top]
    starts = [equal_mass_bin_starts(n, n_bins=n_bins, bin_size=bin_size) if n else None
              for n in sizes]
    ranks = [np.empty(0, np.int64) if s is None else s[1:-1] for s in starts]
    keys, rest = _select(entries, group_args, ranks, bits, top)
    cuts = _locate_ties(entries, group_args, keys, rest)
    cuts = [None if s is None else c for s, c in zip(starts, cuts)]
    sums = tree_merge(_bin_sums, _merge_sums, entries.blocks, *group_args, cuts)
    return [None if s is None else
            BinStats(s[0], fixed_value(s[2]), s[1].astype(np.float64),
                     key_scores(s[3], entries.dtype), key_scores(s[4], entries.dtype))
            for s in sums]
