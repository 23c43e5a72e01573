"""Bounded coverage-guided fuzzing of every loader (tests/fuzz/fuzz_loaders.py).

Each target runs in its own process (libFuzzer owns the process) for
``SPARSECAL_FUZZ_RUNS`` inputs (default 2000, a few seconds each); an input that
makes a loader raise anything but its documented ``ValueError``, crash, or
accept a file it cannot use fails the test and leaves the input under pytest's
temporary directory. Run longer on demand::

    SPARSECAL_FUZZ_RUNS=200000 pytest tests/test_fuzz.py
    python tests/fuzz/fuzz_loaders.py calibrator_json -max_total_time=3600
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).parent / "fuzz" / "fuzz_loaders.py"
TARGETS = ["scores_npy", "scores_npz", "gold_npy", "gold_txt", "counts_json",
           "tag_index_json", "entries_npz", "calibrator_json", "calibrator_npz"]
RUNS = int(os.environ.get("SPARSECAL_FUZZ_RUNS", "2000"))

if sys.platform != "linux":
    pytest.skip("atheris (libFuzzer) is installed by the test extra on Linux only",
                allow_module_level=True)


def test_the_harness_knows_every_target():
    source = HARNESS.read_text()
    assert all(f'"{t}": (' in source for t in TARGETS)


@pytest.mark.parametrize("target", TARGETS)
def test_loader_survives_fuzzing(target, tmp_path):
    proc = subprocess.run(
        [sys.executable, str(HARNESS), target, f"-runs={RUNS}", "-seed=1",
         f"-artifact_prefix={tmp_path}/", "-rss_limit_mb=4096", "-timeout=60"],
        capture_output=True, text=True, cwd=tmp_path, timeout=600)
    log = proc.stderr[-6000:]
    assert proc.returncode == 0, f"{target}: a finding (input saved in {tmp_path}):\n{log}"
    assert f"Done {RUNS} runs" in proc.stderr, log
