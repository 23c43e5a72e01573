"""Input checks at the boundary of the package.

Every public function validates its inputs here and raises a ``ValueError`` or
``TypeError`` that names the argument and the problem; the compiled kernels then
assume valid data. Nothing here modifies a caller's array.
"""
import numbers
import os

import numpy as np

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


class DegenerateDataError(ValueError):
    """Valid data on which a quantity is undefined: labels of one class only,
    or scores of zero variance.

    Raised by the calibrators that cannot be fit on such data
    (:class:`~sparsecal.calibration.GaussianCalibration`,
    :class:`~sparsecal.calibration.PriorWeightedLogistic`) and by the measures
    undefined on them (:func:`~sparsecal.metrics.cllr`, ``min_cllr``,
    ``dcf``, ``min_dcf``: a miss and a false-alarm rate need both classes).
    A ``ValueError``: called alone they refuse such data with a clear error;
    per group, :class:`~sparsecal.calibration.GroupedCalibrator` treats such a
    group as one under ``min_entries`` and :func:`~sparsecal.evaluate` reports
    NaN for it, each with one warning naming the groups (docs/architecture.md,
    "Where each rule lives").

    Examples
    --------
    >>> from sparsecal import cllr
    >>> from sparsecal.core.validation import DegenerateDataError
    >>> try:
    ...     cllr([0.2, 0.7], [1, 1])
    ... except DegenerateDataError as exc:
    ...     print(str(exc)[:30])
    labels must hold both classes
    """


def as_array(x, name):
    """``x`` as a NumPy array, with one message for what cannot be one.

    Anything NumPy reads as an array is accepted, by duck typing (no import of
    other libraries): lists, arrays of any byte order or memory layout, memory
    maps, and objects with ``__array__`` such as CPU tensors (a view of the
    tensor's memory, never modified).

    Parameters
    ----------
    x : array_like
    name : str
        Name of the argument, for error messages.

    Returns
    -------
    ndarray
        ``x`` itself when it already is an ndarray (a memory map included).

    Raises
    ------
    TypeError
        If ``x`` is None or a sparse matrix, or NumPy cannot read it as an array
        (e.g. a GPU tensor, or a tensor that requires grad).
    ValueError
        If ``x`` is a ragged nested sequence.

    References
    ----------
    docs/architecture.md, "Data model": inputs are checked once at the package boundary.

    Examples
    --------
    >>> from sparsecal.core.validation import as_array
    >>> as_array([0.5, 1.0], "scores")
    array([0.5, 1. ])
    >>> as_array([[1], [1, 2]], "scores")
    Traceback (most recent call last):
    ...
    ValueError: scores is not an array of numbers: it is ragged (rows of different lengths)
    """
    if isinstance(x, np.ndarray):
        return x
    if x is None:
        raise TypeError(f"{name} is required, got None")
    if hasattr(x, "toarray") and hasattr(x, "nnz"):   # a scipy.sparse matrix or array
        raise TypeError(f"{name} is a sparse matrix; pass a dense array ({name}.toarray())")
    try:
        return np.asarray(x)
    except ValueError:
        raise ValueError(f"{name} is not an array of numbers: it is ragged (rows of "
                         "different lengths)") from None
    except (TypeError, RuntimeError) as exc:   # e.g. a GPU tensor, a tensor with grad
        raise TypeError(f"{name} cannot be read as a NumPy array ({exc}); pass a NumPy "
                        "array, a list, or a CPU tensor without grad") from None


def native_float_dtype(dtype, name):
    """The native-byte-order float32/float64 dtype for a float array's ``dtype``.

    Parameters
    ----------
    dtype : numpy.dtype
    name : str
        Name of the argument, for error messages.

    Returns
    -------
    numpy.dtype
        ``dtype`` in native byte order (``>f4`` gives ``float32``).

    Raises
    ------
    TypeError
        If ``dtype`` is not a 4- or 8-byte float of any byte order.

    References
    ----------
    docs/architecture.md, "The compiled core": kernels take float32 and float64
    without copying; other byte orders are converted once, never modified.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.core.validation import native_float_dtype
    >>> native_float_dtype(np.dtype(">f4"), "scores")
    dtype('float32')
    >>> native_float_dtype(np.dtype("int64"), "scores")
    Traceback (most recent call last):
    ...
    TypeError: scores must be float32 or float64, got dtype int64
    """
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        native = dtype.newbyteorder("=")
        if native in FLOAT_DTYPES:
            return native
    raise TypeError(f"{name} must be float32 or float64, got dtype {dtype}")


def check_float_matrix(x, name):
    """A 2-D float32/float64 matrix, kept as it is so that it can be read in row chunks.

    NumPy arrays and memory maps (read-only too) and other objects with a NumPy
    ``dtype``, a ``shape`` and row slicing (e.g. an HDF5 dataset) are kept, so a
    matrix larger than memory is never loaded whole; anything else goes through
    :func:`as_array`. Read chunks with ``np.ascontiguousarray(x[r0:r1],
    dtype=native)``: any byte order and memory layout then reaches the kernels
    as native C-ordered rows.

    Parameters
    ----------
    x : array_like, shape (n_rows, n_cols)
    name : str
        Name of the argument, for error messages.

    Returns
    -------
    matrix : array_like
        ``x``, or ``np.asarray(x)``.
    native : numpy.dtype
        float32 or float64: the dtype of ``x`` in native byte order.

    Raises
    ------
    TypeError
        If ``x`` cannot be read as an array or is not float32/float64.
    ValueError
        If ``x`` is not 2-D or has no rows or no columns.

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.1: dense scores
    ``[n_tokens, n_tags]`` are thresholded chunk by chunk.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.core.validation import check_float_matrix
    >>> m, native = check_float_matrix(np.zeros((2, 3), dtype=">f4"), "scores")
    >>> native
    dtype('float32')
    >>> check_float_matrix(np.zeros(3), "scores")
    Traceback (most recent call last):
    ...
    ValueError: scores must be 2-dimensional [n_rows, n_cols], got shape (3,)
    """
    if not (isinstance(getattr(x, "dtype", None), np.dtype) and hasattr(x, "shape")
            and hasattr(x, "__getitem__")):
        x = as_array(x, name)
    native = native_float_dtype(x.dtype, name)
    if len(x.shape) != 2:
        raise ValueError(f"{name} must be 2-dimensional [n_rows, n_cols], got shape "
                         f"{tuple(x.shape)}")
    if x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {tuple(x.shape)})")
    return x, native


def as_float_array(x, name, ndim=1):
    """``x`` as a float32/float64 array of ``ndim`` dimensions.

    Parameters
    ----------
    x : array_like
        Real numbers (bool, integer or float dtype).
    name : str
        Name of the argument, for error messages.
    ndim : int, default=1
        Required number of dimensions.

    Returns
    -------
    ndarray of float32 or float64
        ``x`` itself when it already is a native float32/float64 array; the
        other byte order is converted to the native float of the same width,
        other numeric dtypes to float64 (the input is never modified).

    Raises
    ------
    TypeError
        If ``x`` does not hold real numbers or cannot be read as an array.
    ValueError
        If ``x`` has another number of dimensions.

    References
    ----------
    docs/architecture.md, "Data model": inputs are checked once at the package boundary;
    the compiled kernels then assume valid data.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.core.validation import as_float_array
    >>> as_float_array([1, 0], "scores").dtype
    dtype('float64')
    >>> x = np.zeros(3, dtype=np.float32)
    >>> as_float_array(x, "scores") is x
    True
    """
    arr = as_array(x, name)
    if arr.dtype not in FLOAT_DTYPES:
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
        native = arr.dtype.newbyteorder("=")
        arr = arr.astype(native if native in FLOAT_DTYPES else np.float64)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    return arr


def check_probabilities(x, name):
    """A contiguous 1-D float32/float64 array of probabilities.

    Parameters
    ----------
    x : array_like of float, shape (n,)
        Values in [0, 1].
    name : str
        Name of the argument, for error messages.

    Returns
    -------
    ndarray of float32 or float64, shape (n,)
        C-contiguous; not copied when ``x`` already is such an array.

    Raises
    ------
    TypeError
        If ``x`` does not hold real numbers.
    ValueError
        If ``x`` is not 1-D, or holds NaN or a value outside [0, 1] (the first
        one is named).

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 2.1: confidence scores are
    probabilities, evaluated against binary labels.

    Examples
    --------
    >>> from sparsecal.core.validation import check_probabilities
    >>> check_probabilities([0.25, 1.0], "scores")
    array([0.25, 1.  ])
    >>> check_probabilities([0.5, 1.5], "scores")
    Traceback (most recent call last):
    ...
    ValueError: scores must lie in [0, 1]; scores[1] = 1.5
    """
    arr = as_float_array(x, name)
    if arr.size:
        lo, hi = np.min(arr), np.max(arr)   # NaN propagates into min/max
        if np.isnan(lo) or np.isnan(hi):
            i = int(np.flatnonzero(np.isnan(arr))[0])
            raise ValueError(f"{name} contains NaN (first at index {i})")
        if lo < 0 or hi > 1:
            i = int(np.flatnonzero((arr < 0) | (arr > 1))[0])
            raise ValueError(f"{name} must lie in [0, 1]; {name}[{i}] = {arr[i].item()!r}")
    return np.ascontiguousarray(arr)


def check_finite(x, name):
    """A contiguous 1-D float32/float64 array without NaN or infinity.

    Parameters
    ----------
    x : array_like of float, shape (n,)
    name : str
        Name of the argument, for error messages.

    Returns
    -------
    ndarray of float32 or float64, shape (n,)
        C-contiguous; not copied when ``x`` already is such an array.

    Raises
    ------
    TypeError
        If ``x`` does not hold real numbers.
    ValueError
        If ``x`` is not 1-D or holds NaN or infinity (the first one is named).

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 2.2 ("Isotonic Regression"):
    a non-decreasing function fitted to finite scores.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.core.validation import check_finite
    >>> check_finite([2.0, -1.0], "x")
    array([ 2., -1.])
    >>> check_finite([0.0, np.inf], "x")
    Traceback (most recent call last):
    ...
    ValueError: x must be finite; x[1] = inf
    """
    arr = np.ascontiguousarray(as_float_array(x, name))
    if arr.size and not np.isfinite(arr).all():
        i = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"{name} must be finite; {name}[{i}] = {arr[i].item()!r}")
    return arr


def check_labels(y, name, n):
    """Binary labels as a contiguous uint8 array of length ``n``.

    Parameters
    ----------
    y : array_like of {0, 1} or bool, shape (n,)
    name : str
        Name of the argument, for error messages.
    n : int
        Required length (the number of scores).

    Returns
    -------
    ndarray of uint8, shape (n,)
        A view of ``y`` when it is a contiguous bool or uint8 array.

    Raises
    ------
    TypeError
        If ``y`` is neither numeric nor boolean.
    ValueError
        If ``y`` is not 1-D, has another length, or holds a value other than
        0 and 1 (the first one is named).

    References
    ----------
    Nguyen & O'Connor 2015, Section 2: calibration compares a prediction
    ``q`` with a binary outcome ``y``.

    Examples
    --------
    >>> from sparsecal.core.validation import check_labels
    >>> check_labels([True, False], "labels", 2)
    array([1, 0], dtype=uint8)
    >>> check_labels([0, 2], "labels", 2)
    Traceback (most recent call last):
    ...
    ValueError: labels must be 0 or 1; labels[1] = 2
    """
    arr = as_array(y, name)
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
            raise ValueError(f"{name} must be 0 or 1; {name}[{i}] = {arr[i].item()!r}")
    return np.ascontiguousarray(arr, dtype=np.uint8)


def check_sample_weight(w, n):
    """None, or non-negative finite float64 weights of length ``n``.

    Parameters
    ----------
    w : array_like of float, shape (n,), or None
    n : int
        Required length (the number of points).

    Returns
    -------
    ndarray of float64, shape (n,), or None
        Contiguous; ``None`` when ``w`` is None (unit weights).

    Raises
    ------
    TypeError
        If ``w`` does not hold real numbers.
    ValueError
        If ``w`` has another shape, or holds a negative, NaN or infinite value.

    References
    ----------
    Barlow et al. 1972, *Statistical Inference under Order Restrictions*,
    Chapter 1: weighted least squares under an order restriction (the
    weights of pool adjacent violators).

    Examples
    --------
    >>> from sparsecal.core.validation import check_sample_weight
    >>> check_sample_weight([1, 2], 2)
    array([1., 2.])
    >>> check_sample_weight(None, 2) is None
    True
    """
    if w is None:
        return None
    arr = as_array(w, "sample_weight")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"sample_weight must hold real numbers, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if arr.shape != (n,):
        raise ValueError(f"sample_weight has shape {arr.shape}, expected ({n},)")
    if arr.size and not (np.isfinite(arr).all() and (arr >= 0).all()):
        raise ValueError("sample_weight must be finite and non-negative")
    return arr


def check_gold(gold, n_tokens, n_tags, name="gold"):
    """Gold tag index per token as a contiguous int64 array.

    Parameters
    ----------
    gold : array_like of int, shape (n_tokens,)
        Values in ``[0, n_tags)``, or -1 for a token whose gold tag is not in
        the inventory.
    n_tokens : int
        Required length (rows of the score matrix).
    n_tags : int
        Size of the tag inventory (columns of the score matrix).
    name : str, default="gold"
        Name of the argument, for error messages.

    Returns
    -------
    ndarray of int64, shape (n_tokens,)

    Raises
    ------
    TypeError
        If ``gold`` does not hold integers.
    ValueError
        If ``gold`` is not 1-D, has another length, or holds a value outside
        ``[-1, n_tags)`` (checked in the caller's dtype, so nothing wraps).

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.1: each thresholded entry is
    labelled 1 when its tag is the token's gold tag.

    Examples
    --------
    >>> from sparsecal.core.validation import check_gold
    >>> check_gold([2, -1], n_tokens=2, n_tags=3)
    array([ 2, -1])
    >>> check_gold([3, 0], n_tokens=2, n_tags=3)
    Traceback (most recent call last):
    ...
    ValueError: gold[0] = 3 is out of range: tag indices must lie in [0, 3) (or be -1 for 'no gold tag')
    """
    arr = as_array(gold, name)
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
    """A real number in [0, 1], as a Python float.

    Parameters
    ----------
    value : real
    name : str
        Name of the argument, for error messages.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``value`` is not a real number (booleans included).
    ValueError
        If ``value`` lies outside [0, 1].

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.1: the threshold is a
    probability (0.01 in their experiments).

    Examples
    --------
    >>> from sparsecal.core.validation import check_unit_interval
    >>> check_unit_interval(0.01, "threshold")
    0.01
    >>> check_unit_interval(2, "threshold")
    Traceback (most recent call last):
    ...
    ValueError: threshold must lie in [0, 1], got 2.0
    """
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return value


def check_positive_int(value, name, *, allow_zero=False):
    """A positive (or, with ``allow_zero``, non-negative) integer, as a Python int.

    Parameters
    ----------
    value : int
    name : str
        Name of the argument, for error messages.
    allow_zero : bool, default=False
        Accept 0 too (an offset or a count that may be zero).

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If ``value`` is not an integer (booleans and integral floats included)
        or is below 1 (below 0 with ``allow_zero``).

    References
    ----------
    Nguyen & O'Connor 2015, Algorithm 1: a bin size (or number of bins) is a
    positive integer.

    Examples
    --------
    >>> from sparsecal.core.validation import check_positive_int
    >>> check_positive_int(10, "n_bins")
    10
    >>> check_positive_int(0, "n_bins")
    Traceback (most recent call last):
    ...
    ValueError: n_bins must be a positive integer, got 0
    >>> check_positive_int(0, "token_offset", allow_zero=True)
    0
    """
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) \
            or value < (0 if allow_zero else 1):
        what = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be a {what} integer, got {value!r}")
    return int(value)


def check_real(value, name):
    """A real number that is not NaN, as a Python float (infinities allowed).

    Parameters
    ----------
    value : real
    name : str
        Name of the argument, for error messages.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``value`` is not a real number (booleans included).
    ValueError
        If ``value`` is NaN.

    References
    ----------
    Barlow et al. 1972, Chapter 1: the bounds of a (clipped) isotonic fit are
    ordered real numbers.

    Examples
    --------
    >>> from sparsecal.core.validation import check_real
    >>> check_real(1, "y_max")
    1.0
    >>> check_real(float("nan"), "y_max")
    Traceback (most recent call last):
    ...
    ValueError: y_max must not be NaN
    """
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if value != value:
        raise ValueError(f"{name} must not be NaN")
    return value


def physical_memory():
    """Bytes of physical memory of this machine, or None where it is unknown.

    Returns
    -------
    int or None

    References
    ----------
    POSIX ``sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGE_SIZE)``.

    Examples
    --------
    >>> from sparsecal.core.validation import physical_memory
    >>> physical_memory() is None or physical_memory() > 0
    True
    """
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):   # not POSIX, or not reported
        return None
    return pages * page_size if pages > 0 and page_size > 0 else None


def check_allocation(nbytes, what):
    """Refuse, before allocating, an allocation sized by the caller that exceeds
    this machine's physical memory (instead of a ``MemoryError`` traceback, or
    an overcommitted array that is killed when touched).

    The limit is the physical memory, not the memory free now, so that whether a
    call is refused does not depend on what else runs.

    Parameters
    ----------
    nbytes : int
        Size of the allocation, in bytes.
    what : str
        The argument that sets the size and its value, e.g. ``"n_bins=10**12"``.

    Raises
    ------
    ValueError
        If ``nbytes`` exceeds the physical memory (when it is known).

    References
    ----------
    docs/architecture.md, "The compiled core": wrappers allocate every output
    before calling a kernel, so sizes are checked there.

    Examples
    --------
    >>> from sparsecal.core.validation import check_allocation
    >>> check_allocation(8 * 11, "n_bins=10")
    >>> check_allocation(1 << 70, "n_bins=2**67")
    Traceback (most recent call last):
    ...
    ValueError: n_bins=2**67 needs 1099511627776.0 GiB, more than this machine's ... of memory
    """
    limit = physical_memory()
    if limit is not None and nbytes > limit:
        raise ValueError(f"{what} needs {nbytes / 2**30:.1f} GiB, more than this "
                         f"machine's {limit / 2**30:.1f} GiB of memory")


def check_choice(value, name, choices):
    """``value`` if it is one of ``choices``.

    Parameters
    ----------
    value : object
    name : str
        Name of the argument, for error messages.
    choices : set
        The allowed values.

    Returns
    -------
    object
        ``value`` unchanged.

    Raises
    ------
    ValueError
        If ``value`` is not in ``choices`` (which are listed).

    References
    ----------
    Kranzlein, Liu & Schneider 2021, Section 3.2: the binning is one of
    fixed-width and equal-mass (adaptive).

    Examples
    --------
    >>> from sparsecal.core.validation import check_choice
    >>> check_choice("fixed", "binning", {"equal-mass", "fixed"})
    'fixed'
    >>> check_choice("quantile", "binning", {"equal-mass", "fixed"})
    Traceback (most recent call last):
    ...
    ValueError: binning must be one of ['equal-mass', 'fixed'], got 'quantile'
    """
    if value not in choices:
        # sorted by repr: choices may mix types (None and strings)
        raise ValueError(f"{name} must be one of {sorted(choices, key=repr)!r}, "
                         f"got {value!r}")
    return value


def check_positive_real(value, name):
    """A finite real number above 0, as a Python float.

    Parameters
    ----------
    value : real
    name : str
        Name of the argument, for error messages.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``value`` is not a real number (booleans included).
    ValueError
        If ``value`` is NaN, infinite, zero or negative.

    References
    ----------
    Błasiok & Nakkiran 2023, Section 4 (a kernel bandwidth sigma > 0);
    Cumani's notes ``004`` (the costs of a binary application are positive).

    Examples
    --------
    >>> from sparsecal.core.validation import check_positive_real
    >>> check_positive_real(10, "c_miss")
    10.0
    >>> check_positive_real(0.0, "bandwidth")
    Traceback (most recent call last):
    ...
    ValueError: bandwidth must be a finite number above 0, got 0.0
    """
    value = check_real(value, name)
    if not 0.0 < value < np.inf:
        raise ValueError(f"{name} must be a finite number above 0, got {value!r}")
    return value


def check_prior(value, name, high=1.0):
    """A value in the open interval (0, ``high``), as a Python float: a class
    prior (``high=1``), or a clipping ``eps`` (``high=0.5``).

    Parameters
    ----------
    value : real
    name : str
        Name of the argument, for error messages.
    high : float, default=1.0

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``value`` is not a real number (booleans included).
    ValueError
        If ``value`` is NaN or outside the open interval (0, ``high``).

    References
    ----------
    Cumani's notes ``004`` ("Score calibration"): the prior log-odds
    ``log(pi / (1 - pi))`` of an application must be finite.

    Examples
    --------
    >>> from sparsecal.core.validation import check_prior
    >>> check_prior(0.1, "prior")
    0.1
    >>> check_prior(1, "prior")
    Traceback (most recent call last):
    ...
    ValueError: prior must lie in (0, 1), got 1.0
    """
    value = check_real(value, name)
    if not 0.0 < value < high:
        raise ValueError(f"{name} must lie in (0, {high:g}), got {value!r}")
    return value


def check_scores_and_labels(scores, labels):
    """Probabilities and their 0/1 labels for one binary problem, at least one point.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Values in [0, 1].
    labels : array_like of {0, 1} or bool, shape (n,)

    Returns
    -------
    scores : ndarray of float32 or float64, shape (n,)
        As :func:`check_probabilities` returns them.
    labels : ndarray of uint8, shape (n,)

    Raises
    ------
    TypeError
        If ``scores`` or ``labels`` is not numeric.
    ValueError
        If either is invalid (see :func:`check_probabilities`,
        :func:`check_labels`) or ``scores`` is empty.

    References
    ----------
    Nguyen & O'Connor 2015, Section 2: a prediction ``q`` against a binary
    outcome ``y``.

    Examples
    --------
    >>> from sparsecal.core.validation import check_scores_and_labels
    >>> check_scores_and_labels([0.2, 0.9], [False, True])
    (array([0.2, 0.9]), array([0, 1], dtype=uint8))
    >>> check_scores_and_labels([], [])
    Traceback (most recent call last):
    ...
    ValueError: scores is empty: at least one score is needed
    """
    x = check_probabilities(scores, "scores")
    if x.shape[0] == 0:
        raise ValueError("scores is empty: at least one score is needed")
    return x, check_labels(labels, "labels", x.shape[0])


def check_lengths(lengths, n_rows, n_positions, name="lengths"):
    """Sentence lengths of a padded batch as an int64 array (all ``N`` if None).

    Parameters
    ----------
    lengths : array_like of int, shape (B,), or None
        Each in ``1..N``.
    n_rows : int
        B, the number of sentences.
    n_positions : int
        N, the padded length.
    name : str, default="lengths"
        Name of the argument, for error messages.

    Returns
    -------
    ndarray of int64, shape (B,)

    Raises
    ------
    TypeError
        If ``lengths`` does not hold integers.
    ValueError
        If ``lengths`` has another shape or a value outside ``1..N`` (the first
        one is named).

    References
    ----------
    Nguyen & O'Connor 2015, Section 4.2: sentences of a tagged corpus, padded
    to one length in a batch.

    Examples
    --------
    >>> from sparsecal.core.validation import check_lengths
    >>> check_lengths([2, 3], 2, 3)
    array([2, 3])
    >>> check_lengths([0, 3], 2, 3)
    Traceback (most recent call last):
    ...
    ValueError: lengths[0] = 0 is outside 1..3 (every sentence has 1 to N tokens)
    """
    if lengths is None:
        return np.full(n_rows, n_positions, np.int64)
    arr = as_array(lengths, name)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
    if arr.shape != (n_rows,):
        raise ValueError(f"{name} has shape {arr.shape}, expected ({n_rows},)")
    bad = (arr < 1) | (arr > n_positions)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{i}] = {arr[i]} is outside 1..{n_positions} (every "
                         "sentence has 1 to N tokens)")
    return arr.astype(np.int64)


def check_tag_matrix(tags, n_tags, name):
    """A padded matrix of tag indices ``[B, N]`` as int64, ``-1`` for "no tag".

    Parameters
    ----------
    tags : array_like of int, shape (B, N)
        Values in ``[-1, n_tags)``.
    n_tags : int
        Size of the tag inventory.
    name : str
        Name of the argument, for error messages.

    Returns
    -------
    ndarray of int64, shape (B, N)

    Raises
    ------
    TypeError
        If ``tags`` does not hold integers.
    ValueError
        If ``tags`` is not 2-D or holds a value outside ``[-1, n_tags)`` (the
        first one is named by row and position).

    References
    ----------
    Jagannatha & Yu 2020, Section 2.1: a structured output is a label sequence
    per sentence.

    Examples
    --------
    >>> from sparsecal.core.validation import check_tag_matrix
    >>> check_tag_matrix([[0, 1], [2, -1]], 3, "gold")
    array([[ 0,  1],
           [ 2, -1]])
    >>> check_tag_matrix([[0, 3]], 3, "gold")
    Traceback (most recent call last):
    ...
    ValueError: gold[0, 1] = 3 is outside [-1, 3) (tag indices, -1 for no tag)
    """
    arr = as_array(tags, name)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional [B, N], got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer tag indices, got dtype {arr.dtype}")
    bad = (arr < -1) | (arr >= n_tags)
    if bad.any():
        b, t = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name}[{b}, {t}] = {arr[b, t]} is outside [-1, {n_tags}) (tag "
                         "indices, -1 for no tag)")
    return arr.astype(np.int64)
