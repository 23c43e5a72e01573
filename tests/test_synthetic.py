"""The synthetic CCG-like tagger (``make_tagger_outputs``) and the recalibration
experiment of Kranzlein et al. 2021 (Table 1) on it: every method x {SCW, TFG}
lowers test SMCE, and TFG helps the rarest tag group more than SCW.

The sizes (40k dev and test tokens, ~79k thresholded entries each) keep this
module to a few seconds; the numbers asserted were checked to hold with wide
margins (see docs/recalibration.md for the table they come from).
"""
import numpy as np
import pytest

from sparsecal import (GroupedCalibrator, HistogramBinning, IsotonicCalibrator,
                       PlattCalibrator, ScalingBinning, TagGroups, evaluate, smce, threshold)
from sparsecal.datasets.synthetic import SyntheticTagger, make_tagger_outputs

N_TOKENS = 40000
METHODS = {"histogram": HistogramBinning, "isotonic": IsotonicCalibrator,
           "scaling-binning": ScalingBinning, "platt": PlattCalibrator}


@pytest.fixture(scope="module")
def experiment():
    dev = make_tagger_outputs(N_TOKENS, split_seed=1, tagger_seed=0)
    test = make_tagger_outputs(N_TOKENS, split_seed=2, tagger_seed=0)
    dev_e, test_e = threshold(dev.scores, dev.gold), threshold(test.scores, test.gold)
    tfg = TagGroups.from_counts(dev.train_counts, 5, n_tags=dev.scores.shape[1])
    scw = TagGroups.scw(tfg.n_tags)
    before = evaluate(test_e, tfg, ci=None)
    after = {}
    for name, cls in METHODS.items():
        for grouping, groups in (("scw", scw), ("tfg", tfg)):
            model = GroupedCalibrator(cls(), groups).fit(dev_e)
            after[name, grouping] = evaluate(model.transform(test_e), tfg, ci=None)
    return {"dev": dev, "test": test, "tfg": tfg, "before": before, "after": after}


# --------------------------------------------------------------------------- #
# The generator                                                               #
# --------------------------------------------------------------------------- #

def test_generator_shapes_and_rows(experiment):
    test = experiment["test"]
    assert isinstance(test, SyntheticTagger)
    assert test.scores.shape == (N_TOKENS, 426) and test.scores.dtype == np.float32
    assert test.gold.shape == (N_TOKENS,) and test.gold.min() >= 0 and test.gold.max() < 426
    np.testing.assert_allclose(test.scores.sum(axis=1, dtype=np.float64), 1.0, atol=1e-5)
    assert (test.scores >= 0).all()
    assert test.true_probs is None


def test_generator_sparsity_like_a_ccg_tagger(experiment):
    """Kranzlein et al. §3.1: more than 98% of the scores are below 1e-4; the
    threshold 0.01 keeps a few entries per token (0.2-0.8% of them)."""
    s = experiment["test"].scores
    assert (s < 1e-4).mean() > 0.98
    assert 0.002 <= (s >= 0.01).mean() <= 0.008


def test_generator_train_counts(experiment):
    dev, test = experiment["dev"], experiment["test"]
    assert isinstance(dev.train_counts, dict)
    assert sorted(dev.train_counts) == list(range(426))
    assert all(isinstance(v, int) and v >= 0 for v in dev.train_counts.values())
    assert sum(dev.train_counts.values()) == 927497
    assert dev.train_counts == test.train_counts            # one tagger, two splits
    top = max(dev.train_counts.values()) / sum(dev.train_counts.values())
    assert 0.15 < top < 0.3                                   # CCG's N: ~22%
    assert make_tagger_outputs(10, tagger_seed=1).train_counts != dev.train_counts


def test_generator_seeds():
    # more tokens than one block of 8192: the blocks continue one generator
    a = make_tagger_outputs(9000, n_tags=40, split_seed=3, tagger_seed=0)
    b = make_tagger_outputs(9000, n_tags=40, split_seed=3, tagger_seed=0)
    c = make_tagger_outputs(9000, n_tags=40, split_seed=4, tagger_seed=0)
    np.testing.assert_array_equal(a.scores, b.scores)
    np.testing.assert_array_equal(a.gold, b.gold)
    assert not np.array_equal(a.scores, c.scores)
    assert not np.array_equal(a.scores[8192:], a.scores[:808])   # no block repeats
    with pytest.raises(ValueError):
        make_tagger_outputs(10, n_tags=4)


def test_generator_miscalibration_direction(experiment):
    """Frequent tags overconfident, rare tags underconfident (§3.3)."""
    test = experiment["test"]
    e = threshold(test.scores, test.gold)
    group = experiment["tfg"].tag_to_group[e.tag]
    first, last = group == 0, group == experiment["tfg"].n_groups - 1
    assert e.score[first].mean() > e.label[first].mean() + 0.01
    assert e.score[last].mean() < e.label[last].mean() - 0.01


def _null_smce(scores, n_bins, reps, seed):
    """SMCE of labels drawn from the scores themselves (a perfectly calibrated
    tagger with these scores), by simulation: the sampling noise of SMCE."""
    rng = np.random.default_rng(seed)
    s = np.sort(scores.astype(np.float64), kind="stable")
    n = s.shape[0]
    starts = np.arange(n_bins + 1) * n // n_bins
    count = np.diff(starts)
    mean_s = np.add.reduceat(s, starts[:-1]) / count
    out = np.empty(reps)
    for r in range(reps):
        y = rng.random(n) < s
        mean_y = np.add.reduceat(y.astype(np.float64), starts[:-1]) / count
        out[r] = np.sqrt(np.sum(count / n * (mean_s - mean_y) ** 2))
    return out


def test_generator_without_miscalibration_is_calibrated(experiment):
    """miscalibration=0 reports the true distributions the gold tags are drawn
    from: its SMCE is no larger than the SMCE of a perfectly calibrated tagger
    with the same scores (labels simulated from the scores), while the default
    tagger's is far outside that range. (SMCE >= 0 is biased upwards by sampling
    noise, so the comparison is with its null distribution, not with 0.)"""
    cal = make_tagger_outputs(30000, split_seed=5, tagger_seed=0, miscalibration=0.0,
                              keep_true_probs=True)
    np.testing.assert_allclose(cal.scores, cal.true_probs, rtol=1e-5, atol=1e-7)
    e = threshold(cal.scores, cal.gold)
    value = smce(e).value
    null = _null_smce(e.score, 10, 300, seed=0)
    top = np.quantile(null, 0.995)
    assert value <= top
    assert value < 0.003
    assert experiment["before"].smce.value > 3 * top


# --------------------------------------------------------------------------- #
# The recalibration experiment                                                #
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("grouping", ["scw", "tfg"])
@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_lowers_smce(experiment, method, grouping):
    before = experiment["before"].smce.value
    after = experiment["after"][method, grouping].smce.value
    assert after < 0.5 * before


@pytest.mark.parametrize("method", list(METHODS))
def test_tfg_helps_the_rarest_group_more_than_scw(experiment, method):
    """Kranzlein et al. §5: "TFG performs drastically better than SCW on the
    rarest tags". Holds for scaling-binning too once its bin values follow its
    bin lookup (see docs/recalibration.md); it did not before that fix."""
    before = experiment["before"].gmce[-1].value
    scw = experiment["after"][method, "scw"].gmce[-1].value
    tfg = experiment["after"][method, "tfg"].gmce[-1].value
    assert tfg < scw < before
    assert before - tfg > 1.2 * (before - scw)


def test_tfg_helps_the_most_frequent_group(experiment):
    """Group 1 (the two most frequent tags, overconfident) is barely helped by a
    pooled SCW model but well by its own TFG model."""
    before = experiment["before"].gmce[0].value
    for method in METHODS:
        assert experiment["after"][method, "tfg"].gmce[0].value < 0.6 * before
