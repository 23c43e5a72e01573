"""The strongest NumPy ways to threshold a score matrix, shared by the
benchmarks (``bench_core.py``, ``compare_core.py``, ``compare_pipeline.py``):
the memory floor and the full thresholding, each over row chunks of its own
best size (``best_chunk``), never sparsecal's.
"""
import time

import numpy as np

T = 0.01
#: Row-chunk sizes the baselines choose from (the fastest on the machine, now).
CHUNKS = (1 << 20, 4 << 20, 16 << 20)


def chunk_rows(scores, chunk_bytes):
    return max(1, chunk_bytes // (scores.shape[1] * scores.dtype.itemsize))


def floor_count(scores, gold=None, chunk_bytes=16 << 20, t=T):
    """Memory-bandwidth floor: count the survivors, chunk by chunk, no output."""
    cr = chunk_rows(scores, chunk_bytes)
    n = 0
    for r0 in range(0, scores.shape[0], cr):
        n += np.count_nonzero(scores[r0:r0 + cr] >= t)
    return n


def numpy_threshold(scores, gold, chunk_bytes=4 << 20, t=T):
    """Per chunk ``flatnonzero`` + ``divmod`` + gather + label, then concatenate:
    exactly sparsecal's ``Entries`` arrays (score, tag int32, label uint8,
    token int64)."""
    cr = chunk_rows(scores, chunk_bytes)
    parts = []
    for r0 in range(0, scores.shape[0], cr):
        chunk = scores[r0:r0 + cr]
        idx = np.flatnonzero(chunk >= t)
        r, c = np.divmod(idx, scores.shape[1])
        parts.append((chunk.reshape(-1)[idx], c.astype(np.int32),
                      (gold[r0 + r] == c).view(np.uint8), r + r0))
    return [np.concatenate(p) for p in zip(*parts)]


def best_chunk(fn, *args):
    """The size of ``CHUNKS`` with which ``fn(*args, chunk_bytes=...)`` runs
    fastest (best of two calls each)."""
    def best_time(cb):
        times = []
        for _ in range(2):
            t0 = time.perf_counter()
            fn(*args, chunk_bytes=cb)
            times.append(time.perf_counter() - t0)
        return min(times)
    return min(CHUNKS, key=best_time)
