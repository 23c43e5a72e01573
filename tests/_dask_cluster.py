"""Shared by the tests of the distributed path: the local cluster of two worker
processes, and random tagger scores with ties and all-below-threshold rows."""
import contextlib

import numpy as np
from distributed import Client, LocalCluster


@contextlib.contextmanager
def two_workers(**kwargs):
    """A client of ``LocalCluster(n_workers=2, processes=True,
    threads_per_worker=1)`` (more cluster options in ``kwargs``)."""
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      dashboard_address=None, **kwargs) as cluster, Client(cluster) as c:
        yield c


def tagger_scores(seed, n_tokens, n_tags, dtype):
    """Scores rounded to 2 decimals (ties), 10% of the rows below 0.01, and gold
    tags with -1s."""
    rng = np.random.default_rng(seed)
    x = rng.dirichlet(np.full(n_tags, 0.3), size=n_tokens).round(2).astype(dtype)
    x[rng.random(n_tokens) < 0.1] = dtype(0.005)
    return x, rng.integers(-1, n_tags, size=n_tokens)
