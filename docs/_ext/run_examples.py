"""Example pages that run: each script of ``examples/`` named in the
configuration value ``sparsecal_examples`` is executed when the site is built,
and its page shows the script's docstring, its source, what it printed and the
figures it saved.

``sparsecal_examples`` maps a script's name to ``{"args": [...]}``, and where
the page's run is not what the script's docstring describes (a slice of a
corpus, fewer epochs), a ``"title"`` saying what is shown and a ``"note"``
(reST) saying what was cut and where the full run's results are.

A script is run as ``python SCRIPT *ARGS --out DIR`` in a fresh process (all
of them at once, matplotlib's Agg backend) and writes its figures as PNG files
into ``DIR``. A script that fails, or saves no figure, is a build warning
(an error under ``sphinx-build -W``), so the pages never show stale results.
"""
import ast
import os
import subprocess
import sys
import time
from pathlib import Path

from sphinx.util import logging

logger = logging.getLogger(__name__)


def _title_and_text(script):
    doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or script.stem
    title, _, text = doc.partition("\n\n")
    return title.replace("\n", " ").strip(), text


def _page(name, spec, script, out, srcdir):
    title, text = _title_and_text(script)
    title = spec.get("title", title)
    rel = lambda p: "/" + os.path.relpath(p, srcdir).replace(os.sep, "/")   # noqa: E731
    lines = [title, "=" * len(title), ""]
    if "note" in spec:
        lines += [".. note::", "", f"   {spec['note']}", ""]
    lines += [text, "",
             "Run when this site was built::", "",
             f"    python examples/{script.name} {' '.join(_shown_args(name, script))}", "",
             "Output", "------", "", f".. literalinclude:: {rel(out / 'output.txt')}",
             "   :language: text", "", "Figures", "-------", ""]
    for png in sorted(out.glob("*.png")):
        lines += [f".. figure:: {rel(png)}", "   :width: 90%", "",
                  f"   ``{png.name}``", ""]
    lines += ["Source", "------", "", f".. literalinclude:: {rel(script)}",
              "   :language: python", ""]
    return "\n".join(lines)


_ARGS = {}


def _shown_args(name, script):
    return [a if not os.path.isabs(a) else os.path.relpath(a, script.parents[1])
            for a in _ARGS[name]] + ["--out", f"{name}_out"]


def run_examples(app, config):
    """Run every configured example and write its page (``config-inited``:
    before the source files are listed)."""
    srcdir = Path(app.srcdir)
    repo = srcdir.parent
    pages = srcdir / "examples"
    runs = pages / "_run"
    runs.mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join(filter(None, [str(repo), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, MPLBACKEND="Agg", OMP_NUM_THREADS="1", PYTHONPATH=path)
    procs = {}
    for name, spec in config.sparsecal_examples.items():
        args = _ARGS[name] = list(spec["args"])
        out = runs / name
        out.mkdir(exist_ok=True)
        for old in out.glob("*.png"):
            old.unlink()
        script = repo / "examples" / f"{name}.py"
        log = open(out / "output.txt", "w", encoding="utf-8")
        procs[name] = (script, out, log, time.perf_counter(), subprocess.Popen(
            [sys.executable, str(script), *args, "--out", str(out)], cwd=repo, env=env,
            stdout=log, stderr=subprocess.PIPE, text=True))
    toc = []
    for name, (script, out, log, start, proc) in procs.items():
        _, stderr = proc.communicate()
        log.close()
        if proc.returncode != 0:
            logger.warning("example %s failed (exit %s): %s", script.name, proc.returncode,
                           stderr.strip()[-2000:])
            continue
        if not any(out.glob("*.png")):
            logger.warning("example %s saved no figure in --out", script.name)
        logger.info("example %s ran in %.1f s", script.name, time.perf_counter() - start)
        text = _page(name, config.sparsecal_examples[name], script, out, srcdir)
        page = pages / f"{name}.rst"
        if not page.is_file() or page.read_text(encoding="utf-8") != text:
            page.write_text(text, encoding="utf-8")
        toc.append(name)
    index = ["Examples", "========", "",
             "Each example below was run when this site was built; its figures are "
             "the ones it drew.", "", ".. toctree::", "   :maxdepth: 1", ""]
    (pages / "index.rst").write_text("\n".join(index + [f"   {n}" for n in toc]) + "\n",
                                     encoding="utf-8")


def setup(app):
    app.add_config_value("sparsecal_examples", {}, "env")
    app.connect("config-inited", run_examples)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
