"""Entries to Arrow / Parquet and back (sparsecal/io/parquet.py): bit-identical
round trips for both dtypes, sizes 0, 1, 2 and larger, with and without tokens and
tag names; the documented schema; clear errors naming file and column; the
missing extra names its install."""
import sys

import numpy as np
import pytest

from sparsecal import Entries, threshold
from sparsecal.io import read_parquet, to_arrow, write_parquet

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def entries_of(n_tokens, dtype, seed=0, token=True):
    rng = np.random.default_rng(seed)
    scores = rng.dirichlet(np.ones(6) * 0.3, size=n_tokens).astype(dtype)
    scores[:, 0] = scores[:, 1]   # ties
    scores /= scores.sum(1, keepdims=True)
    e = threshold(scores, rng.integers(-1, 6, n_tokens), 0.01)
    return e if token else Entries(e.score, e.tag, e.label, n_tags=6, n_tokens=n_tokens,
                                   threshold=0.01)


def same(a, b):
    for k in ("score", "tag", "label", "token"):
        x, y = getattr(a, k), getattr(b, k)
        if x is None:
            assert y is None
            continue
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), k
    assert (a.n_tags, a.n_tokens, a.threshold) == (b.n_tags, b.n_tokens, b.threshold)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 500])
@pytest.mark.parametrize("names", [False, True])
@pytest.mark.parametrize("token", [True, False])
def test_round_trip_is_bit_identical(tmp_path, dtype, n, names, token):
    e = entries_of(n, dtype, seed=n, token=token)
    tag_names = [f"T<{i}>" for i in range(6)] if names else None
    write_parquet(e, tmp_path / "e.parquet", tag_names=tag_names)
    same(e, read_parquet(tmp_path / "e.parquet"))
    schema = pq.read_schema(tmp_path / "e.parquet")
    assert schema.names == ["score", "tag", "label"] + (["token"] if token else [])
    assert schema.field("score").type == (pa.float32() if dtype == np.float32 else pa.float64())
    assert schema.field("label").type == pa.uint8()
    if names:
        assert schema.field("tag").type == pa.dictionary(pa.int32(), pa.string())
        tags = pq.read_table(tmp_path / "e.parquet").column("tag").to_pylist()
        assert tags == [tag_names[t] for t in e.tag]
    else:
        assert schema.field("tag").type == pa.int32()


def test_empty_entries_round_trip(tmp_path):
    e = Entries(np.zeros(0, np.float32), np.zeros(0, np.int32), np.zeros(0, np.uint8),
                n_tags=3, n_tokens=0, threshold=0.5)
    write_parquet(e, tmp_path / "e.parquet")
    same(e, read_parquet(tmp_path / "e.parquet"))


def test_other_writers_are_read_and_inputs_unchanged(tmp_path):
    table = pa.table({"score": pa.array([0.5, 0.25], pa.float64()),
                      "tag": pa.array([1, 0], pa.int64()),
                      "label": pa.array([True, False])})
    pq.write_table(table, tmp_path / "o.parquet")
    e = read_parquet(tmp_path / "o.parquet")
    assert e.tag.tolist() == [1, 0] and e.label.tolist() == [1, 0] and e.threshold == 0.0
    entries = entries_of(10, np.float64)
    before = entries.score.copy()
    to_arrow(entries, tag_names=list("abcdef"))
    assert np.array_equal(before, entries.score)


@pytest.mark.parametrize("table,match", [
    ({"score": pa.array([0.5]), "label": pa.array([1], pa.uint8())}, r"no column 'tag'"),
    ({"score": pa.array(["x"]), "tag": pa.array([0], pa.int32()),
      "label": pa.array([1], pa.uint8())}, r"column 'score' must be float or double"),
    ({"score": pa.array([0.5]), "tag": pa.array([0.0]), "label": pa.array([1], pa.uint8())},
     r"column 'tag' must be int32 or int64 or dictionary"),
    ({"score": pa.array([0.5]), "tag": pa.array([0], pa.int32()),
      "label": pa.array([2], pa.uint8())}, r"label"),
    ({"score": pa.array([1.5]), "tag": pa.array([0], pa.int32()),
      "label": pa.array([1], pa.uint8())}, r"score"),
    ({"score": pa.array([0.5]), "tag": pa.array(["a"]).dictionary_encode(),
      "label": pa.array([1], pa.uint8())}, r"'tag' .*\(with sparsecal metadata\)"),
])
def test_bad_files_name_file_and_column(tmp_path, table, match):
    pq.write_table(pa.table(table), tmp_path / "bad.parquet")
    with pytest.raises(ValueError, match=r"bad\.parquet'.*" + match):
        read_parquet(tmp_path / "bad.parquet")


def test_not_parquet_and_bad_arguments(tmp_path):
    (tmp_path / "x.parquet").write_text("nope")
    with pytest.raises(ValueError, match=r"cannot read entries file '.*x\.parquet'"):
        read_parquet(tmp_path / "x.parquet")
    with pytest.raises(FileNotFoundError, match="absent.parquet"):
        read_parquet(tmp_path / "absent.parquet")
    e = entries_of(5, np.float64)
    with pytest.raises(ValueError, match="tag_names must be one string per tag"):
        to_arrow(e, tag_names=["a", "b"])
    with pytest.raises(ValueError, match="entries must be Entries"):
        to_arrow({"score": [0.5]})


def test_write_is_atomic_keeping_the_old_file_on_error(tmp_path):
    e = entries_of(5, np.float64)
    write_parquet(e, tmp_path / "e.parquet")
    with pytest.raises(ValueError):
        write_parquet(e, tmp_path / "e.parquet", tag_names=["a"])
    same(e, read_parquet(tmp_path / "e.parquet"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.parquet"]


def test_missing_pyarrow_names_the_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match=r'needs pyarrow: pip install "sparsecal\[arrow\]"'):
        write_parquet(entries_of(3, np.float64), tmp_path / "e.parquet")
