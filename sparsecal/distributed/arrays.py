"""Binary problems given as two dask arrays: the array-form public functions
(:func:`sparsecal.smooth_ece`, :func:`sparsecal.brier_corp`,
:func:`sparsecal.dcf`, ...) on a cluster.

Each is a thin wrapper: the arrays become entries of one tag
(:func:`~sparsecal.distributed.entries.from_arrays`, validated chunk by chunk
on the workers) and the entry-level distributed form computes the result, of
the single-machine type (what :mod:`sparsecal.core.dispatch` calls for dask
arrays).
"""
from ..core.dispatch import implements
from ..metrics import application, brier, consistency, corp, smooth
from ..core.groups import TagGroups
from ..core.validation import check_choice, check_prior
from ..metrics.brier import decomposition_from_bins
from ..metrics.consistency import CalibrationTest
from ..metrics.decisions import check_application
from ..metrics.marginal import check_ce_options
from ..metrics.resampling import check_random_state, check_resamples
from .application import application_from_table, bayes_error_plot
from .entries import from_arrays
from .equal_mass import equal_mass_bin_stats
from .measures import _group_sums, binned_errors, corp_from_table
from .resampling import set_tables, table_calibration_tests
from .smooth import smooth_ece, smooth_reliability

__all__ = ["binary_bayes_error_plot", "binary_brier_decomposition", "binary_calibration_test", "check_probability_scores", "binary_brier_corp", "binary_cllr", "binary_dcf",
           "binary_log_loss_corp", "binary_min_cllr", "binary_min_dcf",
           "binary_smooth_ece", "binary_smooth_reliability"]


def _table(entries):
    """The merged distinct-score table of all the binary entries."""
    return set_tables(entries, TagGroups.scw(1))[0]


@implements(smooth.smooth_ece)
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


@implements(smooth.smooth_reliability)
def binary_smooth_reliability(scores, labels, *, bandwidth=None, n_points=200):
    """:func:`sparsecal.smooth_reliability` of dask arrays.

    Parameters
    ----------
    scores, labels : dask.array.Array
        As :func:`binary_smooth_ece`.
    bandwidth, n_points : optional
        As :func:`sparsecal.smooth_reliability`.

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


@implements(corp.brier_corp)
def binary_brier_corp(scores, labels):
    return corp_from_table(*_table(from_arrays(scores, labels)), rule="brier")


@implements(corp.log_loss_corp)
def binary_log_loss_corp(scores, labels):
    return corp_from_table(*_table(from_arrays(scores, labels)), rule="log_loss")


_CORP_DOC = """:func:`sparsecal.{public}` of dask arrays: PAV of the merged
    distinct-score table (:func:`~sparsecal.distributed.measures.corp_from_table`).

    Parameters
    ----------
    scores : dask.array.Array of float32 or float64, shape (n,)
    labels : dask.array.Array or array_like of {{0, 1}}, shape (n,)

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
    >>> q, y = np.array([0.2, 0.2, 0.8, 0.8]), [0, 1, 1, 1]
    >>> d = {name}(da.from_array(q, chunks=3), y)
    >>> abs(d.score - sc.{public}(q, y).score) < 1e-12
    True
    """
for _f in (binary_brier_corp, binary_log_loss_corp):
    _f.__doc__ = _CORP_DOC.format(public=_f.__name__[len("binary_"):], name=_f.__name__)


def _application(name, scores, labels, prior=None, scores_are="probability", **options):
    """An application measure of dask arrays, its options checked before any
    chunk is computed."""
    check_probability_scores(scores_are)
    if name in ("dcf", "min-dcf"):
        check_application(prior, options.get("c_miss", 1.0), options.get("c_fa", 1.0))
    if options.get("training_prior") is not None:
        check_prior(options["training_prior"], "training_prior")
    return application_from_table(*_table(from_arrays(scores, labels)), name, prior, **options)


def check_probability_scores(scores_are):
    """Refuse LLR scores: dask arrays are taken as probabilities.

    Parameters
    ----------
    scores_are : {"probability", "llr"}

    Raises
    ------
    ValueError
        An unknown ``scores_are``.
    TypeError
        For "llr": the distributed entries hold probabilities in [0, 1], each
        chunk checked as such (:func:`~sparsecal.distributed.entries.from_arrays`).

    Examples
    --------
    >>> check_probability_scores("probability")
    >>> check_probability_scores("llr")
    Traceback (most recent call last):
    ...
    TypeError: scores_are='llr' is not supported on distributed (dask) data: the distributed entries hold probabilities in [0, 1] (each chunk is checked as such); give probabilities
    """
    check_choice(scores_are, "scores_are", {"probability", "llr"})
    if scores_are == "llr":
        raise TypeError("scores_are='llr' is not supported on distributed (dask) data: the "
                        "distributed entries hold probabilities in [0, 1] (each chunk is "
                        "checked as such); give probabilities")


@implements(application.dcf)
def binary_dcf(scores, labels, *, prior, c_miss=1.0, c_fa=1.0, normalize=True,
               scores_are="probability", training_prior=None):
    return _application("dcf", scores, labels, prior, scores_are, c_miss=c_miss, c_fa=c_fa,
                        normalize=normalize, training_prior=training_prior)


@implements(application.min_dcf)
def binary_min_dcf(scores, labels, *, prior, c_miss=1.0, c_fa=1.0, normalize=True,
                   scores_are="probability", training_prior=None):
    return _application("min-dcf", scores, labels, prior, scores_are, c_miss=c_miss,
                        c_fa=c_fa, normalize=normalize, training_prior=training_prior)


@implements(application.cllr)
def binary_cllr(scores, labels, *, scores_are="probability", training_prior=None):
    return _application("cllr", scores, labels, None, scores_are,
                        training_prior=training_prior)


@implements(application.min_cllr)
def binary_min_cllr(scores, labels, *, scores_are="probability", training_prior=None):
    return _application("min-cllr", scores, labels, None, scores_are,
                        training_prior=training_prior)


_APPLICATION_DOC = """:func:`sparsecal.{public}` of dask arrays of probabilities, from the
    merged distinct-score table
    (:func:`~sparsecal.distributed.application.application_from_table`): every
    option is a function of that table, so results equal the single machine's.

    Parameters
    ----------
    scores : dask.array.Array of float32 or float64, shape (n,)
    labels : dask.array.Array or array_like of {{0, 1}}, shape (n,){prior_doc}
    scores_are : {{"probability"}}, default="probability"
        "llr" is refused (:func:`check_probability_scores`).
    training_prior : float, optional
        As :func:`sparsecal.{public}`.

    Returns
    -------
    {returns}

    Raises
    ------
    TypeError, ValueError
        As :func:`~sparsecal.distributed.application.application_from_table`.

    References
    ----------
    Brümmer & du Preez 2006; Cumani, "Score calibration and fusion" (``004``).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> q, y = np.array([0.1, 0.4, 0.6, 0.9, 0.4]), [0, 1, 0, 1, 1]
    >>> got = {name}(da.from_array(q, chunks=3), y{prior_arg})
    >>> ref = sc.{public}(q, y{prior_arg})
    >>> abs(float(getattr(got, "value", got)) - float(getattr(ref, "value", ref))) < 1e-12
    True
    """
for _f, _returns, _prior in [(binary_dcf, "DetectionCost", True),
                             (binary_min_dcf, "DetectionCost", True),
                             (binary_cllr, "float", False), (binary_min_cllr, "float", False)]:
    _f.__doc__ = _APPLICATION_DOC.format(
        public=_f.__name__[len("binary_"):], name=_f.__name__, returns=_returns,
        prior_doc=("\n    prior : float\n    c_miss, c_fa : float, default=1.0"
                   "\n    normalize : bool, default=True") if _prior else "",
        prior_arg=", prior=0.3" if _prior else "")


@implements(application.bayes_error_plot)
def binary_bayes_error_plot(scores, labels, *, prior_log_odds=None, scores_are="probability",
                            training_prior=None):
    """:func:`sparsecal.bayes_error_plot` of dask arrays.

    Parameters
    ----------
    scores : dask.array.Array of float32 or float64, shape (n,)
    labels : dask.array.Array or array_like of {0, 1}, shape (n,)
    prior_log_odds, training_prior : optional
        As :func:`sparsecal.bayes_error_plot`.
    scores_are : {"probability"}, default="probability"
        "llr" is refused (:func:`check_probability_scores`).

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
    check_probability_scores(scores_are)
    return bayes_error_plot(from_arrays(scores, labels), prior_log_odds=prior_log_odds,
                            training_prior=training_prior)


@implements(consistency.calibration_test)
def binary_calibration_test(scores, labels, *, n_bins=None, n_resamples=999, random_state=0,
                            bin_size=None, binning="equal-mass"):
    """:func:`sparsecal.calibration_test` of dask arrays: the statistic from the
    merged bins, the consistency resamples drawn from the merged distinct-score
    table on the workers
    (:func:`~sparsecal.distributed.resampling.table_calibration_tests`).

    Resample ``r`` draws from the ``r``-th generator ``random_state`` spawns,
    as on one machine, so the p-value is the single-machine one; the
    statistic (exact score sums) agrees within 1e-12 relative.

    Parameters
    ----------
    scores : dask.array.Array of float32 or float64, shape (n,)
    labels : dask.array.Array or array_like of {0, 1}, shape (n,)
    n_bins, n_resamples, random_state, bin_size, binning
        As :func:`sparsecal.calibration_test`.

    Returns
    -------
    CalibrationTest

    Raises
    ------
    TypeError, ValueError
        As :func:`sparsecal.calibration_test` (options checked before any
        chunk is computed).

    References
    ----------
    Bröcker & Smith 2007, "Increasing the reliability of reliability diagrams",
    Weather and Forecasting 22, Section 3; Nguyen & O'Connor 2015, Algorithm 1.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> q = np.random.default_rng(0).random(300).round(2)
    >>> y = (q ** 2 > 0.3).astype(np.uint8)
    >>> got = binary_calibration_test(da.from_array(q, chunks=120), y, n_resamples=99)
    >>> ref = sc.calibration_test(q, y, n_resamples=99)
    >>> got.p_value == ref.p_value, abs(got.statistic - ref.statistic) <= 1e-12 * ref.statistic
    (True, True)
    """
    n_resamples = check_resamples(n_resamples)
    check_random_state(random_state)
    check_ce_options(n_bins, bin_size, binning, 2, False, None)
    entries = from_arrays(scores, labels)
    ce = binned_errors(entries, n_bins=n_bins, bin_size=bin_size, binning=binning)[0]
    (p,) = table_calibration_tests([_table(entries)], [ce.bins], [ce.value], n_resamples,
                                   random_state)
    return CalibrationTest(ce.value, p, n_resamples, ce.bins.n_bins, ce.n)


@implements(brier.brier_decomposition)
def binary_brier_decomposition(scores, labels, *, binning="equal-mass", n_bins=None,
                               bin_size=None):
    """:func:`sparsecal.brier_decomposition` of dask arrays: the single
    machine's formula (:func:`sparsecal.metrics.brier.decomposition_from_bins`)
    on the merged bins and the merged sum of squared errors.

    The bins are the distributed equal-mass or fixed-width bins (counts, label
    sums and score ranges bit for bit, score sums exact: docs/scale.md); the
    sum of ``(s - y)^2`` (each in [0, 1]) is exact in fixed point
    (:mod:`~sparsecal.distributed.fixedpoint`), one more pass for equal-mass
    bins, the same pass for fixed-width bins. ``brier``, ``calibration`` and
    ``refinement`` agree with the single machine within 1e-12 relative;
    ``within_bin``, their difference, within 1e-12 of ``brier``.

    Parameters
    ----------
    scores : dask.array.Array of float32 or float64, shape (n,)
    labels : dask.array.Array or array_like of {0, 1}, shape (n,)
    binning, n_bins, bin_size
        As :func:`sparsecal.brier_decomposition` (options checked before any
        chunk is computed).

    Returns
    -------
    BrierDecomposition

    Raises
    ------
    TypeError, ValueError
        As :func:`sparsecal.brier_decomposition` and
        :func:`~sparsecal.distributed.entries.from_arrays`.

    References
    ----------
    Nguyen's thesis, Section 3.1.3; DeGroot & Fienberg 1982.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> import sparsecal as sc
    >>> q, y = np.array([0.2, 0.2, 0.8, 0.8, 0.5]), [0, 1, 1, 1, 0]
    >>> got = binary_brier_decomposition(da.from_array(q, chunks=2), y, n_bins=2)
    >>> ref = sc.brier_decomposition(q, y, n_bins=2)
    >>> abs(got.calibration - ref.calibration) <= 1e-12 * ref.calibration, got.n
    (True, 5)
    """
    n_bins, _ = check_ce_options(n_bins, bin_size, binning, 2, False, None)
    entries = from_arrays(scores, labels)
    if binning == "fixed":   # the squared errors in the same pass
        ((bins, sum_squares),) = _group_sums(entries, None, 1, n_bins)
    else:
        (bins,) = equal_mass_bin_stats(entries, n_bins=n_bins, bin_size=bin_size)
        ((_, sum_squares),) = _group_sums(entries, None, 1, 1)
    if bins is None:
        raise ValueError("cannot compute a calibration error of no points")
    return decomposition_from_bins(bins, sum_squares)
