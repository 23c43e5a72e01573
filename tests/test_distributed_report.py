"""write_report of distributed entries (engine sparsecal.distributed.CLUSTER_REPORT) on two
worker processes: numbers.json equals the single-machine report's (within 1e-12
relative), the smooth ECE included; every figure of the single-machine report
written (PNG and SVG; the smooth reliability diagram from merged grid sums, the
Bayes error plot from the merged tables), nothing left out. Random data with
ties, tiny groups, empty and all-below-threshold chunks."""
import json
import os
import warnings

import dask.array as da
import numpy as np
import pytest

import sparsecal as sc
from sparsecal import distributed as sd
from sparsecal.plotting.report import write_report

from _dask_cluster import tagger_scores, two_workers
from test_distributed_compare import assert_close


@pytest.fixture(scope="module", autouse=True)
def client():
    with two_workers() as c:
        yield c


GROUPS = sc.TagGroups.from_counts({t: (9 - t) ** 2 for t in range(6)}, 3, n_tags=6)


def _split(seed, n, chunks):
    x, gold = tagger_scores(seed, n, 6, np.float32)
    x[chunks[0]:chunks[0] + chunks[1]] = np.float32(0.001)   # all below the threshold
    x[:, 5] = np.where(np.arange(n) % 97 == 3, 0.5, 0.0).astype(np.float32)   # tiny tag
    return sc.threshold(x, gold), sd.threshold(da.from_array(x, chunks=(chunks, -1)), gold)


def _figures(path):
    return sorted(os.listdir(os.path.join(os.path.dirname(path), "figures")))


def test_report_numbers_equal_single_machine(tmp_path):
    one_dev, dev = _split(31, 900, (400, 50, 0, 1, 449))
    one_test, test = _split(32, 900, (300, 100, 0, 500))
    ci = sc.ConfidenceInterval("simulation", confidence_level=0.9, random_state=5)
    kw = dict(methods=["isotonic", "scaling-binning"], n_bins=8, ci=ci,
              evaluation=dict(metrics=["brier", "ece"]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = write_report(tmp_path / "d", test, GROUPS, dev=dev, engine=sd.CLUSTER_REPORT,
                            **kw)
        ref_path = write_report(tmp_path / "one", one_test, GROUPS, dev=one_dev, **kw)
    messages = [str(w.message) for w in caught if "fewer than" not in str(w.message)]
    assert not any("left out" in m for m in messages)
    assert not any("no distributed fit" in m for m in messages)
    got = json.loads(open(os.path.join(os.path.dirname(path), "numbers.json")).read())
    ref = json.loads(open(os.path.join(os.path.dirname(ref_path), "numbers.json")).read())
    assert "smooth-ece" in ref["evaluation"]["metrics"]
    assert "smooth-ece" in got["evaluation"]["metrics"]
    assert got["evaluation"]["mce"] is not None   # a tag with 400 entries: per-tag CE
    # MCB and DSC within 1e-14 absolute (docs/scale.md), the rest 1e-12 relative
    assert_close(got, ref, 1e-12, 1e-14)
    assert _figures(path) == sorted(f"{n}.{e}" for e in ("png", "svg") for n in
                                    ("reliability", "groups", "methods", "per_tag",
                                     "bayes_error", "modified_reliability",
                                     "smooth_reliability"))
    assert _figures(ref_path) == _figures(path)
    page = open(path, encoding="utf-8").read()
    assert "Not in this report" not in page
    assert "approximated from the equal-mass bins" not in page


def test_test_only_tiny_report_and_progress(tmp_path):
    x = np.array([[0.6, 0.4], [0.6, 0.4], [0.3, 0.7]])
    test = sd.threshold(da.from_array(x, chunks=(2, -1)), np.array([0, 1, 1]))
    calls = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = write_report(tmp_path / "r", test, sc.TagGroups([0, 1], 2), n_bins=2,
                            engine=sd.CLUSTER_REPORT,
                            progress=lambda d, t: calls.append((d, t)))
        ref = write_report(tmp_path / "one", sc.threshold(x, np.array([0, 1, 1])),
                           sc.TagGroups([0, 1], 2), n_bins=2)
    assert calls[-1] == (6, 6)   # the evaluation and 5 figures (no per-tag CE)
    assert _figures(path) == sorted(f"{n}.{e}" for e in ("png", "svg") for n in
                                    ("reliability", "groups", "bayes_error",
                                     "modified_reliability", "smooth_reliability"))
    got, one = (json.loads(open(os.path.join(os.path.dirname(p), "numbers.json")).read())
                for p in (path, ref))
    assert_close(got, one, 1e-12, 1e-14)


def test_refusals_write_nothing(tmp_path):
    one_test, test = _split(33, 60, (30, 30))
    with pytest.raises(TypeError, match="DaskEntries"):
        write_report(tmp_path / "a", one_test, GROUPS, engine=sd.CLUSTER_REPORT)
    with pytest.raises(TypeError, match="Entries"):
        write_report(tmp_path / "a", test, GROUPS)   # one machine: no DaskEntries
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the score interval is the debiased CE's (the report's default): not
        # with the plug-in CE asked for
        with pytest.raises(ValueError, match="'score' is the interval of the debiased"):
            write_report(tmp_path / "c", test, GROUPS, ci="score", engine=sd.CLUSTER_REPORT,
                         evaluation={"debias": False})
    assert os.listdir(tmp_path) == []
