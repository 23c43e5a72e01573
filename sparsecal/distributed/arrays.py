"""The array-form public functions of two dask arrays: the arrays become entries
of one tag and the entry-level distributed form computes the result."""
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
    return set_tables(entries, TagGroups.scw(1))[0]


@implements(smooth.smooth_ece)
def binary_smooth_ece(scores, labels, *, bandwidth=None):
    """:func:`sparsecal.smooth_ece` of dask arrays."""
    return smooth_ece(from_arrays(scores, labels), bandwidth=bandwidth)[0]


@implements(smooth.smooth_reliability)
def binary_smooth_reliability(scores, labels, *, bandwidth=None, n_points=200):
    """:func:`sparsecal.smooth_reliability` of dask arrays."""
    return smooth_reliability(from_arrays(scores, labels), bandwidth=bandwidth,
                              n_points=n_points)


@implements(corp.brier_corp)
def binary_brier_corp(scores, labels):
    """:func:`sparsecal.brier_corp` of dask arrays."""
    return corp_from_table(*_table(from_arrays(scores, labels)), rule="brier")


@implements(corp.log_loss_corp)
def binary_log_loss_corp(scores, labels):
    """:func:`sparsecal.log_loss_corp` of dask arrays."""
    return corp_from_table(*_table(from_arrays(scores, labels)), rule="log_loss")


def _application(name, scores, labels, prior=None, scores_are="probability", **options):
    check_probability_scores(scores_are)
    if name in ("dcf", "min-dcf"):
        check_application(prior, options.get("c_miss", 1.0), options.get("c_fa", 1.0))
    if options.get("training_prior") is not None:
        check_prior(options["training_prior"], "training_prior")
    return application_from_table(*_table(from_arrays(scores, labels)), name, prior, **options)


def check_probability_scores(scores_are):
    """Refuse ``scores_are='llr'``: dask arrays are taken as probabilities."""
    check_choice(scores_are, "scores_are", {"probability", "llr"})
    if scores_are == "llr":
        raise TypeError("scores_are='llr' is not supported on distributed (dask) data: the "
                        "distributed entries hold probabilities in [0, 1] (each chunk is "
                        "checked as such); give probabilities")


@implements(application.dcf)
def binary_dcf(scores, labels, *, prior, c_miss=1.0, c_fa=1.0, normalize=True,
               scores_are="probability", training_prior=None):
    """:func:`sparsecal.dcf` of dask arrays of probabilities."""
    return _application("dcf", scores, labels, prior, scores_are, c_miss=c_miss, c_fa=c_fa,
                        normalize=normalize, training_prior=training_prior)


@implements(application.min_dcf)
def binary_min_dcf(scores, labels, *, prior, c_miss=1.0, c_fa=1.0, normalize=True,
                   scores_are="probability", training_prior=None):
    """:func:`sparsecal.min_dcf` of dask arrays of probabilities."""
    return _application("min-dcf", scores, labels, prior, scores_are, c_miss=c_miss,
                        c_fa=c_fa, normalize=normalize, training_prior=training_prior)


@implements(application.cllr)
def binary_cllr(scores, labels, *, scores_are="probability", training_prior=None):
    """:func:`sparsecal.cllr` of dask arrays of probabilities."""
    return _application("cllr", scores, labels, None, scores_are,
                        training_prior=training_prior)


@implements(application.min_cllr)
def binary_min_cllr(scores, labels, *, scores_are="probability", training_prior=None):
    """:func:`sparsecal.min_cllr` of dask arrays of probabilities."""
    return _application("min-cllr", scores, labels, None, scores_are,
                        training_prior=training_prior)


@implements(application.bayes_error_plot)
def binary_bayes_error_plot(scores, labels, *, prior_log_odds=None, scores_are="probability",
                            training_prior=None):
    """:func:`sparsecal.bayes_error_plot` of dask arrays of probabilities."""
    check_probability_scores(scores_are)
    return bayes_error_plot(from_arrays(scores, labels), prior_log_odds=prior_log_odds,
                            training_prior=training_prior)


@implements(consistency.calibration_test)
def binary_calibration_test(scores, labels, *, n_bins=None, n_resamples=999, random_state=0,
                            bin_size=None, binning="equal-mass"):
    """:func:`sparsecal.calibration_test` of dask arrays (the same p-value)."""
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
    """:func:`sparsecal.brier_decomposition` of dask arrays."""
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
