"""Isotonic regression by pool adjacent violators (PAV), on the compiled core.

The fit pools tied x values (weighted mean of y), runs PAV with sample weights and
clips the fitted values to ``[y_min, y_max]``; prediction interpolates linearly
between fitted points and is constant outside them: scikit-learn's
``IsotonicRegression(y_min, y_max, out_of_bounds="clip")``, except that only
exactly equal x values are ties. Used for recalibration in Kranzlein et al. 2021
(Section 2.2) after Zadrozny & Elkan 2002.
"""
import numpy as np

from .._docs import fill_doc
from . import _isotonic
from .threads import get_n_threads
from .validation import as_array, as_float_array, check_finite, check_real, check_sample_weight
from .binning import argsort_scores
from .dispatch import BUILDING_BLOCK, GLOBAL_SORT, takes_data

__all__ = ["isotonic_fit", "isotonic_fit_pooled", "isotonic_predict"]


@takes_data(refuse=GLOBAL_SORT)
@fill_doc
def isotonic_fit(x, y, sample_weight=None, *, y_min=0.0, y_max=1.0, n_threads=None):
    """Fit a non-decreasing function of ``x`` to ``y`` by weighted least squares.

    Parameters
    ----------
    x : array_like of float, shape (n,)
        Finite inputs (scores).
    y : array_like of float or {0, 1}, shape (n,)
        Targets (labels).
    sample_weight : array_like of float, shape (n,), optional
        Non-negative weights; points of weight 0 are ignored.
    y_min, y_max : float, default=0.0, 1.0
        Fitted values are clipped to this range.
    {n_threads}

    Returns
    -------
    x_knots, y_knots : ndarray of float64
        The endpoints of the fitted function's constant pieces.

    Examples
    --------
    >>> from sparsecal.core.isotonic import isotonic_fit
    >>> x_knots, y_knots = isotonic_fit([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])
    >>> x_knots, y_knots
    (array([0.1, 0.2, 0.3, 0.4]), array([0. , 0.5, 0.5, 1. ]))
    """
    x = check_finite(x, "x")
    n = x.shape[0]
    y = as_array(y, "y")
    if y.shape != (n,):
        raise ValueError(f"y has shape {y.shape}, expected ({n},) like x")
    if y.dtype == np.bool_:
        y = y.view(np.uint8)
    elif y.dtype not in (np.uint8, np.float32, np.float64):
        y = as_float_array(y, "y")
    y = np.ascontiguousarray(y)
    if y.dtype != np.uint8 and n and not np.isfinite(y).all():
        raise ValueError("y must be finite")
    w = check_sample_weight(sample_weight, n)
    if n == 0 or (w is not None and not (w > 0).any()):
        raise ValueError("isotonic_fit needs at least one point with positive weight")
    y_min, y_max = check_real(y_min, "y_min"), check_real(y_max, "y_max")
    if not y_min <= y_max:
        raise ValueError(f"y_min ({y_min}) must not exceed y_max ({y_max})")
    perm, xs = argsort_scores(x, n_threads=n_threads)
    return _isotonic.isotonic_fit_sorted(xs, y, w, perm, y_min, y_max)


@takes_data(refuse=BUILDING_BLOCK)
def isotonic_fit_pooled(x, y_mean, weight, *, y_min=0.0, y_max=1.0):
    """Isotonic fit of points already pooled by distinct ``x``: the knots of
    :func:`isotonic_fit` of the unpooled points, bit for bit.

    The fit depends on the data only through each distinct ``x``'s total weight and
    weighted mean target; that table merges exactly across chunks, which lets
    :mod:`sparsecal.distributed` fit on a cluster.

    Parameters
    ----------
    x : array_like of float, shape (m,)
        Distinct inputs, strictly increasing, finite.
    y_mean : array_like of float, shape (m,)
        Mean target of each.
    weight : array_like of float, shape (m,)
        Total (positive) weight of each.
    y_min, y_max : float, default=0.0, 1.0

    Returns
    -------
    x_knots, y_knots : ndarray of float64

    Examples
    --------
    >>> from sparsecal.core.isotonic import isotonic_fit, isotonic_fit_pooled
    >>> isotonic_fit_pooled([0.1, 0.2, 0.3], [0.0, 1.0, 0.5], [1, 1, 2])
    (array([0.1, 0.2, 0.3]), array([0.        , 0.66666667, 0.66666667]))
    >>> isotonic_fit([0.1, 0.2, 0.3, 0.3], [0, 1, 0, 1])
    (array([0.1, 0.2, 0.3]), array([0.        , 0.66666667, 0.66666667]))
    """
    ux = np.array(check_finite(x, "x"), dtype=np.float64)
    uy = np.array(check_finite(y_mean, "y_mean"), dtype=np.float64)
    uw = np.array(as_float_array(weight, "weight"), dtype=np.float64)
    if ux.shape[0] == 0 or uy.shape != ux.shape or uw.shape != ux.shape:
        raise ValueError("x, y_mean and weight must be non-empty 1-D arrays of one length")
    if (np.diff(ux) <= 0).any():
        raise ValueError("x must be strictly increasing (one row per distinct x)")
    if not (np.isfinite(uw).all() and (uw > 0).all()):
        raise ValueError("weight must be positive and finite")
    y_min, y_max = check_real(y_min, "y_min"), check_real(y_max, "y_max")
    if not y_min <= y_max:
        raise ValueError(f"y_min ({y_min}) must not exceed y_max ({y_max})")
    return _isotonic.isotonic_fit_pooled(ux, uy, uw, y_min, y_max)


@takes_data(refuse=BUILDING_BLOCK)
@fill_doc
def isotonic_predict(x, x_knots, y_knots, *, n_threads=None):
    """Evaluate a fitted isotonic function at ``x``: linear interpolation between
    knots, constant beyond them.

    Parameters
    ----------
    x : array_like of float, shape (n,)
        No NaN.
    x_knots, y_knots : array_like of float, shape (m,)
        From :func:`isotonic_fit`.
    {n_threads}

    Returns
    -------
    ndarray, shape (n,)
        The dtype of ``x`` (float64 for non-float input).

    Examples
    --------
    >>> from sparsecal.core.isotonic import isotonic_fit, isotonic_predict
    >>> x_knots, y_knots = isotonic_fit([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])
    >>> isotonic_predict([0.0, 0.25, 0.35, 1.0], x_knots, y_knots)
    array([0.  , 0.5 , 0.75, 1.  ])
    """
    x = np.ascontiguousarray(as_float_array(x, "x"))
    if np.isnan(x).any():
        raise ValueError("x contains NaN")
    xk = np.ascontiguousarray(as_float_array(x_knots, "x_knots"), dtype=np.float64)
    yk = np.ascontiguousarray(as_float_array(y_knots, "y_knots"), dtype=np.float64)
    if xk.shape != yk.shape or xk.shape[0] == 0:
        raise ValueError("x_knots and y_knots must be non-empty 1-D arrays of one length")
    if not (np.isfinite(xk).all() and np.isfinite(yk).all()):
        raise ValueError("x_knots and y_knots must be finite")
    if (np.diff(xk) <= 0).any():
        raise ValueError("x_knots must be strictly increasing")
    out = np.empty_like(x)
    _isotonic.isotonic_predict(x, xk, yk, out, get_n_threads(n_threads, x.shape[0]))
    return out
