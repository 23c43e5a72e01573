"""Every recalibration method x {SCW, TFG} on distributed entries:
:func:`sparsecal.compare_methods` on a cluster (Kranzlein et al. 2021, Table 1).

Each method is fitted on the dev entries from the merged per-group tables
(:func:`sparsecal.distributed.fit_grouped`), applied to the test entries chunk
by chunk on the workers (``GroupedCalibrator.transform`` of
:class:`~sparsecal.distributed.DaskEntries`) and evaluated with
:func:`sparsecal.distributed.evaluate`: the single-machine
:class:`~sparsecal.calibration.comparison.MethodComparison`. A method without a
distributed fit (its registry entry declares none:
:attr:`~sparsecal.calibration.registry.Method.distributed_fit`) is skipped with
one warning naming it.
"""
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
    """The methods of ``methods`` that fit on distributed entries, warning once
    about the others.

    Parameters
    ----------
    methods : sequence of str
        Names in :data:`sparsecal.calibration.registry.METHODS`.

    Returns
    -------
    list of str
        The names whose registry entry declares a distributed fit
        (:attr:`~sparsecal.calibration.registry.Method.distributed_fit`), in the
        given order.

    Raises
    ------
    ValueError
        For an unknown method.

    Warns
    -----
    UserWarning
        Once, naming the methods skipped (no distributed fit).

    Examples
    --------
    Every registered method has a distributed fit today (scaling-binning
    through :mod:`~sparsecal.distributed.scaling_binning`); the check keeps
    ``compare_methods`` and the cluster report right for a method registered
    without one.

    >>> distributed_methods(["isotonic", "scaling-binning", "platt"])
    ['isotonic', 'scaling-binning', 'platt']
    """
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
    """Fit every method x grouping on distributed ``dev`` entries, evaluate on
    distributed ``test`` entries: :func:`sparsecal.compare_methods` on a
    cluster.

    Parameters
    ----------
    dev, test : DaskEntries
    groups : TagGroups
        TFG groups (evaluation always reports GMCE over them).
    methods : sequence of str
        Names in the registry; those without a distributed fit
        (scaling-binning) are skipped with one warning.
    groupings : sequence of {"scw", "tfg"}
    n_bins : int, default=10
        Bins for evaluation and for the binning calibrators.
    ci : None, str or ConfidenceInterval
        As :func:`sparsecal.distributed.evaluate` (no bootstrap); a method name
        uses ``seed`` as its random state.
    seed : int, default=0
    progress : callable, optional
        ``progress(done, total)`` after the evaluation of ``test`` and after
        each (method, grouping) fit and evaluation, over the methods kept.
    prior : float, optional
        The application prior of the methods that take one.
    evaluation : dict, optional
        Further keywords of :func:`sparsecal.distributed.evaluate`
        (``bin_size``, ``binning``, ``norm``, ``debias``, ``metrics``,
        ``prior``).

    Returns
    -------
    MethodComparison
        The single-machine result type. Isotonic and histogram fits are the
        single-machine ones bit for bit, so their numbers are the
        single-machine numbers within 1e-12 relative; the logistic and Gaussian
        fits agree to their documented tolerances (docs/scale.md).

    Raises
    ------
    TypeError
        If ``dev`` or ``test`` is not ``DaskEntries``, or ``progress`` is not
        callable.
    ValueError
        For an unknown method or grouping, a ``prior`` no method takes, dev and
        test of different tagsets, or what :func:`sparsecal.distributed.evaluate`
        refuses in ``evaluation``.

    Warns
    -----
    UserWarning
        Once, naming the methods skipped.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 5 and Table 1.

    Examples
    --------
    >>> import dask.array as da
    >>> import sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> from sparsecal.distributed import threshold
    >>> dev, test = (make_tagger_outputs(600, split_seed=s) for s in (1, 2))
    >>> groups = sc.TagGroups.from_counts(dev.train_counts, 3)
    >>> dist = [threshold(da.from_array(d.scores, chunks=(200, -1)), d.gold)
    ...         for d in (dev, test)]
    >>> got = compare_methods(*dist, groups, methods=["isotonic"])
    >>> one = sc.compare_methods(sc.threshold(dev.scores, dev.gold),
    ...                          sc.threshold(test.scores, test.gold), groups,
    ...                          methods=["isotonic"])
    >>> a, b = (r.after["isotonic", "tfg"].smce.value for r in (got, one))
    >>> abs(a - b) <= 1e-12 * b, got.test_tokens == one.test_tokens
    (True, True)
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
