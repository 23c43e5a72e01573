"""Coverage-guided fuzzing (atheris) of every loader of user files.

Each target writes the fuzzer's bytes to a file and reads it with one public
loader. A loader may accept the file or refuse it with ``ValueError`` (its one
documented error for a bad file); anything else (another exception, a crash in
native code, a hang) is a finding. What a loader accepts must also be usable:
accepted scores are 2-D floats, accepted gold tags 1-D integers, an accepted
calibrator maps scores in [0, 1] to finite values in [0, 1].

The seed corpus of every target is written by the package's own writers
(:func:`seed_corpus`), so the fuzzer starts from valid files and mutates them.

Run one target for longer than CI does::

    python tests/fuzz/fuzz_loaders.py calibrator_json -max_total_time=600

``tests/test_fuzz.py`` runs every target for a bounded number of inputs
(``SPARSECAL_FUZZ_RUNS``, default 400).
"""
import io
import json
import os
import sys
import tempfile
import warnings

import atheris
import numpy as np

with atheris.instrument_imports(include=["sparsecal"]):
    from sparsecal.calibration.grouped import GroupedCalibrator
    from sparsecal.calibration.registry import METHODS
    from sparsecal.core.entries import threshold
    from sparsecal.core.groups import TagGroups, load_train_counts
    from sparsecal.io.arrays import (load_entries, load_gold, load_scores,
                                     load_tag_index, save_entries)

N_TAGS = 6
_PROBE = np.linspace(0.0, 1.0, 4 * N_TAGS).reshape(4, N_TAGS)


def _check_scores(path):
    arr = load_scores(path)
    assert arr.ndim == 2 and arr.dtype.kind == "f", arr.dtype


def _check_gold(path):
    gold = load_gold(path)
    assert gold.ndim == 1 and gold.dtype.kind in "iu", gold.dtype


def _check_counts(path):
    counts = load_train_counts(path)
    assert counts.ndim == 1 and counts.dtype == np.int64 and (counts >= 0).all()


def _check_tag_index(path):
    index = load_tag_index(path)
    assert len(set(index.values())) == len(index)


def _check_entries(path):
    entries = load_entries(path)
    assert len(entries.score) == len(entries.tag) == len(entries.label)


def _check_calibrator(directory):
    model = GroupedCalibrator.load(directory)
    if model.groups.n_tags != N_TAGS:
        return
    out = model.transform_dense(_PROBE)
    assert out.shape == _PROBE.shape and np.isfinite(out).all(), out
    assert ((out >= 0) & (out <= 1)).all(), out


def seed_corpus():
    """{target: list of bytes}: valid files written by the package's writers."""
    rng = np.random.default_rng(0)
    scores = rng.dirichlet(np.ones(N_TAGS), size=40)
    gold = rng.integers(0, N_TAGS, size=40)

    def npy(a):
        buf = io.BytesIO()
        np.save(buf, a)
        return buf.getvalue()

    def npz(**arrays):
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        return buf.getvalue()

    counts = {str(t): int(c) for t, c in enumerate(np.bincount(gold, minlength=N_TAGS))}
    with tempfile.TemporaryDirectory() as d:
        save_entries(os.path.join(d, "e.npz"), threshold(scores, gold))
        with open(os.path.join(d, "e.npz"), "rb") as f:
            entries = f.read()
        calibrators = []   # (calibrator.json, arrays.npz) of every registered method
        for name, method in METHODS.items():
            model = GroupedCalibrator(method.build(n_bins=4, seed=0),
                                      TagGroups.from_counts(counts, 2, n_tags=N_TAGS))
            model.fit(threshold(scores, gold))
            model.save(os.path.join(d, name))
            calibrators.append(tuple(
                open(os.path.join(d, name, f), "rb").read()   # noqa: SIM115
                for f in ("calibrator.json", "arrays.npz")))
    return {
        "scores_npy": [npy(scores), npy(scores.astype(">f4")), npy(np.asfortranarray(scores))],
        "scores_npz": [npz(s=scores), npz(a=scores, b=scores.astype(np.float32))],
        "gold_npy": [npy(gold), npy(gold.astype(">i4"))],
        "gold_txt": ["".join(f"{g}\n" for g in gold).encode(), b"3\n-1\n0"],
        "counts_json": [json.dumps(counts).encode(), b'{"0": 5, "2": 1}'],
        "tag_index_json": [json.dumps({f"T{i}": i for i in range(N_TAGS)}).encode()],
        "entries_npz": [entries],
        "calibrator_json": [j for j, _ in calibrators],
        "calibrator_npz": [a for _, a in calibrators],
        "_calibrators": calibrators,
    }


#: target -> (file name inside the work directory, check)
TARGETS = {
    "scores_npy": ("x.npy", _check_scores),
    "scores_npz": ("x.npz", _check_scores),
    "gold_npy": ("x.npy", _check_gold),
    "gold_txt": ("x.txt", _check_gold),
    "counts_json": ("x.json", _check_counts),
    "tag_index_json": ("x.json", _check_tag_index),
    "entries_npz": ("x.npz", _check_entries),
    "calibrator_json": ("cal/calibrator.json", _check_calibrator),
    "calibrator_npz": ("cal/arrays.npz", _check_calibrator),
}


def _partner(data, calibrators, fuzzed):
    """The untouched file that goes with a fuzzed calibrator file: that of the
    saved calibrator the input most resembles (same length, then the first)."""
    other = 1 - fuzzed
    for pair in calibrators:
        if len(pair[fuzzed]) == len(data):
            return pair[other]
    return calibrators[0][other]


def make_one_input(target, workdir, calibrators):
    """The function atheris calls with each input of ``target``."""
    name, check = TARGETS[target]
    path = os.path.join(workdir, name)
    checked = os.path.dirname(path) if name.startswith("cal/") else path
    os.makedirs(os.path.dirname(path), exist_ok=True)

    def one_input(data):
        if name.startswith("cal/"):
            fuzzed = 0 if name.endswith(".json") else 1
            other = ("arrays.npz", "calibrator.json")[fuzzed]
            with open(os.path.join(checked, other), "wb") as f:
                f.write(_partner(data, calibrators, fuzzed))
        with open(path, "wb") as f:
            f.write(data)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check(checked)
        except ValueError:
            pass   # refused, with the loader's one documented error
    return one_input


def main(argv):
    if len(argv) < 2 or argv[1] not in TARGETS:
        sys.exit(f"usage: {argv[0]} TARGET [libFuzzer options]; TARGET one of "
                 f"{', '.join(TARGETS)}")
    target = argv[1]
    seeds = seed_corpus()
    with tempfile.TemporaryDirectory() as work:
        corpus = os.path.join(work, "corpus")
        os.makedirs(corpus)
        for i, seed in enumerate(seeds[target]):
            with open(os.path.join(corpus, f"seed{i}"), "wb") as f:
                f.write(seed)
        files = os.path.join(work, "files")
        os.makedirs(files)
        one_input = make_one_input(target, files, seeds["_calibrators"])
        atheris.Setup([argv[0], *argv[2:], corpus], one_input)
        atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
