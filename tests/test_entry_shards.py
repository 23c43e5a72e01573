"""Entries as a directory of .npz shards (sparsecal.io.entry_shards,
sparsecal.distributed.entry_store, ``evaluate --save-entries`` on a cluster): the
round trip equals the single-machine ``--save-entries`` + ``--entries`` bit for
bit, on one machine (concatenated) and on the cluster (one task per shard); a
missing, truncated or foreign shard and a bad manifest are one error naming the
file."""
import json
import os
import shutil

import dask.array as da
import numpy as np
import pytest

import sparsecal as sc
from sparsecal import distributed as sd
from sparsecal.cli.main import main as _main
from sparsecal.io import load_entries, load_entry_shards, save_entries
from sparsecal.io.entry_shards import MANIFEST

from _dask_cluster import tagger_scores, two_workers


@pytest.fixture(scope="module")
def client():
    with two_workers() as c:
        yield c


def main(argv):
    return _main([str(a) for a in argv])


def _same(a, b):
    assert (a.n_tags, a.n_tokens, a.threshold) == (b.n_tags, b.n_tokens, b.threshold)
    for f in ("score", "tag", "label", "token"):
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype and x.shape == y.shape, f
        np.testing.assert_array_equal(x, y, err_msg=f)


CHUNKS = [(60,), (20, 0, 17, 1, 22), (1, 1, 58)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_trip_equals_single_machine_file(client, tmp_path, dtype):
    x, gold = tagger_scores(31, 60, 6, dtype)
    x[20:37] = dtype(0.001)                     # a chunk with no entries
    one = sc.threshold(x, gold, 0.02)
    save_entries(tmp_path / "one.npz", one)
    ref = load_entries(tmp_path / "one.npz")
    for k, sizes in enumerate(CHUNKS):
        path = tmp_path / f"shards{k}"
        entries = sd.threshold(da.from_array(x, chunks=(sizes, 6)), gold, 0.02)
        sd.save_entry_shards(entries, path)
        assert len([n for n in os.listdir(path) if n.endswith(".npz")]) == len(sizes)
        _same(load_entry_shards(path), ref)                      # one machine: concatenated
        back = sd.load_entry_shards_dask(path)              # cluster: one task per shard
        assert len(back.blocks) == len(sizes)
        _same(back.compute(), ref)
        assert sd.smce(back).bins.count.tolist() == sc.smce(ref).bins.count.tolist()
    # replacing an existing shard directory, atomically; another kind is refused
    sd.save_entry_shards(sd.threshold(da.from_array(x[:7], chunks=(3, 6)), gold[:7], 0.02),
                         tmp_path / "shards0")
    assert load_entry_shards(tmp_path / "shards0").n_tokens == 7
    (tmp_path / "other").mkdir()
    with pytest.raises(FileExistsError, match="not a directory of entry shards"):
        sd.save_entry_shards(entries, tmp_path / "other")
    assert [n for n in os.listdir(tmp_path) if n.startswith(".")] == []


@pytest.fixture()
def shards(client, tmp_path):
    x, gold = tagger_scores(32, 40, 5, np.float64)
    path = tmp_path / "s"
    sd.save_entry_shards(sd.threshold(da.from_array(x, chunks=(15, 5)), gold), path)
    return path, x, gold


def _manifest(path):
    return json.loads((path / MANIFEST).read_text())


def test_missing_truncated_and_foreign_shards(shards, tmp_path):
    path, x, gold = shards
    bad = tmp_path / "bad"
    shutil.copytree(path, bad)
    os.remove(bad / "shard-00001.npz")
    with pytest.raises(FileNotFoundError, match="shard-00001.npz"):
        load_entry_shards(bad)
    with pytest.raises(FileNotFoundError, match="shard-00001.npz"):
        sd.load_entry_shards_dask(bad).compute()
    # truncated
    shutil.copy(path / "shard-00001.npz", bad / "shard-00001.npz")
    data = (bad / "shard-00001.npz").read_bytes()
    (bad / "shard-00001.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="shard-00001.npz"):
        load_entry_shards(bad)
    # a shard of another manifest (same shapes, written by another run)
    other = tmp_path / "other"
    sd.save_entry_shards(sd.threshold(da.from_array(x, chunks=(15, 5)), gold), other)
    shutil.copy(other / "shard-00001.npz", bad / "shard-00001.npz")
    with pytest.raises(ValueError, match="shard-00001.npz.* does not belong .*manifest"):
        load_entry_shards(bad)
    with pytest.raises(ValueError, match="shard-00001.npz"):
        sd.load_entry_shards_dask(bad).compute()
    # shards swapped
    shutil.copy(path / "shard-00000.npz", bad / "shard-00001.npz")
    with pytest.raises(ValueError, match="shard-00001.npz.*shard"):
        load_entry_shards(bad)


@pytest.mark.parametrize("edit,message", [
    (lambda m: m.update(version=2), "version"),
    (lambda m: m.update(format="x"), "sparsecal.EntryShards"),
    (lambda m: m.pop("id"), "ill-typed"),
    (lambda m: m.update(n_tokens=-1), "ill-typed"),
    (lambda m: m["shards"][1].update(rows=[16, 30]), "rows do not cover"),
    (lambda m: m.update(n_tokens=41), "rows do not cover"),
    (lambda m: m["shards"].reverse(), "rows do not cover"),
    (lambda m: m["shards"][0].update(n_entries=1), "shard-00000.npz.*n_entries"),
    (lambda m: m.update(threshold=0.5), "shard-00000.npz.*threshold"),
])
def test_bad_manifest_one_error_naming_the_file(shards, edit, message):
    path = shards[0]
    m = _manifest(path)
    edit(m)
    (path / MANIFEST).write_text(json.dumps(m))
    with pytest.raises(ValueError, match=message) as info:
        load_entry_shards(path)
    assert str(path) in str(info.value)


def test_cli_cluster_save_entries_then_entries(client, tmp_path, capsys):
    """``evaluate --dask --save-entries DIR`` then ``--entries DIR`` (one machine
    and cluster): the single-machine ``--save-entries x.npz`` entries bit for bit
    and the same evaluation."""
    x, gold = tagger_scores(33, 300, 12, np.float32)
    np.save(tmp_path / "s.npy", x)
    np.save(tmp_path / "g.npy", gold)
    scheduler = client.scheduler.address
    common = ["evaluate", "--json"]
    assert main(common + [tmp_path / "a.json", "--scores", tmp_path / "s.npy", "--gold",
                          tmp_path / "g.npy", "--save-entries", tmp_path / "one.npz"]) == 0
    assert main(common + [tmp_path / "b.json", "--scores", tmp_path / "s.npy", "--gold",
                          tmp_path / "g.npy", "--save-entries", tmp_path / "shards",
                          "--scheduler", scheduler, "--chunk-rows", 70]) == 0
    assert "entry shards" in capsys.readouterr().out
    _same(load_entry_shards(tmp_path / "shards"), load_entries(tmp_path / "one.npz"))
    assert len(_manifest(tmp_path / "shards")["shards"]) == 5
    assert main(common + [tmp_path / "c.json", "--entries", tmp_path / "shards"]) == 0
    assert main(common + [tmp_path / "d.json", "--entries", tmp_path / "shards",
                          "--scheduler", scheduler]) == 0
    a, c = (json.loads((tmp_path / f"{k}.json").read_text()) for k in "ac")
    assert a == c
    b, d = (json.loads((tmp_path / f"{k}.json").read_text()) for k in "bd")
    assert b == d
    assert main(["fit", "--grouping", "scw", "--method", "histogram", "--entries",
                 tmp_path / "shards", "--scheduler", scheduler, "-o", tmp_path / "m"]) == 0
    assert main(["fit", "--grouping", "scw", "--method", "histogram", "--entries",
                 tmp_path / "one.npz", "-o", tmp_path / "m1"]) == 0
    got, ref = (sc.GroupedCalibrator.load(tmp_path / p) for p in ("m", "m1"))
    np.testing.assert_array_equal(got.transform_dense(x), ref.transform_dense(x))


def test_cli_cluster_save_entries_thresholds_each_chunk_once(tmp_path, monkeypatch):
    """``evaluate --dask --save-entries DIR`` thresholds each row chunk once:
    the evaluation reads the written shards (synchronous scheduler in this
    process, the threshold kernel counted); its ``--json`` equals the one
    without ``--save-entries``."""
    import contextlib

    import dask

    from sparsecal.cli import cluster
    from sparsecal.distributed import entries as dask_entries
    x, gold = tagger_scores(34, 200, 9, np.float32)
    np.save(tmp_path / "s.npy", x)
    np.save(tmp_path / "g.npy", gold)
    calls = []
    kernel = dask_entries.threshold_block

    def counted(*args, **kwargs):
        calls.append(kwargs["token_offset"])
        return kernel(*args, **kwargs)

    monkeypatch.setattr(dask_entries, "threshold_block", counted)
    monkeypatch.setattr(cluster, "_client", lambda args, console: contextlib.nullcontext())
    common = ["evaluate", "--scores", tmp_path / "s.npy", "--gold", tmp_path / "g.npy",
              "--dask", "--chunk-rows", 60, "--json"]
    with dask.config.set(scheduler="synchronous"):
        assert main(common + [tmp_path / "a.json", "--save-entries", tmp_path / "shards"]) == 0
        assert sorted(calls) == [0, 60, 120, 180]   # 4 chunks, each thresholded once
        assert main(common + [tmp_path / "b.json"]) == 0
    assert len(calls) > 8   # without shards, every pass thresholds the chunks again
    a, b = (json.loads((tmp_path / f"{k}.json").read_text()) for k in "ab")
    assert a == b
