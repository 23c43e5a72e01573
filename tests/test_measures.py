"""The measure registry (``sparsecal.metrics.measures``) and ``evaluate(metrics=...)``:
each named measure is its function with its fixed options, pooled over all entries
and over each group's entries."""
import numpy as np
import pytest

from sparsecal import TagGroups, threshold
from sparsecal.datasets.synthetic import make_tagger_outputs
from sparsecal.metrics import brier_decomposition, calibration_error, compare, evaluate
from sparsecal.metrics.measures import MEASURES, get_measure


@pytest.fixture(scope="module")
def split():
    data = make_tagger_outputs(3000, n_tags=40, split_seed=4)
    entries = threshold(data.scores, data.gold, 0.01)
    groups = TagGroups.from_counts(data.train_counts, 3, n_tags=40)
    return entries, groups


def direct(name, scores, labels, n_bins):
    """Each registered measure, called by hand."""
    norms = {"ce": 2, "ece": 1, "max-ce": np.inf}
    if name in norms:
        return calibration_error(scores, labels, norm=norms[name], n_bins=n_bins).value
    assert name == "brier"
    return float(np.mean((np.asarray(scores, np.float64) - labels) ** 2))


@pytest.mark.parametrize("name", sorted(MEASURES))
@pytest.mark.parametrize("n", [1, 2, 50, 5000])
def test_each_measure_is_its_function(name, n):
    rng = np.random.default_rng(n)
    scores = rng.integers(0, 20, n) / 19          # ties
    labels = (rng.random(n) < scores).astype(np.uint8)
    got = get_measure(name)(scores, labels, n_bins=7)
    assert got == pytest.approx(direct(name, scores, labels, 7), rel=1e-12, abs=1e-15)


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
