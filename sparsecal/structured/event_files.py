"""Events saved as an entries file (:func:`sparsecal.io.save_entries`: score,
type, correctness, sentence), so every ``--entries`` reads it, with the arrays
``event_start``, ``event_length``, ``event_rank``, ``event_tags``, further
features as ``feature_<name>`` and the metadata record ``"events"``.
"""
import numpy as np

from ..core.validation import as_array, check_finite
from .events import Events, make_events

__all__ = ["load_events", "save_events"]

#: Version of the ``"events"`` metadata record.
EVENTS_VERSION = 1

#: The per-event arrays saved beside the entries (the file's names are
#: ``event_`` + these).
_ARRAYS = ("start", "length", "rank", "tags")


def save_events(path, events, *, features=None):
    """Write events as an entries file with their features, atomically.

    Parameters
    ----------
    path : str or os.PathLike
        ``.npz`` is appended when missing.
    events : Events
    features : dict of str to array_like of float, optional
        Further finite per-event features (e.g. ``sample_confidence(P).features()``).

    Returns
    -------
    None

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.structured import softmax_sequence_events
    >>> ev = softmax_sequence_events(np.array([[[0.9, 0.1], [0.4, 0.6]]]), [[0, 1]], k=2)
    >>> save_events("events.npz", ev)
    >>> load_events("events.npz").rank.tolist()
    [1, 2]
    """
    from ..io.arrays import save_entries
    if not isinstance(events, Events):
        raise TypeError(f"events must be an Events, got {type(events).__name__}")
    extra = {f"feature_{name}": _feature(value, f"features[{name!r}]", len(events))
             for name, value in _check_names(features or {}).items()}
    info = {"version": EVENTS_VERSION, "kind": events.kind,
            "type_names": list(events.type_names), "features": sorted(features or {})}
    extra.update({"event_" + name: getattr(events, name) for name in _ARRAYS})
    save_entries(path, events.entries, extra_metadata={"events": info}, extra_arrays=extra)


def load_events(path, *, features=False):
    """Read the events of :func:`save_events`, every array checked.

    Parameters
    ----------
    path : str or os.PathLike
    features : bool, default=False
        Also return the further features (a dict).

    Returns
    -------
    Events, or (Events, dict)

    Examples
    --------
    See :func:`save_events`.
    """
    import os

    from ..io.arrays import load_entries
    name = os.fspath(path)
    entries, meta, arrays = load_entries(path, extras=True)
    info = meta.get("events")
    if not isinstance(info, dict):
        raise ValueError(f"{name!r} holds entries but no events (write events with "
                         "`sparsecal events -o` or sparsecal.structured.save_events)")
    if info.get("version") != EVENTS_VERSION:
        raise ValueError(f"{name!r}: expected events version {EVENTS_VERSION}, got "
                         f"{info.get('version')!r}")
    kind, names = info.get("kind"), info.get("type_names")
    if kind not in ("sequence", "span"):
        raise ValueError(f"{name!r}: events kind must be 'sequence' or 'span', got {kind!r}")
    if (not isinstance(names, list) or not all(isinstance(t, str) for t in names)
            or entries.n_tags != len(names) or len(set(names)) != len(names)):
        raise ValueError(f"{name!r}: type_names must be {entries.n_tags} distinct strings, "
                         f"one per event type, got {names!r}")
    if entries.token is None or entries.n_tokens is None:
        raise ValueError(f"{name!r}: events need the 'token' array (their sentences) and "
                         "n_tokens (the number of sentences)")
    names_f = info.get("features", [])
    if not isinstance(names_f, list) or not all(isinstance(f, str) for f in names_f):
        raise ValueError(f"{name!r}: events features must be a list of names, got "
                         f"{names_f!r}")
    missing = [f"event_{a}" for a in _ARRAYS if f"event_{a}" not in arrays]
    missing += [f"feature_{f}" for f in names_f if f"feature_{f}" not in arrays]
    if missing:
        raise ValueError(f"{name!r} lacks the event arrays {missing}")
    got = {a: _int_array(arrays[f"event_{a}"], f"{name!r}: event_{a}",
                         2 if a == "tags" else 1, len(entries)) for a in _ARRAYS}
    width = got["tags"].shape[1]
    for a, low in (("start", 0), ("length", 1), ("rank", 1), ("tags", -1)):
        if got[a].size and got[a].min() < low:
            raise ValueError(f"{name!r}: event_{a} has values under {low}")
    if got["length"].size and got["length"].max() > width:
        raise ValueError(f"{name!r}: an event_length exceeds the {width} columns of "
                         "event_tags")
    sentence, type_ = entries.token, entries.tag.astype(np.int64)
    inside = np.arange(width)[None] < got["length"][:, None]
    wrong = {"event_tags of -1 inside an event, or not -1 past its length":
             np.flatnonzero(((got["tags"] >= 0) != inside).any(1))}
    if kind == "sequence":   # whole sentences, typed by rank
        wrong["sequence events must start at 0"] = np.flatnonzero(got["start"] != 0)
        wrong["a sequence event's type is its rank - 1"] = \
            np.flatnonzero(type_ != got["rank"] - 1)
        same = np.diff(sentence) == 0   # (in sentence order) the sentence's length
        wrong["sequence events out of sentence order"] = np.flatnonzero(np.diff(sentence) < 0)
        wrong["sequence events of one sentence must have its length"] = \
            np.flatnonzero(same & (np.diff(got["length"]) != 0)) + 1
    for problem, bad in wrong.items():
        if bad.size:
            raise ValueError(f"{name!r}: event {int(bad[0])}: {problem}")
    events = make_events(kind, entries.score, entries.label, sentence, got["start"],
                         got["length"], got["rank"], type_, got["tags"], names,
                         entries.n_tokens)
    if not features:
        return events
    return events, {f: _feature(arrays[f"feature_{f}"], f"{name!r}: feature_{f}",
                                len(events)) for f in names_f}


def _check_names(features):
    if not hasattr(features, "items"):
        raise TypeError(f"features must be a mapping of name to array, got "
                        f"{type(features).__name__}")
    for key in features:
        if not isinstance(key, str) or not key:
            raise ValueError(f"feature names must be non-empty strings, got {key!r}")
    return features


def _feature(x, name, n):
    arr = check_finite(x, name)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {arr.shape}")
    return arr.astype(np.float64, copy=False)


def _int_array(x, name, ndim, n):
    arr = as_array(x, name)
    if arr.dtype.kind not in "iu" or arr.ndim != ndim or arr.shape[0] != n:
        raise ValueError(f"{name} must be an integer array of {ndim} dimension(s) and {n} "
                         f"rows, got {arr.dtype} of shape {arr.shape}")
    return arr.astype(np.int64, copy=False)
