"""Progress of long steps (issue 12, item 5): the library's ``progress=`` hooks
(``sparsecal/core/progress.py``)."""
import json
import warnings

import numpy as np
import pytest

import sparsecal as sc
from sparsecal.datasets.synthetic import make_tagger_outputs
from sparsecal.metrics import gmce
from sparsecal.plotting.report import write_report

N_TAGS = 60


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("progress-data")
    dev = make_tagger_outputs(1500, n_tags=N_TAGS, split_seed=1)
    test = make_tagger_outputs(1200, n_tags=N_TAGS, split_seed=2)
    for name, split in (("dev", dev), ("test", test)):
        np.save(d / f"{name}.npy", split.scores)
        np.save(d / f"{name}_gold.npy", split.gold)
    (d / "counts.json").write_text(json.dumps({str(k): v for k, v in
                                               dev.train_counts.items()}))
    dev_entries = sc.threshold(dev.scores, dev.gold)
    test_entries = sc.threshold(test.scores, test.gold)
    groups = sc.TagGroups.from_counts(dev.train_counts, 4, n_tags=N_TAGS)
    return dev, test, dev_entries, test_entries, groups, d


def recorder():
    calls = []
    return calls, lambda done, total: calls.append((done, total))


def assert_counts_up(calls, total):
    """``done`` never decreases and ends at ``total``, which never changes."""
    assert calls, "progress was never called"
    assert {t for _, t in calls} == {total}
    done = [d for d, _ in calls]
    assert done == sorted(done) and 0 <= done[0] and done[-1] == total


# ------------------------------------------------------------ the library -- #

def test_evaluate_reports_each_calibration_error_and_gives_the_same_result(data):
    _, _, _, test, groups, _ = data
    calls, progress = recorder()
    kw = dict(ci="simulation", per_tag=True, min_entries=20, top_label=True)
    with_progress = sc.evaluate(test, groups, progress=progress, **kw)
    assert_counts_up(calls, 1 + groups.n_groups + 2)
    assert with_progress.to_dict() == sc.evaluate(test, groups, **kw).to_dict()


def test_gmce_reports_each_group(data):
    _, _, _, test, groups, _ = data
    calls, progress = recorder()
    values = [c.value for c in gmce(test, groups, progress=progress)]
    assert_counts_up(calls, groups.n_groups)
    assert values == [c.value for c in gmce(test, groups)]


@pytest.mark.parametrize("per_tag", [False, True])
def test_fit_reports_each_group_and_fallback_group(data, per_tag):
    _, _, dev, _, groups, _ = data
    calls, progress = recorder()

    def model():
        if per_tag:   # tags with < 50 dev entries use their TFG group's calibrator
            return sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.per_tag(N_TAGS),
                                        fallback=groups, min_entries=50)
        return sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups)

    with warnings.catch_warnings():   # (whether some tags are left unchanged)
        warnings.simplefilter("ignore")
        fitted = model().fit(dev, progress=progress)
        plain = model().fit(dev)
    assert_counts_up(calls, N_TAGS + groups.n_groups if per_tag else groups.n_groups)
    meta, arrays = fitted.get_state()
    plain_meta, plain_arrays = plain.get_state()
    assert meta == plain_meta
    assert arrays.keys() == plain_arrays.keys()
    for key in arrays:
        np.testing.assert_array_equal(arrays[key], plain_arrays[key])


def test_fit_counts_an_unused_fallback_as_done(data):
    _, _, dev, _, groups, _ = data
    calls, progress = recorder()
    sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups, fallback=sc.TagGroups.scw(N_TAGS)
                         ).fit(dev, progress=progress)
    assert_counts_up(calls, groups.n_groups + 1)


def test_compare_methods_reports_each_fit_and_gives_the_same_result(data):
    _, _, dev, test, groups, _ = data
    calls, progress = recorder()
    methods = ["isotonic", "histogram"]
    result = sc.compare_methods(dev, test, groups, methods=methods, progress=progress)
    assert_counts_up(calls, 1 + 2 * len(methods))
    assert result.to_dict() == sc.compare_methods(dev, test, groups, methods=methods).to_dict()


def test_write_report_reports_steps_and_figures(data, tmp_path):
    _, _, dev, test, groups, _ = data
    calls, progress = recorder()
    kw = dict(dev=dev, methods=["isotonic"], ci="simulation")
    write_report(tmp_path / "a", test, groups, progress=progress, **kw)
    write_report(tmp_path / "b", test, groups, **kw)
    figures = len(list((tmp_path / "a" / "figures").glob("*.png")))
    # the evaluation, compare_methods' 1 + 2 fits, the evaluation after, figures
    assert_counts_up(calls, 1 + 3 + 1 + figures)
    assert (tmp_path / "a" / "numbers.json").read_text() == \
        (tmp_path / "b" / "numbers.json").read_text()


def test_transform_dense_reports_rows(data):
    _, test, dev, _, groups, _ = data
    model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups).fit(dev)
    calls, progress = recorder()
    out = model.transform_dense(test.scores, chunk_rows=500, progress=progress)
    assert_counts_up(calls, test.scores.shape[0])
    np.testing.assert_array_equal(out, model.transform_dense(test.scores))


def test_a_progress_that_is_not_callable_is_refused_before_any_work(data, tmp_path):
    dev_split, _, dev, test, groups, _ = data
    model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups)
    calls = [lambda: sc.threshold(dev_split.scores, dev_split.gold, progress=1),
             lambda: sc.evaluate(test, groups, progress=1),
             lambda: gmce(test, groups, progress=1),
             lambda: model.fit(dev, progress=1),
             lambda: sc.compare_methods(dev, test, groups, progress=1),
             lambda: write_report(tmp_path / "r", test, groups, progress=1)]
    for call in calls:
        with pytest.raises(TypeError, match="progress must be None or a callable"):
            call()
    assert not (tmp_path / "r").exists()
