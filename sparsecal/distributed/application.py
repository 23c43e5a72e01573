"""DCF, minDCF, Cllr, minCllr and the Bayes error plot of distributed entries by
the single-machine rules on merged distinct-score tables (DCFs bit for bit)."""
import numpy as np

from .._docs import fill_doc
from ..core.groups import TagGroups
from ..core.isotonic import isotonic_fit_pooled, isotonic_predict
from ..core.validation import DegenerateDataError, check_prior
from ..metrics.decisions import (actual_dcf, bayes_error, check_application,
                                 check_prior_log_odds, error_curve, llr_of_probabilities,
                                 llr_table, minimum_dcf)
from .checks import check_dask_entries
from .isotonic import score_tables

__all__ = ["application_from_table", "bayes_error_plot"]


def _llr_table(scores, counts, positives, training_prior=None):
    """The LLRs of a table's distinct scores, merged where equal, with counts and positives."""
    n_all, n_pos = int(counts.sum()), int(positives.sum())
    if n_pos in (0, n_all):
        raise DegenerateDataError("labels must hold both classes (a miss rate and a "
                                  "false-alarm rate are needed), got "
                                  f"{n_pos} positives of {n_all}")
    pi = n_pos / n_all if training_prior is None else training_prior
    return llr_table(llr_of_probabilities(scores, pi), positives, counts)


def _cllr_of_table(llr, n, k):
    """Cllr in bits of LLRs with ``n`` entries, ``k`` positive, each."""
    with np.errstate(invalid="ignore"):
        pos = np.where(k > 0, k * np.logaddexp(0.0, -llr), 0.0).sum() / k.sum()
        neg = np.where(n > k, (n - k) * np.logaddexp(0.0, llr), 0.0).sum() / (n - k).sum()
    return float((pos + neg) / (2 * np.log(2)))


def application_from_table(scores, counts, positives, name, prior=None, *, c_miss=1.0,
                           c_fa=1.0, normalize=True, training_prior=None):
    """:func:`sparsecal.dcf`, :func:`~sparsecal.min_dcf`, :func:`~sparsecal.cllr` or
    :func:`~sparsecal.min_cllr` of one set from its distinct-score table.

    Parameters
    ----------
    scores, counts, positives : ndarray, shape (m,)
        Sorted distinct probabilities (float64), their counts and label sums.
    name : {"dcf", "min-dcf", "cllr", "min-cllr"}
    prior, c_miss, c_fa, normalize, training_prior
        As :func:`sparsecal.dcf`.

    Returns
    -------
    DetectionCost or float

    Examples
    --------
    >>> import numpy as np, sparsecal as sc
    >>> x, n, k = np.array([0.1, 0.4, 0.8]), np.array([3, 2, 2]), np.array([0, 1, 2])
    >>> ref = sc.min_dcf(np.repeat(x, n), [0, 0, 0, 1, 0, 1, 1], prior=0.3)
    >>> application_from_table(x, n, k, "min-dcf", 0.3) == ref
    True
    """
    if training_prior is not None:
        training_prior = check_prior(training_prior, "training_prior")
    llr, n, k = _llr_table(scores, counts, positives, training_prior)
    if name in ("cllr", "min-cllr"):
        if name == "min-cllr":   # PAV on the ranks of the distinct LLRs, as min_cllr
            rank = np.arange(llr.shape[0], dtype=np.float64)
            p = isotonic_predict(rank, *isotonic_fit_pooled(rank, k / n, n.astype(float)))
            llr = llr_of_probabilities(p, int(k.sum()) / int(n.sum()))
        return _cllr_of_table(llr, n, k)
    app = check_application(prior, c_miss, c_fa)
    if name == "dcf":
        return actual_dcf(llr, n, k, *app, bool(normalize))
    return minimum_dcf(error_curve(llr, n, k), *app, bool(normalize))


@fill_doc
def bayes_error_plot(entries, *, prior_log_odds=None, training_prior=None):
    """:func:`sparsecal.bayes_error_plot` of distributed entries, bit for bit.

    Parameters
    ----------
    {dask_entries}
    prior_log_odds, training_prior
        As :func:`sparsecal.bayes_error_plot`.

    Returns
    -------
    BayesErrorPlot

    Examples
    --------
    >>> import dask.array as da, numpy as np, sparsecal as sc
    >>> x, gold = np.random.default_rng(0).dirichlet(np.ones(5), size=300), np.arange(300) % 5
    >>> got = bayes_error_plot(sc.threshold(da.from_array(x, chunks=(70, 5)), gold))
    >>> one = sc.threshold(x, gold)
    >>> bool((got.min_dcf == sc.bayes_error_plot(one.score, one.label).min_dcf).all())
    True
    """
    check_dask_entries(entries)
    grid = check_prior_log_odds(prior_log_odds)
    if training_prior is not None:
        training_prior = check_prior(training_prior, "training_prior")
    (((table,),), _) = score_tables(entries, [TagGroups.scw(entries.n_tags)])
    return bayes_error(*_llr_table(*table, training_prior), grid)
