"""The documentation site (docs/site.md) builds with warnings as errors: the user
guide, the API reference of every public name, and the example pages, each run.

Marked ``docs`` (``pytest -m "not docs"`` leaves it out of a quick run); it needs
the ``docs`` extra, which the set-up installs (``scripts/test.sh``), so CI builds
the site on every run. Sphinx runs in a subprocess, so the build neither imports
into nor configures the test process.
"""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import sparsecal

REPO = Path(__file__).resolve().parents[1]
UD_EWT = REPO.parent / "shared" / "data" / "ud_ewt"
pytestmark = [
    pytest.mark.docs,
    pytest.mark.skipif(importlib.util.find_spec("sphinx") is None,
                       reason='the docs extra is not installed (pip install -e ".[docs]")'),
    # the wheel's test run (scripts/test_wheel.sh) has the tests, not the docs sources:
    # the site is built by the checkout's run
    pytest.mark.skipif(not (REPO / "docs" / "conf.py").is_file(),
                       reason="no docs/conf.py here: the site is built from a checkout"),
    pytest.mark.skipif(not UD_EWT.is_dir(),
                       reason=f"the example pages train on UD EWT, absent at {UD_EWT}")]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q",
                          "-b", "html", "-d", str(out / "doctrees"), str(REPO / "docs"),
                          str(out / "html")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-5000:]
    return out / "html"


def test_every_public_name_has_an_api_page(site):
    pages = {p.stem for p in (site / "api" / "generated").glob("*.html")}
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in sparsecal.__all__:
        home = [p for p in pages if p.endswith(f".{name}")]
        assert home, f"no API page for sparsecal.{name}"
        assert f"{home[0]}.html" in api, f"sparsecal.{name} is not linked from the API index"


def test_user_guide_pages_are_built(site):
    for md in (REPO / "docs").glob("*.md"):
        assert (site / f"{md.stem}.html").is_file(), md.name


@pytest.mark.parametrize("example", ["synthetic", "ud_ewt_crf", "adapter_huggingface",
                                     "adapter_torchcrf", "adapter_crfsuite"])
def test_example_pages_show_their_output_and_figures(site, example):
    page = (site / "examples" / f"{example}.html").read_text(encoding="utf-8")
    assert "SMCE" in page                      # what the script printed
    images = [src for src in page.split('src="')[1:] if ".png" in src.split('"')[0]]
    assert images, f"{example}: no figure"
    for src in images:
        png = (site / "examples" / src.split('"')[0]).resolve()
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png
