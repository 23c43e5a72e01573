"""MCE and the one-call evaluation of distributed entries, as the single-machine
result types."""
import numpy as np

from .._docs import fill_doc
from ..core.dispatch import implements
from ..metrics import evaluation as single_evaluation, marginal as single_marginal
from ..core.groups import TagGroups, check_groups
from ..core.validation import check_prior
from ..metrics.binary import check_debias
from ..metrics.evaluation import (EvaluationResult, _check_measure_options, _per_tag_ci,
                                  bins_used)
from ..metrics.marginal import (MarginalCalibrationError, _mce_settings, _mce_squares,
                                _mce_tags, _mce_value, check_ce_options, stack_bins)
from .checks import check_dask_entries
from .equal_mass import equal_mass_bin_stats
from .measures import (binned_errors, check_distributed_ci, check_measures,
                       fixed_width_bin_stats, measures_by_group, top_label_ece,
                       with_interval)
from .reduce import tree_merge
from .resampling import bootstrap_ends

__all__ = ["evaluate", "mce"]


def _counts(block, index, tag_to_group, n_groups, n_tags):
    rows = TagGroups(tag_to_group, n_groups).summary(block)
    return (np.bincount(block.tag, minlength=n_tags),
            np.array([[r["entries"], r.get("tokens", 0)] for r in rows], dtype=np.int64))


def _add(parts):
    return tuple(sum(p[i] for p in parts) for i in range(2))


def _entry_counts(entries, groups):
    """Entries per tag, and entries and tokens per group, of distributed entries."""
    return tree_merge(_counts, _add, entries.blocks,
                      np.asarray(groups.tag_to_group, dtype=np.int64), groups.n_groups,
                      entries.n_tags)


@implements(single_marginal.mce)
@fill_doc
def mce(entries, *, min_entries=None, n_bins=None, bin_size=None, binning=None, ci=None,
        debias=True):
    """:func:`sparsecal.mce` of distributed entries (every tag in the same passes).

    Parameters
    ----------
    {dask_entries}
    min_entries, n_bins, bin_size, binning, ci, debias
        As :func:`sparsecal.mce`.

    Returns
    -------
    MarginalCalibrationError

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x = np.random.default_rng(0).dirichlet(np.ones(3), size=900).round(2)
    >>> gold = np.arange(900) % 3
    >>> got = mce(sc.threshold(da.from_array(x, chunks=(250, 3)), gold))
    >>> sorted(got.per_tag), abs(got.value - sc.mce(sc.threshold(x, gold)).value) < 1e-12
    ([0, 1, 2], True)
    """
    check_dask_entries(entries)
    spec = check_distributed_ci(ci, debias)
    check_debias(debias, 2.0, spec)
    min_entries, binned = _mce_settings(min_entries, n_bins, bin_size, binning)
    sizes, _ = _entry_counts(entries, TagGroups.scw(entries.n_tags))
    enough, too_few = _mce_tags(sizes, min_entries, binned, debias)
    # the evaluated tags, one group each; the other tags share a last group
    tag_to_group = np.full(entries.n_tags, enough.size, dtype=np.int64)
    tag_to_group[enough] = np.arange(enough.size)
    if binned.get("binning") == "fixed":
        bins = fixed_width_bin_stats(entries, tag_to_group, enough.size + 1,
                                     n_bins=binned["n_bins"])
    else:
        bins = equal_mass_bin_stats(entries, tag_to_group, enough.size + 1,
                                    n_bins=binned.get("n_bins"),
                                    bin_size=binned.get("bin_size"))
    sets = [None] + list(bins[:enough.size]) + [None]   # not pooled, not the others
    ends = bootstrap_ends(entries, TagGroups(tag_to_group, enough.size + 1), sets, 2.0,
                           spec)[1:]
    per_tag = {int(t): with_interval(b, 2.0, spec, debias, ends=e)
               for t, b, e in zip(enough, bins, ends)}
    squares = _mce_squares(*stack_bins(bins[:enough.size]), debias)
    return MarginalCalibrationError(_mce_value(squares), per_tag, too_few, min_entries,
                                    bool(debias))


@implements(single_evaluation.evaluate)
@fill_doc
def evaluate(entries, groups=None, *, n_bins=None, per_tag=False, min_entries=None,
             ci=None, top_label=False, metrics=(), bin_size=None, binning="equal-mass",
             norm=2, debias=False, prior=None, measure_options=None):
    """:func:`sparsecal.evaluate` of distributed entries; ``metrics``: the measures
    with a mergeable form.

    Parameters
    ----------
    {dask_entries}
    groups, n_bins, per_tag, min_entries, ci, top_label, metrics
    bin_size, binning, norm, debias, prior, measure_options
        As :func:`sparsecal.evaluate`.

    Returns
    -------
    EvaluationResult

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x, gold = np.random.default_rng(1).dirichlet(np.ones(4), size=500), np.arange(500) % 4
    >>> before = evaluate(sc.threshold(da.from_array(x, chunks=(200, 4)), gold))
    >>> after = evaluate(sc.threshold(da.from_array(x ** 0 / 4, chunks=(200, 4)), gold))
    >>> before.groups[0]["tokens"], [row["name"] for row in sc.compare(before, after).rows]
    (500, ['SMCE', 'GMCE group 1'])
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
    marginal = (mce(entries, min_entries=min_entries, ci=_per_tag_ci(spec)) if per_tag
                else None)
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
