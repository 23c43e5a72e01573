"""Sphinx configuration of the sparsecal documentation site.

Build it with ``sphinx-build -W --keep-going -b html docs docs/_build/html`` after
``pip install -e ".[docs]"`` (docs/site.md). The user guide is the Markdown pages
beside this file (MyST); the API reference (``api/``) and the example pages
(``examples/``) are generated at build time by the extensions in ``_ext/``, which
also run the getting-started page and the gallery (in ``_run/``).
"""
import os
import sys

sys.path.insert(0, os.path.abspath("_ext"))
sys.path.insert(0, os.path.abspath(".."))   # document this checkout's sparsecal

import sparsecal  # noqa: E402

project = "sparsecal"
author = "sparsecal developers"
copyright = "sparsecal developers, BSD-3-Clause"
release = sparsecal.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_parser",
    "api_pages",
    "run_pages",       # before run_examples: the pages run while the examples do
    "run_examples",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "_run", "Thumbs.db", ".DS_Store"]

# MyST: the user guide is the repository's docs/*.md as they are.
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

# API reference: one page per public name, NumPy docstrings through numpydoc.
autosummary_generate = True
# A class's page documents its methods, inherited ones too (the theme lists them at
# the side): _ext/templates/autosummary/class.rst.
templates_path = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext", "templates")]
numpydoc_show_class_members = False
numpydoc_xref_param_type = False

intersphinx_mapping = {}

html_theme = "pydata_sphinx_theme"
html_title = f"sparsecal {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path = []

# Example pages (docs/_ext/run_examples.py): script name in examples/ -> its arguments,
# and where the page runs less than the script's docstring describes, a title and a note
# saying so (the UD EWT example on a slice: 100 sentences per split, one epoch).
_UD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data",
                   "ud_ewt")
sparsecal_examples = {
    "synthetic": {"args": ["--tokens", "10000"]},
    "ud_ewt_crf": {
        "args": ["--data", os.path.abspath(_UD), "--limit", "100", "--epochs", "1"],
        "title": "A CRF tagger on UD English-EWT, run on a slice (100 sentences, one epoch)",
        "note": ("So that the site builds in minutes, this page runs the example on the "
                 "first 100 sentences of each split for one epoch: the tagger sees a fraction "
                 "of the 321 tags and is far from trained (its accuracy is printed below), so "
                 "the numbers show the pipeline on real data, not a tagger worth calibrating. "
                 "The full run (all 12,544 training sentences, 8 epochs of 80-170 s each on "
                 "two cores) and its results: :doc:`/ud_ewt`."),
    },
    "adapter_huggingface": {"args": []},
    "adapter_torchcrf": {"args": []},
    "adapter_crfsuite": {"args": []},
}

# Pages that run (docs/_ext/run_pages.py): their blocks run when the site is built, the
# output they show is checked, and the figures and reports they write are shown.
sparsecal_run_pages = ["getting-started", "gallery"]
