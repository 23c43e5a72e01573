"""The binning vocabulary of ``calibration_error`` (``bin_size``, ``binning``,
``norm``, ``debias``) through ``smce_and_gmce`` / ``smce`` / ``gmce`` and
``evaluate``: each option gives, pooled and per group, exactly
``calibration_error`` of those entries with that option (architecture.md
§Semantics 2-4)."""
import numpy as np
import pytest

from sparsecal import TagGroups, threshold
from sparsecal.datasets.synthetic import make_tagger_outputs
from sparsecal.metrics import (ConfidenceInterval, calibration_error, evaluate, gmce,
                               smce, smce_and_gmce)

OPTIONS = [
    {},
    {"bin_size": 37},
    {"n_bins": 7, "binning": "fixed"},
    {"n_bins": 15, "norm": 1},
    {"norm": "max", "bin_size": 80},
    {"n_bins": 5, "norm": 1, "binning": "fixed"},
    {"debias": True, "n_bins": 6},
    {"debias": True, "bin_size": 50},
]


@pytest.fixture(scope="module", params=[np.float64, np.float32])
def split(request):
    data = make_tagger_outputs(1500, n_tags=30, split_seed=7)
    scores = np.round(data.scores, 2).astype(request.param)   # ties
    entries = threshold(scores / scores.max(), data.gold, 0.01)
    groups = TagGroups.from_counts(data.train_counts, 3, n_tags=30)
    return entries, groups


def _reference(entries, groups, **kw):
    """calibration_error of all entries and of each group's, found by np.isin."""
    pooled = calibration_error(entries.score, entries.label, **kw)
    per_group = []
    for g in range(groups.n_groups):
        mask = np.isin(entries.tag, groups.members(g))
        per_group.append(calibration_error(entries.score[mask], entries.label[mask], **kw)
                         if mask.any() else None)
    return pooled, per_group


@pytest.mark.parametrize("kw", OPTIONS, ids=str)
def test_smce_and_gmce_equal_calibration_error(split, kw):
    entries, groups = split
    pooled, per_group = smce_and_gmce(entries, groups, **kw)
    want, want_groups = _reference(entries, groups, **kw)
    assert pooled.value == pytest.approx(want.value, rel=1e-12, abs=1e-15)
    assert pooled.norm == want.norm and pooled.bins.n_bins == want.bins.n_bins
    for got, ref in zip(per_group, want_groups):
        assert (got is None) == (ref is None)
        if ref is not None:
            assert got.value == pytest.approx(ref.value, rel=1e-12, abs=1e-15)
    assert smce(entries, **kw).value == pytest.approx(pooled.value, rel=1e-12, abs=1e-15)
    assert [c.value for c in gmce(entries, groups, **kw)] == pytest.approx(
        [c.value for c in per_group], rel=1e-12, abs=1e-15)


def test_debias_lowers_the_estimate_and_has_the_score_interval(split):
    entries, groups = split
    plain, _ = smce_and_gmce(entries, groups, n_bins=20)
    deb, deb_groups = smce_and_gmce(entries, groups, n_bins=20, debias=True, ci="score")
    assert deb.value < plain.value
    ref = calibration_error(entries.score, entries.label, n_bins=20, debias=True,
                            ci="score")
    assert (deb.ci_low, deb.ci_high) == pytest.approx((ref.ci_low, ref.ci_high), rel=1e-12)
    assert deb.ci_method == "score" and all(c.ci_method == "score" for c in deb_groups)


@pytest.mark.parametrize("kw, problem", [
    ({"debias": True, "norm": 1}, "debias=True needs norm=2"),
    ({"debias": True, "ci": "simulation"}, "debias=True takes ci=None or ci='score'"),
    ({"debias": "yes"}, "debias must be True or False"),
    ({"binning": "fixed", "bin_size": 10}, "bin_size applies to equal-mass"),
    ({"binning": "width"}, "binning"),
    ({"norm": 3}, "norm"),
    ({"n_bins": 5, "bin_size": 5}, "n_bins"),
])
def test_bad_options_are_refused_before_any_work(split, kw, problem):
    entries, groups = split
    calls = []
    with pytest.raises((TypeError, ValueError), match=problem):
        smce_and_gmce(entries, groups, progress=lambda d, t: calls.append(d), **kw)
    with pytest.raises((TypeError, ValueError), match=problem):
        evaluate(entries, groups, progress=lambda d, t: calls.append(d), **kw)
    assert calls == []


@pytest.mark.parametrize("kw", OPTIONS[1:], ids=str)
def test_evaluate_passes_the_options(split, kw):
    entries, groups = split
    res = evaluate(entries, groups, ci=None, metrics=["ece", "smooth-ece"], **kw)
    want, want_groups = _reference(entries, groups, **kw)
    assert res.smce.value == pytest.approx(want.value, rel=1e-12, abs=1e-15)
    assert [c.value for c in res.gmce] == pytest.approx([c.value for c in want_groups],
                                                        rel=1e-12, abs=1e-15)
    binning = {k: kw[k] for k in ("n_bins", "bin_size", "binning") if k in kw}
    ece = calibration_error(entries.score, entries.label, norm=1, **binning).value
    assert res.metrics["ece"]["pooled"] == pytest.approx(ece, rel=1e-12)
    s = res.settings
    assert (s["bin_size"], s["binning"], s["debias"]) == (
        kw.get("bin_size"), kw.get("binning", "equal-mass"), kw.get("debias", False))
    head = res.to_markdown().splitlines()[0]
    if "bin_size" in kw:
        assert f"equal-mass bins of {kw['bin_size']} entries" in head
    elif kw.get("binning") == "fixed":
        assert f"{kw['n_bins']} fixed-width bins" in head


def test_evaluate_default_path_is_unchanged(split):
    entries, groups = split
    spec = ConfidenceInterval(n_resamples=200)
    res = evaluate(entries, groups, ci=spec)
    ref = calibration_error(entries.score, entries.label, n_bins=10, ci=spec)
    assert (res.smce.value, res.smce.ci_low, res.smce.ci_high) == pytest.approx(
        (ref.value, ref.ci_low, ref.ci_high), rel=1e-12)
    assert res.settings["n_bins"] == 10 and res.settings["norm"] == 2.0


def test_evaluate_prior_measures(split):
    entries, groups = split
    with pytest.raises(ValueError, match="measure 'dcf' needs prior"):
        evaluate(entries, groups, ci=None, metrics=["dcf"])
    with pytest.raises(ValueError, match="prior"):
        evaluate(entries, groups, ci=None, metrics=["dcf"], prior=1.5)
    from sparsecal.metrics import dcf
    res = evaluate(entries, groups, ci=None, metrics=["dcf"], prior=0.2)
    assert res.metrics["dcf"]["pooled"] == dcf(entries.score, entries.label, prior=0.2).value
    assert res.settings["prior"] == 0.2
