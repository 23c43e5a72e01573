"""Marginal calibration errors of a tagger's thresholded entries.

- SMCE / GMCE (Kranzlein, Liu & Schneider 2021, eqs. 2-3): CE_2 over the
  thresholded entries of all tags pooled / of the tags of one group.
- MCE (Kumar, Liang & Ma 2019): root mean over tags of the per-tag squared CE_2,
  over the tags with enough entries; tags lacking data are reported. By default
  each tag's square is Kumar et al.'s debiased one and their mean is clipped at
  0 once (docs/metrics.md, "MCE").
"""
from dataclasses import dataclass

import warnings

import numpy as np

from ..core.binning import (BinStats, argsort_scores, bin_statistics, equal_mass_bin_starts,
                            equal_mass_bins_sorted, segment_bin_starts)
from ..core.entries import check_entries
from ..core.groups import (TagGroups, check_groups, partition_by_group,
                           split_sorted_by_group)
from ..core.progress import ProgressCounter
from ..core.validation import check_positive_int, check_probabilities
from .binary import (calibration_error, check_debias, error_from_bins,
                     sorted_calibration_error)
from .ce import check_norm, segment_ce
from .debiased import debiased_squares
from .intervals import ConfidenceInterval
from .._docs import fill_doc
from ..io.tables import Table, number, plural, summary
from ..core.dispatch import takes_data

__all__ = ["DEFAULT_BIN_SIZE", "PER_TAG_BINNING", "MarginalCalibrationError", "gmce", "mce", "smce",
           "smce_and_gmce"]

#: Entries per equal-mass bin of a plug-in per-tag CE (and fewest a bin should
#: hold): Nguyen & O'Connor 2015, Section 3.2, use bins of at least 200 points so
#: that the normal approximation of Algorithm 2 holds; smaller bins inflate CE_2
#: with sampling noise (Nguyen's thesis, Section 4.3.2). See docs/metrics.md.
DEFAULT_BIN_SIZE = 200
#: The bins of a per-tag CE (:func:`mce`'s default, debiased or not): equal-mass
#: bins of :data:`DEFAULT_BIN_SIZE` entries (docs/metrics.md, "MCE").
PER_TAG_BINNING = {"bin_size": DEFAULT_BIN_SIZE}


@takes_data
@fill_doc
def smce(entries, *, n_bins=None, bin_size=None, ci=None, binning="equal-mass", norm=2,
         debias=False):
    """Shared marginal calibration error (SMCE): CE_2 over the entries of all tags
    pooled, each (token, tag) score one binary prediction.

    Parameters
    ----------
    {entries}
    {binning}
    {ci}
    {norm}
    {debias}

    Returns
    -------
    CalibrationError

    Examples
    --------
    >>> from sparsecal import Entries
    >>> round(smce(Entries([0.9, 0.8, 0.3, 0.2], [0, 1, 0, 1], [1, 1, 0, 0]), n_bins=2).value, 4)
    0.2062
    """
    entries = check_entries(entries)
    return calibration_error(entries.score, entries.label, n_bins=n_bins,
                             bin_size=bin_size, ci=ci, binning=binning, norm=norm,
                             debias=debias)


@takes_data
@fill_doc
def gmce(entries, groups, *, n_bins=None, bin_size=None, ci=None, progress=None,
         binning="equal-mass", norm=2, debias=False):
    """Grouped marginal calibration error (GMCE): the SMCE of each tag group's entries.

    Parameters
    ----------
    {entries}
    {groups}
    n_bins, bin_size, binning, ci, norm, debias
        As in :func:`smce`, for every group.
    progress : callable, optional
        Called as ``progress(groups_done, n_groups)``.

    Returns
    -------
    list of CalibrationError or None
        One per group; None for a group without entries.

    Examples
    --------
    >>> from sparsecal import Entries, TagGroups
    >>> e = Entries([0.9, 0.8, 0.3, 0.2, 0.6, 0.1], [0, 1, 0, 1, 1, 0], [1, 1, 0, 0, 1, 0],
    ...             n_tags=2)
    >>> [round(g.value, 4) for g in gmce(e, TagGroups([0, 1]), n_bins=2)]
    [0.1, 0.2708]
    """
    return smce_and_gmce(entries, groups, n_bins=n_bins, bin_size=bin_size, ci=ci,
                         pooled=False, progress=progress, binning=binning, norm=norm,
                         debias=debias)[1]


@takes_data
@fill_doc
def smce_and_gmce(entries, groups, *, n_bins=None, bin_size=None, ci=None, pooled=True,
                  progress=None, binning="equal-mass", norm=2, debias=False):
    """SMCE (None unless ``pooled``) and every GMCE, from one sort of the entries.

    Parameters
    ----------
    {entries}
    {groups}
    n_bins, bin_size, ci, binning, norm, debias, progress
        As in :func:`gmce`.
    pooled : bool, default=True

    Returns
    -------
    smce : CalibrationError or None
    gmce : list of CalibrationError or None

    Examples
    --------
    >>> from sparsecal import Entries, TagGroups
    >>> e = Entries([0.9, 0.8, 0.3, 0.2], [0, 1, 2, 1], [1, 1, 0, 0], n_tags=3)
    >>> pooled, per_group = smce_and_gmce(e, TagGroups([0, 1, 2]), n_bins=2)
    >>> pooled.value == smce(e, n_bins=2).value, len(per_group)
    (True, 3)
    """
    entries = check_entries(entries)
    check_groups(groups, entries.n_tags)
    spec = ConfidenceInterval.resolve(ci)
    n_bins, norm = check_ce_options(n_bins, bin_size, binning, norm, debias, spec)
    kw = dict(n_bins=n_bins, bin_size=bin_size, ci=spec, norm=norm, debias=debias)
    counter = ProgressCounter(progress, int(pooled) + groups.n_groups)
    if binning == "fixed":
        return _fixed_width(entries, groups, pooled, counter, kw)
    perm, sorted_x = argsort_scores(check_probabilities(entries.score, "entries.score"))
    sorted_y, group_x, group_y, offsets = split_sorted_by_group(entries, groups, perm,
                                                                sorted_x)
    del perm
    shared = None
    if pooled:
        shared = sorted_calibration_error(sorted_x, sorted_y, **kw)
        counter.advance()
    per_group = []
    for g in range(groups.n_groups):
        part = slice(offsets[g], offsets[g + 1])
        per_group.append(None if offsets[g] == offsets[g + 1] else
                         sorted_calibration_error(group_x[part], group_y[part], **kw))
        counter.advance()
    return shared, per_group


def check_ce_options(n_bins, bin_size, binning, norm, debias, spec):
    """``(n_bins, norm)`` of :func:`smce_and_gmce`'s options, checked before any work."""
    norm = check_norm(norm)
    check_debias(debias, norm, spec)
    if n_bins is None and bin_size is None:
        n_bins = 10
    if binning == "equal-mass":   # the default path: the bin count alone, cheaply
        equal_mass_bin_starts(1, n_bins=n_bins, bin_size=bin_size)
    else:   # an unknown binning, or fixed-width bins (no bin_size)
        bin_statistics([0.5], [0], binning=binning, n_bins=n_bins, bin_size=bin_size)
    return n_bins, norm


def _fixed_width(entries, groups, pooled, counter, kw):
    """:func:`smce_and_gmce` with fixed-width bins (no sort)."""
    kw = dict(kw, binning="fixed")
    shared = None
    if pooled:
        shared = calibration_error(entries.score, entries.label, **kw)
        counter.advance()
    perm, offsets = groups.partition(entries)
    per_group = []
    for g in range(groups.n_groups):
        idx = perm[offsets[g]:offsets[g + 1]]
        per_group.append(calibration_error(entries.score[idx], entries.label[idx], **kw)
                         if idx.size else None)
        counter.advance()
    return shared, per_group


@dataclass(frozen=True)
class MarginalCalibrationError(Table):
    """Kumar et al.'s marginal CE (:func:`mce`): ``value``, the ``per_tag``
    CalibrationError of every evaluated tag, the entries of the ``too_few``
    others, ``min_entries``, and whether the CEs are debiased (``debias``).

    Examples
    --------
    See :func:`mce`.
    """

    value: float
    per_tag: dict
    too_few: dict
    min_entries: int
    debias: bool = False

    def __float__(self):
        return float(self.value)

    def __repr__(self):
        return summary(self, f"value={number(self.value)}",
                       *(["debiased"] if self.debias else []),
                       plural(len(self.per_tag), "tag"),
                       f"{len(self.too_few)} with fewer than {self.min_entries} entries")

    def _columns(self):
        tags = sorted(self.per_tag)
        few = sorted(self.too_few)
        ce = [self.per_tag[t] for t in tags]
        return {"tag": tags + few, "evaluated": [True] * len(tags) + [False] * len(few),
                "n": [c.n for c in ce] + [self.too_few[t] for t in few],
                "ce": [c.value for c in ce] + [None] * len(few),
                "ci_low": [c.ci_low for c in ce] + [None] * len(few),
                "ci_high": [c.ci_high for c in ce] + [None] * len(few)}


@takes_data
@fill_doc
def mce(entries, *, min_entries=None, n_bins=None, bin_size=None, binning=None, ci=None,
        debias=True):
    """Marginal calibration error (MCE): over the tags with at least ``min_entries``
    entries (the others are in ``too_few``), ``sqrt(max(mean of the per-tag
    debiased CE_2 squares, 0))`` (Kumar et al.'s debiased estimate, clipped once),
    or with ``debias=False`` the root mean square of the plug-in per-tag CE_2,
    which at these sizes is mostly sampling noise (docs/metrics.md, "MCE").

    Parameters
    ----------
    {entries}
    min_entries : int, optional
        Default ``2 * DEFAULT_BIN_SIZE``.
    n_bins, bin_size : int, optional
        Bins per tag (default ``bin_size=DEFAULT_BIN_SIZE``).
    binning : {"equal-mass", "fixed"}, optional
        As :func:`calibration_error`'s.
    ci : None, str or ConfidenceInterval, default=None
        For every per-tag CE: "score" with ``debias``, "simulation" or
        "bootstrap" without.
    debias : bool, default=True

    Returns
    -------
    MarginalCalibrationError

    Examples
    --------
    >>> from sparsecal import threshold
    >>> from sparsecal.datasets.synthetic import make_tagger_outputs
    >>> data = make_tagger_outputs(4000, n_tags=40, split_seed=1)
    >>> res = mce(threshold(data.scores, data.gold, 0.01), ci="score")
    >>> bool(res.per_tag) and bool(res.too_few), res.min_entries, res.debias
    (True, 400, True)
    >>> ce = res.per_tag[0]
    >>> ce.ci_method, ce.ci_low <= ce.value <= ce.ci_high
    ('score', True)
    """
    entries = check_entries(entries)
    spec = ConfidenceInterval.resolve(ci)
    check_debias(debias, 2.0, spec)
    min_entries, bins = _mce_settings(min_entries, n_bins, bin_size, binning)
    n_tags = entries.n_tags if entries.n_tags is not None else int(entries.tag.max()) + 1
    if bins.get("binning", "equal-mass") == "fixed":
        perm, offsets = partition_by_group(entries.tag, np.arange(n_tags), n_tags)
        enough, too_few = _mce_tags(np.diff(offsets), min_entries, bins, debias)
        per_tag = {int(t): calibration_error(entries.score[perm[offsets[t]:offsets[t + 1]]],
                                             entries.label[perm[offsets[t]:offsets[t + 1]]],
                                             ci=spec, debias=debias, **bins) for t in enough}
        squares = _mce_squares(*stack_bins([c.bins for c in per_tag.values()]), debias)
    else:   # every tag's bins from one remembered sort and one pass
        perm, sorted_x = argsort_scores(check_probabilities(entries.score, "entries.score"))
        _, tag_x, tag_y, offsets = split_sorted_by_group(
            entries, TagGroups.per_tag(n_tags), perm, sorted_x)
        enough, too_few = _mce_tags(np.diff(offsets), min_entries, bins, debias)
        per_tag, squares = _equal_mass_per_tag(tag_x, tag_y, offsets, enough, bins, spec,
                                               debias)
    return MarginalCalibrationError(_mce_value(squares), per_tag, too_few, min_entries,
                                    bool(debias))


def _equal_mass_per_tag(tag_x, tag_y, offsets, tags, bins, spec, debias):
    """The CalibrationError of each of ``tags`` (its sorted scores and labels at
    ``offsets[t]:offsets[t + 1]`` of ``tag_x``, ``tag_y``) and their MCE squares:
    the bins of every tag in one pass, their errors in one vectorised step."""
    sizes = np.diff(offsets)
    present = np.flatnonzero(sizes)   # consecutive segments of ranks, as the split lies
    starts, first = segment_bin_starts(sizes[present], bins.get("n_bins"),
                                       bins.get("bin_size"))
    every = equal_mass_bins_sorted(tag_x, tag_y, None, starts)
    seg = np.searchsorted(present, tags)
    k = first[seg + 1] - first[seg]
    tag_first = np.concatenate(([0], np.cumsum(k)))
    keep = np.arange(tag_first[-1]) + np.repeat(first[seg] - tag_first[:-1], k)
    stats = BinStats(*(getattr(every, f)[keep] for f in _SUMS))
    squares = _mce_squares(stats, tag_first[:-1], debias)
    values = (np.sqrt(np.maximum(squares, 0.0)) if debias
              else segment_ce(stats, tag_first[:-1], 2.0)).tolist()
    arrays = [getattr(stats, f) for f in _SUMS]
    begin, end, tag_first = offsets[tags].tolist(), offsets[tags + 1].tolist(), tag_first.tolist()
    per_tag = {}
    for i, t in enumerate(tags.tolist()):
        a, b = begin[i], end[i]
        order = None if spec is None else (np.arange(b - a), tag_x[a:b])
        tag_bins = BinStats(*(x[tag_first[i]:tag_first[i + 1]] for x in arrays))
        per_tag[t] = error_from_bins(tag_bins, tag_x[a:b], tag_y[a:b], order, 2.0, spec,
                                     debias, values[i])
    return per_tag, squares


#: The per-bin arrays of a BinStats of equal-mass bins.
_SUMS = ("count", "sum_score", "sum_label", "lower", "upper")


def stack_bins(bins):
    """One BinStats of the bins of several sets (their ``edges`` dropped) and where
    each set's bins start in it."""
    starts = np.concatenate(([0], np.cumsum([b.count.shape[0] for b in bins])[:-1]))
    return BinStats(*(np.concatenate([getattr(b, f) for b in bins]) for f in _SUMS)), starts


def _mce_squares(stats, starts, debias):
    """Each tag's squared CE of :func:`mce` from its bins (the segments ``starts`` of
    ``stats``): Kumar et al.'s debiased ``D`` or the plug-in CE_2 squared."""
    return debiased_squares(stats, starts) if debias else segment_ce(stats, starts, 2.0) ** 2


def _mce_value(squares):
    """MCE of the per-tag squares: ``sqrt(max(mean, 0))`` (the debiased squares are
    averaged before clipping, so the negative squares of calibrated tags offset
    their positive noise). Shared with :func:`sparsecal.distributed.mce`."""
    return float(np.sqrt(max(float(np.mean(squares)), 0.0)))


def _mce_settings(min_entries, n_bins, bin_size, binning):
    """:func:`mce`'s checked ``min_entries`` (default 400) and bins as
    :func:`~sparsecal.metrics.calibration_error` takes them (default
    :data:`PER_TAG_BINNING`). Shared with :func:`sparsecal.distributed.mce`."""
    bins = {"n_bins": n_bins, "bin_size": bin_size}
    if binning is not None:
        bins["binning"] = binning
    if n_bins is None and bin_size is None and binning != "fixed":
        bins.update(PER_TAG_BINNING)
    kind = bins.get("binning", "equal-mass")
    if kind == "equal-mass":
        equal_mass_bin_starts(1, n_bins=bins.get("n_bins"), bin_size=bins.get("bin_size"))
    else:   # checks the binning's name and the fixed-width bins, as calibration_error
        bin_statistics([0.5], [0], binning=kind, n_bins=bins.get("n_bins"),
                       bin_size=bins.get("bin_size"))
    return check_positive_int(2 * DEFAULT_BIN_SIZE if min_entries is None else min_entries,
                              "min_entries"), bins


def _mce_tags(sizes, min_entries, bins, debias):
    """The tags :func:`mce` evaluates, given the entries per tag ``sizes``:
    ``(enough, too_few)``, the tags with ``min_entries`` entries (ascending) and
    ``{tag: entries}`` of the other tags with entries; warns about small
    plug-in bins. Raises ValueError if no tag has ``min_entries`` entries."""
    present = np.flatnonzero(sizes)
    enough = present[sizes[present] >= min_entries]
    too_few = {int(t): int(sizes[t]) for t in present[sizes[present] < min_entries]}
    if not enough.size:
        raise ValueError(f"no tag has at least min_entries={min_entries} entries")
    if not debias and bins.get("binning", "equal-mass") == "equal-mass":
        _warn_small_bins(enough, sizes[enough], bins.get("n_bins"), bins.get("bin_size"))
    return enough, too_few


def _warn_small_bins(tags, sizes, n_bins, bin_size):
    """Warn about the ``tags`` whose smallest bin is under DEFAULT_BIN_SIZE entries."""
    if bin_size is not None:
        smallest = np.minimum(sizes, bin_size)   # a short last bin is merged
    else:
        smallest = sizes // np.minimum(sizes, n_bins)
    small = tags[smallest < DEFAULT_BIN_SIZE]
    if small.size:
        shown = ", ".join(str(int(t)) for t in small[:10])
        warnings.warn(f"{small.size} tag(s) ({shown}{', ...' if small.size > 10 else ''}) "
                      f"have bins of fewer than {DEFAULT_BIN_SIZE} entries, the default "
                      "bin size: their CE is inflated by sampling noise (Nguyen & O'Connor "
                      "2015, Section 3.2)", UserWarning, stacklevel=5)
