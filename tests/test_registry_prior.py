"""The application prior in the registry of methods (``Method.uses_prior``):
passed to the methods that take one, refused where none does."""
import numpy as np
import pytest

import sparsecal as sc
from sparsecal.calibration.registry import (METHODS, check_bins_methods, check_prior_methods,
                                           make_calibrator)
from sparsecal.datasets.synthetic import make_tagger_outputs


def test_uses_prior_is_the_application_prior_parameter():
    for name, m in METHODS.items():
        params = m.build().get_params()
        # PlattCalibrator has an application_prior too, but the method "platt" is
        # Platt 1999 (unweighted, the baseline of Kranzlein et al. 2021): no prior
        assert m.uses_prior == ("application_prior" in params and name != "platt"), name
        model = m.build(prior=0.25)
        assert model.get_params().get("application_prior") == (0.25 if m.uses_prior
                                                              else None)
    assert make_calibrator("gaussian", prior=0.4).application_prior == 0.4


@pytest.mark.parametrize("methods, prior, problem", [
    (["isotonic", "platt"], 0.2, "not to isotonic, platt"),
    (["gaussian"], 1.0, "prior"),
    (["gaussian"], 0.0, "prior"),
    (["nope"], 0.2, "unknown method 'nope'"),
])
def test_bad_priors_are_refused(methods, prior, problem):
    with pytest.raises(ValueError, match=problem):
        check_prior_methods(methods, prior)


def test_bins_are_refused_where_no_method_bins():
    assert check_bins_methods(["histogram", "isotonic"], 20) == 20
    assert check_bins_methods(["isotonic"], None) is None
    with pytest.raises(ValueError, match=r"^--bins applies to methods with bins "
                                         r"\(histogram, scaling-binning\), not to isotonic$"):
        check_bins_methods(["isotonic"], 20, "--bins")
    with pytest.raises(ValueError, match="n_bins must be a positive integer"):
        check_bins_methods(["histogram"], 0)


def test_select_passes_the_prior_on():
    data = make_tagger_outputs(1500, split_seed=3)
    dev = sc.threshold(data.scores, data.gold)
    kw = dict(methods=["prior-logistic", "isotonic"], n_groups=[1], n_folds=3)
    with_prior = sc.select(dev, prior=0.05, **kw)
    without = sc.select(dev, **kw)
    i = with_prior.cv_results["method"].index("prior-logistic")
    assert with_prior.cv_results["score"][i] != without.cv_results["score"][i]
    j = with_prior.cv_results["method"].index("isotonic")   # no prior: unchanged
    assert with_prior.cv_results["score"][j] == without.cv_results["score"][j]
    with pytest.raises(ValueError, match="not to isotonic"):
        sc.select(dev, methods=["isotonic"], n_groups=[1], prior=0.2)
    model = with_prior.best_calibrator
    if with_prior.best_params["method"] == "prior-logistic":
        assert model.base.application_prior == 0.05
    assert np.isfinite(with_prior.best_score)
