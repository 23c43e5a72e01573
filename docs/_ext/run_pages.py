"""Pages that run: each Markdown page named in the configuration value
``sparsecal_run_pages`` (the getting-started page, the gallery) is followed as
a reader would, when the site is built, in a fresh folder ``_run/<page>/``:

- its ```` ```python ```` blocks run in order in one interpreter (one session
  for the page), its ```` ```bash ```` blocks in ``bash -e``, with
  ``sparsecal`` the command of this checkout; a block preceded by the comment
  ``<!-- not run: REASON -->`` (installing the package) is skipped;
- a ```` ```text ```` block after a block that runs is what that block prints
  (stdout and stderr): a difference, or a block that fails, is a build warning
  (an error under ``sphinx-build -W``), so the page never shows stale output;
- after a block (and the text block of its output), the site shows the PNG
  figures it saved in the folder, and a report folder it wrote (one holding
  ``index.html``), linked and inline.

The pages run in one process each, started with the example scripts
(``run_examples``) and awaited before the pages are read. The same file is the
process that runs a page: ``python run_pages.py PAGE.md FOLDER``.
"""
import contextlib
import difflib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import traceback
from pathlib import Path

RUNS = ("python", "bash")     # the fenced blocks that run
OUTPUT = "text"               # the fenced block of what the block before printed
SKIP = "<!-- not run"         # a comment line before a block that is not run
RESULTS = ".page-run.json"    # the runner's record, in the page's folder


def parse_blocks(text):
    """The fenced blocks of a Markdown page, in order: dicts of ``line`` (of
    the opening fence, 1-based), ``lang``, ``code`` and ``skip``."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        opening = re.match(r"(`{3,}|~{3,})\s*([^\s`]*)", lines[i])
        if not opening:
            i += 1
            continue
        fence = opening.group(1)
        closing = re.compile(re.escape(fence[0]) + "{%d,}\\s*$" % len(fence))
        j = i + 1
        while j < len(lines) and not closing.match(lines[j]):
            j += 1
        before = next((line.strip() for line in reversed(lines[:i]) if line.strip()), "")
        blocks.append({"line": i + 1, "lang": opening.group(2), "skip": before.startswith(SKIP),
                       "code": "\n".join(lines[i + 1:j])})
        i = j + 1
    return blocks


def expected_outputs(blocks):
    """``{index of a block that runs: the text block after it}``."""
    expected, last = {}, None
    for k, block in enumerate(blocks):
        if block["lang"] != OUTPUT:
            last = k if block["lang"] in RUNS and not block["skip"] else None
        elif last is not None and last not in expected:
            expected[last] = block
    return expected


def _normal(text):
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def _listing(folder):
    return {p.name: p.stat().st_mtime_ns for p in folder.iterdir()
            if not p.name.startswith(".")}


def _run_python(code, where, namespace):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            exec(compile(code, where, "exec"), namespace)
    except BaseException:   # noqa: B902 (SystemExit too: the page's failure is reported)
        out.write(traceback.format_exc())
        return out.getvalue(), False
    return out.getvalue(), True


def run_page(page, folder):
    """Run the blocks of ``page`` in ``folder`` (created empty); write the
    record: per block that ran, its line, output, success and new files."""
    folder.mkdir(parents=True)
    os.chdir(folder)
    shims = folder / ".bin"
    shims.mkdir()
    command = shims / "sparsecal"
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m sparsecal "$@"\n')
    command.chmod(0o755)
    env = dict(os.environ, PATH=f"{shims}{os.pathsep}{os.environ.get('PATH', '')}")
    namespace = {"__name__": "__main__"}
    record = []
    for k, block in enumerate(parse_blocks(page.read_text(encoding="utf-8"))):
        if block["lang"] not in RUNS or block["skip"]:
            continue
        before = _listing(folder)
        if block["lang"] == "python":
            output, ok = _run_python(block["code"], f"{page.name}, line {block['line']}",
                                     namespace)
        else:
            run = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block["code"]],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True)
            output, ok = run.stdout, run.returncode == 0
        after = _listing(folder)
        record.append({"index": k, "line": block["line"], "output": output, "ok": ok,
                       "new": sorted(n for n, t in after.items() if before.get(n) != t)})
        if not ok:
            break
    (folder / RESULTS).write_text(json.dumps(record), encoding="utf-8")


# --------------------------------------------------------- the extension -- #

_PROCESSES = {}
_RECORDS = {}


def start_pages(app, config):
    """Start one process per page (``config-inited``, before the examples
    are awaited)."""
    srcdir = Path(app.srcdir)
    path = os.pathsep.join(filter(None, [str(srcdir.parent), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, MPLBACKEND="Agg", OMP_NUM_THREADS="1", PYTHONPATH=path)
    for name in config.sparsecal_run_pages:
        folder = srcdir / "_run" / name
        shutil.rmtree(folder, ignore_errors=True)
        _PROCESSES[name] = subprocess.Popen(
            [sys.executable, __file__, str(srcdir / f"{name}.md"), str(folder)], env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def problems(blocks, record):
    """``(line, message)`` for each block of the page's ``record`` that failed
    or printed other than the text block after it."""
    expected = expected_outputs(blocks)
    found = []
    for ran in record:
        if not ran["ok"]:
            found.append((ran["line"], "the block failed:\n" + ran["output"][-3000:]))
        elif ran["index"] in expected:
            text = expected[ran["index"]]
            shown, printed = _normal(text["code"]), _normal(ran["output"])
            if shown != printed:
                diff = difflib.unified_diff(shown.splitlines(), printed.splitlines(),
                                            "shown on the page", "printed", lineterm="")
                found.append((ran["line"], f"the block prints other than its text block "
                                           f"(line {text['line']}):\n" + "\n".join(diff)))
    return found


def check_pages(app):
    """Await the pages and warn of every block that failed or printed other
    than its text block (``builder-inited``)."""
    from sphinx.util import logging
    logger = logging.getLogger(__name__)
    srcdir = Path(app.srcdir)
    for name, process in _PROCESSES.items():
        crash, _ = process.communicate()
        record_file = srcdir / "_run" / name / RESULTS
        if process.returncode != 0 or not record_file.is_file():
            logger.warning("%s.md could not be run: %s", name, crash[-3000:],
                           location=name)
            continue
        _RECORDS[name] = json.loads(record_file.read_text(encoding="utf-8"))
        blocks = parse_blocks((srcdir / f"{name}.md").read_text(encoding="utf-8"))
        for line, message in problems(blocks, _RECORDS[name]):
            logger.warning(message, location=(name, line))
    _PROCESSES.clear()


def _outputs(name, new, srcdir):
    """Nodes showing the files a block wrote: its figures and reports."""
    from docutils import nodes
    shown = []
    for item in new:
        path = srcdir / "_run" / name / item
        if path.suffix == ".png":
            shown.append(nodes.image(uri=f"/_run/{name}/{item}", alt=item,
                                     classes=["run-figure"]))
        elif (path / "index.html").is_file():
            url = f"_run/{name}/{item}/index.html"
            shown.append(nodes.raw("", (
                f'<p>The report it wrote, <a href="{url}">{item}/index.html</a>:</p>\n'
                f'<iframe src="{url}" class="run-report" '
                f'title="{item}/index.html" loading="lazy" style="width: 100%; '
                f'height: 800px; border: 1px solid #ccc;"></iframe>'), format="html"))
    return shown


def show_outputs(app, doctree):
    """After each block that wrote figures or a report, show them
    (``doctree-read``, before the images are collected)."""
    from docutils import nodes
    name = app.env.docname
    if name not in _RECORDS:
        return
    blocks = parse_blocks((Path(app.srcdir) / f"{name}.md").read_text(encoding="utf-8"))
    pending = [(blocks[r["index"]]["code"].strip(), r["new"]) for r in _RECORDS[name]
               if r["new"]]
    for node in list(doctree.findall(nodes.literal_block)):
        if pending and node.astext().strip() == pending[0][0]:
            _, new = pending.pop(0)
            parent = node.parent
            at = parent.index(node) + 1
            if (at < len(parent) and isinstance(parent[at], nodes.literal_block)
                    and parent[at].get("language") == OUTPUT):
                at += 1   # after what the block printed
            for offset, shown in enumerate(_outputs(name, new, Path(app.srcdir))):
                parent.insert(at + offset, shown)


def copy_reports(app, exception):
    """Copy the reports the pages wrote into the site (``build-finished``)."""
    if exception is not None or app.builder.format != "html":
        return
    for name, record in _RECORDS.items():
        for item in (n for ran in record for n in ran["new"]):
            report = Path(app.srcdir) / "_run" / name / item
            if (report / "index.html").is_file():
                shutil.copytree(report, Path(app.outdir) / "_run" / name / item,
                                dirs_exist_ok=True)


def always_read(app, env, added, changed, removed):
    """The pages are read on every build: their outputs are new each time."""
    return [name for name in _RECORDS if name in env.found_docs]


def setup(app):
    app.add_config_value("sparsecal_run_pages", [], "env")
    app.connect("config-inited", start_pages)
    app.connect("builder-inited", check_pages)
    app.connect("env-get-outdated", always_read)
    app.connect("doctree-read", show_outputs, priority=400)
    app.connect("build-finished", copy_reports)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    run_page(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve())
