"""What the displays' ``from_results`` accept: a result alone (label None), in a
list with labels, or in a dict keyed by label; an EvaluationResult duck-typed,
so that plotting does not import evaluation."""
from collections.abc import Mapping, Sequence

from ..core.binning import BinStats
from ..metrics import CalibrationError


def _is_evaluation(x):
    """An EvaluationResult? Duck-typed, so that plotting does not import evaluation."""
    return hasattr(x, "smce") and hasattr(x, "gmce") and hasattr(x, "groups")


def _check_labels_arg(labels, n, what="curves"):
    """``n`` labels (str or None) from None, one str or a sequence of ``n``."""
    if labels is None:
        return [None] * n
    if isinstance(labels, str):
        labels = [labels]
    labels = list(labels)
    if len(labels) != n:
        raise ValueError(f"got {len(labels)} labels for {n} {what}")
    return [None if lab is None else str(lab) for lab in labels]


def _as_ce(x, what, evaluation_attr="smce"):
    """A CalibrationError from a CalibrationError or an EvaluationResult."""
    if isinstance(x, CalibrationError):
        ce = x
    elif _is_evaluation(x):
        ce = getattr(x, evaluation_attr, None) or x.smce
    else:
        raise TypeError(f"{what} must be a CalibrationError or an EvaluationResult, got "
                        f"{type(x).__name__}")
    if not isinstance(ce.bins, BinStats) or not (ce.bins.count > 0).any():
        raise ValueError(f"{what} has no non-empty bins to plot")
    return ce


def _curves(results, labels, what="results", evaluation_attr="smce"):
    """[(label, CalibrationError)] from one result, a sequence or a mapping."""
    if isinstance(results, Mapping):
        if not results:
            raise ValueError(f"{what} is empty")
        if labels is not None:
            raise ValueError(f"give labels either as the keys of {what} or as labels, "
                             "not both")
        items = [(str(k), v) for k, v in results.items()]
    elif isinstance(results, CalibrationError) or _is_evaluation(results):
        items = list(zip(_check_labels_arg(labels, 1), [results]))
    elif isinstance(results, Sequence) and not isinstance(results, str):
        if len(results) == 0:
            raise ValueError(f"{what} is empty")
        items = list(zip(_check_labels_arg(labels, len(results)), results))
    else:
        raise TypeError(f"{what} must be a CalibrationError, an EvaluationResult, or a "
                        f"list or dict of them; got {type(results).__name__}")
    return [(lab, _as_ce(r, f"{what}[{lab if lab is not None else i}]", evaluation_attr))
            for i, (lab, r) in enumerate(items)]


def _labelled(items, cls, what, source):
    """``[(label, item)]`` from one ``cls`` instance (label None) or a dict of them
    (keys as labels); ``source`` names the function that makes them."""
    pairs = list(items.items()) if isinstance(items, Mapping) else [(None, items)]
    for _, item in pairs:
        if not isinstance(item, cls):
            raise TypeError(f"{what} must be a {cls.__name__} (from {source}) or a dict "
                            f"of them, got {type(item).__name__}")
    if not pairs:
        raise ValueError(f"{what} is empty")
    return pairs
