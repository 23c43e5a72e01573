"""The measure registry (``sparsecal.metrics.measures``) and ``evaluate(metrics=...)``:
each named measure is its function with its fixed options, pooled over all entries
and over each group's entries."""
import numpy as np
import pytest

from sparsecal import TagGroups, threshold
from sparsecal.datasets.synthetic import make_tagger_outputs
from sparsecal.metrics import (brier_corp, brier_decomposition, calibration_error,
                               calibration_test, compare, dcf, evaluate, min_cllr, min_dcf,
                               smooth_ece)
from sparsecal.metrics.measures import MEASURES, get_measure

PRIOR = 0.3   # the application prior of the measures that take one


@pytest.fixture(scope="module")
def split():
    data = make_tagger_outputs(3000, n_tags=40, split_seed=4)
    entries = threshold(data.scores, data.gold, 0.01)
    groups = TagGroups.from_counts(data.train_counts, 3, n_tags=40)
    return entries, groups


def _entropy(p):
    """Binary entropy in nats (0 log 0 = 0)."""
    return float(-sum(q * np.log(q) for q in (p, 1 - p) if q > 0))


def direct(name, scores, labels, n_bins):
    """Each registered measure, by its formula (brute force) where it is one line,
    else by its function called by hand."""
    x, y = np.asarray(scores, np.float64), np.asarray(labels, np.float64)
    ybar = y.mean()
    norms = {"ce": 2, "ece": 1, "max-ce": np.inf}
    if name in norms:
        return calibration_error(scores, labels, norm=norms[name], n_bins=n_bins).value
    if name == "debiased-ce":
        return calibration_error(scores, labels, debias=True, n_bins=n_bins).value
    def cllr():   # lecture notes 004: LLR = logit(p) - logit(training prior = ybar)
        llr = np.log(x) - np.log1p(-x) - np.log(ybar / (1 - ybar))
        return float((np.mean(np.logaddexp(0, -llr[y == 1])) +
                      np.mean(np.logaddexp(0, llr[y == 0]))) / (2 * np.log(2)))

    return {"brier": lambda: float(np.mean((x - y) ** 2)),
            "brier-mcb": lambda: brier_corp(scores, labels).miscalibration,
            "brier-dsc": lambda: brier_corp(scores, labels).discrimination,
            "brier-unc": lambda: ybar * (1 - ybar),
            "log-loss": lambda: float(-np.mean(np.log(np.where(y == 1, x, 1 - x)))),
            "log-loss-unc": lambda: _entropy(ybar),
            "smooth-ece": lambda: smooth_ece(scores, labels).value,
            "cllr": cllr,
            "min-cllr": lambda: min_cllr(scores, labels),
            "dcf": lambda: dcf(scores, labels, prior=PRIOR).value,
            "min-dcf": lambda: min_dcf(scores, labels, prior=PRIOR).value,
            "calibration-test-p": lambda: calibration_test(scores, labels,
                                                           n_bins=n_bins).p_value,
            }[name]()


def taking(name):
    """The measure, called with the options of these tests that it takes (an
    option it does not take is refused: tests/test_measure_options.py)."""
    m = get_measure(name)
    return lambda s, y, **kw: m(s, y, **{k: v for k, v in kw.items() if k in m.options})


def _sample(n, seed):
    rng = np.random.default_rng(seed)
    scores = rng.integers(1, 20, n) / 20          # ties, in (0, 1)
    labels = (rng.random(n) < scores ** 2).astype(np.uint8)
    if n > 1:
        labels[:2] = [0, 1]                         # both classes (Cllr, DCF need them)
    return scores, labels


# the log-loss terms are checked through their identity below
CHECKED = sorted(set(MEASURES) - {"log-loss-mcb", "log-loss-dsc"})


@pytest.mark.parametrize("name", CHECKED)
@pytest.mark.parametrize("n", [2, 3, 50, 3000])
def test_each_measure_is_its_function(name, n):
    scores, labels = _sample(n, n)
    got = taking(name)(scores, labels, n_bins=7, prior=PRIOR)
    assert got == pytest.approx(direct(name, scores, labels, 7), rel=1e-9, abs=1e-12)


#: the application measures need both classes (a miss and a false-alarm rate)
BOTH_CLASSES = {"cllr", "min-cllr", "dcf", "min-dcf"}


@pytest.mark.parametrize("name", sorted(MEASURES))
def test_each_measure_of_one_point(name):
    scores, labels = np.array([0.3]), np.array([1], np.uint8)
    if name in BOTH_CLASSES:
        with pytest.raises(ValueError, match="labels must hold both classes"):
            taking(name)(scores, labels, prior=PRIOR)
    elif name in CHECKED:
        assert taking(name)(scores, labels, prior=PRIOR) == pytest.approx(
            direct(name, scores, labels, 7), abs=1e-12)


@pytest.mark.parametrize("rule", ["brier", "log-loss"])
@pytest.mark.parametrize("n", [2, 50, 3000])
def test_corp_terms_add_up_to_the_score(rule, n):
    """CORP (Dimitriadis et al. 2021): score = MCB - DSC + UNC, MCB and DSC >= 0."""
    scores, labels = _sample(n, n + 1)
    total, mcb, dsc, unc = (get_measure(name)(scores, labels) for name in
                            (rule, f"{rule}-mcb", f"{rule}-dsc", f"{rule}-unc"))
    assert mcb >= -1e-12 and dsc >= -1e-12
    assert total == pytest.approx(mcb - dsc + unc, rel=1e-9, abs=1e-12)


def test_dcf_needs_a_prior_and_uses_it():
    scores, labels = _sample(500, 3)
    with pytest.raises(ValueError, match="measure 'dcf' needs prior"):
        get_measure("dcf")(scores, labels)
    at = {p: get_measure("min-dcf")(scores, labels, prior=p) for p in (0.1, 0.5)}
    assert at[0.1] == min_dcf(scores, labels, prior=0.1).value != at[0.5]


def test_binned_measures_take_the_binning():
    scores, labels = _sample(400, 5)
    for name, norm in (("ece", 1), ("ce", 2)):
        for kw in ({"bin_size": 50}, {"binning": "fixed", "n_bins": 15}):
            assert get_measure(name)(scores, labels, **kw) == calibration_error(
                scores, labels, norm=norm, **kw).value


def test_brier_is_the_decomposition_total():
    rng = np.random.default_rng(0)
    s, y = rng.random(100), rng.integers(0, 2, 100)
    assert get_measure("brier")(s, y) == brier_decomposition(s, y).brier


def test_evaluate_metrics_pooled_and_per_group(split):
    entries, groups = split
    res = evaluate(entries, groups, ci=None, n_bins=8, metrics=["ece", "brier", "ce"])
    assert list(res.metrics) == ["ece", "brier", "ce"]
    perm, offsets = groups.partition(entries)
    for name, v in res.metrics.items():
        assert v["pooled"] == pytest.approx(direct(name, entries.score, entries.label, 8),
                                            rel=1e-12)
        for g in range(groups.n_groups):
            idx = perm[offsets[g]:offsets[g + 1]]
            assert v["groups"][g] == pytest.approx(
                direct(name, entries.score[idx], entries.label[idx], 8), rel=1e-12)
    # "ce" is SMCE pooled and GMCE per group, bit for bit
    assert res.metrics["ce"]["pooled"] == res.smce.value
    assert res.metrics["ce"]["groups"] == [c.value for c in res.gmce]


def test_empty_group_has_no_value(split):
    entries, _ = split
    groups = TagGroups(np.zeros(40, int), n_groups=2)   # group 2 holds no tag
    res = evaluate(entries, groups, ci=None, metrics="ece")
    assert res.metrics["ece"]["groups"][1] is None
    assert "| ECE | " in res.to_markdown() and "—" in res.to_markdown()


def test_unknown_measure_is_refused_before_any_work(split):
    entries, groups = split
    calls = []
    with pytest.raises(ValueError, match="unknown measure 'nope': choose from .*ece"):
        evaluate(entries, groups, metrics=["ece", "nope"],
                 progress=lambda d, t: calls.append(d))
    assert calls == []


def test_progress_counts_each_measure(split):
    entries, groups = split
    seen = []
    evaluate(entries, groups, ci=None, metrics=["ece", "brier"],
             progress=lambda d, t: seen.append((d, t)))
    total = 1 + groups.n_groups + 2
    assert seen[-1] == (total, total)


def test_compare_has_the_shared_measures(split):
    entries, groups = split
    before = evaluate(entries, groups, ci=None, metrics=["ece", "brier"])
    after = evaluate(entries.with_scores(np.clip(entries.score * 0.9, 0, 1)), groups,
                     ci=None, metrics=["ece"])
    rows = {r["name"]: r for r in compare(before, after).rows}
    assert "Brier" not in rows                      # only in one of the two
    assert rows["ECE"]["before"] == before.metrics["ece"]["pooled"]
    assert rows["ECE"]["after"] == after.metrics["ece"]["pooled"]
    assert rows["ECE group 2"]["change"] == pytest.approx(
        after.metrics["ece"]["groups"][1] - before.metrics["ece"]["groups"][1])


def test_terms_of_one_result_share_one_call(split, monkeypatch):
    """The three CORP terms of the Brier score come from one brier_corp call per
    set of entries (all entries, then each group), not one call each."""
    import sparsecal.metrics.corp as corp
    entries, groups = split
    calls = []
    real = corp.brier_corp
    monkeypatch.setattr(corp, "brier_corp", lambda *a, **k: calls.append(1) or real(*a, **k))
    res = evaluate(entries, groups, ci=None, metrics=["brier-mcb", "brier-dsc", "brier-unc"])
    assert len(calls) == 1 + groups.n_groups
    d = real(entries.score, entries.label)
    assert (res.metrics["brier-mcb"]["pooled"], res.metrics["brier-dsc"]["pooled"],
            res.metrics["brier-unc"]["pooled"]) == (d.miscalibration, d.discrimination,
                                                     d.uncertainty)
