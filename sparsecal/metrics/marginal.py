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

from ..core.binning import argsort_scores, bin_statistics, equal_mass_bin_starts
from ..core.entries import check_entries
from ..core.groups import check_groups, partition_by_group, split_sorted_by_group
from ..core.progress import ProgressCounter
from ..core.validation import check_positive_int, check_probabilities
from .binary import calibration_error, check_debias, sorted_calibration_error
from .ce import check_norm
from .debiased import debiased_terms
from .intervals import ConfidenceInterval
from ..io.tables import Table
from ..core.dispatch import distributed_form

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


def smce(entries, *, n_bins=None, bin_size=None, ci=None, binning="equal-mass", norm=2,
         debias=False):
    """Shared marginal calibration error (SMCE).

    CE_2 over the thresholded entries of all tags pooled, with equal-mass bins:
    every above-threshold (token, tag) score is one binary prediction, labelled 1
    when the tag is the token's gold tag.

    Parameters
    ----------
    entries : Entries
        From :func:`sparsecal.threshold`.
    n_bins, bin_size : int, optional
        Equal-mass bins by count or size (default 10 bins, as in the paper).
    ci : None, {"simulation", "bootstrap", "score"} or ConfidenceInterval, default=None
        See :func:`sparsecal.calibration_error`.
    binning : {"equal-mass", "fixed"}, default="equal-mass"
        As in :func:`sparsecal.calibration_error` (``bin_size`` for
        equal-mass bins only).
    norm : {2, 1, inf}, default=2
        The paper's CE_2 by default; 1 gives an ECE, inf the maximum.
    debias : bool, default=False
        Kumar et al.'s debiased CE_2 (``norm=2``; its interval is
        ``ci="score"``), as :func:`sparsecal.calibration_error`.

    Returns
    -------
    CalibrationError

    Raises
    ------
    TypeError
        If ``entries`` is not an ``Entries``.
    ValueError
        No entries, both or invalid ``n_bins``/``bin_size``, or an invalid ``ci``.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.2, eq. 2; binning: Nguyen &
    O'Connor 2015, Algorithm 1.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import threshold
    >>> from sparsecal.datasets.synthetic import make_tagger_outputs
    >>> data = make_tagger_outputs(2000, n_tags=40, split_seed=1)
    >>> entries = threshold(data.scores, data.gold, 0.01)
    >>> res = smce(entries, ci="simulation")
    >>> res.n == len(entries), bool(res.ci_low < res.value < res.ci_high)
    (True, True)
    """
    if (cluster := distributed_form(smce, locals())) is not None:
        return cluster()
    entries = check_entries(entries)
    return calibration_error(entries.score, entries.label, n_bins=n_bins,
                             bin_size=bin_size, ci=ci, binning=binning, norm=norm,
                             debias=debias)


def gmce(entries, groups, *, n_bins=None, bin_size=None, ci=None, progress=None,
         binning="equal-mass", norm=2, debias=False):
    """Grouped marginal calibration error (GMCE), one per tag group.

    SMCE restricted to the entries of the tags of each group (e.g. tag frequency
    groups, :meth:`sparsecal.TagGroups.from_counts`).

    Parameters
    ----------
    entries : Entries
    groups : TagGroups
        Over the same tagset as ``entries``.
    n_bins, bin_size : int, optional
        Equal-mass bins per group (default 10 bins).
    ci : None, {"simulation", "bootstrap"} or ConfidenceInterval, default=None
        Applied to every group; an int ``random_state`` gives every group the
        same stream, a Generator is drawn from group after group.
    progress : callable, optional
        Called as ``progress(groups_done, n_groups)`` after each group.
    binning, norm, debias
        As in :func:`smce`.

    Returns
    -------
    list of CalibrationError or None
        One per group (index = group); None for a group with no entries.

    Raises
    ------
    TypeError
        If ``entries`` is not an ``Entries``, or ``progress`` is not callable.
    ValueError
        No entries, ``groups`` of another tagset, invalid bins or ``ci``.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.3, eq. 3.

    Examples
    --------
    >>> from sparsecal import TagGroups, threshold
    >>> from sparsecal.datasets.synthetic import make_tagger_outputs
    >>> data = make_tagger_outputs(2000, n_tags=40, split_seed=1)
    >>> entries = threshold(data.scores, data.gold, 0.01)
    >>> groups = TagGroups.from_counts(data.train_counts, 3, n_tags=40)
    >>> [g.n for g in gmce(entries, groups)] == [
    ...     int(np.isin(entries.tag, groups.members(g)).sum()) for g in range(3)]
    True
    """
    if (cluster := distributed_form(gmce, locals())) is not None:
        return cluster()
    return smce_and_gmce(entries, groups, n_bins=n_bins, bin_size=bin_size, ci=ci,
                         pooled=False, progress=progress, binning=binning, norm=norm,
                         debias=debias)[1]


def smce_and_gmce(entries, groups, *, n_bins=None, bin_size=None, ci=None, pooled=True,
                  progress=None, binning="equal-mass", norm=2, debias=False):
    """SMCE and every GMCE from one sort of the entries.

    The entries are sorted once (stably, by score); the entries of a group, in
    that order, are the group's own stable order, so a stable partition of the
    sorted ranks by group gives every group's sorted scores without sorting
    again. The results equal :func:`smce` and :func:`gmce`. Fixed-width bins
    need no sort: each group's entries are binned as they are.

    Parameters
    ----------
    entries : Entries
    groups : TagGroups
        Over the same tagset as ``entries``.
    n_bins, bin_size : int, optional
        Equal-mass bins (default 10 bins), pooled and per group.
    ci : None, {"simulation", "bootstrap"} or ConfidenceInterval, default=None
        As in :func:`gmce`.
    pooled : bool, default=True
        Also the SMCE (else None in its place).
    progress : callable, optional
        Called as ``progress(done, total)`` after each calibration error (the
        SMCE, then each group's GMCE).
    binning, norm, debias
        As in :func:`smce`.

    Returns
    -------
    smce : CalibrationError or None
    gmce : list of CalibrationError or None
        One per group; None for a group with no entries.

    Raises
    ------
    TypeError, ValueError
        As :func:`gmce`; an invalid ``progress`` before any work.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.2-3.3, eqs. 2-3; Nguyen &
    O'Connor 2015, Algorithm 1 (the sort).

    Examples
    --------
    >>> from sparsecal import TagGroups, threshold
    >>> from sparsecal.datasets.synthetic import make_tagger_outputs
    >>> data = make_tagger_outputs(2000, n_tags=40, split_seed=1)
    >>> entries = threshold(data.scores, data.gold, 0.01)
    >>> groups = TagGroups.from_counts(data.train_counts, 3, n_tags=40)
    >>> pooled, per_group = smce_and_gmce(entries, groups)
    >>> pooled.value == smce(entries).value, len(per_group)
    (True, 3)
    """
    if (cluster := distributed_form(smce_and_gmce, locals())) is not None:
        return cluster()
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
    """Check the binning vocabulary of :func:`smce_and_gmce` before any work.

    Parameters
    ----------
    n_bins, bin_size, binning, norm, debias
        As :func:`smce_and_gmce` takes them.
    spec : ConfidenceInterval or None
        Resolved.

    Returns
    -------
    n_bins : int or None
        10 when neither ``n_bins`` nor ``bin_size`` is given.
    norm : float
        2.0, 1.0 or inf.

    Raises
    ------
    TypeError, ValueError
        As :func:`~sparsecal.metrics.calibration_error` for the same arguments.
    """
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
    """:func:`smce_and_gmce` with fixed-width bins: each group's entries, in
    entry order, binned by value (no sort)."""
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
    """Kumar et al.'s marginal CE over the tags with enough data; see :func:`mce`.

    Attributes
    ----------
    value : float
        ``sqrt(mean over evaluated tags of CE_tag^2)``; with ``debias``,
        ``sqrt(max(mean of D_tag, 0))``, ``D_tag`` a tag's debiased square.
    per_tag : dict
        tag index -> CalibrationError for every evaluated tag.
    too_few : dict
        tag index -> number of entries, for tags with entries but fewer than
        ``min_entries`` (not evaluated).
    min_entries : int
        The threshold used.
    debias : bool
        Whether the per-tag CEs and ``value`` are the debiased ones.

    Examples
    --------
    >>> res = MarginalCalibrationError(0.1, {}, {3: 12}, 100)
    >>> float(res), res.too_few
    (0.1, {3: 12})
    """

    value: float
    per_tag: dict
    too_few: dict
    min_entries: int
    debias: bool = False

    def __float__(self):
        return float(self.value)

    def _columns(self):
        """One row per evaluated tag (ascending), then each tag with too few
        entries (value None)."""
        tags = sorted(self.per_tag)
        few = sorted(self.too_few)
        ce = [self.per_tag[t] for t in tags]
        return {"tag": tags + few, "evaluated": [True] * len(tags) + [False] * len(few),
                "n": [c.n for c in ce] + [self.too_few[t] for t in few],
                "ce": [c.value for c in ce] + [None] * len(few),
                "ci_low": [c.ci_low for c in ce] + [None] * len(few),
                "ci_high": [c.ci_high for c in ce] + [None] * len(few)}


def mce(entries, *, min_entries=None, n_bins=None, bin_size=None, binning=None, ci=None,
        debias=True):
    """Marginal calibration error (MCE), per tag.

    Every tag with at least ``min_entries`` thresholded entries gets its own
    equal-mass CE_2; MCE is the root mean of their squares. Tags with fewer
    entries are listed in ``too_few`` rather than silently dropped (with a sparse
    tagset most tags lack the data for a per-tag estimate, Kranzlein et al. 3.2).

    By default each tag's CE is Kumar et al.'s debiased CE_2 (its square less
    the bins' sampling variance) and MCE is ``sqrt(max(mean of the debiased
    squares, 0))``, in bins of :data:`DEFAULT_BIN_SIZE` (200) entries, a tag
    needing two bins' worth (400): the plug-in per-tag CE_2 (``debias=False``)
    is mostly sampling noise at these sizes, so a calibrated tagger scored
    close to a miscalibrated one (docs/metrics.md, "MCE").

    Parameters
    ----------
    entries : Entries
    min_entries : int, optional
        Fewest entries for a tag to be evaluated (default
        ``2 * DEFAULT_BIN_SIZE`` = 400).
    n_bins, bin_size : int, optional
        Bins per tag, by count or (equal-mass bins) by size; at most one.
        Default ``bin_size=DEFAULT_BIN_SIZE`` (a short last bin merged into
        the one before it, docs/architecture.md, Semantics 2).
    binning : {"equal-mass", "fixed"}, optional
        As :func:`sparsecal.calibration_error`'s (default equal-mass).
    ci : None, {"score", "simulation", "bootstrap"} or ConfidenceInterval, default=None
        An interval for every per-tag CE (not for MCE itself): "score" with
        ``debias`` (the debiased CE's), "simulation" or "bootstrap" without.
    debias : bool, default=True
        Kumar et al.'s debiased per-tag CE_2 and MCE (False: the plug-in ones,
        the default before issue 26).

    Returns
    -------
    MarginalCalibrationError

    Raises
    ------
    TypeError
        If ``entries`` is not an ``Entries``.
    ValueError
        No entries, ``min_entries`` not a positive integer, no tag with
        ``min_entries`` entries, both or invalid ``n_bins``/``bin_size``, or an
        invalid ``ci`` (or one that is not the score interval with ``debias``).

    Warns
    -----
    UserWarning
        Without ``debias``, naming the evaluated tags whose smallest
        equal-mass bin holds fewer than :data:`DEFAULT_BIN_SIZE` entries (a
        smaller ``min_entries`` or ``bin_size``, or ``n_bins`` too many).

    References
    ----------
    Kumar, Liang & Ma 2019 (marginal calibration error; the debiased square,
    Section 5); Kranzlein, Liu & Schneider 2021, Section 2.1, eq. 1; bin size:
    Nguyen & O'Connor 2015, Section 3.2, and Nguyen's thesis, Section 4.3.2.

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
    if (cluster := distributed_form(mce, locals())) is not None:
        return cluster()
    entries = check_entries(entries)
    spec = ConfidenceInterval.resolve(ci)
    check_debias(debias, 2.0, spec)
    min_entries, bins = _mce_settings(min_entries, n_bins, bin_size, binning)
    n_tags = entries.n_tags if entries.n_tags is not None else int(entries.tag.max()) + 1
    perm, offsets = partition_by_group(entries.tag, np.arange(n_tags), n_tags)
    sizes = np.diff(offsets)
    enough, too_few = _mce_tags(sizes, min_entries, bins, debias)
    per_tag = {}
    for t in enough:
        idx = perm[offsets[t]:offsets[t + 1]]
        per_tag[int(t)] = calibration_error(entries.score[idx], entries.label[idx],
                                            ci=spec, debias=debias, **bins)
    return MarginalCalibrationError(_mce_value(per_tag.values(), debias), per_tag, too_few,
                                    min_entries, bool(debias))


def _mce_value(per_tag, debias):
    """MCE of the per-tag CEs: ``sqrt(mean CE_tag^2)``, or with ``debias``
    ``sqrt(max(mean D_tag, 0))`` from each tag's bins (the debiased squares
    averaged before clipping, so the negative squares of calibrated tags
    offset their positive noise). Shared with :func:`sparsecal.distributed.mce`."""
    if debias:
        squares = [float(w @ t) for w, t, _ in (debiased_terms(c.bins) for c in per_tag)]
        return float(np.sqrt(max(np.mean(squares), 0.0)))
    return float(np.sqrt(np.mean([c.value ** 2 for c in per_tag])))


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
    """Warn, naming them, about the ``tags`` (of ``sizes`` entries) whose
    smallest equal-mass bin holds fewer than DEFAULT_BIN_SIZE entries."""
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
                      "2015, Section 3.2)", UserWarning, stacklevel=4)
