"""A saved calibrator is checked field by field on loading (issue 11).

Every case below edits a genuinely saved calibrator of a registered method
(``sparsecal.calibration.registry.METHODS``): the JSON metadata, the arrays, or
the files themselves. Loading must raise one ``ValueError`` whose message names
the file at fault (a field's error starts with its path) and the field, must leave the files
as they were, and must never execute or unpickle anything. A valid save loads
bit for bit, and ``sparsecal apply`` turns a tampered calibrator into a one-line
error, a nonzero exit status and no output file.
"""
import hashlib
import io
import json
import os
import pickle
import warnings
import zipfile

import numpy as np
import pytest

from sparsecal import GroupedCalibrator, TagGroups, threshold
from sparsecal.calibration.registry import METHODS, make_calibrator
from sparsecal.cli.main import main
from sparsecal.datasets.synthetic import make_tagger_outputs
from sparsecal.io import calibrators as saved_io

N_TAGS = 60
JSON, NPZ = "calibrator.json", "arrays.npz"
ARRAY_METHODS = [name for name in METHODS if METHODS[name].cls._array_state]


@pytest.fixture(scope="module")
def data():
    dev = make_tagger_outputs(3000, n_tags=N_TAGS, split_seed=1, tagger_seed=0, n_train=40000)
    test = make_tagger_outputs(500, n_tags=N_TAGS, split_seed=2, tagger_seed=0, n_train=40000)
    tfg = TagGroups.from_counts(dev.train_counts, 4, n_tags=N_TAGS)
    return {"dev": threshold(dev.scores, dev.gold), "tfg": tfg, "test_scores": test.scores}


def _fit(data, method):
    """Per-tag calibration with TFG fallback: 11 calibrators, both tag maps."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return GroupedCalibrator(make_calibrator(method), TagGroups.per_tag(N_TAGS),
                                 fallback=data["tfg"], min_entries=150).fit(data["dev"])


@pytest.fixture(scope="module")
def originals(data, tmp_path_factory):
    root = tmp_path_factory.mktemp("saved")
    out = {}
    for method in METHODS:
        model = _fit(data, method)
        model.save(root / method)
        out[method] = (model, root / method)
    return out


def _copy(originals, method, tmp_path, name="cal"):
    src, dst = originals[method][1], tmp_path / name
    dst.mkdir()
    for name in (JSON, NPZ):
        (dst / name).write_bytes((src / name).read_bytes())
    return dst


def _read_npz(path):
    with np.load(path / NPZ, allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


# --------------------------------------------------------------------------- #
# edits                                                                       #
# --------------------------------------------------------------------------- #

def set_json(*keys, value):
    """Set meta[k0][k1]... = value (delete it if value is DELETE)."""
    def edit(meta):
        node = meta
        for k in keys[:-1]:
            node = node[k]
        if value is DELETE:
            del node[keys[-1]]
        else:
            node[keys[-1]] = value
    return ("json", edit)


DELETE = object()


def raw_json(text_edit):
    """Edit the JSON text itself (for what json.dumps cannot write)."""
    return ("text", text_edit)


def set_array(key, make):
    """arrays[key] = make(arrays) (delete it if make returns DELETE)."""
    def edit(arrays):
        value = make(arrays)
        if value is DELETE:
            del arrays[key]
        else:
            arrays[key] = value
    return ("npz", edit)


def replace_file(name, write):
    return ("file", (name, write))


def _with(a, i, v):
    a = a.copy()
    a[i] = v
    return a


def _first_array(method):
    return f"c1.{METHODS[method].cls._array_state[0]}"


def _bomb(path):
    """An npz whose one member inflates to 64 MiB from ~64 KiB on disk."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("tag_to_calibrator.npy", "w", force_zip64=True) as f:
            n = 8 << 20
            np.lib.format.write_array_header_1_0(
                f, {"descr": "<i8", "fortran_order": False, "shape": (n,)})
            chunk = bytes(1 << 20)
            for _ in range(64):
                f.write(chunk)


def _lying_header(path):
    """A stored member whose header claims 10**12 values but holds 3."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "<i8", "fortran_order": False, "shape": (10 ** 12,)})
    buf.write(np.zeros(3, dtype=np.int64).tobytes())
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("tag_to_calibrator.npy", buf.getvalue())


def _future_zip_version(path):
    """Mark the first member as needing zip version 10.9 to extract."""
    raw = bytearray(path.read_bytes())
    at = raw.index(b"PK\x01\x02") + 6       # central directory: version needed
    raw[at:at + 2] = (109).to_bytes(2, "little")
    path.write_bytes(bytes(raw))


def _sparse_huge(path):
    with open(path, "wb") as f:
        f.truncate(saved_io.MAX_JSON_BYTES + 1)


# (id, methods, edit, file at fault, message fragment naming the field)
ALL = list(METHODS)
CASES = [
    # ---- the container: format, version, JSON types --------------------- #
    ("version-missing", ALL, set_json("version", value=DELETE), JSON,
     "version must be an integer, got null"),
    ("version-bool", ALL, set_json("version", value=True), JSON,
     "version must be an integer, got True"),
    ("version-string", ["isotonic"], set_json("version", value="1"), JSON,
     "version must be an integer, got '1'"),
    ("version-future", ["isotonic"], set_json("version", value=2), JSON,
     "format version 2 cannot be read"),
    ("format", ["isotonic"], set_json("format", value="pickle"), JSON,
     "not a sparsecal.GroupedCalibrator file"),
    ("top-level-array", ["isotonic"], raw_json(lambda t: "[" + t + "]"), JSON,
     "must hold a JSON object, got a JSON array"),
    ("n_tags-string", ["histogram"], set_json("n_tags", value="60"), JSON,
     "n_tags must be a positive integer, got '60'"),
    ("n_tags-huge", ["histogram"], set_json("n_tags", value=2 ** 40), JSON,
     "n_tags must be at most 16777216"),
    ("n_tags-other", ["histogram"], set_json("n_tags", value=N_TAGS + 1), NPZ,
     "groups_tag_to_group must have 61 values (one per tag), got 60"),
    ("n_tags-missing", ["histogram"], set_json("n_tags", value=DELETE), JSON,
     "n_tags is missing"),
    ("threshold-2", ["platt"], set_json("threshold", value=2.0), JSON,
     "threshold must lie in [0, 1], got 2.0"),
    ("threshold-nan", ["platt"], raw_json(lambda t: t.replace('"threshold": 0.01',
                                                              '"threshold": NaN')), JSON,
     "not valid JSON: the non-standard constant NaN is not allowed"),
    ("renormalize-string", ALL, set_json("renormalize", value="false"), JSON,
     "renormalize must be true or false, got 'false'"),
    ("min_entries-negative", ["isotonic"], set_json("min_entries", value=-3), JSON,
     "min_entries must be a positive integer, got -3"),
    ("groups-null", ["isotonic"], set_json("groups", value=None), JSON,
     "groups must be a JSON object, got null"),
    ("groups-n_groups-float", ["isotonic"], set_json("groups", "n_groups", value=60.0),
     JSON, "groups.n_groups must be a positive integer, got 60.0"),
    ("groups-kind-number", ["isotonic"], set_json("groups", "kind", value=3), JSON,
     "groups.kind must be a string, got 3"),
    ("fallback-null", ["scaling-binning"], set_json("fallback", value=None), NPZ,
     "fallback_tag_to_group is not an array of this calibrator"),
    ("extra-field", ["isotonic"], set_json("__reduce__", value="os.system"), JSON,
     "__reduce__ is not a field of a saved calibrator"),
    ("base-null", ["histogram"], set_json("base", value=None), JSON,
     "base must be a JSON object, got null"),
    ("base-class-path", ["histogram"],
     set_json("base", "class", value="sparsecal.calibration.histogram.HistogramBinning"),
     JSON, "base.class: saved calibrator uses unknown class"),
    ("calibrators-null", ["histogram"], set_json("calibrators", value=None), JSON,
     "calibrators must be a JSON array, got null"),
    ("calibrator-null", ALL, set_json("calibrators", 1, value=None), JSON,
     "calibrators[1] must be a JSON object, got null"),
    ("calibrator-class-other", ["histogram"],
     set_json("calibrators", 1, "class", value="IsotonicCalibrator"), JSON,
     "calibrators[1].params.bin_size is not a field of a saved calibrator"),
    ("calibrator-extra-field", ["platt"], set_json("calibrators", 1, "code", value="x"),
     JSON, "calibrators[1].code is not a field of a saved calibrator"),
    ("calibrator-dropped", ["isotonic"],
     ("json", lambda m: m["calibrators"].pop()), NPZ,
     "c10.x_knots_ is not an array of this calibrator"),
    ("calibrator-not-clone", ["histogram"],
     set_json("calibrators", 1, "params", "n_bins", value=11), JSON,
     "calibrators[1] must have the class and params of base"),
    # ---- parameters, checked as fit checks them -------------------------- #
    ("n_bins-string", ["histogram", "scaling-binning"],
     set_json("calibrators", 3, "params", "n_bins", value="10"), JSON,
     "calibrators[3].params.n_bins must be a positive integer, got '10'"),
    ("n_bins-float", ["histogram", "scaling-binning"],
     set_json("calibrators", 3, "params", "n_bins", value=1e12), JSON,
     "calibrators[3].params.n_bins must be a positive integer, got 1000000000000.0"),
    ("n_bins-negative", ["histogram", "scaling-binning"],
     set_json("base", "params", "n_bins", value=-3), JSON,
     "base.params.n_bins must be a positive integer, got -3"),
    ("n_bins-bool", ["histogram"], set_json("base", "params", "n_bins", value=True), JSON,
     "base.params.n_bins must be a positive integer, got True"),
    ("bin_size-zero", ["histogram"], set_json("calibrators", 0, "params", "bin_size", value=0),
     JSON, "calibrators[0].params.bin_size must be a positive integer, got 0"),
    ("seed-negative", ["scaling-binning"], set_json("calibrators", 2, "params", "seed",
                                                    value=-1), JSON,
     "calibrators[2].params.seed must be None, a non-negative integer"),
    ("param-missing", ["scaling-binning"],
     set_json("calibrators", 2, "params", "seed", value=DELETE), JSON,
     "calibrators[2].params.seed is missing"),
    ("param-extra", ["isotonic"], set_json("calibrators", 2, "params", "y_min", value=0),
     JSON, "calibrators[2].params.y_min is not a field of a saved calibrator"),
    ("prior-2", ["platt"],
     set_json("calibrators", 0, "params", "application_prior", value=2.0), JSON,
     "calibrators[0].params.application_prior must lie in (0, 1), got 2.0"),
    ("prior-1", ["platt"], set_json("base", "params", "application_prior", value=1.0), JSON,
     "base.params.application_prior must lie in (0, 1), got 1.0"),
    ("prior-string", ["platt"], set_json("base", "params", "application_prior", value="0.5"),
     JSON, "base.params.application_prior must be a real number, got '0.5'"),
    # files saved before the rename name Platt's application_prior "prior"
    ("old-prior-name-2", ["platt"], ("json", lambda m: _old_prior_name(m, 2.0)), JSON,
     "base.params.prior must lie in (0, 1), got 2.0"),
    ("old-and-new-prior-name", ["platt"], set_json("base", "params", "prior", value=0.5),
     JSON, "base.params.prior is not a field of a saved calibrator"),
    ("eps-large", ["platt"], set_json("calibrators", 0, "params", "eps", value=0.7), JSON,
     "calibrators[0].params.eps must lie in (0, 0.5), got 0.7"),
    # ---- fitted values (JSON) -------------------------------------------- #
    ("slope-string", ["platt"], set_json("calibrators", 4, "fitted", "slope_", value="1.0"),
     JSON, "calibrators[4].fitted.slope_ must be a finite number, got '1.0'"),
    ("slope-overflow", ["platt"], raw_json(lambda t: _replace_value(t, "slope_", "1e400")),
     JSON, "calibrators[0].fitted.slope_ must be a finite number, got inf"),
    ("slope-huge-int", ["platt"],
     raw_json(lambda t: _replace_value(t, "slope_", "1" + "0" * 400)), JSON,
     "calibrators[0].fitted.slope_ must be a finite number, got a int"),
    ("offset-inf", ["platt"], raw_json(lambda t: _replace_value(t, "offset_", "-1e999")),
     JSON, "calibrators[0].fitted.offset_ must be a finite number, got -inf"),
    ("offset-missing", ["platt"], set_json("calibrators", 5, "fitted", "offset_",
                                           value=DELETE), JSON,
     "calibrators[5].fitted.offset_ is missing"),
    ("fitted-null", ["platt"], set_json("calibrators", 5, "fitted", value=None), JSON,
     "calibrators[5].fitted must be a JSON object, got null"),
    ("beta-parameters", ["beta"], set_json("calibrators", 1, "params", "parameters",
                                           value="abc"), JSON,
     "calibrators[1].params.parameters must be one of ['ab', 'abm', 'am'], got 'abc'"),
    ("beta-a-missing", ["beta"], set_json("calibrators", 2, "fitted", "a_", value=DELETE),
     JSON, "calibrators[2].fitted.a_ is missing"),
    ("training-prior-1", ["prior-logistic"],
     set_json("calibrators", 3, "params", "training_prior", value=1.0), JSON,
     "calibrators[3].params.training_prior must lie in (0, 1), got 1.0"),
    ("application-prior-neg", ["prior-logistic", "gaussian"],
     set_json("base", "params", "application_prior", value=-0.5), JSON,
     "base.params.application_prior must lie in (0, 1), got -0.5"),
    ("fitted-training-prior-0", ["prior-logistic"],
     set_json("calibrators", 4, "fitted", "training_prior_", value=0.0), JSON,
     "calibrators[4].fitted.training_prior_ must lie in (0, 1), got 0.0"),
    ("gaussian-variance-kind", ["gaussian"],
     set_json("calibrators", 0, "params", "variance", value="full"), JSON,
     "calibrators[0].params.variance must be one of ['tied', 'untied'], got 'full'"),
    ("gaussian-var-negative", ["gaussian"],
     set_json("calibrators", 5, "fitted", "var_pos_", value=-1.0), JSON,
     "calibrators[5].fitted.var_pos_ must be positive, got -1.0"),
    ("gaussian-untied-in-tied", ["gaussian"],
     set_json("calibrators", 5, "fitted", "var_neg_", value=123.0), JSON,
     "calibrators[5].fitted.var_neg_ must equal var_pos_ when the variance is tied"),
    ("gaussian-dev-prior-1", ["gaussian"],
     set_json("calibrators", 2, "fitted", "dev_prior_", value=1), JSON,
     "calibrators[2].fitted.dev_prior_ must lie in (0, 1), got 1.0"),
    ("fitted-extra", ["isotonic"], set_json("calibrators", 5, "fitted", "x_", value=1.0),
     JSON, "calibrators[5].fitted.x_ is not a field of a saved calibrator"),
    # ---- JSON syntax and reading limits ---------------------------------- #
    ("deep-nesting", ["isotonic"], raw_json(lambda t: "[" * 200000 + "]" * 200000), JSON,
     "is nested too deeply to be a saved calibrator file"),
    ("duplicate-key", ["isotonic"], raw_json(lambda t: t.replace(
        '"renormalize": ', '"renormalize": true, "renormalize": ', 1)), JSON,
     "key 'renormalize' appears twice"),
    ("not-utf8", ["isotonic"], replace_file(JSON, lambda p: p.write_bytes(b'{"a": "\xff"}')),
     JSON, "not UTF-8 text"),
    ("json-too-big", ["isotonic"], replace_file(JSON, _sparse_huge), JSON,
     "larger than the 67,108,864 a saved calibrator file may have"),
    ("json-directory", ["isotonic"], replace_file(JSON, lambda p: (p.unlink(), p.mkdir())),
     JSON, "not a regular file"),
    # ---- the tag maps --------------------------------------------------- #
    ("map-out-of-range", ALL,
     set_array("tag_to_calibrator", lambda a: _with(a["tag_to_calibrator"], 5, 11)), NPZ,
     "tag_to_calibrator[5] = 11 is out of range: must lie in [-1, 11)"),
    ("map-below-minus-one", ["isotonic"],
     set_array("tag_to_calibrator", lambda a: _with(a["tag_to_calibrator"], 0, -2)), NPZ,
     "tag_to_calibrator[0] = -2 is out of range"),
    ("map-float", ["isotonic"],
     set_array("tag_to_calibrator", lambda a: a["tag_to_calibrator"].astype(np.float64)), NPZ,
     "tag_to_calibrator must hold integers, got dtype float64"),
    ("map-2d", ["isotonic"],
     set_array("tag_to_calibrator", lambda a: a["tag_to_calibrator"].reshape(6, 10)), NPZ,
     "tag_to_calibrator must be 1-dimensional, got shape (6, 10)"),
    ("map-short", ["isotonic"],
     set_array("tag_to_calibrator", lambda a: a["tag_to_calibrator"][:-1]), NPZ,
     "tag_to_calibrator must have 60 values (one per tag), got 59"),
    ("map-missing", ["isotonic"], set_array("tag_to_calibrator", lambda a: DELETE), NPZ,
     "tag_to_calibrator is missing"),
    ("groups-map-out-of-range", ["histogram"],
     set_array("groups_tag_to_group", lambda a: _with(a["groups_tag_to_group"], 7, 60)), NPZ,
     "groups_tag_to_group[7] = 60 is out of range: must lie in [0, 60)"),
    ("fallback-map-uint64", ["histogram"], set_array(
        "fallback_tag_to_group",
        lambda a: _with(a["fallback_tag_to_group"].astype(np.uint64), 3, 2 ** 64 - 1)), NPZ,
     "fallback_tag_to_group[3] = 18446744073709551615 is out of range: must lie in [0, 4)"),
    ("extra-array", ["platt"], set_array("payload", lambda a: np.zeros(3)), NPZ,
     "payload is not an array of this calibrator"),
    ("extra-calibrator-array", ["isotonic"], set_array("c3.extra_", lambda a: np.zeros(3)),
     NPZ, "c3.extra_ is not an array of a IsotonicCalibrator"),
    ("array-of-missing-calibrator", ["platt"], set_array("c11.slope_", lambda a: np.zeros(1)),
     NPZ, "c11.slope_ is not an array of this calibrator"),
    # ---- array files: dtypes, pickles, bombs ----------------------------- #
    ("object-array", ["isotonic"],
     set_array("tag_to_calibrator", lambda a: np.array([{}], dtype=object)), NPZ,
     "array 'tag_to_calibrator': holds an array of object, not of numbers"),
    ("string-array", ["histogram"],
     set_array("groups_tag_to_group", lambda a: np.array(["abc"])), NPZ,
     "groups_tag_to_group: dtype <U3 is not numeric"),
    ("complex-array", ["histogram"],
     set_array("c0.bin_rates_", lambda a: a["c0.bin_rates_"].astype(complex)), NPZ,
     "array 'c0.bin_rates_': holds an array of complex128, not of numbers"),
    ("zip-bomb", ["isotonic"], replace_file(NPZ, _bomb), NPZ,
     "its members would decompress to 67108992 bytes, more than"),
    ("lying-header", ["isotonic"], replace_file(NPZ, _lying_header), NPZ,
     "array 'tag_to_calibrator': declares shape (1000000000000,) of int64"),
    ("not-a-zip", ["isotonic"], replace_file(NPZ, lambda p: p.write_bytes(b"PK\x03\x04junk")),
     NPZ, "File is not a zip file"),
    ("zip-version", ["histogram"], replace_file(NPZ, _future_zip_version), NPZ,
     "zip file version 10.9"),
    ("not-npy-member", ["isotonic"], replace_file(
        NPZ, lambda p: zipfile.ZipFile(p, "a").writestr("setup.py", "import os")), NPZ,
     "member 'setup.py' is not an .npy array"),
    # ---- fitted arrays: the rules of each method ------------------------- #
    *[(f"{kind}", ARRAY_METHODS, edit, NPZ, fragment) for kind, edit, fragment in [
        ("first-array-missing", None, "{a} is missing"),
        ("first-array-nan", lambda a, k: _with(a[k], 0, np.nan), "{a}[0] = nan is not finite"),
        ("first-array-above-1", lambda a, k: _with(a[k], -1, 1.5),
         "{a} must lie in [0, 1]; {a}[{last}] = 1.5"),
        ("first-array-negative", lambda a, k: _with(a[k], 0, -0.25),
         "{a} must lie in [0, 1]; {a}[0] = -0.25"),
        ("first-array-int", lambda a, k: a[k].astype(np.int64),
         "{a} must hold floating-point numbers, got dtype int64"),
        ("first-array-2d", lambda a, k: a[k][None, :], "{a} must be 1-dimensional"),
        ("first-array-big-endian", lambda a, k: _with(a[k], 0, -1.0).astype(">f8"),
         "{a} must lie in [0, 1]"),
    ]],
    ("knots-not-monotone", ["isotonic", "scaling-binning"],
     set_array("c2.x_knots_", lambda a: a["c2.x_knots_"][::-1].copy()), NPZ,
     "c2.x_knots_ must be non-decreasing; c2.x_knots_[1]"),
    ("y-knots-not-monotone", ["isotonic"],
     set_array("c2.y_knots_", lambda a: _with(a["c2.y_knots_"], -1, 0.0)), NPZ,
     "c2.y_knots_ must be non-decreasing"),
    ("knots-lengths", ["isotonic", "scaling-binning"],
     set_array("c2.y_knots_", lambda a: a["c2.y_knots_"][:-1]), NPZ,
     "c2.x_knots_ and c2.y_knots_ must be non-empty and of one length"),
    ("knots-empty", ["isotonic"], ("npz", lambda a: a.update(
        {"c2.x_knots_": np.zeros(0), "c2.y_knots_": np.zeros(0)})), NPZ,
     "c2.x_knots_ and c2.y_knots_ must be non-empty"),
    ("boundaries-not-increasing", ["histogram", "scaling-binning"],
     set_array("c4.boundaries_", lambda a: np.repeat(a["c4.boundaries_"][:1], 2)), NPZ,
     "c4.boundaries_ must be increasing; c4.boundaries_[1]"),
    ("rates-length", ["histogram"],
     set_array("c4.bin_rates_", lambda a: np.append(a["c4.bin_rates_"], 0.5)), NPZ,
     "c4.bin_rates_ must have one more value than c4.boundaries_"),
    ("values-length", ["scaling-binning"],
     set_array("c4.bin_values_", lambda a: a["c4.bin_values_"][:-1]), NPZ,
     "c4.bin_values_ must have one more value than c4.boundaries_"),
    ("more-bins-than-n_bins", ["histogram", "scaling-binning"], ("json", lambda m: [
        d["params"].update(n_bins=1) for d in [m["base"], *m["calibrators"]]]), NPZ,
     "bins, more than n_bins = 1"),
]


def _old_prior_name(meta, value=None):
    """Write Platt's application_prior as "prior", as files saved before the rename
    did (the base's set to ``value`` when given)."""
    for params in [meta["base"]["params"]] + [c["params"] for c in meta["calibrators"]]:
        params["prior"] = params.pop("application_prior")
    if value is not None:
        meta["base"]["params"]["prior"] = value


def _replace_value(text, key, new):
    meta = json.loads(text)
    meta["calibrators"][0]["fitted"][key] = "__HERE__"
    return json.dumps(meta).replace('"__HERE__"', new)


def _matrix():
    for case, methods, edit, file, fragment in CASES:
        for method in methods:
            if case.startswith("first-array"):   # edit the method's first fitted array
                key = _first_array(method)
                edit_m = set_array(key, (lambda a: DELETE) if edit is None else
                                   (lambda a, k=key, make=edit: make(a, k)))
            else:
                edit_m = edit
            yield pytest.param(method, edit_m, file, fragment, id=f"{case}-{method}")


MATRIX = list(_matrix())


def _apply(path, edit):
    kind, fn = edit
    if kind == "json":
        meta = json.loads((path / JSON).read_text())
        fn(meta)
        (path / JSON).write_text(json.dumps(meta))
    elif kind == "text":
        (path / JSON).write_text(fn((path / JSON).read_text()))
    elif kind == "npz":
        arrays = _read_npz(path)
        fn(arrays)
        np.savez(path / NPZ, **arrays)
    else:
        name, write = fn
        write(path / name)


def _digest(path):
    out = {}
    for name in sorted(os.listdir(path)):
        p = path / name
        out[name] = "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def test_the_matrix_is_large():
    assert len(MATRIX) >= 40
    assert {p.values[0] for p in MATRIX} == set(METHODS)


@pytest.mark.parametrize("method,edit,file,fragment", MATRIX)
def test_tampered_calibrator_is_refused(originals, tmp_path, monkeypatch, method, edit, file,
                                        fragment):
    path = _copy(originals, method, tmp_path)
    if method in ARRAY_METHODS:
        key = _first_array(method)
        fragment = fragment.format(a=key, last=_read_npz(path)[key].shape[0] - 1)
    _apply(path, edit)
    before = _digest(path)

    def no_pickle(*args, **kwargs):
        raise AssertionError("pickle used while loading a calibrator")

    monkeypatch.setattr(pickle, "load", no_pickle)
    monkeypatch.setattr(pickle, "loads", no_pickle)
    with pytest.raises(ValueError) as info:
        GroupedCalibrator.load(path)
    message = str(info.value)
    assert isinstance(info.value, saved_io.StateError)
    assert str(path / file) in message, message
    assert fragment in message, message
    assert "\n" not in message
    assert _digest(path) == before                      # the files are left as they were


def test_untampered_copies_load(originals, tmp_path):
    """The matrix's copies are valid before they are edited."""
    for method in METHODS:
        GroupedCalibrator.load(_copy(originals, method, tmp_path, method))


# --------------------------------------------------------------------------- #
# valid saves load bit for bit                                                #
# --------------------------------------------------------------------------- #

def _same_state(a, b):
    (meta_a, arrays_a), (meta_b, arrays_b) = a.get_state(), b.get_state()
    assert json.dumps(meta_a, sort_keys=True) == json.dumps(meta_b, sort_keys=True)
    assert sorted(arrays_a) == sorted(arrays_b)
    for key in arrays_a:
        x, y = np.asarray(arrays_a[key]), np.asarray(arrays_b[key])
        assert x.dtype == y.dtype and x.shape == y.shape, key
        assert x.tobytes() == y.tobytes(), key


@pytest.mark.parametrize("method", list(METHODS))
def test_round_trip_is_bit_identical(originals, data, method):
    model, path = originals[method]
    back = GroupedCalibrator.load(path)
    _same_state(model, back)
    scores = data["test_scores"]
    assert model.transform_dense(scores).tobytes() == back.transform_dense(scores).tobytes()
    for cal, cal_back in zip(model.calibrators_, back.calibrators_):
        for name in cal._array_state:
            assert getattr(cal_back, name).dtype == np.float64
        for name in cal._value_state:
            assert type(getattr(cal_back, name)) is float


@pytest.mark.parametrize("method", list(METHODS))
def test_round_trip_of_other_set_ups(data, tmp_path, method):
    """SCW, no fallback, renormalize, and a model whose tags all stay unchanged."""
    scw = GroupedCalibrator(make_calibrator(method, n_bins=7, seed=5),
                            TagGroups.scw(N_TAGS), renormalize=True).fit(data["dev"])
    scw.save(tmp_path / "scw")
    _same_state(scw, GroupedCalibrator.load(tmp_path / "scw"))
    with pytest.warns(UserWarning, match="left unchanged"):
        empty = GroupedCalibrator(make_calibrator(method), data["tfg"],
                                  min_entries=10 ** 9).fit(data["dev"])
    empty.save(tmp_path / "empty")
    back = GroupedCalibrator.load(tmp_path / "empty")
    assert back.calibrators_ == [] and (back.tag_to_calibrator_ == -1).all()
    _same_state(empty, back)


def test_version_1_file_resaves_identically(tmp_path):
    """``tests/data/saved_v1`` (format version 1, written before the schema
    checks) passes them, and saving it again writes the same arrays."""
    from pathlib import Path
    v1 = Path(__file__).parent / "data" / "saved_v1"
    model = GroupedCalibrator.load(v1)
    model.save(tmp_path / "again")
    before, after = _read_npz(v1), _read_npz(tmp_path / "again")
    assert sorted(before) == sorted(after)
    for key in before:
        assert before[key].dtype == after[key].dtype and \
            before[key].tobytes() == after[key].tobytes(), key
    assert json.loads((v1 / JSON).read_text()) == json.loads((tmp_path / "again" / JSON)
                                                             .read_text())


def test_platt_saved_before_the_rename_loads(data, tmp_path):
    """A Platt calibrator whose files name application_prior "prior" (saved
    before the rename) loads to the same model."""
    model = GroupedCalibrator(make_calibrator("platt").set_params(application_prior=0.2),
                              data["tfg"]).fit(data["dev"])
    model.save(tmp_path / "cal")
    _apply(tmp_path / "cal", ("json", _old_prior_name))
    assert '"prior": 0.2' in (tmp_path / "cal" / JSON).read_text()
    back = GroupedCalibrator.load(tmp_path / "cal")
    assert back.base.application_prior == 0.2
    _same_state(model, back)
    scores = data["test_scores"]
    assert model.transform_dense(scores).tobytes() == back.transform_dense(scores).tobytes()


def test_save_refuses_nan(data, tmp_path):
    model = GroupedCalibrator(make_calibrator("platt"), TagGroups.scw(N_TAGS)).fit(data["dev"])
    model.calibrators_[0].slope_ = float("nan")
    with pytest.raises(ValueError, match="JSON compliant"):
        model.save(tmp_path / "cal")
    assert not (tmp_path / "cal").exists()


def test_class_names_are_never_imported(originals, tmp_path, monkeypatch):
    """A class name is only looked up in the registry: nothing is imported."""
    import builtins
    path = _copy(originals, "histogram", tmp_path)
    _apply(path, set_json("base", "class", value="os.system"))
    real_import, imported = builtins.__import__, []

    def spy(name, *args, **kwargs):
        imported.append(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", spy)
    with pytest.raises(ValueError, match="unknown class 'os.system'"):
        GroupedCalibrator.load(path)
    assert "os" not in imported


# --------------------------------------------------------------------------- #
# the command line                                                            #
# --------------------------------------------------------------------------- #

CLI_CASES = {
    "n_bins-string": ("histogram", set_json("calibrators", 3, "params", "n_bins", value="10"),
                      JSON, "calibrators[3].params.n_bins must be a positive integer, got '10'"),
    "knots-nan": ("isotonic", set_array("c1.y_knots_", lambda a: _with(a["c1.y_knots_"], 0,
                                                                       np.nan)),
                  NPZ, "c1.y_knots_[0] = nan is not finite"),
    "prior": ("platt", set_json("calibrators", 0, "params", "application_prior", value=2.0),
              JSON, "calibrators[0].params.application_prior must lie in (0, 1), got 2.0"),
    "map": ("scaling-binning", set_array("tag_to_calibrator",
                                         lambda a: _with(a["tag_to_calibrator"], 0, 99)),
            NPZ, "tag_to_calibrator[0] = 99 is out of range"),
    "nesting": ("isotonic", raw_json(lambda t: "{\"a\": " * 100000 + "1" + "}" * 100000),
                JSON, "is nested too deeply"),
}


@pytest.fixture
def scores_file(data, tmp_path):
    np.save(tmp_path / "scores.npy", data["test_scores"])
    return tmp_path / "scores.npy"


@pytest.mark.parametrize("case", list(CLI_CASES))
def test_cli_apply_refuses_a_tampered_calibrator(originals, tmp_path, scores_file, capsys,
                                                 case):
    method, edit, file, fragment = CLI_CASES[case]
    path = _copy(originals, method, tmp_path)
    _apply(path, edit)
    out = tmp_path / "out.npy"
    rc = main(["apply", str(path), "--scores", str(scores_file), "-o", str(out), "-q"])
    err = capsys.readouterr().err
    assert rc != 0
    assert err.count("\n") == 1, err
    assert err.startswith("sparsecal apply: error: ") and str(path / file) in err, err
    assert fragment in err, err
    assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == ["cal", "scores.npy"]


def test_cli_apply_valid_calibrator(originals, data, tmp_path, scores_file):
    model, path = originals["scaling-binning"]
    out = tmp_path / "out.npy"
    assert main(["apply", str(path), "--scores", str(scores_file), "-o", str(out), "-q"]) == 0
    np.testing.assert_array_equal(np.load(out), model.transform_dense(data["test_scores"]))


# --------------------------------------------------------------------------- #
# CrossFittedCalibrator (format sparsecal.CrossFittedCalibrator)              #
# --------------------------------------------------------------------------- #

def _edit_member_threshold(meta, arrays):
    meta["members"][1]["threshold"] = 0.5


def _edit_member_setup(meta, arrays):
    meta["members"][1]["min_entries"] = 7


def _drop_member_array(meta, arrays):
    del arrays["m1.tag_to_calibrator"]


ENSEMBLE_CASES = {
    "format": (lambda m, a: m.update(format="sparsecal.GroupedCalibrator"),
               "calibrator.json", "is not a sparsecal.CrossFittedCalibrator file"),
    "extra field": (lambda m, a: m.update(extra=1), "calibrator.json", "extra"),
    "n_folds 1": (lambda m, a: m.update(n_folds=1), "calibrator.json",
                  "n_folds must be at least 2"),
    "n_folds text": (lambda m, a: m.update(n_folds="3"), "calibrator.json", "n_folds"),
    "seed negative": (lambda m, a: m.update(seed=-1), "calibrator.json", "seed"),
    "no members": (lambda m, a: m.update(members=[]), "calibrator.json", "members"),
    "too many members": (lambda m, a: m.update(n_folds=2), "calibrator.json", "members"),
    "member threshold": (_edit_member_threshold, "calibrator.json", r"members\[1\]"),
    "member set-up": (_edit_member_setup, "calibrator.json",
                      r"members\[1\] is not the set-up of members\[0\]"),
    "member field": (lambda m, a: m["members"][0].pop("groups"), "calibrator.json",
                     r"groups is missing \(member 0: members\[0\]"),
    "foreign array": (lambda m, a: a.update({"x": np.zeros(3)}), "arrays.npz",
                      "x is not an array of this ensemble"),
    "member array missing": (_drop_member_array, "arrays.npz",
                             r"tag_to_calibrator.*\(member 1: members\[1\], arrays m1"),
    "member array range": (lambda m, a: a.update({"m0.tag_to_calibrator":
                                                  a["m0.tag_to_calibrator"] + 99}),
                           "arrays.npz", r"tag_to_calibrator\[0\] = 99 is out of range.*"
                                         r"\(member 0: members\[0\], arrays m0"),
}


@pytest.fixture(scope="module")
def ensemble_dir(data, tmp_path_factory):
    from sparsecal import CrossFittedCalibrator
    model = CrossFittedCalibrator(GroupedCalibrator(make_calibrator("histogram"),
                                                    data["tfg"]), n_folds=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model.fit(data["dev"])
    path = tmp_path_factory.mktemp("ens") / "model"
    model.save(path)
    return path


@pytest.mark.parametrize("case", list(ENSEMBLE_CASES))
def test_tampered_ensemble_is_refused(ensemble_dir, tmp_path, case):
    from sparsecal import CrossFittedCalibrator
    edit, file, fragment = ENSEMBLE_CASES[case]
    with open(ensemble_dir / "calibrator.json") as f:
        meta = json.load(f)
    with np.load(ensemble_dir / "arrays.npz") as z:
        arrays = dict(z)
    edit(meta, arrays)
    out = tmp_path / "t"
    out.mkdir()
    with open(out / "calibrator.json", "w") as f:
        json.dump(meta, f)
    np.savez(out / "arrays.npz", **arrays)
    with pytest.raises(ValueError, match=fragment) as info:
        CrossFittedCalibrator.load(out)
    assert isinstance(info.value, saved_io.StateError)
    assert str(info.value).startswith(str(out / file))


def test_untampered_ensemble_loads(ensemble_dir, data):
    from sparsecal import CrossFittedCalibrator
    model = CrossFittedCalibrator.load(ensemble_dir)
    assert len(model.calibrators_) == 3
    assert model.transform(data["dev"]).score.shape == data["dev"].score.shape
