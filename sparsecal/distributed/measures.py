"""More measures of distributed entries: fixed-width bins, intervals, the
top-label ECE and the registry's measures with a mergeable form."""
import numpy as np

from .._docs import fill_doc
from ..core.dispatch import implements
from ..metrics import toplabel as single_toplabel
from ..core.binning import BinStats, check_fixed_bins, lookup_bins
from ..core.groups import TagGroups, partition_by_group
from ..core.validation import TAG_BYTES, check_size
from ..metrics.binary import CalibrationError
from ..metrics.ce import ce_from_bins, check_norm
from ..metrics.corp import table_corp
from ..metrics.debiased import debiased_ce_from_bins, score_interval
from ..metrics.intervals import ConfidenceInterval, simulation_interval
from ..metrics.marginal import check_ce_options
from ..metrics.measures import MEASURES, get_measure
from ..metrics.toplabel import top_label
from .application import application_from_table
from .checks import check_dask_entries
from .equal_mass import equal_mass_bin_stats
from .fixedpoint import fixed_parts, fixed_value
from .reduce import tree_merge
from .resampling import (bootstrap_ends, set_tables, table_bootstrap_intervals,
                         table_calibration_tests, top_label_table)
from .smooth import smooth_ece

__all__ = ["MERGED", "binned_errors", "check_distributed_ci", "check_measures",
           "corp_from_table", "fixed_width_bin_stats", "measures_by_group",
           "top_label_ece", "with_interval"]


def check_distributed_ci(ci, debias=False):
    """The :class:`~sparsecal.metrics.ConfidenceInterval` of ``ci`` (or None);
    "score" only with ``debias``."""
    spec = ConfidenceInterval.resolve(ci)
    if spec is not None and spec.method == "score" and not debias:
        raise ValueError("ci method 'score' is the interval of the debiased CE: use it "
                         "with debias=True")
    return spec


def with_interval(bins, norm=2.0, spec=None, debias=False, ends=None):
    """The CalibrationError of merged bins (None for None), with the interval of
    ``spec`` computed as on one machine; ``ends``: the bootstrap interval."""
    if bins is None:
        return None
    value = debiased_ce_from_bins(bins) if debias else ce_from_bins(bins, norm)
    lo = hi = None
    if spec is not None and spec.method == "bootstrap":
        if ends is None:
            raise ValueError("ci='bootstrap' needs the set's distinct-score table: "
                             "give its interval as ends")
        lo, hi = ends
    elif spec is not None:
        lo, hi = (score_interval(bins, spec) if debias
                  else simulation_interval(bins, norm, spec))
    return CalibrationError(value, norm, int(bins.count.sum()), bins, lo, hi, spec)


def _edges(n_bins):
    return np.arange(n_bins + 1) / n_bins


def _sums(score, label, n_bins):
    """Fixed-width bin sums of one set of scores, and the fixed-point sum of ``(s - y)**2``."""
    idx = lookup_bins(score, _edges(n_bins)[1:-1])
    x = score.astype(np.float64)
    lo, hi = np.full(n_bins, np.inf), np.full(n_bins, -np.inf)
    np.minimum.at(lo, idx, x)
    np.maximum.at(hi, idx, x)
    count = np.bincount(idx, minlength=n_bins)
    bounds = np.concatenate(([0], np.cumsum(count)))
    return [count, np.bincount(idx, weights=label, minlength=n_bins).astype(np.int64),
            fixed_parts(x[np.argsort(idx, kind="stable")], bounds), lo, hi,
            fixed_parts((x - label) ** 2, np.array([0, x.shape[0]]))]


def _chunk_sums(block, index, tag_to_group, n_groups, n_bins, top):
    if top:
        parts = [top_label(block)] if len(block) else [(block.score, block.label)]
    elif tag_to_group is None:
        parts = [(block.score, block.label)]
    else:   # each group's entries (in any order: the sums are order-free)
        perm, offsets = partition_by_group(block.tag, tag_to_group, n_groups)
        parts = [(block.score[perm[a:b]], block.label[perm[a:b]])
                 for a, b in zip(offsets[:-1], offsets[1:])]
    return [_sums(score, label, n_bins) for score, label in parts]


def _merge(parts):
    ops = (np.add, np.add, np.add, np.minimum, np.maximum, np.add)
    return [[op.reduce([p[i] for p in per_group]) for i, op in enumerate(ops)]
            for per_group in zip(*parts)]


def _group_sums(entries, tag_to_group, n_groups, n_bins, top=False):
    """Merged fixed-width sums per group: ``(BinStats or None, brier sum)``."""
    merged = tree_merge(_chunk_sums, _merge, entries.blocks, tag_to_group, n_groups,
                        n_bins, top)
    out = []
    for count, label, fixed, lo, hi, sq in merged:
        if not count.any():
            out.append((None, None))
            continue
        empty = count == 0
        bins = BinStats(count, fixed_value(fixed), label.astype(np.float64),
                        np.where(empty, np.nan, lo), np.where(empty, np.nan, hi),
                        edges=_edges(n_bins))
        out.append((bins, float(fixed_value(sq)[0])))
    return out


@fill_doc
def fixed_width_bin_stats(entries, tag_to_group=None, n_groups=1, *, n_bins=10):
    """Fixed-width bin statistics of distributed entries, pooled or per group.

    Parameters
    ----------
    {dask_entries}
    tag_to_group : ndarray of int64, shape (n_tags,), optional
        Group of each tag; None: all entries pooled.
    n_groups, n_bins : int, default 1 and 10

    Returns
    -------
    list of BinStats or None
        One per group, as :func:`~sparsecal.core.binning.fixed_width_bins`.

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x = da.from_array(np.array([0.9, 0.1, 0.4, 0.1, 0.7]), chunks=2)
    >>> entries = sc.distributed.from_arrays(x, [1, 0, 0, 1, 1])
    >>> fixed_width_bin_stats(entries, n_bins=4)[0].count
    array([2, 1, 1, 1])
    """
    check_dask_entries(entries)
    n_groups = check_size(n_groups, "n_groups", TAG_BYTES)
    n_bins = check_fixed_bins(n_bins, n_groups)
    return [b for b, _ in _group_sums(entries, tag_to_group, n_groups, n_bins)]


def _all_bins(entries, groups, n_bins, bin_size, binning, pooled=True):
    """Bins of all entries (None unless ``pooled``), then of each group of ``groups``."""
    if groups is None:
        return (fixed_width_bin_stats(entries, n_bins=n_bins) if binning == "fixed" else
                equal_mass_bin_stats(entries, n_bins=n_bins, bin_size=bin_size))
    tag_to_group = np.asarray(groups.tag_to_group, dtype=np.int64)
    if binning == "fixed":
        return ((fixed_width_bin_stats(entries, n_bins=n_bins) if pooled else [None])
                + fixed_width_bin_stats(entries, tag_to_group, groups.n_groups,
                                        n_bins=n_bins))
    sets = equal_mass_bin_stats(entries, tag_to_group, groups.n_groups, n_bins=n_bins,
                                bin_size=bin_size, pooled=pooled)   # every cut in the same rounds
    return sets if pooled else [None] + sets


@fill_doc
def binned_errors(entries, groups=None, *, n_bins=None, bin_size=None,
                  binning="equal-mass", norm=2, debias=False, ci=None, pooled=True):
    """SMCE and every GMCE of distributed entries with any binning, norm and
    interval: the one home of the distributed binned errors.

    Parameters
    ----------
    {dask_entries}
    groups : TagGroups, optional
        None: the SMCE only.
    n_bins, bin_size, binning, norm, debias, ci, pooled
        As :func:`sparsecal.smce_and_gmce`.

    Returns
    -------
    smce : CalibrationError or None
    gmce : list of CalibrationError or None

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x = np.random.default_rng(0).dirichlet(np.ones(6), size=300)
    >>> got, _ = binned_errors(sc.threshold(da.from_array(x, chunks=70), np.arange(300) % 6))
    >>> abs(got.value - sc.smce(sc.threshold(x, np.arange(300) % 6)).value) < 1e-12
    True
    """
    check_dask_entries(entries, groups)
    spec = check_distributed_ci(ci, debias)
    n_bins, norm = check_ce_options(n_bins, bin_size, binning, norm, debias, spec)
    sets = _all_bins(entries, groups, n_bins, bin_size, binning, pooled or groups is None)
    ends = bootstrap_ends(entries, TagGroups.scw(entries.n_tags) if groups is None else groups,
                          sets, norm, spec)
    shared, *per_group = [with_interval(b, norm, spec, debias, e) for b, e in zip(sets, ends)]
    if shared is None and (pooled or groups is None):
        raise ValueError("cannot compute a calibration error of no points")
    return shared, per_group


@implements(single_toplabel.top_label_ece)
@fill_doc
def top_label_ece(entries, *, n_bins=20, norm=1, ci=None):
    """:func:`sparsecal.top_label_ece` of distributed entries.

    Parameters
    ----------
    {dask_entries}
    n_bins, norm, ci
        As :func:`sparsecal.top_label_ece`.

    Returns
    -------
    CalibrationError

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x = np.random.default_rng(0).dirichlet(np.ones(5), size=400)
    >>> got = top_label_ece(sc.threshold(da.from_array(x, chunks=90), np.arange(400) % 5))
    >>> abs(got.value - sc.top_label_ece(sc.threshold(x, np.arange(400) % 5)).value) < 1e-12
    True
    """
    check_dask_entries(entries)
    n_bins = check_fixed_bins(n_bins)
    norm = check_norm(norm)
    spec = check_distributed_ci(ci)
    ((bins, _),) = _group_sums(entries, None, 1, n_bins, top=True)
    if bins is None:
        raise ValueError("cannot compute a calibration error of no points")
    ends = (table_bootstrap_intervals([top_label_table(entries)], [bins], norm, spec)[0]
            if spec is not None and spec.method == "bootstrap" else None)
    return with_interval(bins, norm, spec, ends=ends)


#: the CORP decomposition of one set from its merged distinct-score table
#: (:func:`sparsecal.brier_corp` / :func:`sparsecal.log_loss_corp` on a cluster)
corp_from_table = table_corp


def check_measures(names):
    """The registry's measures of ``names``, each with a mergeable form (else ValueError)."""
    measures = [get_measure(name) for name in names]
    missing = [m.name for m in measures if m.mergeable is None]
    if missing:
        have = [m.name for m in MEASURES.values() if m.mergeable is not None]
        raise ValueError(f"measure(s) {', '.join(missing)} have no distributed form yet; "
                         f"on distributed entries: {', '.join(have)}")
    return measures


@fill_doc
def measures_by_group(entries, groups, names, *, n_bins=None, bin_size=None,
                      binning="equal-mass", prior=None, n_resamples=None, random_state=None):
    """``evaluate(metrics=...)``'s table of distributed entries, pooled and per group.

    Parameters
    ----------
    {dask_entries}
    {groups}
    names : sequence of str
        Measures with a mergeable form.
    n_bins, bin_size, binning, prior, n_resamples, random_state
        As :func:`sparsecal.evaluate` (the last two: its ``measure_options``).

    Returns
    -------
    dict
        name -> ``{"pooled": value, "groups": [value or None, ...]}``.

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x = da.from_array(np.random.default_rng(2).dirichlet(np.ones(4), size=300), chunks=100)
    >>> entries, groups = sc.threshold(x, np.arange(300) % 4), sc.TagGroups([0, 0, 1, 1], 2)
    >>> len(measures_by_group(entries, groups, ["ece"])["ece"]["groups"])
    2
    """
    check_dask_entries(entries, groups)
    measures = check_measures(names)
    for m in measures:
        m.check_prior(prior)
    n_bins, _ = check_ce_options(n_bins, bin_size, binning, 2, False, None)
    sets = _Sets(entries, groups)
    out = {}
    for m in measures:
        kw = m.arguments(n_bins=n_bins, bin_size=bin_size, binning=binning, prior=prior,
                         n_resamples=n_resamples, random_state=random_state)
        pooled, *per_group = MERGED[m.mergeable](m, kw, sets)
        out[m.name] = {"pooled": pooled, "groups": per_group}
    return out


class _Sets:
    """The merged statistics of all entries, then of each group, each computed once."""

    def __init__(self, entries, groups):
        self.entries, self.groups, self._cache = entries, groups, {}

    def get(self, key, compute):
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def tables(self):
        return self.get("tables", lambda: set_tables(self.entries, self.groups))

    def bins(self, kw):
        key = (kw.get("binning", "equal-mass"), kw.get("n_bins"), kw.get("bin_size"))
        return self.get(key, lambda: _all_bins(self.entries, self.groups, key[1], key[2],
                                               key[0]))

    def of_tables(self, key, value):
        """``value(table)`` of each set's table (None for an empty set)."""
        return self.get(key, lambda: [None if not t[1].sum() else value(t)
                                      for t in self.tables()])


def _binned_ce(m, kw, sets):
    norm = check_norm(kw.get("norm", 2))
    return [None if b is None else with_interval(b, norm, None, kw.get("debias", False))
            .value for b in sets.bins(kw)]


def _squared_errors(m, kw, sets):
    def mean_squared_errors():
        entries, groups = sets.entries, sets.groups
        sums = _group_sums(entries, None, 1, 1) + _group_sums(
            entries, np.asarray(groups.tag_to_group, dtype=np.int64), groups.n_groups, 1)
        return [None if b is None else sq / int(b.count.sum()) for b, sq in sums]
    return sets.get("squared-errors", mean_squared_errors)


def _corp(rule):
    def values(m, kw, sets):
        return [None if d is None else m.value_of(d) for d in
                sets.of_tables(("corp", rule), lambda t: corp_from_table(*t, rule=rule))]
    return values


def _application(m, kw, sets):
    prior = kw.get("prior")
    return [None if d is None else m.value_of(d) for d in sets.of_tables(
        (m.name, prior), lambda t: application_from_table(*t, m.name, prior))]


def _smooth_grids(m, kw, sets):
    def all_sets():
        pooled, per_group = smooth_ece(sets.entries, sets.groups)
        return [pooled] + per_group
    return [None if e is None else m.value_of(e) for e in sets.get("smooth", all_sets)]


def _table_replicates(m, kw, sets):
    bins = sets.bins(kw)
    return table_calibration_tests(
        sets.tables(), bins, [None if b is None else ce_from_bins(b, 2.0) for b in bins],
        kw.get("n_resamples", 999), kw.get("random_state", 0))


#: each mergeable form of :data:`sparsecal.metrics.measures.MERGEABLE_FORMS`
#: (declared on the registry's measures) -> ``values(measure, arguments, sets)``:
#: the measure over all entries, then each group
MERGED = {"bins": _binned_ce, "squared-errors": _squared_errors,
          "brier-corp": _corp("brier"), "log-loss-corp": _corp("log_loss"),
          "application": _application, "smooth-grids": _smooth_grids,
          "table-replicates": _table_replicates}
