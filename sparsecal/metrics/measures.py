"""The one registry of scalar measures of binary predictions.

Every part of sparsecal that computes measures by name — :func:`evaluate`'s
``metrics=`` (pooled over all entries and per tag group) and the command line's
``sparsecal evaluate --metrics`` — looks them up here. Adding a measure of
``(scores, labels)`` is one function in :mod:`sparsecal.metrics` and one entry in
:data:`MEASURES`.

A measure's options are the binning shared by the binned ones (``n_bins``,
``bin_size``, ``binning``) and the application prior (``prior``) of the
application-based ones (DCF), each passed only to the measures whose
:attr:`Measure.options` name it; the others ignore them.
"""
import importlib
from dataclasses import dataclass

__all__ = ["MEASURES", "OPTIONS", "Measure", "get_measure"]


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
    attribute : str or None
        The attribute of the function's result that holds the number (None:
        the result is the number).
    options : tuple of str
        The shared options passed on (:data:`OPTIONS`): the binning of the
        binned measures, ``("n_bins",)`` for one that takes a bin count only,
        ``("prior",)`` for one that needs an application prior, ``()`` for none.
    """

    name: str
    display_name: str
    function_path: str
    fixed: tuple = ()
    attribute: str = "value"
    options: tuple = ("n_bins", "bin_size", "binning")

    def check_prior(self, prior):
        """Refuse a missing ``prior`` if this measure needs one.

        Raises
        ------
        ValueError
            ``prior`` is None and ``"prior"`` is one of :attr:`options`.
        """
        if "prior" in self.options and prior is None:
            raise ValueError(f"measure {self.name!r} needs prior (the application prior "
                             "of the positive class, in (0, 1))")

    @property
    def function(self):
        """The function (its module imported now if it was not yet)."""
        module, _, name = self.function_path.rpartition(".")
        return getattr(importlib.import_module(f".{module}", __package__), name)

    def __call__(self, scores, labels, *, n_bins=None, bin_size=None,
                 binning="equal-mass", prior=None):
        """The measure of ``scores`` against ``labels``, as a float.

        Parameters
        ----------
        scores : array_like of float, shape (n,)
        labels : array_like of {0, 1} or bool, shape (n,)
        n_bins, bin_size, binning
            Passed to binned measures (see :func:`calibration_error`); the
            others ignore them (``calibration-test-p`` takes ``n_bins`` only).
        prior : float, optional
            The application prior, passed to the measures that need one
            (DCF, minDCF); the others ignore it.

        Returns
        -------
        float

        Raises
        ------
        ValueError
            ``prior`` missing for a measure that needs one; whatever the
            measure's function refuses.
        """
        kwargs = self.arguments(n_bins=n_bins, bin_size=bin_size, binning=binning,
                                prior=prior)
        return self.value_of(self.function(scores, labels, **kwargs))

    def arguments(self, *, n_bins=None, bin_size=None, binning="equal-mass", prior=None):
        """The keyword arguments :attr:`function` gets for these options (those
        it takes, then :attr:`fixed`); measures of one function with equal
        arguments share one call (:func:`~sparsecal.evaluate` calls it once)."""
        given = {"n_bins": n_bins, "bin_size": bin_size, "binning": binning,
                 "prior": prior}
        self.check_prior(prior)
        kwargs = {k: given[k] for k in self.options if given[k] is not None}
        kwargs.update(self.fixed)
        return kwargs

    def value_of(self, result):
        """This measure's number in a result of :attr:`function`."""
        return float(result if self.attribute is None else getattr(result, self.attribute))


#: the options a measure may take (:attr:`Measure.options`)
OPTIONS = ("n_bins", "bin_size", "binning", "prior")


#: measure name -> Measure
MEASURES = {m.name: m for m in (
    Measure("ce", "CE", "binary.calibration_error", (("norm", 2),)),
    Measure("ece", "ECE", "binary.calibration_error", (("norm", 1),)),
    Measure("max-ce", "Max CE", "binary.calibration_error", (("norm", "max"),)),
    Measure("brier", "Brier", "brier.brier_decomposition", attribute="brier"),
    # issue 13: Kumar et al. 2019; Blasiok & Nakkiran 2023; Dimitriadis et al. 2021
    # (CORP: score = MCB - DSC + UNC); lecture notes 004 (Cllr, DCF); Brocker & Smith 2007
    Measure("debiased-ce", "Debiased CE", "binary.calibration_error", (("debias", True),)),
    Measure("smooth-ece", "Smooth ECE", "smooth.smooth_ece", options=()),
    Measure("brier-mcb", "Brier MCB", "corp.brier_corp", attribute="miscalibration",
            options=()),
    Measure("brier-dsc", "Brier DSC", "corp.brier_corp", attribute="discrimination",
            options=()),
    Measure("brier-unc", "Brier UNC", "corp.brier_corp", attribute="uncertainty",
            options=()),
    Measure("log-loss", "Log loss", "corp.log_loss_corp", attribute="score", options=()),
    Measure("log-loss-mcb", "Log loss MCB", "corp.log_loss_corp",
            attribute="miscalibration", options=()),
    Measure("log-loss-dsc", "Log loss DSC", "corp.log_loss_corp",
            attribute="discrimination", options=()),
    Measure("log-loss-unc", "Log loss UNC", "corp.log_loss_corp", attribute="uncertainty",
            options=()),
    Measure("cllr", "Cllr", "application.cllr", attribute=None, options=()),
    Measure("min-cllr", "minCllr", "application.min_cllr", attribute=None, options=()),
    Measure("dcf", "DCF", "application.dcf", options=("prior",)),
    Measure("min-dcf", "minDCF", "application.min_dcf", options=("prior",)),
    Measure("calibration-test-p", "Calibration test p", "consistency.calibration_test",
            attribute="p_value", options=("n_bins",)),
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
