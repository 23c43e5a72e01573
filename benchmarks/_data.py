"""Synthetic, tagger-like inputs for the sparsecal benchmarks (shared by
``bench_core.py`` and ``compare_core.py``).

Everything is generated with NumPy from a fixed seed, chunk by chunk, so a
5 * 10^8-entry score matrix takes seconds and can be streamed into a ``.npy``
file without holding two copies in memory.

Score matrix (CCG-supertagger-like, ``n_tags=426`` by default)
    Each row is a probability distribution: a log-uniform "tail" over all tags
    (every tail value is below 0.01 after normalisation), one top tag drawn
    from a Zipf-like tag-frequency law, and on average ``0.8`` secondary tags
    with log-uniform mass in [0.002, 0.5]; rows are then normalised. About 0.37%
    of the entries are >= 0.01 (1.6 per row), in the 0.3-0.6% range of a real
    CCG tagger at the threshold 0.01 of Kranzlein et al. (2021). Gold is the
    top tag for 93% of the tokens (the tagger's accuracy), else a secondary or a
    random tag.

Isotonic inputs (1-D)
    float64 scores in [0, 1] from a mixture of confident (near 1), unsure and
    near-0 tagger probabilities, rounded to 6 decimals (as if written with
    ``%.6f``), so large samples have many ties; labels are Bernoulli(x ** 1.3)
    (an over-confident tagger).
"""
import numpy as np

N_TAGS = 426
CCG_ROWS = 1_173_709          # 1,173,709 x 426 = 500,000,034 entries
_CHUNK_ROWS = 32_768


def _score_chunk(rng, rows, n_tags):
    """One chunk of rows of the score matrix (float32) and its gold tags."""
    u = rng.random((rows, n_tags), dtype=np.float32)
    # tail: log-uniform in [2e-3 * e^-12, 2e-3] times a per-row scale in [0.05, 1.5]
    np.multiply(u, np.float32(-12.0), out=u)
    np.exp(u, out=u)
    scale = np.exp(rng.uniform(np.log(0.05), np.log(1.5), rows)).astype(np.float32)
    u *= (np.float32(2e-3) * scale)[:, None]
    r = np.arange(rows)
    # top tag: Zipf-like frequencies (low tag ids are frequent)
    top = np.minimum((n_tags * rng.random(rows) ** 3).astype(np.int64), n_tags - 1)
    u[r, top] += np.float32(1.0)
    # up to 3 secondary tags, each present with probability 0.27
    sec = rng.integers(0, n_tags, (rows, 3))
    on = rng.random((rows, 3)) < 0.27
    w = np.exp(rng.uniform(np.log(0.002), np.log(0.5), (rows, 3))).astype(np.float32)
    rr = np.broadcast_to(r[:, None], (rows, 3))[on]
    u[rr, sec[on]] += w[on]
    u /= u.sum(axis=1, keepdims=True)
    # gold: top tag (93%), else the first secondary tag (or a random tag)
    gold = top.copy()
    miss = rng.random(rows) >= 0.93
    alt = np.where(on[:, 0], sec[:, 0], rng.integers(0, n_tags, rows))
    gold[miss] = alt[miss]
    return u, gold


def score_matrix(n_rows, n_tags=N_TAGS, seed=0, out=None):
    """Dense float32 scores ``[n_rows, n_tags]`` and int64 gold ``[n_rows]``.

    ``out`` may be a preallocated (e.g. memory-mapped) float32 array to fill.
    """
    rng = np.random.default_rng(seed)
    scores = np.empty((n_rows, n_tags), dtype=np.float32) if out is None else out
    gold = np.empty(n_rows, dtype=np.int64)
    for r0 in range(0, n_rows, _CHUNK_ROWS):
        rows = min(_CHUNK_ROWS, n_rows - r0)
        scores[r0:r0 + rows], gold[r0:r0 + rows] = _score_chunk(rng, rows, n_tags)
    return scores, gold


def write_score_matrix(path, n_rows, n_tags=N_TAGS, seed=0):
    """Write the score matrix to ``path`` (.npy) chunk by chunk; return gold."""
    mm = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32,
                                   shape=(n_rows, n_tags))
    _, gold = score_matrix(n_rows, n_tags, seed, out=mm)
    mm.flush()
    del mm
    return gold


def flat_entries(n, n_tags=N_TAGS, seed=1):
    """``n`` entries of the threshold=0 case: every (token, tag) score of a
    tagger-like matrix, flattened (float32), with 0/1 labels (uint8)."""
    n_rows = -(-n // n_tags)
    scores, gold = score_matrix(n_rows, n_tags, seed)
    labels = (np.arange(n_tags)[None, :] == gold[:, None]).astype(np.uint8)
    return scores.reshape(-1)[:n].copy(), labels.reshape(-1)[:n].copy()


def isotonic_data(n, seed=2):
    """float64 scores in [0, 1] with ties (6 decimals) and uint8 labels."""
    rng = np.random.default_rng(seed)
    x = np.empty(n)
    y = np.empty(n, dtype=np.uint8)
    step = 1 << 22
    for i in range(0, n, step):
        k = min(step, n - i)
        kind = rng.random(k)
        v = np.empty(k)
        a = kind < 0.55          # confident: 1 - loguniform(1e-6, 0.3)
        v[a] = 1.0 - np.exp(rng.uniform(np.log(1e-6), np.log(0.3), a.sum()))
        b = (kind >= 0.55) & (kind < 0.8)   # unsure: uniform
        v[b] = rng.random(b.sum())
        c = kind >= 0.8          # near zero: loguniform(1e-6, 0.05)
        v[c] = np.exp(rng.uniform(np.log(1e-6), np.log(0.05), c.sum()))
        np.round(v, 6, out=v)
        x[i:i + k] = v
        y[i:i + k] = rng.random(k) < v ** 1.3
    return x, y
