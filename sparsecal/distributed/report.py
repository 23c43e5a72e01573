""":data:`CLUSTER_REPORT`, the engine with which
:func:`sparsecal.plotting.report.write_report` writes the report of
:class:`~sparsecal.distributed.DaskEntries`, every section of the
single-machine one: tables from the distributed ``evaluate`` and
``compare_methods``, figures from per-bin statistics, merged grid sums and
distinct-score tables, and the score histogram from a second pass."""
from ..core.groups import TagGroups
from .application import bayes_error_plot
from .checks import check_dask_entries
from .comparison import compare_methods, distributed_methods
from .evaluation import _entry_counts, evaluate
from .histogram import score_histogram
from .smooth import smooth_reliability

__all__ = ["CLUSTER_REPORT", "ClusterReport"]

class ClusterReport:
    """How :func:`~sparsecal.plotting.report.write_report` computes the report of
    distributed entries (use the instance :data:`CLUSTER_REPORT`).

    Examples
    --------
    >>> import os, tempfile, warnings
    >>> import dask.array as da
    >>> import sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> from sparsecal.distributed import threshold
    >>> from sparsecal.plotting.report import write_report
    >>> test = make_tagger_outputs(500, split_seed=2)
    >>> groups = sc.TagGroups.from_counts(test.train_counts, 3)
    >>> entries = threshold(da.from_array(test.scores, chunks=(200, -1)), test.gold)
    >>> with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     path = write_report(os.path.join(tmp, "r"), entries, groups,
    ...                         engine=CLUSTER_REPORT)
    ...     sorted(os.listdir(os.path.join(tmp, "r", "figures")))[:2]
    ['bayes_error.png', 'bayes_error.svg']
    """

    per_entry = False
    evaluate = staticmethod(evaluate)
    compare_methods = staticmethod(compare_methods)
    #: from the merged distinct-score table (exact)
    bayes_error_plot = staticmethod(bayes_error_plot)
    #: counts over the figure's edges, added over the chunks (exact)
    score_histogram = staticmethod(score_histogram)

    @staticmethod
    def check(test, dev, groups):
        """Refuse what is not ``DaskEntries`` and groups, dev and test of other tagsets."""
        check_dask_entries(test, groups)
        if dev is not None:
            check_dask_entries(dev)
            if dev.n_tags != test.n_tags:
                raise ValueError(f"dev has {dev.n_tags} tags but test has {test.n_tags}")

    @staticmethod
    def methods(methods, seed, prior):
        """The methods with a distributed fit (one warning naming the others)."""
        return distributed_methods(methods)

    @staticmethod
    def most_tag_entries(test):
        """The entries of the test tag with the most (one pass of counts)."""
        per_tag, _ = _entry_counts(test, TagGroups.scw(test.n_tags))
        return int(per_tag.max(initial=0))

    #: the smooth reliability diagram of all the entries, from merged grid sums
    smooth_reliability = staticmethod(smooth_reliability)


#: the engine of :func:`sparsecal.plotting.report.write_report` for DaskEntries
CLUSTER_REPORT = ClusterReport()
