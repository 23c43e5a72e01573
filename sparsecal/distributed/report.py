"""The calibration report of distributed entries: :data:`CLUSTER_REPORT`, the
engine that :func:`sparsecal.plotting.report.write_report` takes
(``engine=CLUSTER_REPORT``) to write the report of
:class:`~sparsecal.distributed.DaskEntries` with every section of the
single-machine report.

The tables (evaluation, method comparison, before and after TFG isotonic) and
``numbers.json`` come from :func:`sparsecal.distributed.evaluate` and
:func:`sparsecal.distributed.compare_methods`; the reliability diagrams (SMCE,
per group), the per-tag CE and the method figures need only per-bin
statistics, the modified reliability plot only the top-label bins, all of which
those results hold; the smooth reliability diagram comes from merged grid sums
(:func:`sparsecal.distributed.smooth_reliability`), the Bayes error plot from
the merged distinct-score table
(:func:`~sparsecal.distributed.application.bayes_error_plot`), the exact score
histogram under the calibration curve from counts over the figure's edges
(:func:`~sparsecal.distributed.histogram.score_histogram`, a second pass).
"""
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
    """How :func:`sparsecal.plotting.report.write_report` computes the report
    of distributed entries (use the instance :data:`CLUSTER_REPORT`).

    Attributes
    ----------
    per_entry : bool
        False: the modified reliability plot is drawn from the evaluations'
        top-label bins (the same points as from the entries).
    bayes_error_plot, score_histogram : callable
        The Bayes error plot and the exact score histogram of distributed
        entries (:func:`~sparsecal.distributed.application.bayes_error_plot`,
        :func:`~sparsecal.distributed.histogram.score_histogram`).

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Table 1 and Figs. 2-3; Nguyen & O'Connor
    2015, Fig. 1d and Algorithm 2; Jagannatha & Yu 2020, Fig. 1.

    Examples
    --------
    >>> import os, tempfile, warnings
    >>> import dask.array as da
    >>> import sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> from sparsecal.distributed import CLUSTER_REPORT, threshold
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
    #: the merged distinct-score tables, pooled then per group (where a log
    #: loss is infinite: the entries that make it so, the clipped log loss)
    score_tables = staticmethod(set_tables)

    @staticmethod
    def check(test, dev, groups):
        """Refuse what is not ``DaskEntries``, groups of another tagset, and dev
        and test of different tagsets (TypeError, ValueError)."""
        check_dask_entries(test, groups)
        if dev is not None:
            check_dask_entries(dev)
            if dev.n_tags != test.n_tags:
                raise ValueError(f"dev has {dev.n_tags} tags but test has {test.n_tags}")

    @staticmethod
    def methods(methods, seed, prior):
        """The methods with a distributed fit (one warning naming the others)."""
        return distributed_methods(methods, seed, prior)

    @staticmethod
    def most_tag_entries(test):
        """The entries of the test tag with the most (one pass of counts)."""
        per_tag, _ = _entry_counts(test, TagGroups.scw(test.n_tags))
        return int(per_tag.max(initial=0))

    #: the smooth reliability diagram of all the entries, from merged grid sums
    smooth_reliability = staticmethod(smooth_reliability)


#: the engine of :func:`sparsecal.plotting.report.write_report` for DaskEntries
CLUSTER_REPORT = ClusterReport()
