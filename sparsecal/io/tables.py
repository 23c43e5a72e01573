"""Result tables as a pandas DataFrame (``to_frame()``; ``pip install
"sparsecal[pandas]"``) and as HTML for Jupyter (``_repr_html_``), both made
from the columns a result class declares (``_columns()``); and the one-line
``repr`` of a result (:func:`summary`): its key numbers, never its table.
"""
import html
import math

from .._extras import require

__all__ = ["Table", "html_table", "summary", "number", "interval", "value_range", "plural"]


def _text(value):
    """A cell: "—" for None / NaN, floats to 6 significant digits, escaped."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float):
        return f"{value:.6g}"
    return html.escape(str(value))


def summary(obj, *parts):
    """``Name(part, part, ...)``: the one-line repr of a result ``obj`` from its key
    numbers (falsy ``parts``, such as None, "" or False, are left out).
    """
    return f"{type(obj).__name__}({', '.join(p for p in parts if p)})"


def number(x):
    """``x`` to 4 significant digits; "—" for None."""
    return "—" if x is None else f"{x:.4g}"


def interval(low, high, level):
    """``"95% CI [low, high]"``; None without an interval."""
    return None if low is None else f"{100 * level:g}% CI [{number(low)}, {number(high)}]"


def plural(n, word):
    """``"1 tag"``, ``"3 tags"``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def value_range(values):
    """``"[min, max]"`` of the numbers among ``values`` (None and NaN left out)."""
    values = [v for v in values if v is not None and v == v]
    return f"[{number(min(values))}, {number(max(values))}]" if values else "[—]"


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
