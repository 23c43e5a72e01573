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
    """Classwise ECE and its per-class terms.

    Attributes
    ----------
    value : float
        Mean of ``per_class``.
    per_class : ndarray of float64, shape (n_classes,)
        ``ECE_j = sum_i |B_ij| / N |mean score - positive rate|`` of class j.
    n_bins : int
        Fixed-width bins per class.
    n : int
        N: the number of tokens (rows).

    Examples
    --------
    >>> c = classwise_ece([[0.9, 0.1], [0.2, 0.8]], [0, 0], n_bins=2)
    >>> float(c), c.per_class.tolist(), c.to_dict()["n"]
    (0.45, [0.45, 0.45], 2)
    """

    value: float
    per_class: np.ndarray = field(repr=False)
    n_bins: int
    n: int

    def __float__(self):
        return float(self.value)

    def to_dict(self):
        """Value, number of classes and bins, size."""
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
    """Classwise ECE of dense multiclass scores, or of thresholded entries.

    ``classwise-ECE = 1/K sum_j sum_i |B_ij| / N |mean_{B_ij} p_j - mean_{B_ij} 1[y = j]|``,
    where ``B_ij`` is the i-th of ``n_bins`` fixed-width bins ``[i/B, (i+1)/B)``
    of class j's scores over all N tokens (the last bin includes 1.0).

    Parameters
    ----------
    scores : array_like of float, shape (n_tokens, n_tags), or Entries
        Dense scores (softmax or marginals; a memory map is read column by
        column), or thresholded :class:`Entries`. With entries, class j's bins
        hold only its entries (score >= threshold) but every term is still
        divided by the number of tokens N: the bins above the threshold equal
        the dense ones, and only the bin holding the threshold loses the
        dropped scores and the gold tags scored below the threshold (a tag
        without entries contributes 0). With the default threshold 0.01 and 15
        bins that is the first bin ``[0, 1/15)``, so the two differ by at most
        ``1/K sum_j |sum over dropped (score - label)| / N``.
    gold : array_like of int, shape (n_tokens,)
        Gold tag per token (-1: none in the inventory, a negative for every
        class) with dense scores; must be None with entries.
    n_bins : int, default=15
        Fixed-width bins per class (15, as Kull et al.).

    Returns
    -------
    ClasswiseECE

    Raises
    ------
    TypeError
        Scores that are neither a float matrix nor Entries; non-integer gold.
    ValueError
        Scores outside [0, 1] or NaN, an empty matrix, invalid gold (shape,
        range), gold missing with dense scores or given with entries, entries
        without ``n_tags`` / ``n_tokens``, or ``n_bins`` not a positive integer.

    References
    ----------
    Kull et al. 2019, "Beyond temperature scaling: Obtaining well-calibrated
    multiclass probabilities with Dirichlet calibration", NeurIPS, Section 2
    (classwise-ECE, eq. in "Evaluation of calibration"); the same as
    ``calibration.get_ece(probs, labels, mode="marginal")`` of Kumar et al.
    2019 except at bin edges (right-closed bins there).

    Examples
    --------
    >>> import numpy as np
    >>> import sparsecal as sc
    >>> rng = np.random.default_rng(0)
    >>> p = rng.dirichlet(np.ones(4), size=1000)
    >>> gold = np.array([rng.choice(4, p=row) for row in p])   # calibrated
    >>> round(classwise_ece(p, gold).value, 3)
    0.029
    >>> entries = sc.threshold(p, gold, threshold=0.01)
    >>> round(classwise_ece(entries).value, 3)
    0.029
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
