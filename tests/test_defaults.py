"""The defaults of per-tag MCE and of GroupedCalibrator's min_entries, with the
evidence behind them on the synthetic tagger suite (docs/metrics.md, "MCE";
docs/recalibration.md, "Defaults"): Nguyen & O'Connor 2015, Section 3.2 (bins
of at least 200 points), Nguyen's thesis, Section 4.3.2 (CE falls as bins grow).
"""
import warnings

import numpy as np
import pytest

import sparsecal as sc
from sparsecal.datasets import make_tagger_outputs
from sparsecal.metrics.marginal import DEFAULT_BIN_SIZE

SEEDS = (0, 1, 2)
N_TOKENS = 20000


@pytest.fixture(scope="module")
def suite():
    """Per seed: the thresholded entries of a calibrated (miscalibration=0) and
    of a miscalibrated (the default) synthetic tagger, same tokens."""
    out = {}
    for seed in SEEDS:
        data = [make_tagger_outputs(N_TOKENS, split_seed=seed, miscalibration=m)
                for m in (0.0, 1.0)]
        out[seed] = [sc.threshold(d.scores, d.gold) for d in data]
    return out


def test_default_bin_size_is_the_papers():
    assert DEFAULT_BIN_SIZE == 200
    assert sc.GroupedCalibrator(sc.IsotonicCalibrator(),
                                sc.TagGroups.scw(3)).min_entries == DEFAULT_BIN_SIZE


def test_new_mce_defaults_tell_calibrated_from_miscalibrated(suite):
    for seed, (calibrated, miscalibrated) in suite.items():
        good, bad = sc.mce(calibrated), sc.mce(miscalibrated)
        assert good.min_entries == 400
        assert bad.value > 1.3 * good.value, (seed, good.value, bad.value)


def test_old_mce_defaults_did_not(suite):
    """10 bins over tags of >= 100 entries (10 entries a bin): the calibrated
    tagger scores within 15% of the miscalibrated one, and worse in one seed."""
    ratios = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for calibrated, miscalibrated in suite.values():
            ratios.append(sc.mce(miscalibrated, min_entries=100, n_bins=10).value
                          / sc.mce(calibrated, min_entries=100, n_bins=10).value)
    assert max(ratios) < 1.15 and min(ratios) < 1.0, ratios


def test_old_mce_defaults_warn(suite):
    calibrated, _ = suite[0]
    counts = np.bincount(calibrated.tag)
    small = np.flatnonzero((counts >= 100) & (counts < 10 * 200))
    with pytest.warns(UserWarning, match=rf"^{small.size} tag\(s\) \({small[0]}, "
                                         rf"{small[1]}, .*fewer than 200 entries"):
        sc.mce(calibrated, min_entries=100, n_bins=10)


@pytest.fixture(scope="module")
def dev_test():
    dev, test = (make_tagger_outputs(N_TOKENS, split_seed=s) for s in (10, 20))
    return (sc.threshold(dev.scores, dev.gold), sc.threshold(test.scores, test.gold),
            sc.TagGroups.from_counts(dev.train_counts, 5))


def test_grouped_default_min_entries_beats_the_old_one(dev_test):
    """Per tag with TFG fallback: calibrators of a handful of dev entries made
    the test SMCE worse than no recalibration; with 200 it is half the uncalibrated SMCE."""
    dev, test, tfg = dev_test
    per_tag = sc.TagGroups.per_tag(tfg.n_tags)
    before = sc.smce(test).value
    after = {}
    for min_entries in (1, None):
        kw = {} if min_entries is None else {"min_entries": min_entries}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), per_tag, fallback=tfg,
                                         **kw).fit(dev)
        after[min_entries] = sc.smce(model.transform(test)).value
    assert after[1] > before > 1.5 * after[None], (before, after)
    assert after[1] > 3 * after[None]


def test_grouped_warns_naming_small_groups(dev_test):
    dev, _, tfg = dev_test
    per_tag = sc.TagGroups.per_tag(tfg.n_tags)
    counts = np.bincount(dev.tag, minlength=tfg.n_tags)
    small = np.flatnonzero((counts >= 50) & (counts < 200))
    with pytest.warns(UserWarning, match=rf"^{small.size} per-tag group\(s\) "
                                         rf"\({small[0]}, {small[1]}, "):
        sc.GroupedCalibrator(sc.IsotonicCalibrator(), per_tag, fallback=tfg,
                             min_entries=50).fit(dev)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sc.GroupedCalibrator(sc.IsotonicCalibrator(), per_tag, fallback=tfg).fit(dev)


def test_grouped_warning_names_groups_left_unchanged():
    rng = np.random.default_rng(0)
    tag = np.r_[np.zeros(300, int), np.ones(5, int), np.full(7, 2)]
    entries = sc.Entries(rng.random(tag.size), tag, rng.integers(0, 2, tag.size),
                         n_tags=4)
    groups = sc.TagGroups(np.array([0, 1, 2, 2]), 3)
    with pytest.warns(UserWarning, match=r"^3 tags \(2 of them with dev entries\) .*"
                                         r"\(custom groups 1, 2\)"):
        model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups).fit(entries)
    assert model.tag_to_calibrator_.tolist() == [0, -1, -1, -1]
