"""One home for "missing extra" errors (``sparsecal/_extras.py: require``).

Every extra named in the package's messages and docstrings exists in
``pyproject.toml``; no module raises its own ImportError; and each optional
import, with its module hidden (``sys.modules[name] = None``, in a subprocess),
fails with the message ``require`` writes, naming an extra that installs it.
"""
import importlib.metadata
import importlib.util
import pathlib
import re
import subprocess
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# the package under test: the checkout's, or the installed wheel's (scripts/test_wheel.sh
# runs the tests from the sdist, without the sources, pyproject.toml or docs beside them)
PACKAGE = pathlib.Path(importlib.util.find_spec("sparsecal").origin).parent
if (ROOT / "pyproject.toml").exists():
    EXTRAS = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"])
else:
    EXTRAS = set(importlib.metadata.metadata("sparsecal").get_all("Provides-Extra"))
SOURCES = sorted(PACKAGE.rglob("*.py"))


def test_every_named_extra_exists():
    named = {}
    for path in SOURCES + sorted((ROOT / "docs").glob("*.md")):
        for extra in re.findall(r"sparsecal\[([^\]]*)\]", path.read_text()):
            named.setdefault(extra, path.name)
    assert named, "no extra named anywhere"
    unknown = {extra: where for extra, where in named.items()
               if extra not in EXTRAS and extra not in ("extra", "{extra}")}   # placeholders
    assert not unknown, f"extras named but not in pyproject.toml: {unknown}"


def test_no_module_writes_its_own_import_error():
    own = [str(path.relative_to(PACKAGE)) for path in SOURCES
           if path.name != "_extras.py" and "raise ImportError" in path.read_text()]
    assert own == []


CASES = [   # (hidden module, code that needs it, purpose in the message, extra)
    ("torch", "from sparsecal.crf import marginals", "sparsecal.crf", "torch"),
    ("torch", "from sparsecal.io.arrays import _load_tensor; _load_tensor('s.pt', None)",
     "reading 's.pt'", "torch"),
    ("torch_struct", "from sparsecal.crf.torch_struct_backend import _linear_chain_crf\n"
                     "with _linear_chain_crf(None): pass", 'backend="torch-struct"', "torch"),
    ("dask", "from sparsecal.distributed._dask import require_dask; require_dask()",
     "sparsecal.distributed", "dask"),
    ("zarr", "from sparsecal.distributed.apply import _write_zarr\n"
             "_write_zarr(None, None, None, None, None)", "format='zarr'", "dask"),
    ("conllu", "from sparsecal.io.corpora import _read_conllu_package\n"
               "_read_conllu_package('c.conllu', 'upos', None, 'error')",
     "read_conllu(engine='conllu')", "conllu"),
    ("torchmetrics", "import sparsecal.adapters.torchmetrics",
     "sparsecal.adapters.torchmetrics", "torchmetrics"),
    ("torchmetrics", "from sparsecal.adapters import SMCEMetric",
     "sparsecal.adapters.torchmetrics", "torchmetrics"),
    ("spacy", "from sparsecal.adapters import spacy_scores; spacy_scores(None, [])",
     "spacy_scores", "spacy"),
    ("spacy", "from sparsecal.adapters import entries_from_spacy; entries_from_spacy(None, [])",
     "entries_from_spacy", "spacy"),
    ("spacy", "from sparsecal.adapters import spancat_entries; spancat_entries(None, [])",
     "spancat_entries", "spacy"),
    ("pandas", "from sparsecal.metrics.evaluation import Comparison\n"
               "Comparison([dict(name='SMCE', before=0.1, after=0.05, change=-0.05,\n"
               "                 relative_change=-0.5)]).to_frame()",
     "Comparison.to_frame()", "pandas"),
]


@pytest.mark.parametrize("module, code, purpose, extra", CASES)
def test_missing_module_message_is_requires(module, code, purpose, extra):
    assert extra in EXTRAS
    script = (f"import sys\nsys.modules[{module!r}] = None\n"
              f"try:\n    exec({code!r})\n"
              "except ImportError as exc:\n    print(exc)\nelse:\n    print('no error')\n")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f'{purpose} needs {module}: pip install "sparsecal[{extra}]"'
