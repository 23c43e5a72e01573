"""A structured tagger's outputs from files, sentence by sentence: CRF potentials
(:func:`load_potentials`) and per-token arrays laid out as padded sentences
(:func:`pad_sentences`), the inputs of :mod:`sparsecal.structured`.
"""
import os

import numpy as np

from .npyfile import read_npz
from ..core.validation import as_array, check_input_file, check_lengths

__all__ = ["POTENTIALS_ARRAYS", "load_potentials", "pad_sentences"]

#: The arrays of a potentials file: name -> (number of dimensions, kinds).
POTENTIALS_ARRAYS = {"emissions": (3, "f"), "transitions": (2, "f"), "start": (1, "f"),
                     "end": (1, "f"), "allowed": (2, "b"), "lengths": (1, "iu")}
_REQUIRED = ("emissions", "transitions")


def load_potentials(path):
    """The CRF potentials of a corpus from an ``.npz`` file, checked.

    Parameters
    ----------
    path : str or os.PathLike
        An archive of ``emissions`` (float ``[B, N, C]``: B sentences padded to N
        positions, C tags) and ``transitions`` (float ``[C, C]``, from i to j),
        optionally ``start``, ``end`` (float ``[C]``), ``allowed`` (bool
        ``[C, C]``) and ``lengths`` (``[B]``, in ``1..N``); nothing else. A
        potential of ``-inf`` forbids a tag or transition; NaN and ``+inf`` raise.

    Returns
    -------
    dict of str to ndarray
        The keyword arguments of :func:`sparsecal.crf.marginals`, ``lengths``
        always (int64; all N when the file has none).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.io import load_potentials
    >>> np.savez("crf.npz", emissions=np.zeros((2, 3, 4)), transitions=np.zeros((4, 4)),
    ...          lengths=np.array([3, 1]))
    >>> p = load_potentials("crf.npz")
    >>> sorted(p), p["lengths"].tolist()
    (['emissions', 'lengths', 'transitions'], [3, 1])
    """
    check_input_file(path, "potentials")
    name = repr(os.fspath(path))
    arrays = read_npz(path, "potentials")
    unknown = sorted(set(arrays) - set(POTENTIALS_ARRAYS))
    missing = [k for k in _REQUIRED if k not in arrays]
    if unknown or missing:
        raise ValueError(f"{name}: " + (f"unknown arrays {unknown}" if unknown else
                                        f"missing arrays {missing}")
                         + f" (a potentials file holds {sorted(POTENTIALS_ARRAYS)})")
    for key, arr in arrays.items():
        ndim, kinds = POTENTIALS_ARRAYS[key]
        if arr.ndim != ndim or arr.dtype.kind not in kinds:
            raise ValueError(f"{name}: {key} must be a {ndim}-D {_KIND_NAMES[kinds]} array, "
                             f"got {arr.dtype} of shape {arr.shape}")
    B, N, C = arrays["emissions"].shape
    if B == 0 or N == 0 or C == 0:
        raise ValueError(f"{name}: emissions is empty (shape {(B, N, C)})")
    shapes = {"transitions": (C, C), "start": (C,), "end": (C,), "allowed": (C, C)}
    for key, shape in shapes.items():
        if key in arrays and arrays[key].shape != shape:
            raise ValueError(f"{name}: {key} has shape {arrays[key].shape}, expected "
                             f"{shape} for emissions of {C} tags")
        if key in arrays and key != "allowed":
            _check_finite_above(arrays[key], f"{name}: {key}")
    _check_finite_above(arrays["emissions"], f"{name}: emissions")
    arrays["lengths"] = check_lengths(arrays.get("lengths"), B, N, f"{name}: lengths")
    return arrays


_KIND_NAMES = {"f": "float", "b": "bool", "iu": "integer"}


def _check_finite_above(arr, where):
    bad = np.isnan(arr) | (arr == np.inf)
    if bad.any():
        i = np.unravel_index(int(np.flatnonzero(bad)[0]), arr.shape)
        raise ValueError(f"{where}{list(map(int, i))} is {arr[i]} (potentials are finite "
                         "or -inf)")


def pad_sentences(values, lengths, fill=0):
    """A per-token array (sentences one after the other) laid out as padded sentences.

    Parameters
    ----------
    values : array_like, shape (n_tokens, ...)
    lengths : array_like of int, shape (n_sentences,)
        Tokens per sentence, each at least 1, summing to ``n_tokens``.
    fill : scalar, default 0
        The value past a sentence's end.

    Returns
    -------
    ndarray, shape (n_sentences, max(lengths), ...)
        ``out[i, t] = values[sum(lengths[:i]) + t]`` for ``t < lengths[i]``.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.io import pad_sentences
    >>> pad_sentences(np.array([4, 5, 6]), [2, 1], fill=-1).tolist()
    [[4, 5], [6, -1]]
    """
    values = as_array(values, "values")
    lengths = as_array(lengths, "lengths")
    if lengths.ndim != 1 or lengths.size == 0:
        raise ValueError(f"lengths must be a non-empty 1-D array, got shape {lengths.shape}")
    lengths = check_lengths(lengths, lengths.shape[0], max(int(lengths.max()), 1))
    n = int(lengths.sum())
    if values.ndim == 0 or values.shape[0] != n:
        raise ValueError(f"the lengths sum to {n} tokens but there are "
                         f"{values.shape[0] if values.ndim else 0} rows of values")
    row = np.repeat(np.arange(lengths.shape[0]), lengths)
    pos = np.arange(n) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    out = np.full((lengths.shape[0], int(lengths.max())) + values.shape[1:], fill,
                  dtype=values.dtype)
    out[row, pos] = values
    return out
