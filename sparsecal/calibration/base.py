"""Estimator plumbing shared by every calibrator, in the manner of scikit-learn:
parameters, ``repr``, :func:`clone`, fitted checks, scikit-learn tags (sklearn is
imported only for them) and the fitted state for saving
(:mod:`sparsecal.io.calibrators`).
"""
import copy
import inspect

import numpy as np

from ..core.validation import (as_array, check_labels, check_probabilities,
                               check_sample_weight)
from ..io.calibrators import StateFields, check_fields, check_number, check_state_array

__all__ = ["BaseCalibrator", "Estimator", "NotFittedError", "clone"]


class NotFittedError(ValueError, AttributeError):
    """Raised when an estimator is used before ``fit`` (the bases of sklearn's)."""


class Estimator:
    """Parameters, repr, fitted check and scikit-learn tags: ``__init__`` stores its
    arguments under their names; fitted attributes end in ``_`` and are listed in
    ``_fitted_attributes``.
    """

    _fitted_attributes = ()

    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))

    def get_params(self, deep=True):
        """The parameters (those of estimator parameters as ``name__param`` when ``deep``)."""
        out = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{name}__{k}", v) for k, v in value.get_params().items())
            out[name] = value
        return out

    def set_params(self, **params):
        """Set parameters (``name`` or nested ``name__param``); returns self."""
        valid = self._get_param_names()
        nested = {}
        for key, value in params.items():
            name, sep, sub = key.partition("__")
            if name not in valid:
                raise ValueError(f"{type(self).__name__} has no parameter {name!r}; "
                                 f"its parameters are {valid}")
            if sep:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
        for name, sub_params in nested.items():
            getattr(self, name).set_params(**sub_params)
        return self

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params(deep=False).items())
        return f"{type(self).__name__}({args})"

    def __sklearn_is_fitted__(self):
        return all(hasattr(self, name) for name in self._fitted_attributes)

    def _check_fitted(self):
        if not self.__sklearn_is_fitted__():
            raise NotFittedError(f"this {type(self).__name__} is not fitted: call fit first")

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags
        return Tags(estimator_type=None, target_tags=TargetTags(required=True),
                    input_tags=InputTags(**self._input_tags()))

    def _input_tags(self):
        return {}


def clone(estimator):
    """An unfitted copy with the same parameters, like ``sklearn.base.clone``.

    Parameters
    ----------
    estimator : Estimator

    Returns
    -------
    Estimator

    Examples
    --------
    >>> from sparsecal import HistogramBinning
    >>> from sparsecal.calibration import clone
    >>> clone(HistogramBinning(n_bins=5))
    HistogramBinning(bin_size=None, n_bins=5)
    """
    params = {k: clone(v) if isinstance(v, Estimator) else copy.deepcopy(v)
              for k, v in estimator.get_params(deep=False).items()}
    return type(estimator)(**params)


class BaseCalibrator(Estimator):
    """A binary calibrator: ``fit(scores, labels)`` on dev, ``predict(scores)``.

    Scores are probabilities in [0, 1], shape ``(n,)`` or ``(n, 1)``. Subclasses
    implement ``_fit(x, y, w)`` and ``_predict(x)`` on validated inputs, and where
    needed ``_check_params(prefix)`` and ``_check_state(fields)``; their fitted
    state is the attributes named in ``_array_state`` (1-D float64 arrays) and
    ``_value_state`` (finite numbers). See docs/architecture.md, "How to add a
    calibrator".

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.calibration import BaseCalibrator
    >>> class Constant(BaseCalibrator):
    ...     _value_state = ("rate_",)
    ...     def _fit(self, x, y, w):
    ...         self.rate_ = float(np.average(y, weights=w))
    ...         return self
    ...     def _predict(self, x):
    ...         return np.full_like(x, self.rate_)
    >>> Constant().fit([0.2, 0.9], [0, 1]).predict([0.5])
    array([0.5])
    """

    _array_state = ()
    _value_state = ()

    @property
    def _fitted_attributes(self):
        return self._array_state + self._value_state

    def _input_tags(self):
        return {"one_d_array": True, "two_d_array": True, "positive_only": True}

    @staticmethod
    def _scores(scores):
        x = as_array(scores, "scores")
        if x.ndim == 2 and x.shape[1] == 1:
            x = x[:, 0]
        return check_probabilities(x, "scores")

    def fit(self, scores, labels, sample_weight=None):
        """Fit on dev scores, their 0/1 labels and optional non-negative sample weights."""
        self._check_params()
        x = self._scores(scores)
        if x.shape[0] == 0:
            raise ValueError("cannot fit a calibrator on no data")
        y = check_labels(labels, "labels", x.shape[0])
        w = check_sample_weight(sample_weight, x.shape[0])
        if w is not None and not (w > 0).any():
            raise ValueError("sample_weight is zero everywhere")
        self._fit(x, y, w)
        return self

    def predict(self, scores):
        """Calibrated scores (float32 for float32 input, float64 otherwise)."""
        self._check_fitted()
        return self._predict(self._scores(scores))

    def get_state(self):
        """The fitted calibrator as ``(meta, arrays)``: JSON values (``params``,
        ``fitted``) and NumPy arrays.
        """
        self._check_fitted()
        values = {name: _to_json(getattr(self, name)) for name in self._value_state}
        arrays = {name: np.asarray(getattr(self, name)) for name in self._array_state}
        return {"params": _to_json(self.get_params(deep=False)), "fitted": values}, arrays

    @classmethod
    def from_state(cls, meta, arrays, fields=None):
        """Rebuild a fitted calibrator from :meth:`get_state`'s output, checking every
        field; ``fields`` names them in errors.
        """
        fields = StateFields() if fields is None else fields
        with fields.in_json():
            check_fields(meta, fields.field(""), ("params", "fitted"))
            obj = cls.from_params(meta["params"], fields.field("params"))
            check_fields(meta["fitted"], fields.field("fitted"), cls._value_state)
            for name in cls._value_state:
                setattr(obj, name, check_number(meta["fitted"][name],
                                                fields.field(f"fitted.{name}")))
        with fields.in_arrays():
            for key in arrays:
                if key not in cls._array_state:
                    raise ValueError(f"{fields.array(key)} is not an array of a "
                                     f"{cls.__name__}")
            for name in cls._array_state:
                a = check_state_array(arrays, name, fields.array(name), "f")
                a = a.astype(np.float64)
                if not np.isfinite(a).all():
                    i = int(np.flatnonzero(~np.isfinite(a))[0])
                    raise ValueError(f"{fields.array(name)}[{i}] = {float(a[i])!r} is not finite")
                setattr(obj, name, a)
            obj._check_state(fields)
        return obj

    @classmethod
    def from_params(cls, params, name="params"):
        """An unfitted calibrator from saved parameters, checked as ``fit`` checks them
        (``name`` prefixes the parameters in errors).
        """
        check_fields(params, name, cls._get_param_names())
        obj = cls(**params)
        obj._check_params(f"{name}.")
        return obj

    def _check_params(self, prefix=""):
        """Check the parameters (names in errors start with ``prefix``)."""

    def _check_state(self, fields):
        """Check the rules of a loaded fitted state; ``fields`` names the arrays."""


def check_unit_array(a, name, order=None):
    """Check fitted probabilities (``"increasing"`` or ``"non-decreasing"`` by ``order``)."""
    check_probabilities(a, name)
    if order is not None and a.size > 1:
        step = np.diff(a)
        bad = step <= 0 if order == "increasing" else step < 0
        if bad.any():
            i = int(np.flatnonzero(bad)[0]) + 1
            sign = "<=" if order == "increasing" else "<"
            raise ValueError(f"{name} must be {order}; {name}[{i}] = {float(a[i])!r} "
                             f"{sign} {float(a[i - 1])!r}")


def check_bins(boundaries, values, n_bins, names):
    """Check fitted bins: increasing ``boundaries``, one more of ``values``, at most ``n_bins``."""
    check_unit_array(boundaries, names[0], "increasing")
    check_unit_array(values, names[1])
    if values.shape[0] != boundaries.shape[0] + 1:
        raise ValueError(f"{names[1]} must have one more value than {names[0]} "
                         f"({boundaries.shape[0] + 1}), got {values.shape[0]}")
    if n_bins is not None and values.shape[0] > n_bins:
        raise ValueError(f"{names[1]} has {values.shape[0]} bins, more than n_bins = {n_bins}")


def _to_json(value):
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return value
