"""The forecaster of Jagannatha & Yu (2020): gradient-boosted trees over event features."""
import numbers
from collections.abc import Mapping

import numpy as np

from .._extras import require
from ..core.threads import check_n_threads, get_n_threads
from ..core.validation import (as_float_array, check_labels, check_positive_int,
                               check_positive_real, check_sample_weight)
from ..io.calibrators import (StateFields, check_fields, check_number, load_state,
                              save_state)
from .base import Estimator
from .trees import TREE_FIELDS, check_tree_arrays, tree_arrays_from_sklearn, tree_raw_predict

__all__ = ["Forecaster"]

FORMAT = "sparsecal.Forecaster"


class Forecaster(Estimator):
    """Calibrated probability of an event from its features by gradient-boosted trees
    (Jagannatha & Yu 2020, Sections 2.5-2.6).

    ``fit`` trains scikit-learn's ``HistGradientBoostingClassifier`` (log loss, no
    early stopping), one-hot encoding the ``categorical`` codes seen in ``fit``;
    the trees are then kept as arrays (:mod:`~sparsecal.calibration.trees`), so
    only ``fit`` needs ``sparsecal[sklearn]`` and nothing is pickled.

    Parameters
    ----------
    max_iter, learning_rate, max_leaf_nodes, min_samples_leaf, l2_regularization
        Those of ``HistGradientBoostingClassifier`` (defaults 100, 0.1, 15, 20, 0.0).
    categorical : tuple of str, default=("type",)
        Feature names one-hot encoded.
    random_state : int, default=0
    n_threads : int, optional
        OpenMP threads of the fit; the trees do not depend on it.

    Attributes
    ----------
    feature_names_in_ : tuple of str
    categories_ : dict of str to ndarray of int64
    columns_ : tuple of str
        The model's input columns (``"type=2"`` for a one-hot column).
    trees_ : TreeArrays
    baseline_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.calibration import Forecaster
    >>> rng = np.random.default_rng(0)
    >>> features = {"mean": rng.random(4000), "rank": rng.integers(1, 3, 4000)}
    >>> labels = rng.random(4000) < features["mean"] / features["rank"]
    >>> p = Forecaster(max_iter=50).fit(features, labels).predict({"mean": [0.8, 0.8],
    ...                                                             "rank": [1, 2]})
    >>> bool(abs(p[0] - 0.8) < 0.1 and abs(p[1] - 0.4) < 0.1)
    True
    """

    _fitted_attributes = ("feature_names_in_", "categories_", "columns_", "trees_",
                          "baseline_")

    def __init__(self, max_iter=100, learning_rate=0.1, max_leaf_nodes=15,
                 min_samples_leaf=20, l2_regularization=0.0, categorical=("type",),
                 random_state=0, n_threads=None):
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.categorical = categorical
        self.random_state = random_state
        self.n_threads = n_threads

    def _check_params(self, prefix=""):
        check_positive_int(self.max_iter, f"{prefix}max_iter")
        check_positive_real(self.learning_rate, f"{prefix}learning_rate")
        if check_positive_int(self.max_leaf_nodes, f"{prefix}max_leaf_nodes") < 2:
            raise ValueError(f"{prefix}max_leaf_nodes must be at least 2, "
                             f"got {self.max_leaf_nodes}")
        check_positive_int(self.min_samples_leaf, f"{prefix}min_samples_leaf")
        l2 = self.l2_regularization
        if not isinstance(l2, numbers.Real) or isinstance(l2, bool) or not 0 <= l2 < np.inf:
            raise ValueError(f"{prefix}l2_regularization must be a non-negative number, "
                             f"got {self.l2_regularization!r}")
        cats = self.categorical
        if isinstance(cats, str) or not isinstance(cats, (tuple, list)) \
                or not all(isinstance(c, str) for c in cats):
            raise ValueError(f"{prefix}categorical must be a tuple of feature names, "
                             f"got {cats!r}")
        check_positive_int(self.random_state, f"{prefix}random_state", allow_zero=True)
        if self.n_threads is not None:
            check_n_threads(self.n_threads, f"{prefix}n_threads")

    def _columns(self, features, n=None):
        """Features as ``{name: float64 array}``, checked."""
        if not isinstance(features, Mapping):
            raise TypeError(f"features must be a mapping of feature name to array "
                            f"(e.g. Events.features), got {type(features).__name__}")
        if not features:
            raise ValueError("features is empty: give at least one feature column")
        cols = {}
        for name in sorted(features):
            if not isinstance(name, str):
                raise TypeError(f"feature names must be strings, got {name!r}")
            col = np.asarray(as_float_array(features[name], f"features[{name!r}]"),
                             dtype=np.float64)
            if not np.isfinite(col).all():
                i = int(np.flatnonzero(~np.isfinite(col))[0])
                raise ValueError(f"features[{name!r}][{i}] = {col[i].item()!r} is not finite")
            if name in self.categorical and (col != np.round(col)).any():
                i = int(np.flatnonzero(col != np.round(col))[0])
                raise ValueError(f"features[{name!r}] is categorical: its values must be "
                                 f"integer codes, got {col[i].item()!r} at index {i}")
            n = col.shape[0] if n is None else n
            if col.shape[0] != n:
                raise ValueError(f"features[{name!r}] has {col.shape[0]} values, "
                                 f"expected {n} (one per event)")
            cols[name] = col
        return cols

    def _matrix(self, cols):
        parts = []
        for name in self.feature_names_in_:
            if name in self.categories_:
                parts.append(cols[name][:, None] == self.categories_[name][None, :])
            else:
                parts.append(cols[name][:, None])
        return np.concatenate(parts, axis=1).astype(np.float64)

    def fit(self, features, labels, sample_weight=None):
        """Fit on dev events: ``features`` maps names to columns of one length (e.g.
        ``Events.features``), ``labels`` says whether each event is correct.
        """
        self._check_params()
        ensemble = require("sklearn.ensemble", "sklearn", "Forecaster.fit")
        for name in self._fitted_attributes:
            self.__dict__.pop(name, None)
        cols = self._columns(features)
        n = next(iter(cols.values())).shape[0]
        if n == 0:
            raise ValueError("cannot fit a forecaster on no events")
        y = check_labels(labels, "labels", n)
        if y.min() == y.max():
            raise ValueError(f"labels are all {int(y[0])}: a forecaster needs correct and "
                             "incorrect events")
        w = check_sample_weight(sample_weight, n)
        self.feature_names_in_ = tuple(cols)
        self.categories_ = {name: np.unique(cols[name]).astype(np.int64)
                            for name in cols if name in self.categorical}
        self.columns_ = _column_names(self.feature_names_in_, self.categories_)
        model = ensemble.HistGradientBoostingClassifier(
            max_iter=self.max_iter, learning_rate=self.learning_rate,
            max_leaf_nodes=self.max_leaf_nodes, min_samples_leaf=self.min_samples_leaf,
            l2_regularization=self.l2_regularization, early_stopping=False,
            random_state=self.random_state)
        limits = require("threadpoolctl", "sklearn", "Forecaster.fit").threadpool_limits
        with limits(get_n_threads(self.n_threads, n), user_api="openmp"):
            model.fit(self._matrix(cols), y, sample_weight=w)
        self.trees_, self.baseline_ = tree_arrays_from_sklearn(model)
        return self

    def predict_log_odds(self, features):
        """``baseline + sum of leaf values`` for the columns of ``fit``."""
        self._check_fitted()
        cols = self._columns(features)
        if tuple(cols) != self.feature_names_in_:
            raise ValueError(f"features must have the columns of fit "
                             f"{list(self.feature_names_in_)}, got {list(cols)}")
        return self.baseline_ + tree_raw_predict(self.trees_, self._matrix(cols))

    def predict(self, features):
        """Calibrated probability that each event is correct, for the columns of ``fit``."""
        z = self.predict_log_odds(features)
        return 0.5 * (1.0 + np.tanh(0.5 * z))

    def save(self, path):
        """Write the fitted forecaster to directory ``path``, atomically."""
        self._check_fitted()
        n_codes = sum(v.shape[0] for v in self.categories_.values())
        meta = {"n_tags": max(n_codes, 1), "params": {**self.get_params(deep=False),
                                                      "categorical": list(self.categorical)},
                "feature_names": list(self.feature_names_in_),
                "categories": {k: v.tolist() for k, v in self.categories_.items()},
                "baseline": self.baseline_}
        save_state(path, meta, self.trees_.arrays(), format=FORMAT)

    @classmethod
    def load(cls, path):
        """Read a forecaster written by :meth:`save`, checking every field."""
        meta, arrays = load_state(path, format=FORMAT)
        fields = StateFields(path)
        with fields.in_json():
            check_fields(meta, "", ("format", "version", "n_tags", "params",
                                    "feature_names", "categories", "baseline"))
            params = meta["params"]
            check_fields(params, "params", cls._get_param_names())
            if isinstance(params["categorical"], list):
                params = {**params, "categorical": tuple(params["categorical"])}
            obj = cls(**params)
            obj._check_params("params.")
            names = meta["feature_names"]
            if not isinstance(names, list) or not names \
                    or not all(isinstance(x, str) for x in names) or names != sorted(set(names)):
                raise ValueError("feature_names must be a non-empty sorted list of distinct "
                                 "strings")
            obj.feature_names_in_ = tuple(names)
            obj.categories_ = _check_categories(meta["categories"], names, obj.categorical)
            obj.columns_ = _column_names(obj.feature_names_in_, obj.categories_)
            obj.baseline_ = check_number(meta["baseline"], "baseline")
        with fields.in_arrays():
            unknown = set(arrays) - set(TREE_FIELDS)
            if unknown:
                raise ValueError(f"{sorted(unknown)[0]} is not an array of a Forecaster")
            obj.trees_ = check_tree_arrays(arrays, len(obj.columns_), str)
        return obj


def _column_names(names, categories):
    return tuple(c for name in names
                 for c in ([f"{name}={v}" for v in categories[name]]
                           if name in categories else [name]))


def _check_categories(categories, names, categorical):
    expected = [n for n in names if n in categorical]
    check_fields(categories, "categories", expected)
    out = {}
    for name in expected:
        codes = categories[name]
        if not isinstance(codes, list) or not codes or not all(
                isinstance(c, int) and not isinstance(c, bool) for c in codes) \
                or codes != sorted(set(codes)):
            raise ValueError(f"categories.{name} must be a non-empty sorted list of distinct "
                             "integers")
        out[name] = np.array(codes, dtype=np.int64)
    return out
