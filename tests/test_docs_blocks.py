"""Docs are tests (issue 25): every fenced ``python`` and shell (``bash``, ``sh``,
``shell``) block of README.md and docs/*.md runs, so a command or a snippet that
drifts from the code fails here.

- One test per block, with the id ``FILE:LINE`` of its opening fence. The blocks of
  one file run in order in one temporary directory (later blocks read what earlier
  ones wrote); its Python blocks share one namespace, like a notebook's cells. A
  block whose earlier blocks have not run in this process (pytest-xdist) runs them
  first; if one of them fails, the block is skipped, naming it (one skipped for
  want of the real data does not stop the others). A traceback of a
  Python block shows the Markdown file's own lines.
- The directory starts with small generated inputs under the names the text uses
  (``inputs``, below): a synthetic tagger's dev and test scores and gold, training
  counts keyed by tag name with their tag index, sentence lengths, and a small CRF's
  potentials with CoNLL gold; with the dask extra, the scores and gold as Zarr stores.
- Shell blocks: one command per line (a trailing backslash continues it, ``#``
  starts a comment). ``sparsecal`` and ``.venv/bin/sparsecal`` run the entry point
  of this Python (``python -m sparsecal`` without one), ``python`` and
  ``.venv/bin/python`` this Python; paths into the repository (``examples/``,
  ``scripts/``, ``benchmarks/``, ``tests/``) and ``../shared/`` (the real data
  beside it; skipped when absent) are read from there. Any other program is an
  error: such a block says why it is not run.
- A block that is not input is not run: output is fenced as ``text``, files and
  configuration by their format (``yaml``, ...); such a block, one without a
  language and an indented one (found by the docs site's Markdown parser) hold no
  command and no Python import, which would escape the test. A block that is input
  but is not run here (a set-up script that runs this suite, a benchmark of minutes)
  carries ``<!-- not run: REASON -->`` on the line before its fence; it is a skipped
  test whose reason ``-ra`` lists, once the repository files it names are found.
- The pages the docs site runs when it is built (docs/conf.py
  ``sparsecal_run_pages``) are tested by that build (tests/test_docs_site.py).
- Every ``sparsecal.x.y`` and ``sc.x`` the prose names exists.
"""
import contextlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import sparsecal
from sparsecal.datasets import make_tagger_outputs

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
# the wheel's test run (scripts/test_wheel.sh) has the tests, not the README and docs
FILES = ([REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
         if (REPO / "README.md").is_file() else [])
PYTHON = {"python", "py"}
SHELL = {"bash", "sh", "shell"}
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
NOT_RUN = re.compile(r"^\s*<!--\s*not run\b:?(?P<reason>.*?)-->\s*$")
SUBPROCESS_TIMEOUT = 600
REPO_DIRS = ("examples", "scripts", "benchmarks", "tests")
# what a block raises when it fails (pytest's outcomes are BaseExceptions)
BLOCK_ERRORS = (Exception, pytest.fail.Exception)
# what the commands import: the sparsecal this test imports (a checkout's or an install's)
IMPORT_ROOT = str(Path(sparsecal.__file__).resolve().parents[1])

pytestmark = pytest.mark.skipif(
    not FILES, reason="no README.md here: the docs are run from a checkout")


def _site_run_pages():
    """The pages the docs site runs when it is built (docs/conf.py's
    ``sparsecal_run_pages``): a failing block or a stale output block fails
    that build under -W, in tests/test_docs_site.py, so they are not run twice."""
    conf = REPO / "docs" / "conf.py"
    found = re.search(r"^sparsecal_run_pages = (\[.*?\])$",
                      conf.read_text(encoding="utf-8"), re.M) if conf.is_file() else None
    return {f"{name}.md" for name in (json.loads(found[1]) if found else [])}


SITE_RUN_PAGES = _site_run_pages()


@dataclass
class Block:
    path: Path
    line: int           # 1-based line of the opening fence
    info: str
    code: str
    not_run: str = None  # the reason of a <!-- not run: ... --> marker

    @property
    def name(self):
        return f"{self.path.relative_to(REPO).as_posix()}:{self.line}"

    @property
    def lang(self):
        return self.info.split()[0] if self.info else ""

    @property
    def runs(self):
        return self.lang in PYTHON or self.lang in SHELL


def parse(path):
    """The fenced code blocks of a Markdown file, and the not-run markers that
    precede no block (line numbers)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, markers, i = [], {}, 0
    while i < len(lines):
        marker = NOT_RUN.match(lines[i])
        if marker:
            markers[i + 1] = marker["reason"].strip()
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = len(m["indent"]), m["fence"]
        close = re.compile(rf"^ *{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        start, body, i = i, [], i + 1
        while i < len(lines) and not close.match(lines[i]):
            body.append(lines[i][indent:] if lines[i][:indent].isspace() else lines[i])
            i += 1
        i += 1
        reason = markers.pop(start, None)   # the marker on the line before the fence
        blocks.append(Block(path, start + 1, m["info"].strip(), "\n".join(body) + "\n",
                            reason))
    return blocks, sorted(markers)


BLOCKS = [b for path in FILES for b in parse(path)[0]]


# ---- inputs: small generated files under the names the text uses ------------ #

CRF_TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]


def _bio_gold(rng, lengths):
    """Valid BIO tag ids per sentence: spans of 1-3 tokens on a background of O."""
    out = []
    for n in lengths:
        tags = np.zeros(n, dtype=np.int64)
        t = 0
        while t < n:
            if rng.random() < 0.35:
                kind = rng.integers(2)           # PER or LOC
                span = min(int(rng.integers(1, 4)), n - t)
                tags[t] = 1 + 2 * kind
                tags[t + 1:t + span] = 2 + 2 * kind
                t += span
            else:
                t += 1
        out.append(tags)
    return out


def _write_crf(root, name, seed, n_sentences):
    """CRF potentials (.npz, as ``sparsecal events --potentials`` reads) whose best
    paths are mostly the gold, and the gold as CoNLL columns (word, tag)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 9, size=n_sentences)
    gold = _bio_gold(rng, lengths)
    C = len(CRF_TAGS)
    emissions = rng.normal(0.0, 1.0, size=(n_sentences, lengths.max(), C))
    for b, tags in enumerate(gold):
        emissions[b, np.arange(len(tags)), tags] += 2.0
    np.savez(root / f"{name}_crf.npz", emissions=emissions, lengths=lengths,
             transitions=rng.normal(0.0, 0.3, size=(C, C)))
    (root / f"{name}.conll").write_text(
        "\n".join("".join(f"w{t} {CRF_TAGS[g]}\n" for t, g in enumerate(tags))
                  for tags in gold), encoding="utf-8")


def _write_inputs(root):
    """What the blocks read (see the module docstring): every file is small."""
    n_tags = 50
    names = [f"T{j}" for j in range(n_tags)]
    for split, seed, n in (("dev", 1, 4000), ("test", 2, 3000)):
        data = make_tagger_outputs(n, n_tags, split_seed=seed)
        np.save(root / f"{split}_scores.npy", data.scores)
        np.save(root / f"{split}_gold.npy", data.gold)
        lengths = np.diff(np.unique(np.r_[0, np.arange(7, n, 7), n]))
        np.savetxt(root / f"{split}_lengths.txt", lengths, fmt="%d")
    (root / "training_tag_frequencies.json").write_text(
        json.dumps({names[j]: c for j, c in data.train_counts.items()}), encoding="utf-8")
    (root / "tag_indexes.json").write_text(
        json.dumps({t: j for j, t in enumerate(names)}), encoding="utf-8")
    _write_crf(root, "dev", 3, 150)
    _write_crf(root, "test", 4, 80)
    (root / "tags.json").write_text(json.dumps({t: j for j, t in enumerate(CRF_TAGS)}),
                                    encoding="utf-8")
    if importlib.util.find_spec("zarr") is not None:   # the dask extra: Zarr stores
        import dask.array as da
        for name in ("dev_scores", "dev_gold", "test_scores", "test_gold"):
            da.from_array(np.load(root / f"{name}.npy"), chunks=1000).to_zarr(
                str(root / f"{name}.zarr"))


@pytest.fixture(scope="session")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("docs_inputs")
    _write_inputs(root)
    return root


# ---- running the blocks of one file in order -------------------------------- #

@dataclass
class FileRun:
    """The state of one file's blocks in this process: its directory, its Python
    namespace, how many of its blocks ran, and the first that failed."""
    root: Path
    namespace: dict = field(default_factory=lambda: {"__name__": "__main__"})
    done: int = 0
    failed: str = None


@pytest.fixture(scope="session")
def runs(inputs, tmp_path_factory):
    cache = {}

    def get(path):
        if path not in cache:
            root = tmp_path_factory.mktemp(path.stem)
            shutil.copytree(inputs, root, dirs_exist_ok=True)
            cache[path] = FileRun(root)
        return cache[path]
    return get


@contextlib.contextmanager
def _in(root):
    """Run in ``root``, with matplotlib off-screen and subprocesses (Dask workers
    included) importing this sparsecal."""
    old_cwd, old_env = os.getcwd(), dict(os.environ)
    os.chdir(root)
    os.environ["MPLBACKEND"] = "Agg"
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [IMPORT_ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    try:
        yield
    finally:
        os.chdir(old_cwd)
        os.environ.clear()
        os.environ.update(old_env)


def _run_python(block, run):
    code = compile("\n" * block.line + block.code, str(block.path), "exec")
    try:
        exec(code, run.namespace)
    finally:
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")


def _program(word):
    if word in ("sparsecal", ".venv/bin/sparsecal"):
        script = Path(sys.executable).parent / "sparsecal"
        return [str(script)] if script.is_file() else [sys.executable, "-m", "sparsecal"]
    if word in ("python", "python3", ".venv/bin/python"):
        return [sys.executable]
    pytest.fail(f"the docs test runs sparsecal and python, not {word!r}: mark the block "
                "<!-- not run: REASON --> if it must stay", pytrace=False)


def _in_repository(word):
    """Whether a command's word names a file of the repository (a pytest node id's file)."""
    return word.split("/")[0] in REPO_DIRS and "/" in word


def _argument(word, block):
    """A path into the repository or to the real data beside it, else the word."""
    if word.startswith("../shared/"):
        real = SHARED / word[len("../shared/"):]
        if not real.exists():
            pytest.skip(f"{block.name} needs the real data {real}, absent")
        return str(real)
    return str(REPO / word) if _in_repository(word) else word


def commands(code):
    """The commands of a shell block, as argument lists."""
    logical = re.sub(r"\\\n", " ", code)
    return [words for line in logical.splitlines() if (words := shlex.split(line, comments=True))]


def _run_shell(block):
    for words in commands(block.code):
        argv = _program(words[0]) + [_argument(w, block) for w in words[1:]]
        proc = subprocess.run(argv, capture_output=True, text=True,
                              timeout=SUBPROCESS_TIMEOUT)
        if proc.returncode != 0:
            pytest.fail(f"{block.name}: `{shlex.join(words)}` exited {proc.returncode}:\n"
                        f"{proc.stderr[-3000:]}", pytrace=False)


def _execute(block, run):
    with _in(run.root):
        if block.lang in PYTHON:
            _run_python(block, run)
        else:
            _run_shell(block)


def _per_file(block):
    """A block as a parameter; under pytest-xdist's ``--dist loadgroup`` the blocks of
    one file go to one worker (with any other distribution they still run in order)."""
    marks = ([pytest.mark.xdist_group(block.path.name)]
             if importlib.util.find_spec("xdist") is not None else [])
    return pytest.param(block, id=block.name, marks=marks)


@pytest.mark.parametrize("block", [_per_file(b) for b in BLOCKS if b.runs])
def test_runs(block, runs):
    if block.not_run is not None:   # not run, but the files it names exist
        missing = [w for words in commands(block.code) for w in words
                   if _in_repository(w) and not (REPO / w.split("::")[0]).exists()]
        assert not missing, f"{block.name} names files that do not exist: {missing}"
        pytest.skip(f"{block.name} not run: {block.not_run}")
    if block.path.parent.name == "docs" and block.path.name in SITE_RUN_PAGES:
        pytest.skip(f"{block.name} runs when the docs site is built "
                    "(tests/test_docs_site.py, where a failing block fails the build)")
    mine = [b for b in BLOCKS if b.path == block.path and b.runs and b.not_run is None]
    run = runs(block.path)
    for earlier in mine[run.done:mine.index(block)]:
        if run.failed is None:
            try:
                _execute(earlier, run)
            except pytest.skip.Exception:   # real data absent: the later blocks run
                pass
            except BLOCK_ERRORS:
                run.failed = earlier.name
        run.done += 1
    if run.failed is not None:
        pytest.skip(f"{block.name} needs what {run.failed} makes, and that failed")
    try:
        _execute(block, run)
    except BLOCK_ERRORS:
        run.failed = block.name
        raise
    finally:
        run.done = mine.index(block) + 1


# ---- the conventions ---------------------------------------------------------- #

COMMAND = re.compile(r"^\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:sparsecal|python3?|pip|pytest|"
                     r"bash|sh|sphinx-build|\.venv/|scripts/|benchmarks/|examples/)"
                     r"|^\s*(?:import \w|from [\w.]+ import )")


def _looks_like_input(code):
    """The lines of a block that are commands or Python imports."""
    return [line.strip() for line in code.splitlines() if COMMAND.match(line)]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_unrun_fences_hold_no_commands_and_markers_give_a_reason(path):
    blocks, stray = parse(path)
    name = path.relative_to(REPO).as_posix()
    assert not stray, f"{name}: <!-- not run --> markers on lines {stray} precede no fence"
    for b in blocks:
        if b.not_run is not None:
            assert b.not_run, f"{b.name}: <!-- not run: REASON --> needs its reason"
            assert b.runs, f"{b.name}: only python and shell blocks run; no marker needed"
        if b.lang in ("", "text"):
            commands = _looks_like_input(b.code)
            assert not commands, (f"{b.name}: {commands[0]!r} is input: fence it as ```bash "
                                  "or ```python so that it runs")


NAMED = re.compile(r"`(?:sparsecal|sc)((?:\.\w+)+)")


def _resolves(dotted):
    """Whether ``sparsecal<dotted>`` is an attribute or a module of the package."""
    obj, path = sparsecal, "sparsecal"
    for part in dotted.strip(".").split("."):
        path = f"{path}.{part}"
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = importlib.import_module(path)
            except ImportError:
                return False
    return True


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_name_the_text_gives_exists(path):
    """`sparsecal.x.y` and `sc.x` in the prose name what the package has (a renamed or
    moved function fails here, as a drifted block fails above)."""
    text = path.read_text(encoding="utf-8")
    missing = sorted({f"sparsecal{m[1]}" for m in NAMED.finditer(text) if not _resolves(m[1])})
    assert not missing, f"{path.name} names what the package does not have: {missing}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_indented_blocks_hold_no_commands_and_fences_are_the_parsers(path):
    markdown_it = pytest.importorskip(
        "markdown_it", reason="the docs extra (markdown-it-py) is not installed")
    tokens = markdown_it.MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8"))
    for t in tokens:
        if t.type == "code_block":
            commands = _looks_like_input(t.content)
            assert not commands, (f"{path.name}:{t.map[0] + 1}: {commands[0]!r} is input: "
                                  "fence it as ```bash or ```python so that it runs")
    fences = [(t.map[0] + 1, t.info.strip()) for t in tokens if t.type == "fence"]
    assert fences == [(b.line, b.info) for b in parse(path)[0]]
