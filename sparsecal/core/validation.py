"""Input checks at the boundary of the package.

Each check takes ``name``, the argument's name, and raises a ``TypeError`` (wrong
type) or ``ValueError`` (bad value) that names it and, for arrays, the first bad
element; the compiled kernels then assume valid data. No check modifies a
caller's array.
"""
import numbers
import os
import stat

import numpy as np

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

#: Tag columns are below 2**31 (int32 tag arrays, docs/architecture.md data model).
MAX_TAGS = 2 ** 31 - 1
#: Bytes a measure or grouping may hold per tag (counts, sums, maps: eight
#: 8-byte arrays), what a tag count is checked against before anything is
#: allocated.
TAG_BYTES = 64


class DegenerateDataError(ValueError):
    """Valid data on which a quantity is undefined: labels of one class only, or
    scores of zero variance.

    A calibrator or measure called alone raises it; per group,
    :class:`~sparsecal.calibration.GroupedCalibrator` treats such a group as one
    under ``min_entries`` and :func:`~sparsecal.evaluate` reports NaN for it, each
    with one warning naming the groups.

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
    """``x`` as an ndarray (``x`` itself if it is one), by duck typing: lists, memory
    maps, CPU tensors; None, sparse matrices, GPU tensors and ragged lists raise.
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
                         f"different lengths){_ragged_row(x)}") from None
    except (TypeError, RuntimeError) as exc:   # e.g. a GPU tensor, a tensor with grad
        raise TypeError(f"{name} cannot be read as a NumPy array ({exc}); pass a NumPy "
                        "array, a list, or a CPU tensor without grad") from None


def _ragged_row(x):
    """``": row 1 has 3 values, row 0 has 2 values"``: the first row of nested
    sequences ``x`` (depth first) whose length differs from that of the first row at
    its depth; "" if none is found (an error path: a loop over rows is fine).
    """
    def size(v):
        return len(v) if hasattr(v, "__len__") and not isinstance(v, (str, bytes)) else None

    def where(path):
        return f"row {path[0]}" + "".join(f"[{i}]" for i in path[1:])

    def say(n):
        return "is a single value" if n is None else f"has {n} value{'s' * (n != 1)}"

    try:
        shape, first = [], x   # the lengths along the first rows: shape[d] at depth d
        while size(first) is not None:
            shape.append(size(first))
            if not shape[-1]:
                break
            first = first[0]
        stack = [((i,), row) for i, row in reversed(list(enumerate(x)))]
        while stack:
            path, row = stack.pop()
            want = shape[len(path)] if len(path) < len(shape) else None
            if size(row) != want:
                return (f": {where(path)} {say(size(row))}, {where((0,) * len(path))} "
                        f"{say(want)}")
            if want:
                stack += [(path + (i,), v) for i, v in reversed(list(enumerate(row)))]
    except (TypeError, LookupError):   # not a nest of sequences
        pass
    return ""


def native_float_dtype(dtype, name):
    """``dtype`` (float32 or float64, any byte order) in native byte order, else TypeError."""
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        native = dtype.newbyteorder("=")
        if native in FLOAT_DTYPES:
            return native
    raise TypeError(f"{name} must be float32 or float64, got dtype {dtype}")


def check_float_matrix(x, name):
    """``(x, native dtype)`` for a non-empty 2-D float32/float64 matrix.

    Arrays, memory maps and other objects with a NumPy ``dtype``, ``shape`` and row
    slicing (an HDF5 dataset) are kept as they are, to be read in row chunks
    (``np.ascontiguousarray(x[r0:r1], dtype=native)``); anything else goes through
    :func:`as_array`.
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
    """``x`` as a float32/float64 array of ``ndim`` dimensions: itself when it is one,
    the native float of the same width for the other byte order, else float64.
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


def check_python_types(values, name, kinds, words, where="value {}".format):
    """Raise a TypeError naming ``name``, the first offending value (``where(i)``
    says where the ``i``-th is) and ``words`` (what the values must be) unless
    every element of the list ``values`` is an instance of ``kinds`` and not a
    boolean (before NumPy converts ``"0.5"``, ``True`` or ``1.0`` silently); one
    pass over the distinct types.
    """
    bad = {t for t in set(map(type, values))
           if not issubclass(t, kinds) or issubclass(t, (bool, np.bool_))}
    if bad:
        i = next(i for i, v in enumerate(values) if type(v) in bad)
        raise TypeError(f"{name} must hold {words}; {where(i)} is {values[i]!r} "
                        f"({type(values[i]).__name__})")


def check_probabilities(x, name):
    """A contiguous 1-D float32/float64 array of values in [0, 1] (no NaN)."""
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
    """A contiguous 1-D float32/float64 array without NaN or infinity."""
    arr = np.ascontiguousarray(as_float_array(x, name))
    if arr.size and not np.isfinite(arr).all():
        i = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"{name} must be finite; {name}[{i}] = {arr[i].item()!r}")
    return arr


def check_labels(y, name, n):
    """Binary labels (0/1 or bool) of length ``n`` as a contiguous uint8 array
    (a view of a contiguous bool or uint8 array).
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
    """None, or ``w`` as non-negative finite float64 weights of length ``n``."""
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
    """Gold tag per token as int64 of length ``n_tokens``: in ``[0, n_tags)``, or -1
    for a gold tag outside the inventory (checked in the caller's dtype).
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
    """``value`` as a float in [0, 1]."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return value


def check_positive_int(value, name, *, allow_zero=False):
    """``value`` as an int >= 1 (>= 0 with ``allow_zero``); bools and floats raise."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) \
            or value < (0 if allow_zero else 1):
        what = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be a {what} integer, got {value!r}")
    return int(value)


def check_real(value, name):
    """``value`` as a float that is not NaN (infinities allowed)."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if value != value:
        raise ValueError(f"{name} must not be NaN")
    return value


#: ``stat`` tests of the kinds of path that are not a regular file, and their words
_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISSOCK, "a socket"))


def file_kind(mode):
    """What a path of ``st_mode`` ``mode`` is, in words: "a regular file", "a FIFO
    (named pipe)", "a character device", ...
    """
    return next((words for test, words in _FILE_KINDS if test(mode)), "a regular file")


def check_input_file(path, what):
    """Raise unless ``path`` names an existing regular file (through links):
    FileNotFoundError if nothing is there, ValueError naming what is there
    instead (a directory, a FIFO, a device), each naming ``what`` and the path.
    """
    name = os.fspath(path)
    try:
        mode = os.stat(name).st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} file {name!r} does not exist") from None
    except OSError as exc:
        raise ValueError(f"cannot read {what} file {name!r}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise ValueError(f"{what} file {name!r} is {file_kind(mode)}, not a file")


def physical_memory():
    """Bytes of physical memory of this machine, or None where it is unknown."""
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):   # not POSIX, or not reported
        return None
    return pages * page_size if pages > 0 and page_size > 0 else None


def _cgroup_memory_limit():
    """The smallest memory limit of this process's cgroup and its ancestors (cgroup
    v2 ``memory.max``, v1 ``memory.limit_in_bytes``), or None."""
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:   # not Linux
        return None
    limits = []
    for line in lines:
        controllers, _, path = line.partition(":")[2].partition(":")
        if controllers == "":
            base, name = "/sys/fs/cgroup", "memory.max"
        elif "memory" in controllers.split(","):
            base, name = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
        else:
            continue
        parts = [p for p in path.split("/") if p]
        for depth in range(len(parts), -1, -1):   # a container sees its own as the root
            try:
                with open(os.path.join(base, *parts[:depth], name)) as f:
                    text = f.read().strip()
            except OSError:
                continue
            if text.isdigit():
                limits.append(int(text))
    return min(limits, default=None)


def memory_limit():
    """``(bytes, what)``: the most memory this process may allocate, the smallest
    of this machine's physical memory, its address-space limit (``RLIMIT_AS``)
    and its cgroup's memory limit, and which it is; ``(None, None)`` where none
    is known. Limits, not the memory free now: whether a call is refused does
    not depend on what else runs.
    """
    limits = [(physical_memory(), "this machine's memory"),
              (_cgroup_memory_limit(), "this process's cgroup memory limit")]
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            limits.append((soft, "this process's address-space limit RLIMIT_AS"))
    except (ImportError, OSError, ValueError):   # not POSIX
        pass
    limits = [(n, what) for n, what in limits if n is not None and n > 0]
    return min(limits, key=lambda x: x[0], default=(None, None))


def check_allocation(nbytes, what):
    """Refuse, before allocating, ``nbytes`` beyond :func:`memory_limit`, with a
    ValueError: ``what`` names the argument and value that set the size
    (``"n_bins=10**12"``).
    """
    limit, where = memory_limit()
    if limit is not None and nbytes > limit:
        raise ValueError(f"{what} needs {nbytes / 2**30:,.1f} GiB, more than "
                         f"{where} ({limit / 2**30:,.1f} GiB)")


def check_size(value, name, bytes_each, *, allow_zero=False, what=None):
    """``value`` as an int >= 1 (>= 0 with ``allow_zero``; bools and floats
    raise) whose ``value * bytes_each`` bytes fit in :func:`memory_limit`; every
    error names ``name`` (``what``: the words for the allocation, default
    ``name=value``).
    """
    value = check_positive_int(value, name, allow_zero=allow_zero)
    check_allocation(value * bytes_each, what or f"{name}={value}")
    return value


def check_n_tags(n_tags, name="n_tags"):
    """A positive tag count below 2**31 whose per-tag arrays fit in memory."""
    n_tags = check_positive_int(n_tags, name)
    if n_tags > MAX_TAGS:
        raise ValueError(f"{name} must be at most 2**31 - 1, got {n_tags}")
    return check_size(n_tags, name, TAG_BYTES)


def check_choice(value, name, choices):
    """``value`` if it is one of ``choices``, else a ValueError listing them."""
    if value not in choices:
        # sorted by repr: choices may mix types (None and strings)
        raise ValueError(f"{name} must be one of {sorted(choices, key=repr)!r}, "
                         f"got {value!r}")
    return value


def check_positive_real(value, name):
    """``value`` as a finite float above 0."""
    value = check_real(value, name)
    if not 0.0 < value < np.inf:
        raise ValueError(f"{name} must be a finite number above 0, got {value!r}")
    return value


def check_prior(value, name, high=1.0):
    """``value`` as a float in the open interval (0, ``high``): a class prior, or a
    clipping ``eps`` (``high=0.5``).
    """
    value = check_real(value, name)
    if not 0.0 < value < high:
        raise ValueError(f"{name} must lie in (0, {high:g}), got {value!r}")
    return value


def check_scores_and_labels(scores, labels):
    """``(scores, labels)`` of one binary problem, as :func:`check_probabilities` and
    :func:`check_labels` return them; at least one point.
    """
    x = check_probabilities(scores, "scores")
    if x.shape[0] == 0:
        raise ValueError("scores is empty: at least one score is needed")
    return x, check_labels(labels, "labels", x.shape[0])


def check_lengths(lengths, n_rows, n_positions, name="lengths"):
    """Sentence lengths of a padded batch of ``n_rows`` as int64, each in
    ``1..n_positions`` (all ``n_positions`` if None).
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
    """A padded ``[B, N]`` matrix of tag indices in ``[-1, n_tags)`` as int64
    (-1: no tag).
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
