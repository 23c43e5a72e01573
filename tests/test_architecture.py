"""The layering of ``docs/architecture.md``, checked on the source: imports flow
one way, from the CLI down to the kernels, with no cycles (function-level
imports included), and the core never imports an optional extra."""
import ast
import importlib.util
from pathlib import Path

import pytest

# the package under test, wherever it is installed (the checkout, or the wheel
# that scripts/test_wheel.sh installs, whose tests sit apart from the sources)
PACKAGE = Path(importlib.util.find_spec("sparsecal").origin).resolve().parent

#: subpackage -> layer; a module may import from its own or a lower layer only
# (adapters sit above metrics: the training loops' Metric classes compute its measures)
LAYERS = {"core": 0, "io": 1, "datasets": 1, "crf": 1, "metrics": 2, "adapters": 3,
          "calibration": 3, "structured": 3, "plotting": 4, "distributed": 4, "cli": 5}
OPTIONAL = ("torch", "torch_struct", "sklearn", "matplotlib", "dask", "distributed",
            "transformers", "torchcrf", "sklearn_crfsuite", "pycrfsuite", "tokenizers",
            "pandas", "pyarrow", "conllu", "torchmetrics", "spacy")


def _modules(*patterns):
    """{dotted module name: path} of every module of the package matching one of
    ``patterns`` (``_sort.cpython-312-x86_64-linux-gnu.so`` is ``_sort``)."""
    out = {}
    for pattern in patterns:
        for path in PACKAGE.rglob(pattern):
            parts = path.relative_to(PACKAGE.parent).parts
            parts = parts[:-1] + (parts[-1].split(".")[0],)
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


def _lazy_exports(package, modules):
    """``{name: submodule}`` of a package's lazy exports (the ``_EXPORTS`` dict
    of its ``__init__``): ``from . import name`` imports that submodule, an edge
    of the graph like any other (a lazy export must not hide a cycle)."""
    path = modules.get(package)
    if path is None or path.name != "__init__.py":
        return {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if (isinstance(node, (ast.Assign, ast.AnnAssign)) and
                "_EXPORTS" in [getattr(t, "id", None) for t in
                               (node.targets if isinstance(node, ast.Assign) else [node.target])]):
            return ast.literal_eval(node.value)
    return {}


def _imports(name, path, modules):
    """Modules of the package that ``name`` imports anywhere (lazy imports too),
    and the top-level names of outside packages it imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    inside, outside = set(), set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            if not target.startswith("sparsecal"):
                outside.add(target.split(".")[0])
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                lazy = _lazy_exports(target, modules).get(alias.name)
                inside.add(sub if sub in modules else
                           f"{target}.{lazy}" if lazy is not None else target)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("sparsecal"):
                    inside.add(alias.name)
                else:
                    outside.add(alias.name.split(".")[0])
    return inside - {name}, outside


def _layer(module):
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


MODULES = _modules("*.py")
assert MODULES, f"no Python modules found under {PACKAGE}"
# compiled leaves, from their sources or (in an installed wheel) the extensions:
# they import nothing of the package
KERNELS = _modules("*.pyx", "*.so", "*.pyd")
GRAPH = {name: _imports(name, path, {**MODULES, **KERNELS})
         for name, path in MODULES.items()}


def test_every_subpackage_has_a_layer():
    subpackages = {m.split(".")[1] for m in MODULES if m.count(".") >= 1
                   and (PACKAGE / m.split(".")[1]).is_dir()}
    assert subpackages == set(LAYERS)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_flow_down(name):
    mine = _layer(name)
    if mine is None:   # sparsecal/__init__.py and __main__.py sit above every layer
        return
    up = sorted(t for t in GRAPH[name][0] if _layer(t) is not None and _layer(t) > mine)
    assert not up, f"{name} (layer {mine}) imports from a higher layer: {up}"
    same = sorted(t for t in GRAPH[name][0] if _layer(t) == mine
                  and t.split(".")[1] != name.split(".")[1])
    assert not same, f"{name} imports a sibling subpackage of its own layer: {same}"


def test_no_import_cycles():
    graph = {n: {t for t in GRAPH[n][0] if t in MODULES} for n in MODULES}
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in graph[node]:
            if state.get(nxt) == "open":
                cycle = stack[stack.index(nxt):] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)


@pytest.mark.parametrize("name", sorted(m for m in MODULES
                                         if m.split(".")[1:2] in (["core"], ["metrics"])))
def test_core_and_metrics_import_no_optional_extra(name):
    assert not GRAPH[name][1] & set(OPTIONAL), f"{name} imports {GRAPH[name][1] & set(OPTIONAL)}"


def _line_counts(path):
    """``(lines, docstring lines)`` of a module: every line, and the lines of the
    docstrings of the module, its classes and its functions."""
    source = path.read_text(encoding="utf-8")
    doc = 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                doc += first.end_lineno - first.lineno + 1
    return source.count("\n") + 1, doc


def test_docstrings_are_at_most_a_third_of_the_lines():
    """Issue 24, item 4: docstrings a reader finishes (parameters described once,
    in ``sparsecal._docs.PARAMS``): at most 35% of the package's lines."""
    lines, doc = map(sum, zip(*[_line_counts(path) for path in MODULES.values()]))
    assert doc / lines <= 0.35, f"docstrings are {doc / lines:.1%} of the {lines} lines"
