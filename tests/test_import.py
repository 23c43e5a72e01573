"""``import sparsecal`` changes nothing global and loads no heavy dependency
(issue 10, "a quiet import"; timings are in ``benchmarks/bench_import.py``); the
top level holds at most 60 names, every package's names are written once, in
its ``_EXPORTS`` table, and load from their module on first use (issue 24)."""
import ast
import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import sparsecal

PACKAGE = Path(sparsecal.__file__).parent
SUBPACKAGES = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
#: the subpackages whose names need an optional extra to load
EXTRAS = {"crf": "torch", "distributed": "dask"}


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
    code = ("import sys\nimport sparsecal\nfrom sparsecal.adapters import (word_probabilities, "
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
    for sub in SUBPACKAGES:
        assert sub in dir(sparsecal)
        assert getattr(sparsecal, sub).__name__ == f"sparsecal.{sub}"


def test_top_level_is_at_most_60_names_each_from_its_subpackage():
    assert len(sparsecal.__all__) <= 60
    assert sparsecal.__all__ == sorted(sparsecal._EXPORTS)
    for name, sub in sparsecal._EXPORTS.items():
        module = importlib.import_module(f"sparsecal.{sub}")
        assert name in module.__all__, f"sparsecal.{name} is not public in sparsecal.{sub}"
        assert getattr(sparsecal, name) is getattr(module, name)
    # the long tail lives in its subpackage only
    assert not {"read_conllu", "Events", "DaskEntries", "word_probabilities"} & set(
        sparsecal.__all__)


#: functions the package calls internally and a user does not: in no export table
INTERNAL = {"argsort_scores", "equal_mass_bin_starts", "lookup_bins", "histogram_counts",
            "partition_by_group", "isotonic_fit_pooled", "score_table", "replicate_generators",
            "replicate_errors", "table_bootstrap_interval", "check_prior_methods",
            "check_bins_methods", "with_interval", "set_tables"}


def test_internals_are_in_no_export_table():
    for package in [""] + SUBPACKAGES:
        assert not INTERNAL & set(_exports(PACKAGE / package / "__init__.py")), package


def _exports(path):
    """The ``_EXPORTS`` table of a package's ``__init__.py``, which holds nothing
    else but its docstring, ``__version__`` (the top level) and the one line
    that derives ``__all__`` from the table (``lazy_exports``)."""
    rule = ["from {}_lazy import lazy_exports",
            "__all__, __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)"]
    body = ast.parse(path.read_text(encoding="utf-8")).body
    assert ast.get_docstring(ast.Module(body, [])), path
    assigned = {ast.unparse(n.targets[0]): n.value for n in body[1:]
                if isinstance(n, ast.Assign) and len(n.targets) == 1}
    code = [ast.unparse(n) for n in body[1:] if not (
        isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) in ("_EXPORTS", "__version__"))]
    dots = "." if path.parent == PACKAGE else ".."
    assert code == [rule[0].format(dots), rule[1]], f"{path}: {code}"
    return ast.literal_eval(assigned["_EXPORTS"])


@pytest.mark.parametrize("package", [""] + SUBPACKAGES)
def test_one_export_table_per_package(package):
    """Each package writes its names once, name -> module, in a literal
    ``_EXPORTS``; ``__all__`` is derived from it, and the package imports
    nothing else (each name loads on first use)."""
    table = _exports(PACKAGE / package / "__init__.py")
    for name, module in table.items():
        if package:
            assert name in _defined(PACKAGE / package / f"{module}.py"), \
                f"sparsecal.{package}.{module} does not define {name}"
            # a name spelled as a module is that module's (lazy_exports loads it at once)
            assert not (PACKAGE / package / f"{name}.py").exists() or module == name, name
        else:
            assert module in SUBPACKAGES


def _defined(path):
    """The names a module defines at its top level (functions, classes, constants)."""
    out = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                out.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return out


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_every_subpackage_name_resolves(package):
    if package in EXTRAS:
        pytest.importorskip(EXTRAS[package])
    module = importlib.import_module(f"sparsecal.{package}")
    assert module.__all__ == sorted(module._EXPORTS)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"sparsecal.{package}.{name}"
    assert set(module.__all__) <= set(dir(module))


def test_every_object_has_one_home():
    """No object is public in two subpackages (the API reference documents
    each once, on its subpackage's page: docs/_ext/api_pages.py)."""
    homes = {}
    for package in SUBPACKAGES:
        if package in EXTRAS and importlib.util.find_spec(EXTRAS[package]) is None:
            continue
        module = importlib.import_module(f"sparsecal.{package}")
        for name in module.__all__:
            home = homes.setdefault(id(getattr(module, name)), f"{package}.{name}")
            assert home == f"{package}.{name}", f"{package}.{name} is also {home}"


def test_subpackages_load_their_modules_on_first_use():
    """Importing sparsecal and every subpackage imports no module of theirs
    (``cli``, whose ``main`` is also a module name, loads ``cli.main``); a
    name loads its own module, and a submodule is an attribute on first use."""
    code = ("import sys, importlib\nimport sparsecal\n"
            "before = sorted(m for m in sys.modules if m.startswith('sparsecal'))\n"
            f"for sub in {[s for s in SUBPACKAGES if s != 'cli']!r}:\n"
            "    importlib.import_module('sparsecal.' + sub)\n"
            "loaded = sorted(m for m in sys.modules if m.startswith('sparsecal.') and "
            "m.count('.') > 1)\n"
            "sparsecal.core.DegenerateDataError\n"
            "after = sorted(m for m in sys.modules if m.startswith('sparsecal.core.'))\n"
            "print(before, loaded, after, sparsecal.metrics.resampling.__name__)")
    assert _probe(code) == ("['sparsecal', 'sparsecal._lazy'] [] ['sparsecal.core.validation'] "
                            "sparsecal.metrics.resampling")


def test_cli_main_is_the_function_however_it_was_imported():
    code = ("import sparsecal.cli.main\nfrom sparsecal.cli import main\n"
            "print(callable(main), main.__module__)")
    assert _probe(code) == "True sparsecal.cli.main"


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        sparsecal.nope


def test_structured_names_do_not_load_torch_or_scipy():
    code = ("import sys\nfrom sparsecal.structured import (Events, decode_spans, "
            "sample_frequency, pair_entries, sample_confidence, crf_span_events)\n"
            "print(sorted(m for m in ('scipy', 'matplotlib', 'torch', 'sklearn') "
            "if m in sys.modules))")
    assert _probe(code) == "[]"
