"""More measures of distributed entries: fixed-width bins, intervals, top-label
ECE, the Brier score and the registry's measures that have a mergeable form.

- **Fixed-width bins** (``[i/B, (i+1)/B)``, the last with 1.0): each chunk
  looks its entries up in the bins (:func:`sparsecal.core.binning.lookup_bins`,
  the rule of :meth:`BinStats.boundaries`) and sums each bin: count and label
  sum (integers), score sum (exact fixed point,
  :mod:`~sparsecal.distributed.fixedpoint`), smallest and largest score; merged
  by adding, minimum and maximum, so counts, label sums and score ranges equal
  :func:`sparsecal.core.binning.fixed_width_bins` bit for bit.
- **Intervals**: Nguyen & O'Connor's Algorithm 2 (``ci="simulation"``) needs
  only each bin's count, mean score and positive rate, and the score interval
  of the debiased CE (``ci="score"``) only the bins too: both are computed on
  the client from the merged bins, drawing in the single-machine order. The
  bootstrap resamples each set's merged distinct-score table on the workers
  (:mod:`~sparsecal.distributed.resampling`).
- **Top-label ECE**: a token's entries all lie in its row's chunk, so each
  chunk's top-label entries (:func:`sparsecal.metrics.toplabel.top_label`) are
  the whole's; they are binned in fixed-width bins as above.
- **Brier score**: ``(s - y)²`` of each entry lies in [0, 1], so its sum is
  exact in fixed point; divided by the count once.
- **CORP decompositions** (Brier and log loss: score, MCB, DSC, UNC): PAV of the
  merged per-set distinct-score tables (:func:`corp_from_table`), as the
  isotonic fit; **DCF, minDCF, Cllr, minCllr** from the same tables
  (:func:`~sparsecal.distributed.application.application_from_table`).
"""
import numpy as np

from ..core.dispatch import implements
from ..metrics import toplabel as single_toplabel
from ..core.binning import BinStats, check_fixed_bins, lookup_bins
from ..core.groups import TagGroups, partition_by_group
from ..core.isotonic import isotonic_fit_pooled, isotonic_predict
from ..core.validation import TAG_BYTES, check_size
from ..metrics.binary import CalibrationError
from ..metrics.ce import ce_from_bins, check_norm
from ..metrics.corp import ScoreDecomposition
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
    """The interval specification of ``ci`` on distributed entries.

    Parameters
    ----------
    ci : None, {"simulation", "bootstrap", "score"} or ConfidenceInterval
    debias : bool, default=False
        Whether the CE is the debiased one (the only one "score" is for).

    Returns
    -------
    ConfidenceInterval or None

    Raises
    ------
    ValueError
        For an invalid ``ci``, or "score" without ``debias``.

    Examples
    --------
    >>> check_distributed_ci("simulation").n_resamples
    10000
    >>> check_distributed_ci("bootstrap").n_resamples
    1000
    >>> check_distributed_ci("score")
    Traceback (most recent call last):
    ...
    ValueError: ci method 'score' is the interval of the debiased CE: use it with debias=True
    """
    spec = ConfidenceInterval.resolve(ci)
    if spec is not None and spec.method == "score" and not debias:
        raise ValueError("ci method 'score' is the interval of the debiased CE: use it "
                         "with debias=True")
    return spec


def with_interval(bins, norm=2.0, spec=None, debias=False, ends=None):
    """The CalibrationError of merged bins: CE_p (or the debiased CE_2) with the
    interval ``spec`` asks for, as the single-machine metrics compute it.

    Parameters
    ----------
    bins : BinStats or None
    norm : float, default=2.0
        From :func:`~sparsecal.metrics.ce.check_norm`.
    spec : ConfidenceInterval, optional
        From :func:`check_distributed_ci`.
    debias : bool, default=False
    ends : (float, float), optional
        The bootstrap interval, computed from the set's table
        (:func:`~sparsecal.distributed.resampling.table_bootstrap_intervals`).

    Returns
    -------
    CalibrationError or None
        None for ``bins`` None (an empty group).

    References
    ----------
    Nguyen & O'Connor 2015, Algorithms 1 and 2; Kumar, Liang & Ma 2019,
    Section 5 (the debiased CE).

    Examples
    --------
    >>> from sparsecal.core.binning import fixed_width_bins
    >>> from sparsecal.metrics import ConfidenceInterval
    >>> bins = fixed_width_bins([0.1, 0.2, 0.9], [0, 0, 1], n_bins=2)
    >>> ce = with_interval(bins, 2.0, ConfidenceInterval())
    >>> round(ce.value, 4), round(ce.ci_low, 4), ce.n
    (0.1354, 0.1354, 3)
    """
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
    """Fixed-width bin edges, as :func:`sparsecal.core.binning.fixed_width_bins`."""
    return np.arange(n_bins + 1) / n_bins


def _sums(score, label, n_bins):
    """Fixed-width bin sums of one set of scores; and the fixed-point sum of
    the squared errors (s - y)²."""
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
    """Per group of one chunk (``top``: of its top-label entries, one group)."""
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
    """Add counts and sums, take minima and maxima, per group (exact)."""
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


def fixed_width_bin_stats(entries, tag_to_group=None, n_groups=1, *, n_bins=10):
    """Fixed-width bin statistics of distributed entries, pooled or per group.

    Parameters
    ----------
    entries : DaskEntries
    tag_to_group : ndarray of int64, shape (n_tags,), optional
        Group of each tag; None: all entries pooled (one group).
    n_groups : int, default=1
    n_bins : int, default=10

    Returns
    -------
    list of BinStats or None
        One per group (None for a group without entries); counts, label sums,
        smallest and largest scores equal those of
        :func:`sparsecal.core.binning.fixed_width_bins` of the group's entries;
        score sums are the exact sums correctly rounded.

    Raises
    ------
    TypeError
        If ``entries`` is not ``DaskEntries``.
    ValueError
        An invalid ``n_bins``; invalid scores when their chunk is computed.

    References
    ----------
    Nguyen & O'Connor 2015, Section 3.1 (evenly spaced bins); Kranzlein, Liu &
    Schneider 2021, Section 3.2.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from sparsecal.core.binning import fixed_width_bins
    >>> from sparsecal.distributed.entries import from_arrays
    >>> x = np.array([0.9, 0.1, 0.4, 0.1, 0.7]); y = np.array([1, 0, 0, 1, 1])
    >>> (stats,) = fixed_width_bin_stats(from_arrays(da.from_array(x, chunks=2), y),
    ...                                  n_bins=4)
    >>> stats.count, stats.sum_label
    (array([2, 1, 1, 1]), array([1., 0., 1., 1.]))
    """
    check_dask_entries(entries)
    n_groups = check_size(n_groups, "n_groups", TAG_BYTES)
    n_bins = check_fixed_bins(n_bins, n_groups)
    return [b for b, _ in _group_sums(entries, tag_to_group, n_groups, n_bins)]


def _all_bins(entries, groups, n_bins, bin_size, binning, pooled=True):
    """Bins of all entries pooled (None unless ``pooled``), then of each group
    of ``groups`` (none for None)."""
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


def binned_errors(entries, groups=None, *, n_bins=None, bin_size=None,
                  binning="equal-mass", norm=2, debias=False, ci=None, pooled=True):
    """SMCE and every GMCE of distributed entries with any binning, norm and
    interval of :func:`sparsecal.smce_and_gmce`.

    Parameters
    ----------
    entries : DaskEntries
    groups : TagGroups, optional
        The GMCE's groups; None: the SMCE only (no groups binned).
    n_bins, bin_size : int, optional
        Default 10 bins; ``bin_size`` for equal-mass bins only.
    binning : {"equal-mass", "fixed"}, default="equal-mass"
    norm : {2, 1, inf}, default=2
    debias : bool, default=False
        Kumar et al.'s debiased CE_2.
    ci : None, {"simulation", "bootstrap", "score"} or ConfidenceInterval, default=None
        Drawn for the SMCE, then each group in order, as on one machine (the
        bootstrap from the merged distinct-score tables:
        :mod:`~sparsecal.distributed.resampling`).
    pooled : bool, default=True
        Whether to compute the SMCE (with ``groups``; as
        :func:`sparsecal.smce_and_gmce`'s ``pooled``).

    Returns
    -------
    smce : CalibrationError or None
        None unless ``pooled``.
    gmce : list of CalibrationError or None
        One per group (empty without ``groups``).
        Bins as the single-machine ones (counts, label sums and score ranges
        bit for bit); values and interval ends within 1e-12 relative.

    Raises
    ------
    TypeError
        If ``entries`` is not ``DaskEntries``.
    ValueError
        As :func:`sparsecal.smce_and_gmce` for the options; no entries.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Sections 3.2-3.3, eqs. 2-3; Nguyen &
    O'Connor 2015, Algorithms 1 and 2.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> x = np.random.default_rng(0).dirichlet(np.ones(6), size=300)
    >>> entries = threshold(da.from_array(x, chunks=(70, 6)), np.arange(300) % 6)
    >>> pooled, _ = binned_errors(entries, binning="fixed", norm=1, ci="simulation")
    >>> ref = sc.smce(sc.threshold(x, np.arange(300) % 6), binning="fixed", norm=1,
    ...               ci="simulation")
    >>> abs(pooled.ci_high - ref.ci_high) <= 1e-12 * ref.ci_high
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
def top_label_ece(entries, *, n_bins=20, norm=1, ci=None):
    """Top-label ECE of distributed entries (fixed-width bins): CE over each
    token's highest-scoring entry, :func:`sparsecal.top_label_ece` on a cluster.

    Parameters
    ----------
    entries : DaskEntries
    n_bins : int, default=20
        As Jagannatha & Yu 2020.
    norm : {1, 2, inf}, default=1
    ci : None, "simulation", "bootstrap" or ConfidenceInterval, default=None
        The bootstrap resamples the merged table of the top-label entries
        (:func:`~sparsecal.distributed.resampling.top_label_table`).

    Returns
    -------
    CalibrationError

    Raises
    ------
    TypeError
        If ``entries`` is not ``DaskEntries``.
    ValueError
        Invalid ``n_bins``, ``norm`` or ``ci`` ("score");
        no entries.

    References
    ----------
    Jagannatha & Yu 2020, Section 2 (top-label calibration of structured
    predictions); Nguyen & O'Connor 2015, Algorithm 2.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> x = np.random.default_rng(0).dirichlet(np.ones(5), size=400).round(2)
    >>> gold = np.arange(400) % 5
    >>> got = top_label_ece(threshold(da.from_array(x, chunks=(90, 5)), gold))
    >>> ref = sc.top_label_ece(sc.threshold(x, gold))
    >>> got.n == ref.n, abs(got.value - ref.value) <= 1e-12 * ref.value
    (True, True)
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


def _brier_of(p, n, k):
    """Mean Brier score of ``n`` forecasts ``p`` per distinct score, ``k`` of
    them positive."""
    return float(np.sum(k * (p - 1.0) ** 2 + (n - k) * p ** 2) / np.sum(n))


def _log_loss_of(p, n, k):
    """Mean log loss, as :func:`sparsecal.metrics.corp.log_loss_corp`'s rule
    (0 log 0 = 0: a count of 0 adds nothing)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = (np.where(k > 0, k * np.log(p), 0.0)
                 + np.where(n > k, (n - k) * np.log(1.0 - p), 0.0))
    return float(-np.sum(terms) / np.sum(n))


def corp_from_table(scores, counts, positives, rule="brier"):
    """The CORP decomposition of one set of entries from its distinct-score
    table: :func:`sparsecal.brier_corp` / :func:`sparsecal.log_loss_corp` on a
    cluster.

    The PAV recalibration of the pooled table is the single-machine one bit for
    bit (:func:`sparsecal.core.isotonic.isotonic_fit_pooled`); the mean scores
    are sums over distinct scores (``k (x - 1)² + (n - k) x²`` for Brier), so
    they agree with the means over entries to float rounding.

    Parameters
    ----------
    scores : ndarray of float64, shape (m,)
        Sorted distinct scores.
    counts, positives : ndarray of int64, shape (m,)
    rule : {"brier", "log_loss"}, default="brier"

    Returns
    -------
    ScoreDecomposition

    References
    ----------
    Dimitriadis, Gneiting & Jordan 2021, "Stable reliability diagrams for
    probabilistic classifiers", PNAS (CORP: ``S = MCB - DSC + UNC``).

    Examples
    --------
    >>> import numpy as np
    >>> import sparsecal as sc
    >>> d = corp_from_table(np.array([0.2, 0.8]), np.array([2, 2]), np.array([1, 2]))
    >>> ref = sc.brier_corp([0.2, 0.2, 0.8, 0.8], [0, 1, 1, 1])
    >>> round(d.score, 12) == round(ref.score, 12), round(d.miscalibration, 4)
    (True, 0.065)
    """
    mean_of = {"brier": _brier_of, "log_loss": _log_loss_of}[rule]
    n, k = counts.astype(np.float64), positives.astype(np.float64)
    recalibrated = isotonic_predict(scores, *isotonic_fit_pooled(scores, k / n, n))
    climatology = np.full_like(scores, k.sum() / n.sum())
    s, s_rc, s_c = (mean_of(p, n, k) for p in (scores, recalibrated, climatology))
    return ScoreDecomposition(s, s - s_rc, s_c - s_rc, s_c, int(counts.sum()), rule)


def check_measures(names):
    """The registry's measures of ``names``, each with a distributed form.

    Parameters
    ----------
    names : sequence of str

    Returns
    -------
    list of Measure

    Raises
    ------
    ValueError
        An unknown name, or a measure without a distributed form (named, with
        the list of those that have one).

    Examples
    --------
    >>> [m.display_name for m in check_measures(["ece", "brier"])]
    ['ECE', 'Brier']
    """
    measures = [get_measure(name) for name in names]
    missing = [m.name for m in measures if m.mergeable is None]
    if missing:
        have = [m.name for m in MEASURES.values() if m.mergeable is not None]
        raise ValueError(f"measure(s) {', '.join(missing)} have no distributed form yet; "
                         f"on distributed entries: {', '.join(have)}")
    return measures


def measures_by_group(entries, groups, names, *, n_bins=None, bin_size=None,
                      binning="equal-mass", prior=None, n_resamples=None, random_state=None):
    """Measures of the registry by name, over all distributed entries and per
    group: ``evaluate(metrics=...)``'s table on a cluster.

    Parameters
    ----------
    entries : DaskEntries
    groups : TagGroups
    names : sequence of str
        Of measures with a mergeable form (:func:`check_measures`).
    n_bins, bin_size, binning
        The bins of the binned measures (default 10 equal-mass bins).
    prior : float, optional
        The application prior of DCF and minDCF.
    n_resamples, random_state : optional
        Of the calibration test (default: :func:`sparsecal.calibration_test`'s,
        999 and 0).

    Returns
    -------
    dict
        name -> ``{"pooled": value, "groups": [value, or None for an empty
        group]}``, as :attr:`sparsecal.metrics.evaluation.EvaluationResult.metrics`;
        values within 1e-12 relative of the single-machine ones.

    Raises
    ------
    ValueError
        An unknown measure, or one without a distributed form (the message
        names it and lists those with one); invalid bins.

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 1 (binned CE); Brier 1950 (Brier score);
    Kumar, Liang & Ma 2019, Section 5 (debiased CE); Dimitriadis, Gneiting &
    Jordan 2021 (CORP).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.distributed import threshold
    >>> x = np.random.default_rng(2).dirichlet(np.ones(4), size=300)
    >>> entries = threshold(da.from_array(x, chunks=(100, 4)), np.arange(300) % 4)
    >>> got = measures_by_group(entries, sc.TagGroups.scw(4), ["brier", "ece"])
    >>> sorted(got), len(got["brier"]["groups"])
    (['brier', 'ece'], 1)
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
    """The merged statistics of all entries, then of each group: each pass made
    once, shared by the measures of one :func:`measures_by_group` call."""

    def __init__(self, entries, groups):
        self.entries, self.groups, self._cache = entries, groups, {}

    def get(self, key, compute):
        """``compute()``, once per ``key``."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def tables(self):
        """The merged distinct-score tables (one pass)."""
        return self.get("tables", lambda: set_tables(self.entries, self.groups))

    def bins(self, kw):
        """The bins of a binned measure's arguments ``kw``."""
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
    """One fixed-width pass gives every set's squared errors."""
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
    """Every set's grids in the same passes."""
    def all_sets():
        pooled, per_group = smooth_ece(sets.entries, sets.groups)
        return [pooled] + per_group
    return [None if e is None else m.value_of(e) for e in sets.get("smooth", all_sets)]


def _table_replicates(m, kw, sets):
    """Resamples of the tables, on the workers."""
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
