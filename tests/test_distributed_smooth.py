"""The smooth ECE and the smooth reliability diagram on a cluster
(sparsecal.distributed.smooth) on two worker processes, against the
single-machine sparsecal.smooth_ece / smooth_reliability (tested against relplot
in test_smooth_ece.py): pooled and per group, float32 and float64, searched and
fixed bandwidths (one with sigma < 0.01, a second grid size), curves and
densities within 1e-12, the same bandwidths, a repeated run bit for bit, another
chunking within 1e-12, one pass over the chunks per grid size, evaluate and the
command line. Data: random tagger scores with ties, a tiny group, an empty chunk,
a one-row chunk and a chunk whose scores are all under the threshold."""
import json

import dask.array as da
import numpy as np
import pytest

import sparsecal as sc
from sparsecal import distributed as sd
from sparsecal.cli.main import main
from sparsecal.distributed import smooth as dsmooth

from _dask_cluster import tagger_scores, two_workers


REL = 1e-12
#: an empty chunk, a one-row chunk, a chunk all below the threshold (rows 60-100)
CHUNKS = [(60, 0, 41, 1, 0, 98), (200,), (13,) * 15 + (5,)]
GROUPS = sc.TagGroups([0, 1, 1, 2, 2, 3], 4)   # group 3: the tiny tag 5


@pytest.fixture(scope="module", autouse=True)
def client():
    with two_workers() as c:
        yield c


def _data(dtype, seed=1):
    x, gold = tagger_scores(seed, 200, 6, dtype)
    x[60:101] = dtype(0.001)                    # a whole chunk below the threshold
    x[:, 5] = np.where(np.arange(200) % 67 == 3, 0.5, 0.0).astype(dtype)   # a tiny tag
    return x, gold


def _entries(x, gold, sizes):
    return sd.threshold(da.from_array(x, chunks=(sizes, (3, 3))), gold)


def _reference(entries, groups, **kw):
    """Single-machine smooth ECE of all entries, then of each group's."""
    perm, offsets = groups.partition(entries)
    sets = [np.arange(len(entries))] + [perm[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
    return [sc.smooth_ece(entries.score[i], entries.label[i], **kw) if i.size else None
            for i in sets]


def _same(got, ref):
    assert (got is None) == (ref is None)
    if ref is not None:
        assert got.n == ref.n and got.bandwidth == ref.bandwidth
        assert got.value == pytest.approx(ref.value, rel=REL, abs=1e-300)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bandwidth", [None, 0.05, 0.004])
def test_smooth_ece_pooled_and_per_group_equal_single_machine(dtype, bandwidth):
    x, gold = _data(dtype)
    one = sc.threshold(x, gold)
    ref = _reference(one, GROUPS, bandwidth=bandwidth)
    assert 0 < ref[4].n < 10            # the tiny group (tag 5)
    for sizes in CHUNKS[:2]:
        pooled, per_group = sd.smooth_ece(_entries(x, gold, sizes), GROUPS,
                                          bandwidth=bandwidth)
        for got, want in zip([pooled] + per_group, ref):
            _same(got, want)


def test_empty_group_is_none_and_scw_default():
    x, gold = _data(np.float64)
    groups = sc.TagGroups([0, 0, 0, 0, 1, 2], 3)
    x[:, 4] = 0.0                        # group 1: no entries
    entries = _entries(x, gold, CHUNKS[0])
    pooled, per_group = sd.smooth_ece(entries, groups)
    assert per_group[1] is None
    for got, want in zip([pooled] + per_group, _reference(sc.threshold(x, gold), groups)):
        _same(got, want)
    scw_pooled, (scw,) = sd.smooth_ece(entries)
    assert scw_pooled == pooled and scw.to_dict() == pooled.to_dict()


def test_small_bandwidth_search_uses_a_second_grid(monkeypatch):
    """Nearly perfect predictions: the fixed point lies below 0.01, so the
    search needs grids of more than 1001 points; each grid size is one pass."""
    rng = np.random.default_rng(4)
    f = np.r_[np.zeros(300), np.ones(300), rng.random(3).round(2)]
    y = np.r_[np.zeros(300), np.ones(300), (rng.random(3) < 0.5)].astype(np.uint8)
    ref = sc.smooth_ece(f, y)
    assert ref.bandwidth < 0.01
    passes = []
    real = dsmooth.tree_merge

    def counted(*args):
        passes.append(sorted({m for _, m in args[-1]}))
        return real(*args)
    monkeypatch.setattr(dsmooth, "tree_merge", counted)
    for chunks in (100, (1, 0, 2, 600)):
        passes.clear()
        entries = sd.from_arrays(da.from_array(f, chunks=chunks), y)
        (got, _) = sd.smooth_ece(entries)
        _same(got, ref)
        assert passes[0] == [1001] and len(passes) > 1
        assert all(p and p[0] > 1001 for p in passes[1:])   # never a grid twice
        r = sd.smooth_reliability(entries, n_points=50)
        want = sc.smooth_reliability(f, y, n_points=50)
        np.testing.assert_allclose(r.curve, want.curve, rtol=0, atol=REL)
        np.testing.assert_allclose(r.density, want.density, rtol=0, atol=REL)


def test_one_pass_when_every_step_is_at_least_001(monkeypatch):
    x, gold = _data(np.float64)
    calls = []
    real = dsmooth.tree_merge
    monkeypatch.setattr(dsmooth, "tree_merge", lambda *a: calls.append(1) or real(*a))
    pooled, per_group = sd.smooth_ece(_entries(x, gold, CHUNKS[0]), GROUPS)
    assert min(e.bandwidth for e in [pooled] + per_group) > 0.02   # searched: >= 0.01
    assert len(calls) == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bandwidth", [None, 0.1])
def test_smooth_reliability_equals_single_machine(dtype, bandwidth):
    x, gold = _data(dtype, seed=2)
    one = sc.threshold(x, gold)
    want = sc.smooth_reliability(one.score, one.label, bandwidth=bandwidth, n_points=77)
    runs = [sd.smooth_reliability(_entries(x, gold, sizes), bandwidth=bandwidth,
                                  n_points=77) for sizes in (CHUNKS[0], CHUNKS[0], CHUNKS[2])]
    for got in runs:
        np.testing.assert_array_equal(got.mesh, want.mesh)
        np.testing.assert_allclose(got.curve, want.curve, rtol=REL, atol=REL)
        np.testing.assert_allclose(got.density, want.density, rtol=REL, atol=REL)
        _same(got.smooth_ece, want.smooth_ece)
    # the same chunking twice: the same bits (the reduction order is fixed)
    for a, b in zip((runs[0].curve, runs[0].density), (runs[1].curve, runs[1].density)):
        assert a.tobytes() == b.tobytes()
    assert runs[0].smooth_ece == runs[1].smooth_ece
    # a planted change of the curve's bandwidth is seen
    other = sc.smooth_reliability(one.score, one.label, n_points=77,
                                  bandwidth=want.smooth_ece.bandwidth * 1.05)
    assert np.abs(other.curve - runs[0].curve).max() > 1e-6


def test_tiny_inputs():
    for f, y in [([0.3], [1]), ([0.3, 0.3], [0, 1]), ([0.0, 1.0], [0, 1])]:
        f, y = np.array(f), np.array(y, dtype=np.uint8)
        entries = sd.from_arrays(da.from_array(f, chunks=1), y)
        (got, _) = sd.smooth_ece(entries)
        _same(got, sc.smooth_ece(f, y))
        r, want = sd.smooth_reliability(entries, n_points=5), sc.smooth_reliability(
            f, y, n_points=5)
        np.testing.assert_allclose(r.curve, want.curve, rtol=REL, atol=REL)
        np.testing.assert_allclose(r.density, want.density, rtol=REL, atol=REL)


def test_evaluate_metrics_smooth_ece_equals_single_machine():
    x, gold = _data(np.float32)
    got = sd.evaluate(_entries(x, gold, CHUNKS[0]), GROUPS, metrics=["smooth-ece", "ece"])
    ref = sc.evaluate(sc.threshold(x, gold), GROUPS, metrics=["smooth-ece", "ece"])
    g, r = got.metrics["smooth-ece"], ref.metrics["smooth-ece"]
    assert g["pooled"] == pytest.approx(r["pooled"], rel=REL)
    assert g["groups"] == pytest.approx(r["groups"], rel=REL)


def test_cli_evaluate_metrics_smooth_ece(client, tmp_path, capsys):
    x, gold = _data(np.float64, seed=3)
    np.save(tmp_path / "s.npy", x)
    np.save(tmp_path / "g.npy", gold)
    args = ["evaluate", "--scores", str(tmp_path / "s.npy"), "--gold",
            str(tmp_path / "g.npy"), "--metrics", "smooth-ece"]
    assert main(args + ["--json", str(tmp_path / "one.json")]) == 0
    assert main(args + ["--scheduler", client.scheduler.address, "--chunk-rows", "37",
                        "--json", str(tmp_path / "d.json")]) == 0
    capsys.readouterr()
    got, ref = (json.loads((tmp_path / f).read_text())["metrics"]["smooth-ece"]
                for f in ("d.json", "one.json"))
    assert got["pooled"] == pytest.approx(ref["pooled"], rel=REL)
    assert got["groups"] == pytest.approx(ref["groups"], rel=REL)


def test_bad_arguments_one_clear_error():
    x, gold = _data(np.float64)
    entries = _entries(x, gold, CHUNKS[1])
    with pytest.raises(TypeError, match="DaskEntries"):
        sd.smooth_ece(sc.threshold(x, gold))
    with pytest.raises(ValueError, match="bandwidth"):
        sd.smooth_ece(entries, bandwidth=0)
    with pytest.raises(TypeError, match="bandwidth"):
        sd.smooth_reliability(entries, bandwidth="wide")
    with pytest.raises(ValueError, match="n_points must be at least 2"):
        sd.smooth_reliability(entries, n_points=1)
    with pytest.raises(ValueError, match="tags"):
        sd.smooth_ece(entries, sc.TagGroups.scw(5))
    below = _entries(np.full((20, 6), 0.001), np.zeros(20, int), (10, 10))
    with pytest.raises(ValueError, match="smooth ECE of no points"):
        sd.smooth_ece(below)
