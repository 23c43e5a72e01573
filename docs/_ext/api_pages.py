"""The API reference, generated from the public names (``__all__``) of sparsecal
and its subpackages, so that a name added to an ``_EXPORTS`` table is documented
without editing the site.

Each object is documented once, on the page of the one subpackage that exports
it, a class with its methods; the page of :mod:`sparsecal` lists the top-level
names, by subpackage, with links to those pages (``sparsecal._EXPORTS`` names
each one's subpackage), and a reference to a top-level name
(``:func:`sparsecal.threshold```, ``:meth:`TagGroups.from_counts```) links to
that page.
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


def _subpackage_page(sub):
    module = importlib.import_module(f"sparsecal.{sub}")
    title = f"``sparsecal.{sub}``"
    lines = [title, "=" * len(title), "", f".. automodule:: sparsecal.{sub}", "",
             f".. currentmodule:: sparsecal.{sub}", "",
             ".. autosummary::", "   :toctree: generated", ""]
    lines += [f"   {name}" for name in module.__all__]
    return "\n".join(lines) + "\n"


def _top_page():
    import sparsecal
    lines = ["``sparsecal``", "=============", "",
             "Every name below can be used as ``sparsecal.<name>`` (loaded on first use); "
             "each links to its documentation in the subpackage that defines it. The rest "
             "of the API is imported from its subpackage.", "",
             ".. list-table::", "   :header-rows: 1", "",
             "   * - name", "     - subpackage", "     - summary"]
    for sub in SUBPACKAGES:
        for name in (n for n in sparsecal.__all__ if sparsecal._EXPORTS[n] == sub):
            lines += [f"   * - :obj:`{name} <sparsecal.{sub}.{name}>`",
                      f"     - :mod:`sparsecal.{sub}`",
                      f"     - {_first_line(getattr(sparsecal, name))}"]
    lines += ["", ".. toctree::", "   :maxdepth: 1", ""]
    lines += [f"   {sub}" for sub in SUBPACKAGES]
    return "\n".join(lines) + "\n"


def write_api_pages(app, config):
    """Write ``api/index.rst`` and one page per subpackage (``config-inited``:
    before the source files are listed and autosummary writes its stubs)."""
    out = Path(app.srcdir) / "api"
    out.mkdir(exist_ok=True)
    pages = {"index.rst": _top_page()}
    pages.update({f"{sub}.rst": _subpackage_page(sub) for sub in SUBPACKAGES})
    for fname, text in pages.items():
        path = out / fname
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    # stubs of names no longer public, left by an earlier build, would be orphan pages
    public = {f"sparsecal.{sub}.{name}.rst" for sub in SUBPACKAGES
              for name in importlib.import_module(f"sparsecal.{sub}").__all__}
    for stub in (out / "generated").glob("sparsecal.*.rst"):
        if stub.name not in public:
            stub.unlink()


def resolve_top_level(app, env, node, contnode):
    """A Python reference to a top-level name, as ``sparsecal.<name>[.<member>]``
    or ``<name>[.<member>]``, resolved where the name is documented
    (``missing-reference``)."""
    import sparsecal
    if node.get("refdomain") != "py":
        return None
    parts = node["reftarget"].split(".")
    parts = parts[1:] if parts[0] == "sparsecal" else parts
    if not parts or parts[0] not in sparsecal._EXPORTS:
        return None
    target = ".".join(["sparsecal", sparsecal._EXPORTS[parts[0]], *parts])
    return env.get_domain("py").resolve_xref(env, node["refdoc"], app.builder,
                                             node["reftype"], target, node, contnode)


def setup(app):
    app.connect("config-inited", write_api_pages)
    app.connect("missing-reference", resolve_top_level)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
