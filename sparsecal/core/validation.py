"""Input checks at the boundary of the package.

Every public function validates its inputs here and raises a ``ValueError`` or
``TypeError`` that names the argument and the problem; the compiled kernels then
assume valid data. Nothing here modifies a caller's array.
"""
import numbers

import numpy as np

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def as_float_array(x, name, ndim=1):
    """``x`` as a float32/float64 array of ``ndim`` dimensions, without copying
    when it already is one. Other numeric dtypes are converted to float64."""
    arr = np.asarray(x)
    if arr.dtype not in FLOAT_DTYPES:
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
        arr = arr.astype(np.float64)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    return arr


def check_probabilities(x, name):
    """A 1-D float32/float64 array of values in [0, 1] (no NaN/inf)."""
    arr = as_float_array(x, name)
    if arr.size:
        lo, hi = np.min(arr), np.max(arr)   # NaN propagates into min/max
        if np.isnan(lo) or np.isnan(hi):
            i = int(np.flatnonzero(np.isnan(arr))[0])
            raise ValueError(f"{name} contains NaN (first at index {i})")
        if lo < 0 or hi > 1:
            i = int(np.flatnonzero((arr < 0) | (arr > 1))[0])
            raise ValueError(f"{name} must lie in [0, 1]; {name}[{i}] = {arr[i]!r}")
    return np.ascontiguousarray(arr)


def check_finite(x, name):
    """A contiguous 1-D float32/float64 array without NaN or infinity."""
    arr = np.ascontiguousarray(as_float_array(x, name))
    if arr.size and not np.isfinite(arr).all():
        i = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"{name} must be finite; {name}[{i}] = {arr[i]!r}")
    return arr


def check_labels(y, name, n):
    """Binary labels as a contiguous uint8 array of length ``n``."""
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} values but the scores have {n}")
    if arr.dtype == np.bool_:
        return np.ascontiguousarray(arr).view(np.uint8)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be 0/1 or boolean, got dtype {arr.dtype}")
    if arr.size:
        # min/max for integers: one cheap pass (np.isin costs 0.35 s at 1e8)
        ok = (arr.min() >= 0 and arr.max() <= 1) if arr.dtype.kind in "iu" \
            else bool(((arr == 0) | (arr == 1)).all())
        if not ok:
            i = int(np.flatnonzero((arr != 0) & (arr != 1))[0])
            raise ValueError(f"{name} must be 0 or 1; {name}[{i}] = {arr[i]!r}")
    return np.ascontiguousarray(arr, dtype=np.uint8)


def check_sample_weight(w, n):
    """None, or non-negative finite float64 weights of length ``n``."""
    if w is None:
        return None
    arr = np.ascontiguousarray(np.asarray(w, dtype=np.float64))
    if arr.shape != (n,):
        raise ValueError(f"sample_weight has shape {arr.shape}, expected ({n},)")
    if arr.size and not (np.isfinite(arr).all() and (arr >= 0).all()):
        raise ValueError("sample_weight must be finite and non-negative")
    return arr


def check_gold(gold, n_tokens, n_tags, name="gold"):
    """Gold tag index per token as int64: values in [0, n_tags) or -1 (no gold)."""
    arr = np.asarray(gold)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {arr.shape}")
    if arr.shape[0] != n_tokens:
        raise ValueError(
            f"{name} has {arr.shape[0]} tokens but scores has {n_tokens} rows")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer tag indices, got dtype {arr.dtype}")
    if arr.size:
        # Checked in the caller's dtype: a huge uint64 must not wrap around to -1.
        bad = (arr < -1) | (arr >= n_tags)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{name}[{i}] = {arr[i]} is out of range: tag indices must lie in "
                f"[0, {n_tags}) (or be -1 for 'no gold tag')")
    # Contiguous: the kernels take row slices of it as C-contiguous memoryviews.
    return np.ascontiguousarray(arr, dtype=np.int64)


def check_unit_interval(value, name):
    """A Python float in [0, 1]."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return value


def check_positive_int(value, name):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def check_choice(value, name, choices):
    if value not in choices:
        # sorted by repr: choices may mix types (None and strings)
        raise ValueError(f"{name} must be one of {sorted(choices, key=repr)!r}, "
                         f"got {value!r}")
    return value
