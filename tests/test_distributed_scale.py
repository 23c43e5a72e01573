"""The distributed path at scale: bounded worker memory and a killed worker
(issue 15, items 4 and 5; docs/scale.md).

Memory: a score matrix of ``SPARSECAL_DASK_ENTRIES`` entries (default 6.4e7;
the 5e8 long study: ``SPARSECAL_DASK_ENTRIES=512000000``) is generated on two
worker processes, each limited to 700 MiB (below the scores and the
entries: 1.1 GB at the default size, 8.5 GB for the study; the peak of a
worker is a tree merge of 8 partial radix-count tables, about 300 MiB whatever
the size), and never held by the client. It is ``K`` copies of one chunk ``B``
of distinct float32 scores, so its equal-mass bins are, by construction, ``K``
times those of ``B`` (every cut falls between tied copies; ``K`` is a power of
two, so the means, and CE, are the same floats): the single-machine SMCE of
``B`` is the reference. No worker may be restarted (the nanny restarts one
that passes its limit).

Faults: a worker process is killed (SIGKILL) in the middle of a computation;
the result equals the single-machine one and a store written by
``apply_to_store`` is bit-identical and complete.
"""
import os
import signal

import dask
import dask.array as da
import numpy as np
import pytest

import sparsecal as sc
from sparsecal import distributed as sd

from _dask_cluster import two_workers

ENTRIES = int(os.environ.get("SPARSECAL_DASK_ENTRIES", str(64 * 10 ** 6)))
ROWS, TAGS = 20_000, 50                       # one chunk: 1e6 entries, 4 MB of scores


def make_chunk(seed=0):
    """``B``: ROWS x TAGS distinct float32 scores in [0.5, 1), and gold tags."""
    rng = np.random.default_rng(seed)
    k = rng.permutation(ROWS * TAGS).astype(np.float64)
    scores = (0.5 + k * 2.0 ** -24).astype(np.float32).reshape(ROWS, TAGS)
    gold = rng.integers(-1, TAGS, size=ROWS)
    return scores, gold


def _chunk_scores(seed):
    return make_chunk(seed)[0]


def _chunk_gold(seed):
    return make_chunk(seed)[1]


def repeated(k):
    """``k`` copies of ``B`` as dask arrays, each chunk made on a worker."""
    scores = da.concatenate([da.from_delayed(dask.delayed(_chunk_scores)(0), (ROWS, TAGS),
                                             np.float32) for _ in range(k)])
    gold = da.concatenate([da.from_delayed(dask.delayed(_chunk_gold)(0), (ROWS,), np.int64)
                           for _ in range(k)])
    return scores, gold


def test_memory_bounded_large_workload():
    k = ENTRIES // (ROWS * TAGS)
    assert k >= 2 and k & (k - 1) == 0, "SPARSECAL_DASK_ENTRIES / 1e6 must be a power of 2"
    b, gold_b = make_chunk()
    ref = sc.smce(sc.threshold(b, gold_b), n_bins=10)
    with two_workers(memory_limit="700MiB") as client:
        pids = client.run(os.getpid)
        scores, gold = repeated(k)
        got = sd.smce(sd.threshold(scores, gold), n_bins=10)
        assert client.run(os.getpid) == pids            # no worker was restarted
    # the entries (score, tag, label, token: 17 bytes each) far exceed both limits
    assert got.n * 17 > 700 * 2 ** 20
    assert got.n == k * ref.n == k * ROWS * TAGS
    np.testing.assert_array_equal(got.bins.count, k * ref.bins.count)
    np.testing.assert_array_equal(got.bins.sum_label, k * ref.bins.sum_label)
    np.testing.assert_array_equal(got.bins.lower, ref.bins.lower)
    np.testing.assert_array_equal(got.bins.upper, ref.bins.upper)
    np.testing.assert_allclose(got.bins.sum_score, k * ref.bins.sum_score, rtol=1e-14)
    assert abs(got.value - ref.value) <= 1e-12 * ref.value


@pytest.fixture
def client():
    with two_workers() as c:
        yield c


def _dying(x, marker, chunk):
    """``x`` as a dask array whose ``chunk``-th row chunk kills its worker
    process (SIGKILL) the first time it is computed."""
    def maybe_die(block, block_info=None):
        if block_info[0]["chunk-location"][0] == chunk and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        return block
    return da.from_array(x, chunks=(40, x.shape[1])).map_blocks(maybe_die, dtype=x.dtype)


def test_killed_worker_result_unchanged(client, tmp_path):
    rng = np.random.default_rng(1)
    x = rng.dirichlet(np.full(8, 0.3), size=400).round(2)
    gold = rng.integers(-1, 8, size=400)
    groups = sc.TagGroups([0, 0, 0, 1, 1, 1, 2, 2], 3)
    one = sc.threshold(x, gold)
    ref = sc.smce(one, n_bins=9)
    pids = client.run(os.getpid)
    got = sd.smce(sd.threshold(_dying(x, str(tmp_path / "killed-1"), 5), gold), n_bins=9)
    assert (tmp_path / "killed-1").exists()
    assert client.run(os.getpid) != pids               # a worker really died
    np.testing.assert_array_equal(got.bins.count, ref.bins.count)
    np.testing.assert_array_equal(got.bins.sum_label, ref.bins.sum_label)
    assert abs(got.value - ref.value) <= 1e-12 * ref.value
    model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups).fit(one)
    out = tmp_path / "calibrated.zarr"
    sd.apply_to_store(model, _dying(x, str(tmp_path / "killed-2"), 3), out)
    assert (tmp_path / "killed-2").exists()
    np.testing.assert_array_equal(sd.open_store(out).compute(), model.transform_dense(x))
