""":data:`CLUSTER_REPORT`: with it :func:`sparsecal.plotting.report.write_report`
writes every section of the report of distributed entries."""
from ..core.groups import TagGroups
from .application import bayes_error_plot
from .checks import check_dask_entries
from .comparison import compare_methods, distributed_methods
from .evaluation import _entry_counts, evaluate
from .histogram import score_histogram
from .resampling import set_tables
from .smooth import smooth_reliability

__all__ = ["CLUSTER_REPORT", "ClusterReport"]

class ClusterReport:
    """How :func:`~sparsecal.plotting.report.write_report` computes the report of
    distributed entries (use the instance :data:`CLUSTER_REPORT`).

    Examples
    --------
    >>> import os, tempfile, warnings
    >>> import dask.array as da, sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> from sparsecal.plotting.report import write_report
    >>> test = make_tagger_outputs(500, split_seed=2)
    >>> entries = sc.threshold(da.from_array(test.scores, chunks=(200, -1)), test.gold)
    >>> groups = sc.TagGroups.from_counts(test.train_counts, 3)
    >>> with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     path = write_report(os.path.join(tmp, "r"), entries, groups, engine=CLUSTER_REPORT)
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
    #: the merged distinct-score tables, pooled then per group (where a log
    #: loss is infinite: the entries that make it so, the clipped log loss)
    score_tables = staticmethod(set_tables)

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
        return distributed_methods(methods)

    @staticmethod
    def most_tag_entries(test):
        """The entries of the test tag with the most."""
        per_tag, _ = _entry_counts(test, TagGroups.scw(test.n_tags))
        return int(per_tag.max(initial=0))

    #: the smooth reliability diagram of all the entries, from merged grid sums
    smooth_reliability = staticmethod(smooth_reliability)


#: the engine of :func:`sparsecal.plotting.report.write_report` for DaskEntries
CLUSTER_REPORT = ClusterReport()
