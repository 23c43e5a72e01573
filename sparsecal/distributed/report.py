"""The calibration report of distributed entries: :func:`write_report`, the
single-machine report (:func:`sparsecal.plotting.report.write_report`) on a
cluster, with every section that has a distributed form.

The tables (evaluation, method comparison, before and after TFG isotonic) and
their ``numbers.json`` come from :func:`sparsecal.distributed.evaluate` and
:func:`sparsecal.distributed.compare_methods`; the reliability diagrams
(SMCE, per group), the per-tag CE and the method figures need only per-bin
statistics, the modified reliability plot only the top-label bins, all of
which those results hold. What needs every entry is left out, with a note on
the page and one warning: the smooth ECE and the smooth (kernel) reliability
diagram (kernel smoothing over every entry), the Bayes error plot (its curves
are drawn from every score); the score histogram under the reliability diagram
is approximated from the equal-mass bins (each bin's count spread over its
score range), and its axis says so.
"""
import os
import warnings

from ..calibration.registry import METHODS
from ..core.groups import TagGroups
from ..core.progress import ProgressCounter
from ..io.atomic import atomic_directory
from ..plotting.report import (MIN_TAG_ENTRIES, REPORT_METRICS, _figures, _is_report,
                               _options, _tfg_isotonic, _write_pages)
from .comparison import compare_methods, distributed_methods
from .entries import check_dask_entries
from .evaluation import _entry_counts, evaluate
from .measures import DISTRIBUTED_MEASURES

__all__ = ["write_report", "LEFT_OUT"]

#: the report's sections without a distributed form (figure or measure -> why)
LEFT_OUT = {
    "smooth ECE and smooth reliability diagram":
        "kernel smoothing over every entry; Błasiok & Nakkiran 2023",
    "Bayes error plot": "its DCF curves are drawn from every score",
}


def write_report(out_dir, test, groups, *, dev=None, methods=tuple(METHODS), n_bins=10,
                 ci=None, seed=0, title="Calibration report", notes=None, progress=None,
                 prior=None, evaluation=None):
    """Write the report of distributed entries and return the path of its
    ``index.html``: :func:`sparsecal.plotting.report.write_report` on a cluster.

    Parameters
    ----------
    out_dir : str or path
        Created (or replaced, if it holds an earlier sparsecal report).
    test : DaskEntries
    groups : TagGroups
    dev : DaskEntries, optional
        With it every method of ``methods`` that fits on distributed entries
        (:func:`~sparsecal.distributed.comparison.distributed_methods`; the
        others skipped with one warning) is compared, as on one machine.
    methods, n_bins, ci, seed, title, notes, progress, prior, evaluation
        As :func:`sparsecal.plotting.report.write_report`; ``ci`` without the
        bootstrap, ``evaluation`` with the keywords of
        :func:`sparsecal.distributed.evaluate` (its measures among
        :data:`~sparsecal.distributed.measures.DISTRIBUTED_MEASURES`).

    Returns
    -------
    str
        The path of ``index.html``. ``numbers.json`` holds the single-machine
        report's numbers (within 1e-12 relative; logistic fits within their
        tolerance, docs/scale.md) but the smooth ECE.

    Raises
    ------
    TypeError
        If ``test`` or ``dev`` is not ``DaskEntries``, or ``progress`` is not
        callable.
    ValueError
        As :func:`sparsecal.plotting.report.write_report`, and for a measure or
        an interval without a distributed form (nothing is written then).

    Warns
    -----
    UserWarning
        Once, naming the sections left out (:data:`LEFT_OUT`); once, naming the
        methods skipped.

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
    >>> from sparsecal.distributed import threshold
    >>> test = make_tagger_outputs(500, split_seed=2)
    >>> groups = sc.TagGroups.from_counts(test.train_counts, 3)
    >>> entries = threshold(da.from_array(test.scores, chunks=(200, -1)), test.gold)
    >>> with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     path = write_report(os.path.join(tmp, "r"), entries, groups)
    ...     sorted(os.listdir(os.path.join(tmp, "r", "figures")))[:2]
    ['groups.png', 'groups.svg']
    """
    out_dir = os.fspath(out_dir)
    check_dask_entries(test, groups)
    if dev is not None:
        check_dask_entries(dev)
        if dev.n_tags != test.n_tags:
            raise ValueError(f"dev has {dev.n_tags} tags but test has {test.n_tags}")
    ev, compare_options = _options(dev, methods, n_bins, ci, seed, prior, evaluation)
    kept = [m for m in ev["metrics"] if m in DISTRIBUTED_MEASURES or m not in REPORT_METRICS]
    left_out = [m for m in ev["metrics"] if m not in kept]
    ev["metrics"] = kept
    omitted = [f"Not on a cluster: {what} ({why})." for what, why in LEFT_OUT.items()]
    omitted.append("The score histogram under the calibration curve is approximated "
                   "from its equal-mass bins (each bin's count spread over its score "
                   "range): an exact one needs every score.")
    warnings.warn(f"report on a cluster: left out {', '.join(LEFT_OUT)} and the "
                  f"measures {', '.join(left_out) or 'none'} (they need every entry); "
                  "the score histogram is approximated from the bins",
                  UserWarning, stacklevel=2)
    if dev is not None:
        compare_options["methods"] = distributed_methods(methods, seed,
                                                         compare_options["prior"])
    per_tag_counts, _ = _entry_counts(test, TagGroups.scw(test.n_tags))
    per_tag = int(per_tag_counts.max(initial=0)) >= MIN_TAG_ENTRIES
    # progress units as on one machine, with 3 figures always drawn (not 5)
    n_dev = 0 if dev is None else 1 + 2 * len(compare_options["methods"]) + 1
    counter = ProgressCounter(progress, 1 + n_dev + 3 + (dev is not None) + per_tag)
    ev["per_tag"] = per_tag
    with atomic_directory(out_dir, _is_report, "a sparsecal report") as tmp:
        before = evaluate(test, groups, **ev)
        counter.advance()
        curves = {"uncalibrated": before}
        comparison = after = None
        if dev is not None:
            comparison = compare_methods(dev, test, groups, progress=counter.nested(),
                                         **compare_options)
            after = evaluate(_tfg_isotonic(comparison, dev, groups).transform(test),
                             groups, **ev)
            counter.advance()
            curves["TFG isotonic"] = after
        figures = _figures(tmp, curves, None, before, comparison, groups, counter)
        _write_pages(tmp, title, notes, before, after, comparison, figures, omitted)
    return os.path.join(out_dir, "index.html")
