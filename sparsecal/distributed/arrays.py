"""Binary problems given as two dask arrays: the array-form public functions
(:func:`sparsecal.smooth_ece`, :func:`sparsecal.brier_corp`,
:func:`sparsecal.dcf`, ...) on a cluster.

Each is a thin wrapper: the arrays become entries of one tag
(:func:`~sparsecal.distributed.entries.from_arrays`, validated chunk by chunk
on the workers) and the entry-level distributed form computes the result, of
the single-machine type (what :mod:`sparsecal.core.dispatch` calls for dask
arrays).
"""
from ..core.groups import TagGroups
from .application import application_from_table, bayes_error_plot
from .entries import from_arrays
from .measures import corp_from_table
from .resampling import set_tables
from .smooth import smooth_ece, smooth_reliability

__all__ = ["binary_bayes_error_plot", "binary_brier_corp", "binary_cllr", "binary_dcf",
           "binary_log_loss_corp", "binary_min_cllr", "binary_min_dcf",
           "binary_smooth_ece", "binary_smooth_reliability"]


def _table(scores, labels):
    """The merged distinct-score table of all the binary entries."""
    return set_tables(from_arrays(scores, labels), TagGroups.scw(1))[0]


def binary_smooth_ece(scores, labels, *, bandwidth=None):
    """:func:`sparsecal.smooth_ece` of dask arrays.

    Parameters
    ----------
    scores : dask.array.Array of float32 or float64, shape (n,)
    labels : dask.array.Array or array_like of {0, 1}, shape (n,)
    bandwidth : float, optional

    Returns
    -------
    SmoothECE

    Raises
    ------
    TypeError, ValueError
        As :func:`~sparsecal.distributed.entries.from_arrays` and
        :func:`~sparsecal.distributed.smooth.smooth_ece`.

    References
    ----------
    Błasiok & Nakkiran 2023, "Smooth ECE".

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> q = np.random.default_rng(0).random(400).round(2)
    >>> y = (q > 0.5).astype(np.uint8)
    >>> got = binary_smooth_ece(da.from_array(q, chunks=150), y)
    >>> abs(got.value - sc.smooth_ece(q, y).value) < 1e-9
    True
    """
    return smooth_ece(from_arrays(scores, labels), bandwidth=bandwidth)[0]


def binary_smooth_reliability(scores, labels, *, bandwidth=None, n_points=200):
    """:func:`sparsecal.smooth_reliability` of dask arrays.

    Parameters
    ----------
    scores : dask.array.Array of float32 or float64, shape (n,)
    labels : dask.array.Array or array_like of {0, 1}, shape (n,)
    bandwidth : float, optional
    n_points : int, default=200

    Returns
    -------
    SmoothReliability

    Raises
    ------
    TypeError, ValueError
        As :func:`~sparsecal.distributed.smooth.smooth_reliability`.

    References
    ----------
    Błasiok & Nakkiran 2023, "Smooth ECE".

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> q = np.random.default_rng(0).random(400).round(2)
    >>> r = binary_smooth_reliability(da.from_array(q, chunks=150), q > 0.5, n_points=5)
    >>> r.mesh.shape
    (5,)
    """
    return smooth_reliability(from_arrays(scores, labels), bandwidth=bandwidth,
                              n_points=n_points)


def binary_brier_corp(scores, labels):
    """:func:`sparsecal.brier_corp` of dask arrays (PAV of the merged
    distinct-score table, :func:`~sparsecal.distributed.measures.corp_from_table`).

    Parameters
    ----------
    scores : dask.array.Array of float32 or float64, shape (n,)
    labels : dask.array.Array or array_like of {0, 1}, shape (n,)

    Returns
    -------
    ScoreDecomposition

    Raises
    ------
    TypeError, ValueError
        As :func:`~sparsecal.distributed.entries.from_arrays`.

    References
    ----------
    Dimitriadis, Gneiting & Jordan 2021 (CORP).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> q = np.array([0.2, 0.2, 0.8, 0.8])
    >>> d = binary_brier_corp(da.from_array(q, chunks=3), [0, 1, 1, 1])
    >>> abs(d.score - sc.brier_corp(q, [0, 1, 1, 1]).score) < 1e-12
    True
    """
    return corp_from_table(*_table(scores, labels), rule="brier")


def binary_log_loss_corp(scores, labels):
    """:func:`sparsecal.log_loss_corp` of dask arrays.

    Parameters
    ----------
    scores : dask.array.Array of float32 or float64, shape (n,)
    labels : dask.array.Array or array_like of {0, 1}, shape (n,)

    Returns
    -------
    ScoreDecomposition

    Raises
    ------
    TypeError, ValueError
        As :func:`~sparsecal.distributed.entries.from_arrays`.

    References
    ----------
    Dimitriadis, Gneiting & Jordan 2021 (CORP).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> d = binary_log_loss_corp(da.from_array(np.array([0.2, 0.8]), chunks=1), [0, 1])
    >>> d.rule
    'log_loss'
    """
    return corp_from_table(*_table(scores, labels), rule="log_loss")


def _application(name, scores, labels, prior=None):
    return application_from_table(*_table(scores, labels), name, prior)


def binary_dcf(scores, labels, *, prior):
    """:func:`sparsecal.dcf` of dask arrays (probabilities, empirical training
    prior, unit costs, normalized).

    Parameters
    ----------
    scores : dask.array.Array of float32 or float64, shape (n,)
    labels : dask.array.Array or array_like of {0, 1}, shape (n,)
    prior : float

    Returns
    -------
    DetectionCost

    Raises
    ------
    TypeError, ValueError
        As :func:`~sparsecal.distributed.application.application_from_table`.

    References
    ----------
    Cumani, "Score calibration and fusion" (``004``), Bayes decisions.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> q, y = np.array([0.1, 0.4, 0.6, 0.9]), [0, 1, 0, 1]
    >>> binary_dcf(da.from_array(q, chunks=3), y, prior=0.3).value == sc.dcf(q, y, prior=0.3).value
    True
    """
    return _application("dcf", scores, labels, prior)


def binary_min_dcf(scores, labels, *, prior):
    """:func:`sparsecal.min_dcf` of dask arrays.

    Parameters
    ----------
    scores : dask.array.Array of float32 or float64, shape (n,)
    labels : dask.array.Array or array_like of {0, 1}, shape (n,)
    prior : float

    Returns
    -------
    DetectionCost

    Raises
    ------
    TypeError, ValueError
        As :func:`~sparsecal.distributed.application.application_from_table`.

    References
    ----------
    Cumani, "Score calibration and fusion" (``004``), minimum DCF.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> q = np.array([0.1, 0.4, 0.6, 0.9])
    >>> float(binary_min_dcf(da.from_array(q, chunks=3), [0, 1, 0, 1], prior=0.5).value) <= 1
    True
    """
    return _application("min-dcf", scores, labels, prior)


def binary_cllr(scores, labels):
    """:func:`sparsecal.cllr` of dask arrays.

    Parameters
    ----------
    scores : dask.array.Array of float32 or float64, shape (n,)
    labels : dask.array.Array or array_like of {0, 1}, shape (n,)

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        As :func:`~sparsecal.distributed.application.application_from_table`.

    References
    ----------
    Brümmer & du Preez 2006 (Cllr); Cumani (``004``).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> q, y = np.array([0.1, 0.4, 0.6, 0.9]), [0, 1, 0, 1]
    >>> abs(binary_cllr(da.from_array(q, chunks=3), y) - sc.cllr(q, y)) < 1e-12
    True
    """
    return _application("cllr", scores, labels)


def binary_min_cllr(scores, labels):
    """:func:`sparsecal.min_cllr` of dask arrays.

    Parameters
    ----------
    scores : dask.array.Array of float32 or float64, shape (n,)
    labels : dask.array.Array or array_like of {0, 1}, shape (n,)

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        As :func:`~sparsecal.distributed.application.application_from_table`.

    References
    ----------
    Brümmer & du Preez 2006 (minCllr); Cumani (``004``).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> q, y = np.array([0.1, 0.4, 0.6, 0.9]), [0, 1, 0, 1]
    >>> abs(binary_min_cllr(da.from_array(q, chunks=3), y) - sc.min_cllr(q, y)) < 1e-12
    True
    """
    return _application("min-cllr", scores, labels)


def binary_bayes_error_plot(scores, labels, *, prior_log_odds=None, training_prior=None):
    """:func:`sparsecal.bayes_error_plot` of dask arrays.

    Parameters
    ----------
    scores : dask.array.Array of float32 or float64, shape (n,)
    labels : dask.array.Array or array_like of {0, 1}, shape (n,)
    prior_log_odds, training_prior : optional
        As :func:`sparsecal.bayes_error_plot`.

    Returns
    -------
    BayesErrorPlot

    Raises
    ------
    TypeError, ValueError
        As :func:`~sparsecal.distributed.application.bayes_error_plot`.

    References
    ----------
    Brümmer & du Preez 2006, Section 5.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> q = np.array([0.1, 0.4, 0.6, 0.9])
    >>> p = binary_bayes_error_plot(da.from_array(q, chunks=3), [0, 1, 0, 1])
    >>> p.actual_dcf.shape == p.min_dcf.shape
    True
    """
    return bayes_error_plot(from_arrays(scores, labels), prior_log_odds=prior_log_odds,
                            training_prior=training_prior)
