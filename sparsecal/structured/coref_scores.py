"""Coreference scores of a clustering against gold over the same mentions:
MUC (Vilain et al. 1995), B-cubed (Bagga & Baldwin 1998), CEAF-e (Luo 2005,
phi_4 with the optimal one-to-one entity alignment) and their CoNLL average
(Pradhan et al. 2014). Mentions are counted with their singletons; entity
labels are global, so labels that differ between documents keep entities
apart (one alignment over all documents equals one per document).
"""
import numpy as np

from ..core.dispatch import takes_data
from ..core.validation import as_array, check_allocation

__all__ = ["coreference_scores"]


def _prf(num_p, den_p, num_r, den_r):
    p = num_p / den_p if den_p else 0.0
    r = num_r / den_r if den_r else 0.0
    return {"precision": float(p), "recall": float(r),
            "f1": float(2 * p * r / (p + r)) if p + r else 0.0}


@takes_data(refuse="its entity alignment (CEAF-e) needs every mention of both "
                   "clusterings in memory")
def coreference_scores(gold, predicted):
    """MUC, B-cubed and CEAF-e of a clustering, and their CoNLL average.

    Parameters
    ----------
    gold, predicted : array_like of int, shape (n_mentions,)
        Each mention's gold and predicted entity label.

    Returns
    -------
    dict
        ``"muc"``, ``"b3"``, ``"ceafe"``: dicts of precision, recall, f1;
        ``"conll"``: the mean of the three F1.

    Examples
    --------
    >>> s = coreference_scores([0, 0, 0, 1, 1], [0, 0, 1, 1, 1])
    >>> round(s["muc"]["recall"], 4), round(s["b3"]["precision"], 4)
    (0.6667, 0.7333)
    """
    g, r = (as_array(x, name) for x, name in ((gold, "gold"), (predicted, "predicted")))
    for x, name in ((g, "gold"), (r, "predicted")):
        if x.ndim != 1 or x.dtype.kind not in "iu":
            raise ValueError(f"{name} must be a 1-D integer array of entity labels, got "
                             f"shape {x.shape} and dtype {x.dtype}")
    if g.shape != r.shape or g.size == 0:
        raise ValueError(f"gold and predicted must label the same non-empty mentions, got "
                         f"shapes {g.shape} and {r.shape}")
    gi = np.unique(g, return_inverse=True)[1].reshape(-1)
    ri = np.unique(r, return_inverse=True)[1].reshape(-1)
    n_g, n_r, n = int(gi.max()) + 1, int(ri.max()) + 1, g.size
    cells, count = np.unique(gi * n_r + ri, return_counts=True)
    cg, cr = cells // n_r, cells % n_r
    size_g, size_r = np.bincount(gi), np.bincount(ri)
    links = n - cells.size           # sum over entities of |K| - |partition of K|
    muc = _prf(links, n - n_r, links, n - n_g)
    b3 = _prf((count ** 2 / size_r[cr]).sum(), n, (count ** 2 / size_g[cg]).sum(), n)
    from scipy.optimize import linear_sum_assignment

    check_allocation(n_g * n_r, f"CEAF-e's alignment ({n_g} x {n_r} entities)")
    phi = np.zeros((n_g, n_r))
    phi[cg, cr] = 2 * count / (size_g[cg] + size_r[cr])
    rows, cols = linear_sum_assignment(phi, maximize=True)
    best = phi[rows, cols].sum()
    ceafe = _prf(best, n_r, best, n_g)
    return {"muc": muc, "b3": b3, "ceafe": ceafe,
            "conll": float((muc["f1"] + b3["f1"] + ceafe["f1"]) / 3)}
