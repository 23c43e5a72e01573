"""Result tables for the tools people work with: a pandas DataFrame
(``to_frame()``, pandas imported on first use: ``pip install
"sparsecal[pandas]"``) and a small HTML table for Jupyter (``_repr_html_``).

Every result table (reliability table, :class:`~sparsecal.metrics.EvaluationResult`,
:class:`~sparsecal.metrics.MarginalCalibrationError`,
:class:`~sparsecal.metrics.evaluation.Comparison`,
:class:`~sparsecal.calibration.MethodComparison`) mixes in :class:`Table` and
says what its columns are (``_columns()``); both views are made from them, so the
DataFrame and the HTML show the object's own numbers.
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
    """An HTML ``<table>`` of ``columns`` (name -> equal-length sequence).

    Parameters
    ----------
    columns : dict of str to sequence
        Column name -> values (lists or 1-D arrays of one length).
    caption : str, optional
        The table's caption.

    Returns
    -------
    str
        ``<table>`` with a ``<thead>`` row of names and one ``<tbody>`` row per
        value; text escaped (``<``, ``&``, quotes), None / NaN shown as "—",
        floats to 6 significant digits.

    Examples
    --------
    >>> from sparsecal.io.tables import html_table
    >>> print(html_table({"tag": ["<X>"], "ce": [0.0123456789]}))
    <table class="sparsecal"><thead><tr><th>tag</th><th>ce</th></tr></thead><tbody>
    <tr><td>&lt;X&gt;</td><td>0.0123457</td></tr>
    </tbody></table>
    """
    names = list(columns)
    values = [list(getattr(v, "tolist", lambda v=v: v)()) for v in columns.values()]
    head = "".join(f"<th>{html.escape(str(n))}</th>" for n in names)
    body = "".join("<tr>" + "".join(f"<td>{_text(v)}</td>" for v in row) + "</tr>\n"
                   for row in zip(*values))
    cap = "" if caption is None else f"<caption>{html.escape(caption)}</caption>"
    return (f'<table class="sparsecal">{cap}<thead><tr>{head}</tr></thead><tbody>\n'
            f"{body}</tbody></table>")


class Table:
    """Mixin of result tables: :meth:`to_frame` and Jupyter's ``_repr_html_``
    from the class's ``_columns()`` (name -> equal-length values).

    Examples
    --------
    >>> from sparsecal.metrics.evaluation import Comparison
    >>> table = Comparison([{"name": "SMCE", "before": 0.02, "after": 0.015,
    ...                      "change": -0.005, "relative_change": -0.25}])
    >>> "<td>SMCE</td>" in table._repr_html_()
    True
    """

    def _columns(self):
        raise NotImplementedError

    def to_frame(self):
        """The table as a pandas DataFrame (``pip install "sparsecal[pandas]"``).

        Returns
        -------
        pandas.DataFrame
            One column per table column, the object's own numbers (None
            where a value is missing).

        Raises
        ------
        ImportError
            If pandas is not installed; names the ``pip install``.
        """
        pd = require("pandas", "pandas", f"{type(self).__name__}.to_frame()")
        return pd.DataFrame(self._columns())

    def _repr_html_(self):
        return html_table(self._columns(), caption=type(self).__name__)
