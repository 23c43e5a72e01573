"""The documentation site (docs/site.md) builds with warnings as errors: the user
guide, the API reference of every public name, the example pages and the pages
that run (getting started, the gallery), each run.

Marked ``docs`` (``pytest -m "not docs"`` leaves it out of a quick run); the
build needs the ``docs`` extra, which the set-up installs (``scripts/test.sh``),
so CI builds the site on every run. Sphinx runs in a subprocess, so the build
neither imports into nor configures the test process; it runs once per test run,
with parallel workers too (the first builds, the others wait for it).
"""
import fcntl
import html
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import sparsecal
import sparsecal.plotting

REPO = Path(__file__).resolve().parents[1]
UD_EWT = REPO.parent / "shared" / "data" / "ud_ewt"
pytestmark = [
    pytest.mark.docs,
    # the wheel's test run (scripts/test_wheel.sh) has the tests, not the docs sources:
    # the site is built by the checkout's run
    pytest.mark.skipif(not (REPO / "docs" / "conf.py").is_file(),
                       reason="no docs/conf.py here: the site is built from a checkout")]


def _build_once(root):
    """Build the site into ``root/docs-site`` unless this test run has; its
    exit status and the end of its stderr."""
    out = root / "docs-site"
    result = out / "build.json"
    with open(root / "docs-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)   # released when the file closes
        if not result.is_file():
            run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q",
                                  "-b", "html", "-d", str(out / "doctrees"),
                                  str(REPO / "docs"), str(out / "html")],
                                 capture_output=True, text=True)
            result.write_text(json.dumps({"returncode": run.returncode,
                                          "stderr": run.stderr[-5000:]}))
    return json.loads(result.read_text())


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    if importlib.util.find_spec("sphinx") is None:
        pytest.skip('the docs extra is not installed (pip install -e ".[docs]")')
    if not UD_EWT.is_dir():
        pytest.skip(f"the example pages train on UD EWT, absent at {UD_EWT}")
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent   # shared by the workers of this test run
    build = _build_once(root)
    assert build["returncode"] == 0, build["stderr"]
    return root / "docs-site" / "html"


def _text(page, code=True):
    """The text of (part of) a built page, without its code blocks unless ``code``."""
    body = re.sub(r"<(script|style)\b.*?</\1>", "", page, flags=re.S)
    if not code:
        body = re.sub(r"<pre\b.*?</pre>", "", body, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def _images(page_path):
    page = page_path.read_text(encoding="utf-8")
    return [(page_path.parent / src).resolve() for src in re.findall(r'<img [^>]*src="([^"]+)"',
                                                                     page)
            if not src.startswith(("http:", "https:", "data:"))]


def test_every_public_name_has_an_api_page(site):
    pages = {p.stem for p in (site / "api" / "generated").glob("*.html")}
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in sparsecal.__all__:
        home = [p for p in pages if p.endswith(f".{name}")]
        assert home, f"no API page for sparsecal.{name}"
        assert f"{home[0]}.html" in api, f"sparsecal.{name} is not linked from the API index"


def test_api_pages_show_no_raw_markup(site):
    """numpydoc sets a section entry it cannot parse (prose under Attributes)
    as a bold parameter name and leaves its roles raw: no page may show a raw
    role, double backquotes or a parameter name that is not one."""
    pages = sorted((site / "api").rglob("*.html"))
    assert len(pages) > len(sparsecal.__all__)
    for path in pages:
        page = path.read_text(encoding="utf-8")
        raw = re.findall(r".{0,40}(?::[a-z]+:`|``).{0,40}", _text(page, code=False))
        assert not raw, f"{path.name} shows markup raw: {raw[:3]}"
        names = re.findall(r"<dt><strong>(.*?)</strong>", page, flags=re.S)
        bad = [n for n in names if not re.fullmatch(r"\**\w+(, \**\w+)*", n)]
        assert not bad, f"{path.name} sets text as a parameter name: {bad[:3]}"


def test_class_pages_document_and_link_their_methods(site):
    page = (site / "api" / "generated" / "sparsecal.core.TagGroups.html").read_text(
        encoding="utf-8")
    for method in ("scw", "tfg", "from_counts", "per_tag", "summary"):
        assert f'id="sparsecal.core.TagGroups.{method}"' in page, method
        assert f'href="#sparsecal.core.TagGroups.{method}"' in page, method
    # a reference to a top-level name links to the page that documents it
    smce = (site / "api" / "generated" / "sparsecal.metrics.smce.html").read_text(
        encoding="utf-8")
    assert re.search(r'<a class="reference internal" href="sparsecal\.core\.threshold\.html#'
                     r'sparsecal\.core\.threshold"[^>]*><code class="xref py py-func[^"]*">'
                     r'<span class="pre">sparsecal\.threshold\(\)', smce)


def test_user_guide_pages_are_built(site):
    for md in (REPO / "docs").glob("*.md"):
        assert (site / f"{md.stem}.html").is_file(), md.name


def test_front_page_installs_from_the_source_tree(site):
    page = (site / "index.html").read_text(encoding="utf-8")
    assert "pip install sparsecal" not in _text(page)   # not published: it fails
    assert "pip install ." in _text(page)
    guide = page[page.index('<div class="toctree-wrapper'):]
    assert re.findall(r'href="([\w-]+)\.html"', guide)[:2] == ["getting-started", "gallery"]


@pytest.mark.parametrize("example", ["synthetic", "ud_ewt_crf", "adapter_huggingface",
                                     "adapter_torchcrf", "adapter_crfsuite"])
def test_example_pages_show_their_output_and_figures(site, example):
    path = site / "examples" / f"{example}.html"
    assert "SMCE" in path.read_text(encoding="utf-8")   # what the script printed
    images = _images(path)
    assert images, f"{example}: no figure"
    for png in images:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png


def test_example_page_headings_say_what_runs(site):
    # the UD EWT page runs a slice: its heading may not promise the 321-tag tagger
    page = (site / "examples" / "ud_ewt_crf.html").read_text(encoding="utf-8")
    heading = _text(re.search(r"<h1>.*?</h1>", page, flags=re.S).group())
    assert "100 sentences" in heading and "one epoch" in heading, heading
    assert "--limit 100 --epochs 1" in _text(page)


def test_gallery_shows_every_figure(site):
    """Every display of sparsecal.plotting (and the report) has a section of the
    gallery with the code that draws it and the figure it drew."""
    path = site / "gallery.html"
    page = path.read_text(encoding="utf-8")
    sections = re.split(r"<section ", page)
    figures = [n for n in sparsecal.plotting.__all__ if n.endswith("Display")]
    assert len(figures) >= 7
    for name in figures:
        home = [s for s in sections if f"{name}.from_" in _text(s)]
        assert home, f"{name} is not drawn in the gallery"
        assert "<img " in home[0], f"the gallery shows no figure of {name}"
    report = [s for s in sections if "write_report(" in _text(s)]
    assert report and '<iframe src="_run/gallery/report/index.html"' in report[0]
    assert (site / "_run" / "gallery" / "report" / "index.html").is_file()
    images = _images(path)
    assert len(images) >= len(figures)
    for png in images:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png


def test_getting_started_shows_the_report_it_wrote(site):
    # its printed outputs are checked by the build (docs/_ext/run_pages.py)
    page = (site / "getting-started.html").read_text(encoding="utf-8")
    assert '<iframe src="_run/getting-started/report/index.html"' in page
    report = site / "_run" / "getting-started" / "report"
    assert (report / "index.html").is_file()
    for png in re.findall(r'src="(figures/[^"]+\.png)"',
                          (report / "index.html").read_text(encoding="utf-8")):
        assert (report / png).is_file(), png


def test_every_image_of_the_site_exists(site):
    for path in site.rglob("*.html"):
        if "_run" in path.relative_to(site).parts:
            continue   # the reports, checked above
        for image in _images(path):
            assert image.is_file(), f"{path.relative_to(site)}: {image}"


# ---------------------------------------------- the runner of pages that run -- #

def _run_pages():
    spec = importlib.util.spec_from_file_location("run_pages",
                                                  REPO / "docs" / "_ext" / "run_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PAGE = """# A page

```python
x = 6 * 7
```

<!-- not run: installs the package -->
```bash
exit 1
```

```text
what the skipped block would print
```

```python
print(x)
```

```text
42
```

```bash
echo "$((x + 1))" > out.txt; cat out.txt; sparsecal --help | head -n 1
```

```text
1
usage: wrong
```

```python
raise ValueError("drifted")
```

```python
print("never reached")
```
"""


def test_a_page_runs_as_written_and_its_drift_is_found(tmp_path):
    run_pages = _run_pages()
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    subprocess.run([sys.executable, str(REPO / "docs" / "_ext" / "run_pages.py"), str(page),
                    str(tmp_path / "run")], env=env, check=True)
    record = json.loads((tmp_path / "run" / run_pages.RESULTS).read_text())
    # the skipped block is not run; python blocks share a session; a failure stops
    assert [r["line"] for r in record] == [3, 16, 24, 33]
    assert record[1]["output"] == "42\n" and record[1]["new"] == []
    assert record[2]["output"] == "1\nusage: sparsecal [-h] COMMAND ...\n"
    assert record[2]["new"] == ["out.txt"] and record[2]["ok"]
    assert not record[3]["ok"] and "ValueError: drifted" in record[3]["output"]
    found = run_pages.problems(run_pages.parse_blocks(PAGE), record)
    assert [line for line, _ in found] == [24, 33]
    assert "-usage: wrong\n+usage: sparsecal [-h] COMMAND ..." in found[0][1]
    assert "(line 28)" in found[0][1] and "the block failed" in found[1][1]
