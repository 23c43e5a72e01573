"""Result tables as a pandas DataFrame (``to_frame()``; ``pip install
"sparsecal[pandas]"``) and as HTML for Jupyter (``_repr_html_``), both made
from the columns a result class declares (``_columns()``).
"""
import html
import math

from .._extras import require

__all__ = ["Table", "html_table"]


def _text(value):
    """A cell: "—" for None / NaN, floats to 6 significant digits, escaped."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float):
        return f"{value:.6g}"
    return html.escape(str(value))


def html_table(columns, caption=None):
    """An HTML ``<table>`` of ``columns`` (name -> equal-length values)."""
    names = list(columns)
    values = [list(getattr(v, "tolist", lambda v=v: v)()) for v in columns.values()]
    head = "".join(f"<th>{html.escape(str(n))}</th>" for n in names)
    body = "".join("<tr>" + "".join(f"<td>{_text(v)}</td>" for v in row) + "</tr>\n"
                   for row in zip(*values))
    cap = "" if caption is None else f"<caption>{html.escape(caption)}</caption>"
    return (f'<table class="sparsecal">{cap}<thead><tr>{head}</tr></thead><tbody>\n'
            f"{body}</tbody></table>")


class Table:
    """Mixin of result tables: :meth:`to_frame` and ``_repr_html_`` from the class's
    ``_columns()``.
    """

    def _columns(self):
        raise NotImplementedError

    def to_frame(self):
        """The table as a pandas DataFrame (``pip install "sparsecal[pandas]"``)."""
        pd = require("pandas", "pandas", f"{type(self).__name__}.to_frame()")
        return pd.DataFrame(self._columns())

    def _repr_html_(self):
        return html_table(self._columns(), caption=type(self).__name__)
