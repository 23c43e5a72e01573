"""The report's intervals (issue 26, item 2): the debiased CE_2 with its 95%
score interval over bins of 200 entries, on perfectly calibrated taggers
(gold drawn from the scores: the true CE of every set is 0). A bounded form of
``benchmarks/coverage_study.py tagger`` (docs/ci_coverage.md, "The report's
intervals on whole taggers")."""
import json
import warnings

import numpy as np
import pytest

import sparsecal as sc
from sparsecal.datasets import make_tagger_outputs
from sparsecal.metrics import ConfidenceInterval
from sparsecal.metrics.debiased import score_interval
from sparsecal.plotting import report as report_module

N_TAGS, N_TOKENS, REPS = 80, 20000, 60


def calibrated(seed):
    data = make_tagger_outputs(N_TOKENS, n_tags=N_TAGS, miscalibration=0.0, split_seed=seed)
    return sc.threshold(data.scores, data.gold), data.train_counts


@pytest.fixture(scope="module")
def groups():
    return sc.TagGroups.from_counts(calibrated(0)[1], 5, n_tags=N_TAGS)


def report_evaluation(entries, groups, tmp_path, monkeypatch):
    """The report's own evaluation of ``entries`` (figures and tests stubbed)."""
    monkeypatch.setattr(report_module, "_figures", lambda directory, *a: [])
    monkeypatch.setattr(report_module, "_tag_tests", lambda *a: {})
    report_module.write_report(tmp_path / "r", entries, groups)
    return json.loads((tmp_path / "r" / "numbers.json").read_text())["evaluation"]


def test_the_report_draws_95_percent_score_intervals(groups, tmp_path, monkeypatch):
    """The values: every interval of the report's default is the 95% score
    interval of its set's bins of 200 entries (a planted 90% level, in the
    report or in ConfidenceInterval, changes them)."""
    entries, _ = calibrated(1)
    numbers = report_evaluation(entries, groups, tmp_path, monkeypatch)
    s = numbers["settings"]
    assert (s["ci"], s["confidence_level"], s["debias"], s["bin_size"]) == (
        "score", 0.95, True, 200)
    spec = ConfidenceInterval("score", confidence_level=0.95)
    assert spec.z == pytest.approx(1.959963984540054, abs=1e-15)
    want = sc.smce(entries, bin_size=200, debias=True, ci=spec)
    assert (numbers["smce"]["ci_low"], numbers["smce"]["ci_high"]) == score_interval(
        want.bins, spec)
    ninety = score_interval(want.bins, ConfidenceInterval("score", confidence_level=0.9))
    assert ninety[1] < numbers["smce"]["ci_high"]
    mce = sc.mce(entries, ci=spec)
    for t, ce in numbers["mce"]["per_tag"].items():
        assert (ce["ci_low"], ce["ci_high"]) == score_interval(mce.per_tag[int(t)].bins, spec)


def test_calibrated_taggers_intervals_hold_zero(groups):
    """60 calibrated taggers: the interval holds the truth, 0, in 93-98.5% of
    the SMCE and GMCE (measured 95.6% of 360; 96.1% of 2,400 in the study) and
    in 97-99.5% of the per-tag CEs (98.5% of 1,639; 98.9% in the study: the
    per-tag interval is conservative, docs/ci_coverage.md), and always holds
    its estimate. The report's interval before issue 26, Algorithm 2 of the
    plug-in CE_2, never held 0 for SMCE and GMCE and excluded its own
    estimate in some (2.8-6.4% in the study; 3 of these 60)."""
    spec = ConfidenceInterval("score")
    held_sets, held_tags, outside, old_held, old_outside = [], [], 0, [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for rep in range(REPS):
            entries, _ = calibrated(1000 + rep)
            res = sc.evaluate(entries, groups, debias=True, ci=spec, per_tag=True,
                              bin_size=200)
            sets = [res.smce] + [g for g in res.gmce if g is not None]
            held_sets += [c.ci_low == 0.0 for c in sets]
            held_tags += [c.ci_low == 0.0 for c in res.mce.per_tag.values()]
            outside += sum(not c.ci_low <= c.value <= c.ci_high
                           for c in sets + list(res.mce.per_tag.values()))
            if rep < 10:
                old = sc.evaluate(entries, groups, ci=ConfidenceInterval(
                    n_resamples=2000, random_state=rep))
                olds = [old.smce] + [g for g in old.gmce if g is not None]
                old_held += [c.ci_low <= 0.0 for c in olds]
                old_outside += sum(not c.ci_low <= c.value <= c.ci_high for c in olds)
    assert 0.93 <= np.mean(held_sets) <= 0.985, np.mean(held_sets)
    assert 0.97 <= np.mean(held_tags) <= 0.995, np.mean(held_tags)
    assert len(held_tags) > 1000 and outside == 0
    assert not any(old_held) and old_outside >= 1
