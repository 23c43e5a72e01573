"""Model selection on dev: the method, the number of TFG groups and the bin count,
chosen by stratified K-fold cross-fitting (lecture notes ``004``, "K-fold": the
out-of-fold scores are pooled, not the per-fold errors averaged).
"""
from dataclasses import dataclass

import numpy as np

from ..core.dispatch import is_distributed_entries, takes_data
from ..core.entries import check_entries
from ..core.groups import TagGroups
from ..core.validation import check_choice, check_positive_int
from ..io.tables import number, plural, summary
from ..metrics.marginal import smce_and_gmce
from .folds import stratified_token_folds
from .grouped import GroupedCalibrator, fold_models
from .registry import METHODS, check_prior_methods, get_method

__all__ = ["METRICS", "SelectionResult", "select"]

#: the measures ``select`` can score out-of-fold predictions with
METRICS = ("smce", "gmce")


@dataclass(frozen=True)
class SelectionResult:
    """What :func:`select` tried and chose.

    Attributes
    ----------
    cv_results : dict of str to list
        One row per candidate, like scikit-learn's ``cv_results_``: ``method``,
        ``n_groups``, ``n_bins`` (None without bins), ``score`` (lower is better)
        and ``rank`` (1 = best; ties share the better rank).
    best_index : int
        The best row (the first of equal scores).
    best_params : dict
        ``method``, ``n_groups`` and ``n_bins`` of the best row.
    best_score : float
    best_calibrator : GroupedCalibrator
        The best set-up, fit on all dev entries.
    metric : str

    Examples
    --------
    See :func:`select`.
    """

    cv_results: dict
    best_index: int
    best_params: dict
    best_score: float
    best_calibrator: GroupedCalibrator
    metric: str

    def __repr__(self):
        best = self.best_params
        return summary(self, f"best {best['method']}", plural(best["n_groups"], "group"),
                       best["n_bins"] is not None and plural(best["n_bins"], "bin"),
                       f"{self.metric.upper()}={number(self.best_score)}",
                       plural(len(self.cv_results["score"]), "candidate"))

    def to_markdown(self):
        """The score table, best first."""
        rows = ["| Rank | Method | Groups | Bins | " + self.metric.upper() + " |",
                "|---|---|---|---|---|"]
        r = self.cv_results
        for i in np.argsort(r["rank"], kind="stable"):
            bins = "—" if r["n_bins"][i] is None else r["n_bins"][i]
            rows.append(f"| {r['rank'][i]} | {METHODS[r['method'][i]].display_name} | "
                        f"{r['n_groups'][i]} | {bins} | {r['score'][i]:.4f} |")
        return "\n".join(rows)


def select(dev_entries, *, train_counts=None, methods=None, n_groups=(1, 5),
           n_bins=(10,), n_folds=5, metric="smce", seed=0, prior=None, tag_index=None):
    """Choose method, TFG groups and bins by stratified K-fold on dev.

    Every combination (a method without bins once) is cross-fitted on the same
    token folds, stratified by the TFG groups of the largest ``n_groups``, and its
    pooled out-of-fold scores are scored with ``metric`` (10 equal-mass bins):
    ``"smce"`` (Kranzlein et al. 2021, eq. 2; the least noisy on a small dev set)
    or ``"gmce"``, the root mean square of GMCE (eq. 3) over those groups. The
    best set-up is refit on all of dev.

    Parameters
    ----------
    dev_entries : Entries or DaskEntries
        Dev entries with their tokens (DaskEntries: the same choice, computed on
        the workers; docs/scale.md).
    train_counts : dict, array_like or str, optional
        Training counts per tag (:meth:`TagGroups.from_counts`); needed for
        ``n_groups`` above 1 (1 is SCW).
    methods : sequence of str, optional
        Registry names (default: all).
    n_groups : sequence of int, default=(1, 5)
        Numbers of TFG groups to try.
    n_bins : sequence of int, default=(10,)
        Bin counts to try for the methods with bins.
    n_folds : int, default=5
    metric : {"smce", "gmce"}, default="smce"
    seed : int, default=0
        Seed of the folds and of seeded methods.
    prior : float, optional
        The application prior of the methods that take one (refused if none does).
    tag_index : mapping or str or path, optional
        For ``train_counts`` keyed by tag names (:meth:`TagGroups.from_counts`).

    Returns
    -------
    SelectionResult

    Examples
    --------
    >>> import sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> dev = make_tagger_outputs(3000, split_seed=1)
    >>> result = sc.select(sc.threshold(dev.scores, dev.gold),
    ...                    train_counts=dev.train_counts, methods=["isotonic", "histogram"],
    ...                    n_groups=[1, 3], n_bins=[5, 10], n_folds=3)
    >>> len(result.cv_results["score"]), result.best_score == min(result.cv_results["score"])
    (6, True)
    """
    if not is_distributed_entries(dev_entries):
        dev_entries = check_entries(dev_entries, "dev_entries")
    metric = check_choice(metric, "metric", METRICS)
    methods = list(METHODS) if methods is None else list(methods)
    candidates = _grid(methods, n_groups, n_bins)
    prior = check_prior_methods(methods, prior)
    n_tags = dev_entries.n_tags
    largest = max(g for _, g, _ in candidates)
    if largest > 1 and train_counts is None:
        raise ValueError(f"n_groups={largest} needs train_counts (TFG groups)")
    groups = {g: TagGroups.scw(n_tags) if g == 1 else
              TagGroups.from_counts(train_counts, g, n_tags=n_tags, tag_index=tag_index)
              for g in sorted({g for _, g, _ in candidates})}
    setups = [_setup(method, groups[g], bins, seed, prior) for method, g, bins in candidates]
    scores = np.asarray(cross_fit_scores(setups, dev_entries, groups[largest], n_folds, seed,
                                         metric))
    best = int(np.argmin(scores))
    method, g, bins = candidates[best]
    rank = (np.searchsorted(np.sort(scores), scores) + 1).tolist()
    cv_results = {"method": [c[0] for c in candidates],
                  "n_groups": [c[1] for c in candidates],
                  "n_bins": [c[2] for c in candidates],
                  "score": scores.tolist(), "rank": rank}
    return SelectionResult(cv_results, best, {"method": method, "n_groups": g, "n_bins": bins},
                           float(scores[best]),
                           _setup(method, groups[g], bins, seed, prior).fit(dev_entries),
                           metric)


def _grid(methods, n_groups, n_bins):
    """The candidates ``(method, G, bins)``, checked (bins None without bins)."""
    n_groups = [check_positive_int(g, "n_groups") for g in n_groups]
    n_bins = [check_positive_int(b, "n_bins") for b in n_bins]
    if not methods or not n_groups or not n_bins:
        raise ValueError("methods, n_groups and n_bins must each name at least one value")
    return [(m, g, b) for m in methods for g in n_groups
            for b in (n_bins if get_method(m).uses_bins else [None])]


def _setup(method, groups, bins, seed, prior):
    """An unfitted GroupedCalibrator of ``method`` over ``groups``."""
    base = get_method(method).build(10 if bins is None else bins, seed, prior)
    return GroupedCalibrator(base, groups)


@takes_data
def cross_fit_scores(setups, entries, groups, n_folds=5, seed=0, metric="smce"):
    """The score of each of :func:`select`'s set-ups on the folds stratified by ``groups``."""
    fold = stratified_token_folds(entries, groups, n_folds, seed)
    return [_score(_out_of_fold(model, entries, fold), metric, groups) for model in setups]


def _out_of_fold(model, entries, fold):
    """``entries`` with each fold's scores calibrated by ``model`` fit on the other folds."""
    out = entries.score.copy()
    for held, fitted in fold_models(model, entries, fold):
        out[held] = fitted.transform(entries.take(held)).score
    return entries.with_scores(out)


def _score(entries, metric, groups):
    """``metric`` of calibrated entries (10 equal-mass bins)."""
    return metric_value(metric, *smce_and_gmce(entries, groups, n_bins=10,
                                               pooled=metric == "smce"))


def metric_value(metric, pooled, per_group):
    """The score :func:`select` minimises, from SMCE and the groups' GMCEs (None: no entries)."""
    if metric == "smce":
        return pooled.value
    return float(np.sqrt(np.mean([c.value ** 2 for c in per_group if c is not None])))
