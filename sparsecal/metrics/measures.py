"""The one registry of scalar measures of binary predictions.

Every part of sparsecal that computes measures by name — :func:`evaluate`'s
``metrics=`` (pooled over all entries and per tag group) and the command line's
``sparsecal evaluate --metrics`` — looks them up here. Adding a measure of
``(scores, labels)`` is one function in :mod:`sparsecal.metrics` and one entry in
:data:`MEASURES`.

A measure's options are the binning shared by the binned ones (``n_bins``,
``bin_size``, ``binning``) where it takes them; the others get none.
"""
import importlib
from dataclasses import dataclass

__all__ = ["MEASURES", "Measure", "get_measure"]


@dataclass(frozen=True)
class Measure:
    """A scalar measure of binary predictions, by name.

    Attributes
    ----------
    name : str
        Its name in the API and on the command line, e.g. ``"ece"``.
    display_name : str
        Its name in tables, e.g. ``"ECE"``.
    function_path : str
        ``"module.function"`` in :mod:`sparsecal.metrics`, imported on first use.
    fixed : tuple of (str, object)
        Keyword arguments always passed, e.g. ``(("norm", 1),)``.
    attribute : str
        The attribute of the function's result that holds the number.
    binned : bool
        Whether the binning options are passed on.
    """

    name: str
    display_name: str
    function_path: str
    fixed: tuple = ()
    attribute: str = "value"
    binned: bool = True

    @property
    def function(self):
        """The function (its module imported now if it was not yet)."""
        module, _, name = self.function_path.rpartition(".")
        return getattr(importlib.import_module(f".{module}", __package__), name)

    def __call__(self, scores, labels, *, n_bins=None, bin_size=None,
                 binning="equal-mass"):
        """The measure of ``scores`` against ``labels``, as a float.

        Parameters
        ----------
        scores : array_like of float, shape (n,)
        labels : array_like of {0, 1} or bool, shape (n,)
        n_bins, bin_size, binning
            Passed to binned measures (see :func:`calibration_error`); the
            others ignore them.

        Returns
        -------
        float
        """
        kwargs = dict(self.fixed)
        if self.binned:
            kwargs.update(n_bins=n_bins, bin_size=bin_size, binning=binning)
        return float(getattr(self.function(scores, labels, **kwargs), self.attribute))


#: measure name -> Measure
MEASURES = {m.name: m for m in (
    Measure("ce", "CE", "binary.calibration_error", (("norm", 2),)),
    Measure("ece", "ECE", "binary.calibration_error", (("norm", 1),)),
    Measure("max-ce", "Max CE", "binary.calibration_error", (("norm", "max"),)),
    Measure("brier", "Brier", "brier.brier_decomposition", attribute="brier"),
)}


def get_measure(name):
    """The :class:`Measure` called ``name``.

    Parameters
    ----------
    name : str

    Returns
    -------
    Measure

    Raises
    ------
    ValueError
        If no measure has that name (the message lists them).

    Examples
    --------
    >>> from sparsecal.metrics.measures import get_measure
    >>> ece = get_measure("ece")
    >>> ece.display_name, round(ece([0.2, 0.2, 0.8, 0.8], [0, 1, 1, 1], n_bins=2), 4)
    ('ECE', 0.25)
    """
    try:
        return MEASURES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown measure {name!r}: choose from "
                         f"{', '.join(sorted(MEASURES))}") from None
