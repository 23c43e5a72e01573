"""Every recalibration method x {SCW, TFG} on distributed entries: fitted by
``fit_grouped``, applied chunk by chunk, evaluated by ``evaluate``."""
import warnings

import numpy as np

from ..core.dispatch import implements
from ..calibration import comparison as single
from ..calibration.comparison import _run_comparison
from ..calibration.registry import METHODS, get_method
from .checks import check_dask_entries
from .evaluation import evaluate
from .reduce import tree_merge

__all__ = ["compare_methods", "distributed_methods"]


def distributed_methods(methods):
    """The ``methods`` with a distributed fit, in order; one warning names the others."""
    kept = [name for name in methods if get_method(name).distributed_fit is not None]
    skipped = [name for name in methods if name not in kept]
    if skipped:
        warnings.warn(f"skipped on distributed entries (no distributed fit): "
                      f"{', '.join(skipped)}", UserWarning, stacklevel=2)
    return kept


def _tokens(block, index):
    return int(np.unique(block.token).size)


@implements(single.compare_methods)
def compare_methods(dev, test, groups, *, methods=tuple(METHODS), groupings=("scw", "tfg"),
                    n_bins=10, ci=None, seed=0, progress=None, prior=None,
                    evaluation=None):
    """:func:`sparsecal.compare_methods` of distributed entries (no bootstrap interval).

    Parameters
    ----------
    dev, test : DaskEntries
    groups : TagGroups
    methods, groupings, n_bins, ci, seed, progress, prior, evaluation
        As :func:`sparsecal.compare_methods`.

    Returns
    -------
    MethodComparison

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x, gold = np.random.default_rng(0).dirichlet(np.ones(4), size=400), np.arange(400) % 4
    >>> dev, test = (sc.threshold(da.from_array(s, chunks=(64, 4)), g) for s, g in
    ...              [(x[:200], gold[:200]), (x[200:], gold[200:])])
    >>> got = compare_methods(dev, test, sc.TagGroups([0, 0, 1, 1], 2), methods=["isotonic"])
    >>> sorted(got.after)
    [('isotonic', 'scw'), ('isotonic', 'tfg')]
    """
    for entries in (dev, test):
        check_dask_entries(entries)
    check_dask_entries(test, groups)
    if dev.n_tags != test.n_tags:
        raise ValueError(f"dev has {dev.n_tags} tags but test has {test.n_tags}")
    methods = distributed_methods(methods)
    return _run_comparison(dev, test, groups, evaluate,
                           lambda: int(tree_merge(_tokens, sum, test.blocks)),
                           methods=methods, groupings=groupings, n_bins=n_bins, ci=ci,
                           seed=seed, progress=progress, prior=prior, evaluation=evaluation)
