"""Tests that guard the formulas at their boundaries (issue 30).

Each comparison that decides what a number counts is tested exactly on its
boundary, against a count by hand: resampled statistics tied with the observed
one in the calibration test's p-value (``null >= statistic``), a tag of exactly
``min_entries`` entries in the per-tag MCE and a group of exactly
``min_entries`` in GroupedCalibrator (``>=``), the TFG quota reached exactly,
the threshold, the fixed-width bin edges and the last bin (a score of 1), the
short last equal-mass bin, the smallest group (one tag, one entry), and the
re-ranking cutoff. Turning any of these ``>=`` into ``>`` (or the reverse)
fails a test here.
"""
import warnings

import numpy as np
import pytest

import sparsecal as sc
from sparsecal.core.binning import equal_mass_bin_starts, fixed_width_bins, lookup_bins
from sparsecal.metrics.resampling import p_value


# ------------------------------------------------- ties in resampling -- #

@pytest.mark.parametrize("null, statistic, want", [
    ([0.1, 0.2, 0.2, 0.3], 0.2, (1 + 3) / 5),   # two ties count as at least as large
    ([0.2, 0.2, 0.2], 0.2, 1.0),
    ([0.1, 0.1], 0.2, 1 / 3),
    ([0.3], 0.2, 1.0),
])
def test_p_value_counts_ties_as_at_least_as_large(null, statistic, want):
    assert p_value(np.array(null), statistic) == want


def test_calibration_test_with_every_resample_tied():
    """Scores of 0 and 1 with labels equal to them: every consistency resample
    draws the same labels, so every resampled CE equals the observed 0 and the
    p-value is (1 + R) / (1 + R) = 1 (with ``>``: 1 / (1 + R))."""
    x = np.r_[np.zeros(50), np.ones(50)]
    result = sc.calibration_test(x, x.astype(np.uint8), n_bins=4, n_resamples=99)
    assert result.statistic == 0.0 and result.p_value == 1.0


def test_distributed_calibration_test_with_every_resample_tied():
    da = pytest.importorskip("dask.array")
    from sparsecal.distributed.arrays import binary_calibration_test
    x = np.r_[np.zeros(50), np.ones(50)]
    got = binary_calibration_test(da.from_array(x, chunks=30), x.astype(np.uint8), n_bins=4,
                                  n_resamples=99)
    assert got.statistic == 0.0 and got.p_value == 1.0


# ------------------------------------------------ min_entries (>=) -- #

def _entries_per_tag(sizes, seed=0):
    """Entries whose tag t has sizes[t] entries, scores spread over (0, 1)."""
    rng = np.random.default_rng(seed)
    tag = np.repeat(np.arange(len(sizes)), sizes)
    score = rng.uniform(0.05, 0.95, tag.size)
    return sc.Entries(score, tag, (rng.random(tag.size) < score).astype(np.uint8),
                      n_tags=len(sizes))


@pytest.mark.parametrize("min_entries", [1, 7, 40])
def test_mce_counts_a_tag_of_exactly_min_entries(min_entries):
    entries = _entries_per_tag([min_entries, min_entries - 1 or 0, min_entries + 1, 60])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # bins of fewer than 200 entries
        got = sc.mce(entries, min_entries=min_entries, n_bins=2, debias=False)
    assert sorted(got.per_tag) == [0, 2, 3]
    assert got.too_few == ({1: min_entries - 1} if min_entries > 1 else {})
    want = np.sqrt(np.mean([sc.calibration_error(entries.score[entries.tag == t],
                                                 entries.label[entries.tag == t],
                                                 n_bins=2).value ** 2 for t in (0, 2, 3)]))
    assert got.value == pytest.approx(want, rel=1e-12)


def test_distributed_mce_counts_a_tag_of_exactly_min_entries():
    da = pytest.importorskip("dask.array")
    from sparsecal import distributed
    scores = np.zeros((31, 2))
    scores[:20, 0], scores[20:, 1] = 0.6, 0.7     # tag 0: 20 entries, tag 1: 11
    scores[:20, 1], scores[20:, 0] = 0.4, 0.3
    gold = np.r_[np.zeros(15), np.ones(5), np.ones(8), np.zeros(3)].astype(np.int64)
    entries = distributed.threshold(da.from_array(scores, chunks=10), gold, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = distributed.mce(entries, min_entries=11, n_bins=2)
        one = sc.mce(sc.threshold(scores, gold, 0.5), min_entries=11, n_bins=2)
    assert sorted(got.per_tag) == sorted(one.per_tag) == [0, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert distributed.mce(entries, min_entries=12, n_bins=2).too_few == {1: 11}


@pytest.mark.parametrize("delta, own", [(0, True), (-1, False)])
def test_a_group_of_exactly_min_entries_gets_its_own_calibrator(delta, own):
    entries = _entries_per_tag([30, 30 + delta])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.per_tag(2),
                                     min_entries=30).fit(entries)
    assert model.tag_to_calibrator_.tolist() == ([0, 1] if own else [0, -1])


# ------------------------------------------------------- TFG quota -- #

@pytest.mark.parametrize("counts, n_groups, want", [
    ([5, 3, 2], 2, [0, 1, 1]),          # tag 0 reaches the quota of 5 exactly: it closes
    ([4, 3, 3], 2, [0, 0, 1]),          # 4 < 5: the next tag joins
    ([6, 3, 1], 2, [0, 1, 1]),
    ([9, 1], 3, [0, 1]),                # the smallest group: one tag; the last is empty
    ([3, 0, 2], 2, [0, 1, 1]),          # a tag unseen in training: the last group
])
def test_tfg_groups_close_when_the_quota_is_reached(counts, n_groups, want):
    groups = sc.TagGroups.from_counts({str(i): c for i, c in enumerate(counts)}, n_groups)
    assert groups.tag_to_group.tolist() == want and groups.n_groups == n_groups


# --------------------------------------------------- threshold, bins -- #

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_score_equal_to_the_threshold_is_kept(dtype):
    t = dtype(0.01)
    scores = np.array([[t, np.nextafter(t, dtype(0)), 1 - 2 * t + np.nextafter(t, dtype(0))]],
                      dtype)
    assert sc.threshold(scores, [0], threshold=0.01).tag.tolist() == [0, 2]


def test_fixed_width_edges_and_the_last_bin():
    """A score on an edge i/B lies in the bin above it; a score of 1 in the last
    bin, 0 in the first (fixed_width_bins and lookup_bins agree)."""
    x = np.array([0.0, 0.25, 0.5, np.nextafter(0.5, 0), 0.75, 1.0, 1.0])
    stats = fixed_width_bins(x, np.zeros(x.size, np.uint8), n_bins=4)
    assert stats.count.tolist() == [1, 2, 1, 3]
    assert lookup_bins(x, np.array([0.25, 0.5, 0.75])).tolist() == [0, 1, 2, 1, 3, 3, 3]
    assert sc.calibration_error([1.0], [1], n_bins=4, binning="fixed").value == 0.0


@pytest.mark.parametrize("n, bin_size, want", [
    (10, 4, [0, 4, 10]),    # the short remainder joins the last full bin
    (8, 4, [0, 4, 8]),      # no remainder
    (3, 4, [0, 3]),         # fewer than a bin: one bin
    (4, 4, [0, 4]),
])
def test_the_last_equal_mass_bin(n, bin_size, want):
    assert equal_mass_bin_starts(n, bin_size=bin_size).tolist() == want


@pytest.mark.parametrize("n, n_bins, want", [(5, 2, [0, 2, 5]), (5, 5, [0, 1, 2, 3, 4, 5]),
                                             (5, 6, [0, 1, 2, 3, 4, 5]), (1, 10, [0, 1])])
def test_equal_mass_bins_at_and_above_the_entries(n, n_bins, want):
    assert equal_mass_bin_starts(n, n_bins=n_bins).tolist() == want


def test_the_smallest_group_one_entry():
    """A group of one entry: its GMCE is |score - label| (one bin), as by hand."""
    entries = sc.Entries([0.9, 0.4, 0.3, 0.8], [0, 0, 0, 1], [1, 0, 0, 0], n_tags=2)
    got = sc.gmce(entries, sc.TagGroups.per_tag(2), n_bins=10)
    assert got[1].value == pytest.approx(0.8) and got[1].n == 1


# ---------------------------------------------------- re-ranking cutoff -- #

def test_a_span_at_the_cutoff_is_kept():
    from sparsecal.structured import rerank_spans, softmax_span_events
    names = ["O", "B-X"]
    probs = np.array([[[0.25, 0.75], [1.0, 0.0]]])
    gold = np.array([[1, 0]])
    events = softmax_span_events(probs, gold, names, k=1)
    assert len(events) == 1 and events.entries.score[0] == 0.75
    kept = rerank_spans(events, np.array([0.75]), gold, names, "bio", cutoff=0.75)
    dropped = rerank_spans(events, np.array([np.nextafter(0.75, 0)]), gold, names, "bio",
                           cutoff=0.75)
    assert kept.spans_after.n_pred == 1 and dropped.spans_after.n_pred == 0


# ------------------------------------------------------- decisions (>) -- #

def test_an_llr_at_the_bayes_threshold_is_decided_negative():
    """Positive where ``llr > threshold`` (0 at prior 0.5, equal costs): a
    positive at exactly 0 is a miss (with ``>=``, no error at all)."""
    d = sc.dcf([0.0, -3.0], [1, 0], prior=0.5, scores_are="llr")
    assert d.threshold == 0.0 and (d.p_miss, d.p_fa) == (1.0, 0.0) and d.value == 1.0
    assert sc.dcf([np.nextafter(0.0, 1.0), -3.0], [1, 0], prior=0.5,
                  scores_are="llr").value == 0.0
