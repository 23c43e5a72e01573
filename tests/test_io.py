"""Tests of ``sparsecal.io`` (score, gold, tag-index and entries files) and of
the atomic writes in ``sparsecal._io``."""
import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

from sparsecal import Entries, threshold
from sparsecal.io.atomic import atomic_path, atomic_write_text
from sparsecal.io.arrays import (ENTRIES_FORMAT, ENTRIES_VERSION, load_entries, load_gold,
                          load_scores, load_tag_index, save_entries)
from sparsecal.datasets.synthetic import make_tagger_outputs

N_TAGS = 40


@pytest.fixture(scope="module")
def tagger():
    return make_tagger_outputs(300, n_tags=N_TAGS, split_seed=3, n_train=5000)


def umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def names_in(directory):
    return sorted(p.name for p in Path(directory).iterdir())


# ------------------------------------------------------------ load_scores -- #

def test_npy_is_memory_mapped(tagger, tmp_path):
    np.save(tmp_path / "s.npy", tagger.scores)
    arr = load_scores(tmp_path / "s.npy")
    assert isinstance(arr, np.memmap) and arr.dtype == np.float32
    np.testing.assert_array_equal(arr, tagger.scores)


def test_npz_single_array(tagger, tmp_path):
    np.savez_compressed(tmp_path / "s.npz", whatever=tagger.scores)
    arr = load_scores(tmp_path / "s.npz")
    assert arr.dtype == np.float32
    np.testing.assert_array_equal(arr, tagger.scores)
    np.testing.assert_array_equal(load_scores(str(tmp_path / "s.npz")), tagger.scores)


def test_npz_several_arrays_need_a_key(tagger, tmp_path):
    path = tmp_path / "s.npz"
    np.savez(path, scores=tagger.scores, logits=np.log(tagger.scores + 1e-9))
    np.testing.assert_array_equal(load_scores(path, key="scores"), tagger.scores)
    with pytest.raises(ValueError, match=r"s\.npz.*\['scores', 'logits'\].*key"):
        load_scores(path)
    with pytest.raises(ValueError, match=r"s\.npz.*no array 'probs'"):
        load_scores(path, key="probs")


def test_pt_tensor(tagger, tmp_path):
    torch = pytest.importorskip("torch")
    torch.save(torch.from_numpy(tagger.scores.copy()), tmp_path / "s.pt")
    arr = load_scores(tmp_path / "s.pt")
    assert isinstance(arr, np.ndarray) and arr.dtype == np.float32
    np.testing.assert_array_equal(arr, tagger.scores)
    t64 = torch.from_numpy(tagger.scores.astype(np.float64)).requires_grad_()
    torch.save({"probs": t64, "other": torch.zeros(3)}, tmp_path / "d.pt")
    np.testing.assert_array_equal(load_scores(tmp_path / "d.pt", key="probs"),
                                  tagger.scores.astype(np.float64))
    with pytest.raises(ValueError, match=r"d\.pt.*no tensor 'nope'"):
        load_scores(tmp_path / "d.pt", key="nope")
    with pytest.raises(ValueError, match=r"d\.pt.*does not hold a tensor"):
        load_scores(tmp_path / "d.pt")


def test_pt_errors_name_the_file(tmp_path):
    torch = pytest.importorskip("torch")
    (tmp_path / "bad.pt").write_bytes(b"not a torch file")
    with pytest.raises(ValueError, match=r"cannot read scores file '.*bad\.pt'"):
        load_scores(tmp_path / "bad.pt")
    torch.save(torch.zeros(3, 4, dtype=torch.bfloat16), tmp_path / "bf16.pt")
    with pytest.raises(ValueError, match=r"bf16\.pt.*bfloat16"):
        load_scores(tmp_path / "bf16.pt")


@pytest.mark.parametrize("make, match", [
    (lambda p: np.save(p / "x.npy", np.zeros(5, np.float32)), r"x\.npy.*2-D.*\(5,\)"),
    (lambda p: np.save(p / "x.npy", np.zeros((2, 3, 4))), r"x\.npy.*2-D"),
    (lambda p: np.save(p / "x.npy", np.zeros((2, 3), np.int64)), r"x\.npy.*got int64"),
    (lambda p: np.save(p / "x.npy", np.zeros((2, 3), np.float16)), r"x\.npy.*got float16"),
    (lambda p: (p / "x.npy").write_bytes(b"\x93NUMPY\x01\x00junk"),
     r"cannot read scores file '.*x\.npy'"),
    (lambda p: (p / "x.npy").write_bytes(b""), r"cannot read scores file '.*x\.npy'"),
    (lambda p: np.save(p / "x.npy", np.array([{"a": 1}], dtype=object)),
     r"cannot read scores file '.*x\.npy'"),
    (lambda p: (p / "x.npz").write_bytes(b"PK\x03\x04junk"),
     r"cannot read scores file '.*x\.npz'"),
    (lambda p: (p / "x.csv").write_text("0.5"), r"x\.csv.*unknown score file type '\.csv'"),
    (lambda p: (p / "x").write_text("0.5"), r"unknown score file type ''"),
])
def test_bad_score_files(tmp_path, make, match):
    make(tmp_path)
    path = next(tmp_path.iterdir())
    with pytest.raises(ValueError, match=match):
        load_scores(path)


def test_missing_score_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"scores file '.*absent\.npy' does not exist"):
        load_scores(tmp_path / "absent.npy")


# ---------------------------------------------------- load_gold / tag index -- #

def test_gold_npy_and_txt(tagger, tmp_path):
    np.save(tmp_path / "g.npy", tagger.gold)
    np.testing.assert_array_equal(load_gold(tmp_path / "g.npy"), tagger.gold)
    (tmp_path / "g.txt").write_text("".join(f" {g}\n" for g in tagger.gold) + "\n")
    txt = load_gold(tmp_path / "g.txt")
    assert txt.dtype == np.int64
    np.testing.assert_array_equal(txt, tagger.gold)
    (tmp_path / "neg.txt").write_text("3\n-1\n0")   # -1: no gold tag; no final newline
    np.testing.assert_array_equal(load_gold(tmp_path / "neg.txt"), [3, -1, 0])


def test_gold_tag_strings(tagger, tmp_path):
    names = [f"S[{i}]\\NP" for i in range(N_TAGS)]
    index = {n: i for i, n in enumerate(names)}
    (tmp_path / "index.json").write_text(json.dumps(index))
    (tmp_path / "g.txt").write_text("".join(names[g] + "\n" for g in tagger.gold))
    np.testing.assert_array_equal(load_gold(tmp_path / "g.txt",
                                            tag_index=tmp_path / "index.json"), tagger.gold)
    np.testing.assert_array_equal(load_gold(tmp_path / "g.txt", tag_index=index),
                                  tagger.gold)
    lines = [names[g] for g in tagger.gold]
    lines[6] = "S[dcl]"
    (tmp_path / "bad.txt").write_text("\n".join(lines))
    with pytest.raises(ValueError, match=r"bad\.txt' line 7: unknown tag 'S\[dcl\]'"):
        load_gold(tmp_path / "bad.txt", tag_index=index)


@pytest.mark.parametrize("text, line, token", [
    ("1\n2\nNN\n", 3, "NN"), ("1\n\n2\n", 2, ""), ("1.5\n", 1, "1.5"),
    ("4\n" + "9" * 30 + "\n", 2, "9" * 30),   # too large for int64
])
def test_gold_txt_bad_lines(tmp_path, text, line, token):
    (tmp_path / "g.txt").write_text(text)
    with pytest.raises(ValueError, match=rf"g\.txt' line {line}: '{token}' is not a tag "
                                         "index"):
        load_gold(tmp_path / "g.txt")


def test_gold_bad_files(tmp_path):
    np.save(tmp_path / "f.npy", np.zeros(4))
    with pytest.raises(ValueError, match=r"f\.npy.*1-D integer array, got float64"):
        load_gold(tmp_path / "f.npy")
    np.save(tmp_path / "m.npy", np.zeros((2, 2), np.int32))
    with pytest.raises(ValueError, match=r"m\.npy.*shape \(2, 2\)"):
        load_gold(tmp_path / "m.npy")
    (tmp_path / "e.npy").write_bytes(b"")
    with pytest.raises(ValueError, match=r"cannot read gold file '.*e\.npy'"):
        load_gold(tmp_path / "e.npy")
    (tmp_path / "g.csv").write_text("1")
    with pytest.raises(ValueError, match=r"g\.csv.*unknown gold file type"):
        load_gold(tmp_path / "g.csv")
    (tmp_path / "latin1.txt").write_bytes("N\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.txt' is not a UTF-8 text file"):
        load_gold(tmp_path / "latin1.txt")
    with pytest.raises(FileNotFoundError, match=r"gold file '.*nope\.txt'"):
        load_gold(tmp_path / "nope.txt")


def test_tag_index_errors(tmp_path):
    (tmp_path / "ok.json").write_text('{"N": 0, "NP": 1}')
    assert load_tag_index(tmp_path / "ok.json") == {"N": 0, "NP": 1}
    (tmp_path / "bad.json").write_text('{"N": 0,')
    with pytest.raises(ValueError, match=r"bad\.json' is not valid JSON"):
        load_tag_index(tmp_path / "bad.json")
    (tmp_path / "str.json").write_text('{"N": "0"}')
    with pytest.raises(ValueError, match=r"str\.json': the column of tag 'N' must be an integer"):
        load_tag_index(tmp_path / "str.json")
    (tmp_path / "list.json").write_text('["N"]')
    with pytest.raises(ValueError, match="list.json"):
        load_tag_index(tmp_path / "list.json")
    with pytest.raises(FileNotFoundError, match="tag index file"):
        load_tag_index(tmp_path / "none.json")


# ------------------------------------------------------------------ entries -- #

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_entries_round_trip(tagger, tmp_path, dtype):
    entries = threshold(tagger.scores.astype(dtype), tagger.gold, 0.02)
    path = tmp_path / "e.npz"
    save_entries(path, entries)
    assert names_in(tmp_path) == ["e.npz"]   # no temporary file left
    loaded = load_entries(path)
    assert loaded.score.dtype == dtype
    for name in ("score", "tag", "label", "token"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(entries, name))
        assert getattr(loaded, name).dtype == getattr(entries, name).dtype
    assert (loaded.n_tags, loaded.n_tokens, loaded.threshold) == (N_TAGS, 300, 0.02)
    with np.load(path) as npz:
        meta = json.loads(str(npz["metadata"]))
    assert meta == {"format": ENTRIES_FORMAT, "version": ENTRIES_VERSION, "n_tags": N_TAGS,
                    "n_tokens": 300, "threshold": 0.02, "dtype": np.dtype(dtype).name}
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask()


def test_entries_without_tokens(tmp_path):
    entries = Entries(np.array([0.5, 0.25], np.float32), [1, 0], [1, 0], n_tags=3)
    save_entries(tmp_path / "e.npz", entries)
    loaded = load_entries(tmp_path / "e.npz")
    assert loaded.token is None and loaded.n_tokens is None and loaded.n_tags == 3
    np.testing.assert_array_equal(loaded.score, [0.5, 0.25])


def test_save_entries_replaces_atomically(tagger, tmp_path, monkeypatch):
    first = threshold(tagger.scores, tagger.gold, 0.5)
    path = tmp_path / "e.npz"
    save_entries(path, first)
    before = path.read_bytes()

    def broken_savez(f, **arrays):
        f.write(b"partial")
        raise OSError("disk full (simulated)")
    monkeypatch.setattr(np, "savez", broken_savez)
    with pytest.raises(OSError, match="disk full"):
        save_entries(path, threshold(tagger.scores, tagger.gold, 0.01))
    assert names_in(tmp_path) == ["e.npz"]   # the temporary file was removed
    assert path.read_bytes() == before


def test_load_entries_rejects_foreign_files(tagger, tmp_path):
    np.savez(tmp_path / "foreign.npz", score=np.zeros(2), tag=np.zeros(2, int))
    with pytest.raises(ValueError, match=r"foreign\.npz' is not a sparsecal entries file"):
        load_entries(tmp_path / "foreign.npz")
    np.savez(tmp_path / "other.npz", metadata=np.array(json.dumps({"format": "x"})))
    with pytest.raises(ValueError, match=r"other\.npz.*expected sparsecal\.Entries"):
        load_entries(tmp_path / "other.npz")
    np.savez(tmp_path / "text.npz", metadata=np.array("not json"))
    with pytest.raises(ValueError, match=r"text\.npz' is not a sparsecal entries file"):
        load_entries(tmp_path / "text.npz")
    meta = {"format": ENTRIES_FORMAT, "version": ENTRIES_VERSION + 1}
    np.savez(tmp_path / "v2.npz", metadata=np.array(json.dumps(meta)))
    with pytest.raises(ValueError, match=r"v2\.npz.*version 1, got sparsecal\.Entries 2"):
        load_entries(tmp_path / "v2.npz")
    meta = {"format": ENTRIES_FORMAT, "version": ENTRIES_VERSION, "n_tags": 3,
            "n_tokens": 2, "threshold": 0.0}
    np.savez(tmp_path / "short.npz", metadata=np.array(json.dumps(meta)), score=np.zeros(2))
    with pytest.raises(ValueError, match=r"short\.npz' lacks arrays \['tag', 'label'\]"):
        load_entries(tmp_path / "short.npz")
    np.savez(tmp_path / "bad.npz", metadata=np.array(json.dumps(meta)),
             score=np.array([0.5, 2.0]), tag=np.array([0, 1]), label=np.array([1, 0]))
    with pytest.raises(ValueError, match=r"bad\.npz.*\[0, 1\]"):
        load_entries(tmp_path / "bad.npz")
    np.save(tmp_path / "plain.npy", np.zeros(3))
    with pytest.raises(ValueError, match=r"cannot read entries file '.*plain\.npy'"):
        load_entries(tmp_path / "plain.npy")
    (tmp_path / "junk.npz").write_bytes(b"PK\x03\x04junk")
    with pytest.raises(ValueError, match=r"cannot read entries file '.*junk\.npz'"):
        load_entries(tmp_path / "junk.npz")


# ----------------------------------------------------------------- _io -- #

def test_atomic_write_text(tmp_path):
    path = tmp_path / "out.json"
    atomic_write_text(path, "one")
    assert path.read_text() == "one" and names_in(tmp_path) == ["out.json"]
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask()
    os.chmod(path, 0o640)
    atomic_write_text(path, "two")
    assert path.read_text() == "two"
    assert path.stat().st_mode & 0o777 == 0o640   # replacing keeps the file's mode


def test_atomic_path_failure_keeps_the_target(tmp_path):
    path = tmp_path / "out.npy"
    path.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(path, suffix=".npy") as tmp:
            assert Path(tmp).parent == tmp_path
            assert Path(tmp).name.startswith(f".out.npy.tmp-{os.getpid()}-")
            assert tmp.endswith(".npy")
            Path(tmp).write_bytes(b"new, half written")
            raise KeyboardInterrupt
    assert path.read_bytes() == b"old" and names_in(tmp_path) == ["out.npy"]


# ------------------------------------------------- files that lie or break -- #

def _npy_declaring(path, shape, dtype="<f4", data=b""):
    """An .npy file whose header declares ``shape`` but holds ``data``."""
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": dtype, "fortran_order": False, "shape": shape})
        f.write(data)


def _zip_with(path, members, compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression) as z:
        for name, data in members.items():
            z.writestr(name, data)


def _npy_bytes(array=None, *, shape=None, dtype="<f4", data=b""):
    buf = io.BytesIO()
    if array is not None:
        np.save(buf, array)
    else:
        np.lib.format.write_array_header_1_0(
            buf, {"descr": dtype, "fortran_order": False, "shape": shape})
        buf.write(data)
    return buf.getvalue()


@pytest.mark.parametrize("make,load,match", [
    (lambda p: np.savez(p.with_suffix(".npz"), s=np.zeros((2, 2))) or
     os.replace(p.with_suffix(".npz"), p.with_suffix(".npy")),
     lambda p: load_scores(p.with_suffix(".npy")), "is an .npz archive, not an .npy array"),
    (lambda p: np.save(p.with_suffix(".npy"), np.zeros((2, 2))) or
     os.replace(p.with_suffix(".npy"), p.with_suffix(".npz")),
     lambda p: load_scores(p.with_suffix(".npz")), "is an .npy array, not an .npz archive"),
    (lambda p: _zip_with(p.with_suffix(".npz"), {}),
     lambda p: load_scores(p.with_suffix(".npz")), "holds no arrays"),
    (lambda p: _npy_declaring(p.with_suffix(".npy"), (10 ** 6, 10 ** 6)),
     lambda p: load_scores(p.with_suffix(".npy")),
     r"declares shape \(1000000, 1000000\) of float32 \(4,000,000,000,000 bytes\) but "
     "holds 0 bytes"),
    (lambda p: _npy_declaring(p.with_suffix(".npy"), (3, 2), data=b"\0" * 20),
     lambda p: load_scores(p.with_suffix(".npy")), "24 bytes\\) but holds 20 bytes"),
    (lambda p: _zip_with(p.with_suffix(".npz"),
                         {"s.npy": _npy_bytes(shape=(10 ** 5, 10 ** 5))}),
     lambda p: load_scores(p.with_suffix(".npz")),
     "array 's': declares shape \\(100000, 100000\\)"),
    (lambda p: _zip_with(p.with_suffix(".npz"),   # a bomb: 1 GB of zeros declared
                         {"s.npy": _npy_bytes(shape=(2 ** 18, 2 ** 10),
                                              data=b"\0" * 2 ** 20)}),
     lambda p: load_scores(p.with_suffix(".npz")), "but holds 1,048,576 bytes"),
    (lambda p: _zip_with(p.with_suffix(".npz"), {"s.npy": _npy_bytes(np.zeros((2, 2))),
                                                  "notes.txt": b"hi"}),
     lambda p: load_scores(p.with_suffix(".npz")), "member 'notes.txt' is not an .npy"),
    (lambda p: _zip_with(p.with_suffix(".npz"), {"s.npy": _npy_bytes(np.zeros((2, 2))),
                                                  "t.npy": _npy_bytes(np.ones((2, 2)))})
     or _rename_member(p.with_suffix(".npz"), "t.npy", "s.npy"),
     lambda p: load_scores(p.with_suffix(".npz")), "holds the array 's' twice"),
    (lambda p: _zip_with(p.with_suffix(".npz"), {"s.npy": _npy_bytes(
        np.array([(1.0, 2)], dtype=[("a", "f8"), ("b", "i4")]))}),
     lambda p: load_scores(p.with_suffix(".npz")), "holds an array of"),
    (lambda p: _corrupt_crc(p.with_suffix(".npz")),
     lambda p: load_scores(p.with_suffix(".npz")), "cannot read scores file .*Bad CRC"),
    (lambda p: np.save(p.with_suffix(".npy"), np.zeros((2, 2), dtype=np.float16)),
     lambda p: load_scores(p.with_suffix(".npy")), "float32 or float64, got float16"),
    (lambda p: _npy_declaring(p.with_suffix(".npy"), (4,), dtype="<i8", data=b"\0" * 16),
     lambda p: load_gold(p.with_suffix(".npy")), "declares shape \\(4,\\) of int64"),
    (lambda p: _zip_with(p.with_suffix(".npz"), {"score.npy": _npy_bytes(
        shape=(2 ** 40,), data=b"")}),
     lambda p: load_entries(p.with_suffix(".npz")), "array 'score': declares shape"),
    (lambda p: p.with_suffix(".npy").mkdir(),
     lambda p: load_scores(p.with_suffix(".npy")), "is a directory, not a file"),
    (lambda p: p.with_suffix(".txt").mkdir(),
     lambda p: load_gold(p.with_suffix(".txt")), "is a directory, not a file"),
    (lambda p: p.with_suffix(".npz").mkdir(),
     lambda p: load_entries(p.with_suffix(".npz")), "is a directory, not a file"),
    (lambda p: p.with_suffix(".json").mkdir(),
     lambda p: load_tag_index(p.with_suffix(".json")), "is a directory, not a file"),
    (lambda p: p.with_suffix(".json").write_text('{"N": 0, "NP": 0}'),
     lambda p: load_tag_index(p.with_suffix(".json")), "tags 'N' and 'NP' share column 0"),
    (lambda p: p.with_suffix(".json").write_text("null"),
     lambda p: load_tag_index(p.with_suffix(".json")), "must hold a JSON object, got null"),
    (lambda p: p.with_suffix(".json").write_text("[" * 50000 + "]" * 50000),
     lambda p: load_tag_index(p.with_suffix(".json")), "nested too deeply"),
])
def test_files_that_lie_are_refused_naming_the_file(tmp_path, make, load, match):
    base = tmp_path / "f"
    make(base)
    with pytest.raises(ValueError, match=match) as info:
        load(base)
    assert str(tmp_path / "f") in str(info.value)


def _rename_member(path, old, new):
    data = bytearray(path.read_bytes())
    for _ in range(2):   # local header and central directory
        i = data.index(old.encode())
        data[i:i + len(old)] = new.encode()
    path.write_bytes(bytes(data))


def _corrupt_crc(path):
    np.savez(path, s=np.arange(12, dtype=np.float64).reshape(3, 4) / 12)
    data = bytearray(path.read_bytes())
    data[-200] ^= 0xFF   # inside the stored array data
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("fmt", [".npy", ".npz"])
def test_scores_in_either_byte_order_and_layout_load_as_stored(tmp_path, order, fmt):
    scores = np.arange(12, dtype=f"{order}f8").reshape(3, 4) / 12
    scores = np.asfortranarray(scores)
    path = tmp_path / f"s{fmt}"
    (np.save if fmt == ".npy" else np.savez)(path, scores)
    loaded = load_scores(path)
    assert loaded.dtype.str == scores.dtype.str and loaded.flags.f_contiguous
    np.testing.assert_array_equal(loaded, scores)
