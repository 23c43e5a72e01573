"""The API reference, generated from the public names (``__all__``) of sparsecal
and its subpackages, so that a name added to an ``__all__`` is documented
without editing the site.

Each object is documented once, under the first subpackage in
:data:`SUBPACKAGES` that exports it (its home); the page of :mod:`sparsecal`
lists the top-level names with links to those pages.
"""
import importlib
import inspect
from pathlib import Path

#: subpackages with an API page, in the order of the layers (docs/architecture.md)
SUBPACKAGES = ["core", "metrics", "calibration", "structured", "adapters", "io",
               "crf", "datasets", "plotting", "distributed", "cli"]


def _first_line(obj):
    doc = inspect.getdoc(obj) or ""
    return doc.split("\n\n")[0].replace("\n", " ").strip()


def _homes():
    """``{id(object): qualified name}`` of each public object's home page."""
    homes = {}
    for sub in SUBPACKAGES:
        module = importlib.import_module(f"sparsecal.{sub}")
        for name in module.__all__:
            homes.setdefault(id(getattr(module, name)), f"sparsecal.{sub}.{name}")
    return homes


def _subpackage_page(sub, homes):
    module = importlib.import_module(f"sparsecal.{sub}")
    title = f"``sparsecal.{sub}``"
    lines = [title, "=" * len(title), "", f".. automodule:: sparsecal.{sub}", "",
             f".. currentmodule:: sparsecal.{sub}", ""]
    own = [n for n in module.__all__ if homes[id(getattr(module, n))] == f"sparsecal.{sub}.{n}"]
    if own:
        lines += [".. autosummary::", "   :toctree: generated", ""]
        lines += [f"   {name}" for name in own]
        lines.append("")
    others = [n for n in module.__all__ if n not in own]
    if others:
        lines += ["Also exported here (documented in their home subpackage):", ""]
        lines += [f"- :obj:`{n} <{homes[id(getattr(module, n))]}>`" for n in others]
        lines.append("")
    return "\n".join(lines)


def _top_page(homes):
    import sparsecal
    lines = ["``sparsecal``", "=============", "",
             "Every name below can be used as ``sparsecal.<name>`` (loaded on first use); "
             "each links to its documentation in the subpackage that defines it.", "",
             ".. list-table::", "   :header-rows: 1", "", "   * - name", "     - summary"]
    for name in sparsecal.__all__:
        obj = getattr(sparsecal, name)
        lines += [f"   * - :obj:`{name} <{homes[id(obj)]}>`", f"     - {_first_line(obj)}"]
    lines += ["", ".. toctree::", "   :maxdepth: 1", ""]
    lines += [f"   {sub}" for sub in SUBPACKAGES]
    return "\n".join(lines) + "\n"


def write_api_pages(app, config):
    """Write ``api/index.rst`` and one page per subpackage (``config-inited``:
    before the source files are listed and autosummary writes its stubs)."""
    out = Path(app.srcdir) / "api"
    out.mkdir(exist_ok=True)
    homes = _homes()
    pages = {"index.rst": _top_page(homes)}
    pages.update({f"{sub}.rst": _subpackage_page(sub, homes) for sub in SUBPACKAGES})
    for fname, text in pages.items():
        path = out / fname
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def setup(app):
    app.connect("config-inited", write_api_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
