"""Classwise ECE (Kull et al. 2019): the mean over classes of each class's ECE,
with fixed-width bins over that class's column of scores."""
from dataclasses import dataclass, field

import numpy as np

from ..core.binning import fixed_width_bins
from ..core.entries import Entries, check_entries
from ..core.validation import check_float_matrix, check_gold, check_positive_int
from .ce import ce_from_bins
from ..core.dispatch import takes_data

__all__ = ["ClasswiseECE", "classwise_ece"]


@dataclass(frozen=True)
class ClasswiseECE:
    """Classwise ECE ``value``: the mean of ``per_class``, each class's ECE over
    ``n_bins`` fixed-width bins of its scores over the ``n`` tokens.

    Examples
    --------
    See :func:`classwise_ece`.
    """

    value: float
    per_class: np.ndarray = field(repr=False)
    n_bins: int
    n: int

    def __float__(self):
        return float(self.value)

    def to_dict(self):
        return {"value": self.value, "n_classes": self.per_class.shape[0],
                "n_bins": self.n_bins, "n": self.n}


def _dense_terms(scores, gold, n_bins):
    matrix, native = check_float_matrix(scores, "scores")
    n, k = matrix.shape
    gold = check_gold(gold, n, k)
    terms = np.empty(k)
    for j in range(k):
        column = np.ascontiguousarray(matrix[:, j], dtype=native)
        bins = fixed_width_bins(column, gold == j, n_bins=n_bins)
        terms[j] = ce_from_bins(bins, 1)
    return terms, n


def _entry_terms(entries, n_bins):
    check_entries(entries)
    if entries.n_tags is None or entries.n_tokens is None:
        raise ValueError("entries must know n_tags and n_tokens for classwise_ece "
                         "(sparsecal.threshold sets both)")
    if entries.n_tokens == 0:
        raise ValueError("entries come from no tokens (n_tokens=0)")
    order = np.argsort(entries.tag, kind="stable")
    tags = entries.tag[order]
    cuts = np.searchsorted(tags, np.arange(entries.n_tags + 1))
    terms = np.zeros(entries.n_tags)
    for j in np.flatnonzero(np.diff(cuts)):
        take = order[cuts[j]:cuts[j + 1]]
        bins = fixed_width_bins(entries.score[take], entries.label[take], n_bins=n_bins)
        terms[j] = ce_from_bins(bins, 1) * take.shape[0] / entries.n_tokens
    return terms, entries.n_tokens


@takes_data(refuse="it needs the dense score matrix of every token (Kull et al. 2019)")
def classwise_ece(scores, gold=None, *, n_bins=15):
    """Classwise ECE of dense multiclass scores, or of thresholded entries (Kull et al. 2019).

    ``1/K sum_j sum_i |B_ij| / N |mean_{B_ij} p_j - mean_{B_ij} 1[y = j]|``,
    ``B_ij`` the i-th fixed-width bin of class j's scores over all N tokens; with
    entries, only the bin holding the threshold differs.

    Parameters
    ----------
    scores : array_like of float, shape (n_tokens, n_tags), or Entries
        Dense scores (a memory map is read column by column), or entries.
    gold : array_like of int, shape (n_tokens,)
        Gold tag per token (-1: none) with dense scores; None with entries.
    n_bins : int, default=15

    Returns
    -------
    ClasswiseECE

    Examples
    --------
    >>> import numpy as np
    >>> import sparsecal as sc
    >>> rng = np.random.default_rng(0)
    >>> p = rng.dirichlet(np.ones(4), size=1000)
    >>> gold = np.array([rng.choice(4, p=row) for row in p])   # calibrated
    >>> dense, entries = classwise_ece(p, gold), classwise_ece(sc.threshold(p, gold))
    >>> round(dense.value, 3), round(entries.value, 3)
    (0.029, 0.029)
    """
    n_bins = check_positive_int(n_bins, "n_bins")
    if isinstance(scores, Entries):
        if gold is not None:
            raise ValueError("gold must be None when scores are Entries (they carry labels)")
        terms, n = _entry_terms(scores, n_bins)
    else:
        if gold is None:
            raise ValueError("gold is required with dense scores")
        terms, n = _dense_terms(scores, gold, n_bins)
    return ClasswiseECE(float(np.mean(terms)), terms, n_bins, n)
