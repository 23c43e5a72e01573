"""MCE and the one-call evaluation of distributed entries: the single-machine
result types (:class:`~sparsecal.metrics.marginal.MarginalCalibrationError`,
:class:`~sparsecal.metrics.evaluation.EvaluationResult`, so that
:func:`sparsecal.compare` takes them), from exact distributed bins.

The per-tag and per-group entry counts, and the tokens with an entry in each
group, come from one pass of per-chunk counts added in a tree. A token's
entries all lie in its row's chunk, so the chunks' distinct-token counts add up
to the whole's exactly.
"""
import numpy as np

from ..core.dispatch import implements
from ..metrics import evaluation as single_evaluation, marginal as single_marginal
from ..core.groups import TagGroups, check_groups
from ..core.validation import check_prior
from ..metrics.evaluation import EvaluationResult, _check_measure_options, bins_used
from ..metrics.marginal import (MarginalCalibrationError, _mce_settings, _mce_tags,
                                check_ce_options)
from .checks import check_dask_entries
from .equal_mass import equal_mass_bin_stats
from .measures import (binned_errors, check_distributed_ci, check_measures,
                       measures_by_group, top_label_ece, with_interval)
from .reduce import tree_merge
from .resampling import bootstrap_ends

__all__ = ["evaluate", "mce"]


def _counts(block, index, tag_to_group, n_groups, n_tags):
    """Entries per tag; entries and distinct tokens per group (one chunk)."""
    rows = TagGroups(tag_to_group, n_groups).summary(block)
    return (np.bincount(block.tag, minlength=n_tags),
            np.array([[r["entries"], r.get("tokens", 0)] for r in rows], dtype=np.int64))


def _add(parts):
    return tuple(sum(p[i] for p in parts) for i in range(2))


def _entry_counts(entries, groups):
    """Entries per tag, and entries and tokens per group, of distributed entries.

    Parameters
    ----------
    entries : DaskEntries
    groups : TagGroups

    Returns
    -------
    per_tag : ndarray of int64, shape (n_tags,)
    per_group : ndarray of int64, shape (n_groups, 2)
        Entries and tokens with an entry, per group (as
        :meth:`TagGroups.summary`).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from sparsecal import TagGroups
    >>> from sparsecal.distributed import threshold
    >>> scores = da.from_array(np.eye(3)[[0, 1, 1, 2]], chunks=(3, 3))
    >>> per_tag, per_group = _entry_counts(threshold(scores, np.zeros(4, int)),
    ...                                    TagGroups([0, 1, 1], 2))
    >>> per_tag.tolist(), per_group.tolist()
    ([1, 2, 1], [[1, 1], [3, 3]])
    """
    return tree_merge(_counts, _add, entries.blocks,
                      np.asarray(groups.tag_to_group, dtype=np.int64), groups.n_groups,
                      entries.n_tags)


@implements(single_marginal.mce)
def mce(entries, *, min_entries=None, n_bins=None, bin_size=None, ci=None):
    """Marginal calibration error (MCE) per tag of distributed entries:
    :func:`sparsecal.mce` on a cluster (every tag in the same passes).

    Parameters
    ----------
    entries : DaskEntries
    min_entries : int, optional
        Fewest entries for a tag to be evaluated (default 400).
    n_bins, bin_size : int, optional
        Equal-mass bins per tag (default ``bin_size=200``).
    ci : None, "simulation", "bootstrap" or ConfidenceInterval, default=None
        The interval of each tag's CE (drawn in tag order, as on one machine).

    Returns
    -------
    MarginalCalibrationError
        Per-tag CE; counts, label sums and score ranges of every bin equal the
        single-machine ones, values and interval ends within 1e-12 relative.

    Raises
    ------
    TypeError
        If ``entries`` is not ``DaskEntries``.
    ValueError
        As :func:`sparsecal.mce`: invalid bins or ``min_entries``, or no tag
        with ``min_entries`` entries.

    Warns
    -----
    UserWarning
        As :func:`sparsecal.mce`, for tags with bins under 200 entries.

    References
    ----------
    Kumar, Liang & Ma 2019; Kranzlein, Liu & Schneider 2021, Section 2.1, eq. 1.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> x = np.random.default_rng(0).dirichlet(np.ones(3), size=900).round(2)
    >>> gold = np.arange(900) % 3
    >>> got = mce(threshold(da.from_array(x, chunks=(250, 3)), gold))
    >>> one = sc.mce(sc.threshold(x, gold))
    >>> sorted(got.per_tag), abs(got.value - one.value) <= 1e-12 * one.value
    ([0, 1, 2], True)
    """
    check_dask_entries(entries)
    spec = check_distributed_ci(ci)
    min_entries, bin_size = _mce_settings(min_entries, n_bins, bin_size)
    sizes, _ = _entry_counts(entries, TagGroups.scw(entries.n_tags))
    enough, too_few = _mce_tags(sizes, min_entries, n_bins, bin_size)
    # the evaluated tags, one group each; the other tags share a last group
    tag_to_group = np.full(entries.n_tags, enough.size, dtype=np.int64)
    tag_to_group[enough] = np.arange(enough.size)
    bins = equal_mass_bin_stats(entries, tag_to_group, enough.size + 1, n_bins=n_bins,
                                bin_size=bin_size)
    sets = [None] + list(bins[:enough.size]) + [None]   # not pooled, not the others
    ends = bootstrap_ends(entries, TagGroups(tag_to_group, enough.size + 1), sets, 2.0,
                           spec)[1:]
    per_tag = {int(t): with_interval(b, 2.0, spec, ends=e)
               for t, b, e in zip(enough, bins, ends)}
    value = float(np.sqrt(np.mean([c.value ** 2 for c in per_tag.values()])))
    return MarginalCalibrationError(value, per_tag, too_few, min_entries)


@implements(single_evaluation.evaluate)
def evaluate(entries, groups=None, *, n_bins=None, per_tag=False, min_entries=None,
             ci=None, top_label=False, metrics=(), bin_size=None, binning="equal-mass",
             norm=2, debias=False, prior=None, measure_options=None):
    """Evaluate the marginal calibration of distributed entries:
    :func:`sparsecal.evaluate` on a cluster (every option but the measures
    without a distributed form).

    Parameters
    ----------
    entries : DaskEntries
    groups : TagGroups, optional
        Default: SCW (one group of all tags).
    n_bins : int, optional
        Bins for SMCE and each GMCE (default 10).
    per_tag : bool, default=False
        Also the per-tag CE and MCE (:func:`mce`).
    min_entries : int, optional
        As :func:`mce`.
    ci : None, {"simulation", "bootstrap", "score"} or ConfidenceInterval, default=None
        As :func:`sparsecal.evaluate` (the interval of every CE); the
        bootstrap from the merged distinct-score tables
        (:mod:`~sparsecal.distributed.resampling`).
    top_label : bool, default=False
        Also the top-label ECE (:func:`~sparsecal.distributed.measures.top_label_ece`).
    metrics : sequence of str, default=()
        Measures with a mergeable form (:attr:`sparsecal.metrics.measures.Measure.mergeable`).
    bin_size, binning, norm, debias, prior, measure_options
        As :func:`sparsecal.evaluate` (``measure_options``: the calibration
        test's ``n_resamples`` and ``random_state``).

    Returns
    -------
    EvaluationResult
        SMCE, every GMCE, the group summary rows (entries and tokens per
        group), MCE, top-label ECE and the measures if asked, with intervals
        if asked: the single-machine values within 1e-12 relative.
        :func:`sparsecal.compare` compares two of them.

    Raises
    ------
    TypeError, ValueError
        As :func:`smce_and_gmce` and :func:`mce`.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Table 1 (SMCE, GMCE per TFG group, group
    rows).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from sparsecal import compare
    >>> from sparsecal.distributed import threshold
    >>> x = np.random.default_rng(1).dirichlet(np.ones(4), size=500)
    >>> before = evaluate(threshold(da.from_array(x, chunks=(200, 4)), np.arange(500) % 4))
    >>> after = evaluate(threshold(da.from_array(x ** 0, chunks=(200, 4)) / 4,
    ...                            np.arange(500) % 4))
    >>> before.groups[0]["tokens"], after.smce.value < before.smce.value
    (500, True)
    >>> [row["name"] for row in compare(before, after).rows]
    ['SMCE', 'GMCE group 1']
    """
    check_dask_entries(entries)
    if groups is None:
        groups = TagGroups.scw(entries.n_tags)
    check_groups(groups, entries.n_tags)
    spec = check_distributed_ci(ci, debias)
    n_bins, _ = check_ce_options(n_bins, bin_size, binning, norm, debias, spec)
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    if prior is not None:
        prior = check_prior(prior, "prior")
    for m in check_measures(metrics):
        m.check_prior(prior)
    shared, grouped = binned_errors(entries, groups, n_bins=n_bins, bin_size=bin_size,
                                    binning=binning, norm=norm, debias=debias, ci=spec)
    _, per_group = _entry_counts(entries, groups)
    rows = groups.summary()
    for row, (n, tokens) in zip(rows, per_group.tolist()):
        row["entries"], row["tokens"] = n, tokens
    other = None if debias else spec   # the score interval is the debiased CE's only
    marginal = mce(entries, min_entries=min_entries, ci=other) if per_tag else None
    interval = {} if spec is None else spec.to_dict()
    return EvaluationResult(
        smce=shared, gmce=grouped, groups=rows, mce=marginal,
        top_label_ece=top_label_ece(entries, ci=other) if top_label else None,
        metrics=measures_by_group(entries, groups, metrics, n_bins=n_bins,
                                  bin_size=bin_size, binning=binning, prior=prior,
                                  **_check_measure_options(measure_options)),
        settings={"threshold": entries.threshold,
                  "n_bins": bins_used(n_bins, binning, shared.n),
                  "bin_size": bin_size, "binning": binning, "norm": shared.norm,
                  "debias": bool(debias), "prior": prior, "ci": interval.get("method"),
                  "confidence_level": interval.get("confidence_level"),
                  "n_resamples": interval.get("n_resamples"),
                  "random_state": interval.get("random_state"),
                  "grouping": groups.kind, "n_groups": groups.n_groups})
