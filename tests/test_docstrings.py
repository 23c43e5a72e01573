"""The public API is documented (issue 10): every public function and class named
in ``__all__`` of the package and its subpackages has a NumPy docstring with the
sections that apply, and every Examples section runs."""
import doctest
import importlib
import inspect
import pkgutil
import warnings

import pytest

import sparsecal

SUBPACKAGES = ["sparsecal", "sparsecal.core", "sparsecal.metrics", "sparsecal.calibration",
               "sparsecal.io", "sparsecal.plotting", "sparsecal.datasets", "sparsecal.cli",
               "sparsecal.crf", "sparsecal.structured", "sparsecal.adapters"]


def _public():
    seen, out = set(), []
    for name in SUBPACKAGES:
        if name == "sparsecal.crf":
            pytest.importorskip("torch", reason="sparsecal.crf needs the torch extra")
        module = importlib.import_module(name)
        for attr in module.__all__:
            obj = getattr(module, attr)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and id(obj) not in seen:
                seen.add(id(obj))
                out.append((f"{name}.{attr}", obj))
    return out


def _takes_arguments(func):
    return any(p.name not in ("self", "cls") for p in inspect.signature(func).parameters.values())


@pytest.mark.parametrize("name,obj", _public(), ids=lambda x: x if isinstance(x, str) else "")
def test_public_api_has_numpy_docstrings(name, obj):
    doc = inspect.getdoc(obj) or ""
    assert doc, f"{name} has no docstring"
    if inspect.isclass(obj) and issubclass(obj, Exception):
        return
    wanted = ["Examples"]
    if inspect.isfunction(obj):
        if _takes_arguments(obj):
            wanted.append("Parameters")
        wanted.append("Returns")
    missing = [s for s in wanted if f"{s}\n---" not in doc]
    assert not missing, f"{name}: docstring lacks {missing}"


def _modules():
    for info in pkgutil.walk_packages(sparsecal.__path__, "sparsecal."):
        if info.name.startswith("sparsecal.crf"):
            try:
                importlib.import_module("torch")
            except ImportError:
                continue
        if not info.name.endswith("__main__"):
            yield info.name


@pytest.mark.parametrize("module_name", sorted(_modules()))
def test_examples_run(module_name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for test in finder.find(module, module_name):
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} example(s) failed in {module_name}"


@pytest.mark.parametrize("module_name", sorted(_modules()))
def test_shared_sections_are_filled(module_name):
    """``sparsecal._docs.fill_doc`` left no ``{name}`` line in a docstring."""
    import re
    module = importlib.import_module(module_name)
    found = [module]
    for obj in vars(module).values():
        if getattr(obj, "__module__", None) == module_name:
            found.append(obj)
            if inspect.isclass(obj):
                found += [m for m in vars(obj).values() if inspect.isfunction(m)]
    unfilled = [getattr(o, "__qualname__", module_name) for o in found
                if re.search(r"^\s*\{\w+\}\s*$", o.__doc__ or "", re.MULTILINE)]
    assert not unfilled, f"unfilled docstring placeholders in {unfilled}"


def test_shared_sections_under_optimize():
    """Under ``python -OO`` (no docstrings) the decorated modules import."""
    import subprocess
    import sys
    modules = [m for m in _modules() if m.startswith("sparsecal.crf")]   # with torch only
    code = (f"import sparsecal.core.binning, sparsecal.io.corpora, {', '.join(modules) or 'os'}; "
            "assert sparsecal.core.binning.argsort_scores.__doc__ is None")
    subprocess.run([sys.executable, "-OO", "-c", code], check=True)
