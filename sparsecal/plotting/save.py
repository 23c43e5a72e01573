"""Writing a figure in several formats, atomically."""
import os

from ..io.atomic import atomic_path

#: Formats whose files record when they were written, and the metadata key:
#: left out, so that a figure drawn twice is the same file twice.
_DATED = {"svg": "Date", "svgz": "Date", "pdf": "CreationDate", "eps": "CreationDate",
          "ps": "CreationDate"}

__all__ = ["save_figure"]

_FORMATS = ("png", "svg", "pdf", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp")


def save_figure(fig, path, formats=None, *, dpi=200, **savefig_kw):
    """Write ``fig`` in one or more formats; returns the paths.

    Each file is written beside its target and renamed over it, so a failure
    never leaves a partial figure; SVG and PDF carry no date, so the same
    figure is the same bytes.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : str or path-like
        ``out/fig`` writes ``out/fig.png`` and ``out/fig.svg``; ``out/fig.pdf``
        that file only (with ``formats``, the extension is replaced by each).
    formats : sequence of str, optional
        Default ``("png", "svg")``, or the extension of ``path``.
    dpi : int, default 200
        For raster formats.
    **savefig_kw
        Passed on to :meth:`matplotlib.figure.Figure.savefig`.

    Returns
    -------
    list of str
        The paths written, in the order of ``formats``.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from sparsecal import calibration_error
    >>> from sparsecal.plotting import reliability_diagram, save_figure
    >>> s = np.linspace(0, 1, 200)
    >>> fig = reliability_diagram(calibration_error(s, (s > 0.5).astype(np.uint8)))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     paths = save_figure(fig, os.path.join(d, "curve"))
    ...     sorted(os.listdir(d))
    ['curve.png', 'curve.svg']
    """
    import matplotlib
    from matplotlib.figure import Figure
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    path = os.fspath(path)
    if not path or os.path.basename(path) in ("", ".", ".."):
        raise ValueError(f"path must name a file, got {path!r}")
    stem, ext = os.path.splitext(path)
    ext = ext[1:].lower()
    if ext in _FORMATS:
        if formats is None:
            formats = (ext,)
    else:
        stem = path
    if formats is None:
        formats = ("png", "svg")
    if isinstance(formats, str):
        formats = (formats,)
    formats = [str(f).lower().lstrip(".") for f in formats]
    if not formats:
        raise ValueError("formats must name at least one format")
    supported = fig.canvas.get_supported_filetypes()
    for f in formats:
        if f not in supported:
            raise ValueError(f"unsupported format {f!r}; matplotlib writes "
                             f"{sorted(supported)}")
    directory = os.path.dirname(os.path.abspath(stem))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"directory {directory!r} does not exist")
    written = []
    engine = fig.get_layout_engine()
    try:
        for f in dict.fromkeys(formats):
            target = f"{stem}.{f}"
            kw = dict(savefig_kw)
            if f in _DATED and "metadata" not in kw:   # the same figure, the same bytes
                kw["metadata"] = {_DATED[f]: None}
            with atomic_path(target, suffix=f".{f}") as tmp, \
                    matplotlib.rc_context({"svg.hashsalt": "sparsecal"}):   # fixed SVG ids
                fig.savefig(tmp, format=f, dpi=dpi, **kw)
            written.append(target)
            if engine is not None and len(written) == 1:
                # the layout of the first format serves the others (it is in
                # figure units): with an engine, even "none", each save would
                # draw the figure once more to run it
                fig.set_layout_engine(None)
    finally:
        if engine is not None:
            fig.set_layout_engine(engine)
    return written
