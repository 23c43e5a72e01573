"""Gradient-boosted trees as plain arrays: fitted by scikit-learn, kept and
evaluated without it, so a saved forecaster is arrays, never a pickle.

A binary ``HistGradientBoostingClassifier`` predicts ``sigmoid(baseline +
sum_trees leaf_value(x))`` (Friedman 2001); :func:`tree_raw_predict` walks one
level of every tree at a time, and :func:`check_tree_arrays` makes sure a
loaded copy's walk ends.
"""
from dataclasses import dataclass

import numpy as np

__all__ = ["check_tree_arrays", "tree_arrays_from_sklearn", "tree_raw_predict"]

#: the arrays of a :class:`TreeArrays`, in order: name -> dtype kind
TREE_FIELDS = {"tree_start": "iu", "feature": "iu", "threshold": "f", "left": "iu",
               "right": "iu", "is_leaf": "biu", "value": "f"}


@dataclass(frozen=True, eq=False)
class TreeArrays:
    """The nodes of a sum of binary regression trees, tree after tree.

    Attributes
    ----------
    tree_start : ndarray of int64, shape (n_trees + 1,)
        Tree ``i`` holds nodes ``tree_start[i] .. tree_start[i + 1] - 1``, root first.
    feature, threshold : ndarray, shape (n_nodes,)
        ``x[feature] <= threshold`` goes ``left``, otherwise ``right``.
    left, right : ndarray of int64, shape (n_nodes,)
        Children (later nodes of the same tree; the node itself at leaves).
    is_leaf : ndarray of bool, shape (n_nodes,)
    value : ndarray of float64, shape (n_nodes,)
        A leaf's contribution to the raw prediction.
    """

    tree_start: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    is_leaf: np.ndarray
    value: np.ndarray

    @property
    def n_trees(self):
        return self.tree_start.shape[0] - 1

    def arrays(self):
        return {name: getattr(self, name) for name in TREE_FIELDS}


def tree_arrays_from_sklearn(model):
    """``(trees, baseline)`` of a fitted binary ``HistGradientBoostingClassifier`` (no
    categorical features).
    """
    predictors = [p[0] for p in model._predictors]
    sizes = np.array([p.nodes.shape[0] for p in predictors], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(sizes)])
    nodes = np.concatenate([p.nodes for p in predictors])   # max_iter >= 1: a tree at least
    offset = np.repeat(start[:-1], sizes)
    leaf = nodes["is_leaf"].astype(bool)
    own = np.arange(nodes.shape[0], dtype=np.int64)
    trees = TreeArrays(
        tree_start=start,
        feature=np.where(leaf, 0, nodes["feature_idx"]).astype(np.int64),
        threshold=np.where(leaf, 0.0, nodes["num_threshold"]).astype(np.float64),
        left=np.where(leaf, own, nodes["left"].astype(np.int64) + offset),
        right=np.where(leaf, own, nodes["right"].astype(np.int64) + offset),
        is_leaf=leaf,
        value=np.where(leaf, nodes["value"], 0.0).astype(np.float64))
    return trees, float(np.ravel(model._baseline_prediction)[0])


def tree_raw_predict(trees, x):
    """``sum_trees leaf_value(x)`` for each row of a finite ``x`` (no baseline)."""
    n = x.shape[0]
    rows = np.arange(n)
    node = np.repeat(trees.tree_start[:-1][None, :], n, axis=0)     # [n, n_trees]
    while True:
        inner = ~trees.is_leaf[node]
        if not inner.any():
            break
        r, t = np.nonzero(inner)
        at = node[r, t]
        go_left = x[rows[r], trees.feature[at]] <= trees.threshold[at]
        node[r, t] = np.where(go_left, trees.left[at], trees.right[at])
    return trees.value[node].sum(axis=1)


def check_tree_arrays(arrays, n_features, name):
    """The :class:`TreeArrays` in ``arrays``, checked so that :func:`tree_raw_predict` ends."""
    from ..io.calibrators import check_state_array

    a = {key: check_state_array(arrays, key, name(key), kinds)
         for key, kinds in TREE_FIELDS.items()}
    n_nodes = a["feature"].shape[0]
    for key in TREE_FIELDS:
        if key != "tree_start" and a[key].shape[0] != n_nodes:
            raise ValueError(f"{name(key)} has {a[key].shape[0]} values, "
                             f"{name('feature')} {n_nodes}")
    start = a["tree_start"].astype(np.int64)
    if start.shape[0] < 1 or start[0] != 0 or start[-1] != n_nodes \
            or (np.diff(start) <= 0).any():
        raise ValueError(f"{name('tree_start')} must increase from 0 to the number of "
                         f"nodes ({n_nodes})")
    leaf = a["is_leaf"].astype(bool)
    own = np.arange(n_nodes, dtype=np.int64)
    end = np.repeat(start[1:], np.diff(start))
    _first_bad(~leaf & ((a["feature"] < 0) | (a["feature"] >= n_features)), a["feature"],
               name("feature"), f"must lie in [0, {n_features})")
    _first_bad(~leaf & np.isnan(a["threshold"]), a["threshold"], name("threshold"),
               "is NaN")
    children = {}
    for key in ("left", "right"):
        bad = ~leaf & ((a[key] <= own) | (a[key] >= end))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name(key)}[{i}] = {a[key][i]} must be a later node of the "
                             f"same tree ({i + 1} .. {end[i] - 1})")
        children[key] = np.where(leaf, own, np.minimum(a[key], n_nodes).astype(np.int64))
    _first_bad(leaf & ~np.isfinite(a["value"]), a["value"], name("value"), "is not finite")
    feature = np.where(leaf, 0, np.clip(a["feature"], 0, n_features)).astype(np.int64)
    return TreeArrays(start, feature, np.where(leaf, 0.0, a["threshold"]).astype(np.float64),
                      children["left"], children["right"], leaf,
                      np.where(leaf, a["value"], 0.0).astype(np.float64))


def _first_bad(bad, values, name, problem):
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{i}] = {values[i].item()!r} {problem}")
