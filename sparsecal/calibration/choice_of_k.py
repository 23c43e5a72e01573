"""The heuristic choice of k of Jagannatha & Yu (2020), Section 2.5 and Appendix A,
Algorithm 1.
"""
from dataclasses import dataclass

import numpy as np

from ..core.validation import as_array, check_labels, check_positive_int
from ..io.tables import number, plural, summary
from .base import clone
from .forecaster import Forecaster
from ..core.dispatch import takes_data

__all__ = ["KChoice", "heuristic_k"]


@dataclass(frozen=True, eq=False)
class KChoice:
    """The outcome of :func:`heuristic_k`: the chosen ``k`` (ties: the earlier), the
    candidates ``ks``, each one's ``ece``, training ``n_events`` and ``n_positive``,
    and the chosen ``forecaster``.

    Examples
    --------
    See :func:`heuristic_k`.
    """

    k: int
    ks: tuple
    ece: np.ndarray
    n_events: np.ndarray
    n_positive: np.ndarray
    forecaster: object

    def __repr__(self):
        return summary(self, f"k={self.k}", f"ECE={number(self.ece[self.ks.index(self.k)])}",
                       f"{plural(len(self.ks), 'candidate')} from {min(self.ks)} to "
                       f"{max(self.ks)}")

    def to_dict(self):
        return {"k": self.k, "ks": list(self.ks), "ece": self.ece.tolist(),
                "n_events": self.n_events.tolist(), "n_positive": self.n_positive.tolist()}


def _ranks(features, labels, name):
    if not hasattr(features, "keys") or "rank" not in features:
        raise ValueError(f"{name} must be a mapping with a 'rank' column (the events' rank "
                         "among the top k, as Events.features)")
    rank = as_array(features["rank"], f"{name}['rank']")
    if rank.ndim != 1 or rank.dtype.kind not in "iuf" or (rank != np.round(rank)).any() \
            or (rank < 1).any():
        raise ValueError(f"{name}['rank'] must be a 1-D array of ranks 1, 2, ...")
    return rank, check_labels(labels, f"{name} labels", rank.shape[0])


@takes_data(refuse="it fits forecasters on the event features in one process")
def heuristic_k(features, labels, ks=(2, 3), forecaster=None, validation=None, n_bins=20):
    """Choose k: for each candidate, a forecaster trained on the events of rank <= k;
    the one of lowest ECE (``n_bins`` fixed-width bins) on the rank-1 events is kept.

    Parameters
    ----------
    features : mapping of str to array_like of shape (n_events,)
        Dev event features with a ``"rank"`` column.
    labels : array_like of {0, 1} or bool, shape (n_events,)
    ks : sequence of int, default (2, 3)
        Distinct candidates.
    forecaster : Forecaster, optional
        The unfitted model (cloned for each k).
    validation : (features, labels), optional
        Whose rank-1 events evaluate the candidates; default the dev events.
    n_bins : int, default 20

    Returns
    -------
    KChoice

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.calibration import Forecaster, heuristic_k
    >>> rng = np.random.default_rng(0)
    >>> rank, mean = np.tile([1, 2, 3], 500), rng.random(1500)
    >>> choice = heuristic_k({"mean": mean, "rank": rank}, rng.random(1500) < mean / rank,
    ...                      ks=(1, 2, 3), forecaster=Forecaster(max_iter=20))
    >>> choice.n_events.tolist(), choice.to_dict()["k"] in (1, 2, 3)
    ([500, 1000, 1500], True)
    """
    from ..metrics.binary import calibration_error

    rank, y = _ranks(features, labels, "features")
    if validation is None:
        val_features, val_y, val_rank = features, y, rank
    else:
        if not isinstance(validation, tuple) or len(validation) != 2:
            raise ValueError("validation must be a (features, labels) pair")
        val_rank, val_y = _ranks(validation[0], validation[1], "validation")
        val_features = validation[0]
    if isinstance(ks, (str, bytes)) or not hasattr(ks, "__len__") or not len(ks):
        raise ValueError(f"ks must be a non-empty sequence of positive integers, got {ks!r}")
    ks = tuple(check_positive_int(k, "ks") for k in ks)
    if len(set(ks)) != len(ks):
        raise ValueError(f"ks must be distinct, got {ks}")
    n_bins = check_positive_int(n_bins, "n_bins")
    base = Forecaster() if forecaster is None else forecaster
    top = val_rank == 1
    if not top.any():
        raise ValueError("there is no rank-1 validation event to evaluate the candidates on")
    top_features = {name: np.asarray(col)[top] for name, col in val_features.items()}
    ece, n_events, n_pos, fitted = [], [], [], []
    for k in ks:
        keep = rank <= k
        if y[keep].min(initial=1) == y[keep].max(initial=0):
            raise ValueError(f"the events of rank <= {k} are all of one class (or none): "
                             "no forecaster can be trained for this k")
        model = clone(base).fit({name: np.asarray(col)[keep] for name, col in features.items()},
                                y[keep])
        p = model.predict(top_features)
        ece.append(calibration_error(p, val_y[top], norm=1, binning="fixed",
                                     n_bins=n_bins).value)
        n_events.append(int(keep.sum()))
        n_pos.append(int(y[keep].sum()))
        fitted.append(model)
    best = int(np.argmin(ece))          # the first minimum: ties go to the earlier k
    return KChoice(ks[best], ks, np.array(ece), np.array(n_events, np.int64),
                   np.array(n_pos, np.int64), fitted[best])
