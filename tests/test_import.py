"""``import sparsecal`` changes nothing global and loads no heavy dependency
(issue 10, "a quiet import"); timings are in ``benchmarks/bench_import.py``."""
import subprocess
import sys

import pytest

import sparsecal


def _probe(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_sets_no_environment_variable_and_loads_nothing_heavy():
    code = ("import os, sys\nbefore = dict(os.environ)\nimport sparsecal\n"
            "assert dict(os.environ) == before, set(os.environ) ^ set(before)\n"
            "print(sorted(m for m in ('scipy', 'matplotlib', 'torch', 'sklearn') "
            "if m in sys.modules))")
    assert _probe(code) == "[]"


def test_adapters_import_no_tagging_library():
    code = ("import sys\nimport sparsecal\nfrom sparsecal import (word_probabilities, "
            "label_names, stream_word_entries, gold_ids, marginals_from_torchcrf, "
            "crfsuite_scores, entries_from_crfsuite)\n"
            "print(sorted(m for m in ('torch', 'transformers', 'tokenizers', 'torchcrf', "
            "'sklearn_crfsuite', 'pycrfsuite') if m in sys.modules))")
    assert _probe(code) == "[]"


def test_import_and_io_load_no_table_or_corpus_extra():
    code = ("import sys\nimport sparsecal, sparsecal.io, sparsecal.metrics\n"
            "print(sorted(m for m in ('pandas', 'pyarrow', 'conllu', 'polars', 'duckdb') "
            "if m in sys.modules))")
    assert _probe(code) == "[]"


def test_workflow_names_do_not_load_optimizer_plots_or_torch():
    code = ("import sys\nfrom sparsecal import (threshold, TagGroups, smce, gmce, evaluate, "
            "GroupedCalibrator, IsotonicCalibrator, compare_methods)\n"
            "print(sorted(m for m in ('scipy.optimize', 'matplotlib', 'torch', 'sklearn') "
            "if m in sys.modules))")
    assert _probe(code) == "[]"


def test_every_public_name_resolves_and_is_listed():
    for name in sparsecal.__all__:
        assert getattr(sparsecal, name) is not None, name
    assert set(sparsecal.__all__) <= set(dir(sparsecal))
    for sub in ("core", "metrics", "calibration", "io", "plotting", "datasets", "cli"):
        assert sub in dir(sparsecal)
        assert getattr(sparsecal, sub).__name__ == f"sparsecal.{sub}"


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        sparsecal.nope


def test_structured_names_do_not_load_torch_or_scipy():
    code = ("import sys\nfrom sparsecal import (Events, decode_spans, sample_frequency, "
            "pair_entries, sample_confidence, crf_span_events)\n"
            "print(sorted(m for m in ('scipy', 'matplotlib', 'torch', 'sklearn') "
            "if m in sys.modules))")
    assert _probe(code) == "[]"
