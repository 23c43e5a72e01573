"""The one registry of recalibration methods.

Every part of sparsecal that names a method — :func:`compare_methods` (Kranzlein,
Liu & Schneider 2021, Table 1), the report, the ``sparsecal fit|compare|report``
commands (``--method`` / ``--methods``) and the loading of saved calibrators — looks
it up here. Adding a binary calibrator is one class (a
:class:`~sparsecal.calibration.base.BaseCalibrator`) and one entry in
:data:`METHODS`. What a method can do beyond the single-machine (weighted) fit
of every calibrator is declared on its entry, once: its fit on distributed
entries (:attr:`Method.distributed_fit`, one of :data:`DISTRIBUTED_FITS`).

:class:`~sparsecal.calibration.temperature.TemperatureScaling` is not a method here:
it rescales logits before the softmax, so it does not apply to thresholded entries.
"""
import importlib
from dataclasses import dataclass

#: the ways a method may fit on distributed entries (:attr:`Method.distributed_fit`),
#: each implemented by :mod:`sparsecal.distributed.calibrators`, -> None if it
#: takes ``sample_weight`` there, else why not
DISTRIBUTED_FITS = {
    # pooled PAV of each group's distinct-score table (the same knots bit for bit)
    "pooled-pav": None,
    # the distributed equal-mass cuts, each bin's rate from the table (bit for bit)
    "equal-mass-bins": None,
    # the base's own fit on the table as weighted (score, label) rows: any method
    # whose fit depends on the data only through the weighted pairs
    "weighted-rows": None,
    # tables per half of the positional split of each group's entries
    "split-halves": ("its weighted fit depends on which entries fall in each half of its "
                     "positional split, not on each group's weighted distinct-score table"),
}

__all__ = ["DISTRIBUTED_FITS", "METHODS", "Method", "calibrator_class", "get_method",
           "make_calibrator"]
__all__ += ["check_prior_methods"]


@dataclass(frozen=True)
class Method:
    """A recalibration method.

    Attributes
    ----------
    name : str
        Its name in the API and on the command line, e.g. ``"isotonic"``.
    display_name : str
        Its name in tables and figures, e.g. ``"Isotonic Regression"``.
    class_path : str
        Where the calibrator class is, ``"module.Class"`` in this package; it
        is imported on first use of :attr:`cls` (the command line lists the
        methods without importing them).
    uses_bins, uses_seed : bool
        Whether the shared options ``n_bins`` / ``seed`` are passed to ``cls``.
    uses_prior : bool
        Whether the shared option ``prior`` (an application prior) is passed
        to ``cls`` as ``application_prior``.
    distributed_fit : str or None
        How a :class:`~sparsecal.GroupedCalibrator` of it fits on distributed
        entries: a key of :data:`DISTRIBUTED_FITS` (which also says whether
        that fit takes ``sample_weight``); None: it has no distributed fit.
    """

    name: str
    display_name: str
    class_path: str
    uses_bins: bool = False
    uses_seed: bool = False
    uses_prior: bool = False
    distributed_fit: str = None

    def __post_init__(self):
        if self.distributed_fit is not None and self.distributed_fit not in DISTRIBUTED_FITS:
            raise ValueError(f"method {self.name!r}: unknown distributed_fit "
                             f"{self.distributed_fit!r}; choose from {sorted(DISTRIBUTED_FITS)}")

    def check_distributed_fit(self, weighted=False):
        """Refuse a fit on distributed entries (with ``sample_weight`` if
        ``weighted``) that this method does not have.

        Raises
        ------
        TypeError
            It has no distributed fit.
        ValueError
            ``weighted`` and its distributed fit takes no ``sample_weight``.
        """
        if self.distributed_fit is None:
            raise TypeError(f"method {self.name!r} has no distributed fit; fit it on one "
                            "machine")
        why_not = DISTRIBUTED_FITS[self.distributed_fit]
        if weighted and why_not is not None:
            raise ValueError(f"sample_weight is not supported for {self.name} on "
                             f"distributed entries: {why_not}; fit it without weights or "
                             "on one machine")

    @property
    def class_name(self):
        """The calibrator class's name, e.g. ``"IsotonicCalibrator"``."""
        return self.class_path.rpartition(".")[2]

    @property
    def cls(self):
        """The calibrator class (its module imported now if it was not yet)."""
        module = importlib.import_module(f".{self.class_path.rpartition('.')[0]}",
                                         __package__)
        return getattr(module, self.class_name)

    def build(self, n_bins=10, seed=0, prior=None):
        """An unfitted calibrator with the shared options it takes.

        Parameters
        ----------
        n_bins : int, default=10
            Bins of the binning methods.
        seed : int, default=0
            Random state of seeded methods (scaling-binning's dev split).
        prior : float, optional
            The application prior of the methods that take one
            (:attr:`uses_prior`); the others ignore it (see
            :func:`check_prior_methods`).

        Returns
        -------
        BaseCalibrator
        """
        kw = {}
        if self.uses_bins:
            kw["n_bins"] = n_bins
        if self.uses_seed:
            kw["seed"] = seed
        if self.uses_prior and prior is not None:
            kw["application_prior"] = prior
        return self.cls(**kw)


#: method name -> Method, in the row order of Kranzlein et al. 2021, Table 1, then
#: the methods of issue 13 (Kull et al. 2017; lecture notes ``004``)
METHODS = {m.name: m for m in (
    Method("scaling-binning", "Scaling Binning", "scaling_binning.ScalingBinning",
           uses_bins=True, uses_seed=True, distributed_fit="split-halves"),
    Method("isotonic", "Isotonic Regression", "isotonic.IsotonicCalibrator",
           distributed_fit="pooled-pav"),
    Method("histogram", "Histogram Binning", "histogram.HistogramBinning", uses_bins=True,
           distributed_fit="equal-mass-bins"),
    Method("platt", "Platt Scaling", "platt.PlattCalibrator", distributed_fit="weighted-rows"),
    Method("beta", "Beta Calibration", "beta.BetaCalibration", distributed_fit="weighted-rows"),
    Method("prior-logistic", "Prior-Weighted Logistic", "prior_logistic.PriorWeightedLogistic",
           uses_prior=True, distributed_fit="weighted-rows"),
    Method("gaussian", "Gaussian Calibration", "gaussian.GaussianCalibration",
           uses_prior=True, distributed_fit="weighted-rows"),
)}


def get_method(name):
    """The :class:`Method` called ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`METHODS`.

    Returns
    -------
    Method

    Raises
    ------
    ValueError
        For an unknown name, listing the known ones.

    Examples
    --------
    >>> from sparsecal.calibration.registry import get_method
    >>> get_method("histogram").build(n_bins=5)
    HistogramBinning(bin_size=None, n_bins=5)
    """
    try:
        return METHODS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown method {name!r}; choose from {sorted(METHODS)}") from None


def check_prior_methods(methods, prior, flag="prior"):
    """Refuse an application prior that none of ``methods`` takes.

    Parameters
    ----------
    methods : sequence of str
        Keys of :data:`METHODS`.
    prior : float or None
        Checked to lie in (0, 1) when given.
    flag : str, default="prior"
        The name the message gives the prior (``"--prior"`` on the command line).

    Returns
    -------
    float or None
        ``prior``, checked.

    Raises
    ------
    ValueError
        For an unknown method, a prior outside (0, 1), or a prior given when no
        method in ``methods`` takes one (the message names those that do).

    Examples
    --------
    >>> from sparsecal.calibration.registry import check_prior_methods
    >>> check_prior_methods(["isotonic", "gaussian"], 0.2)
    0.2
    >>> check_prior_methods(["isotonic"], 0.2, "--prior")
    Traceback (most recent call last):
    ...
    ValueError: --prior applies to methods with an application prior (gaussian, prior-logistic), not to isotonic
    """
    from ..core.validation import check_prior
    return _taken_by_one(methods, prior, flag, "uses_prior", "an application prior",
                         check_prior)


def _taken_by_one(methods, value, flag, uses, what, check):
    """``value`` checked by ``check(value, flag)``, or None when not given; an
    error naming the methods that take it when none of ``methods`` does (their
    :class:`Method` attribute ``uses``)."""
    chosen = [get_method(m) for m in methods]
    if value is None:
        return None
    value = check(value, flag)
    if not any(getattr(m, uses) for m in chosen):
        takers = ", ".join(sorted(m.name for m in METHODS.values() if getattr(m, uses)))
        raise ValueError(f"{flag} applies to methods with {what} ({takers}), "
                         f"not to {', '.join(m.name for m in chosen)}")
    return value


def check_bins_methods(methods, n_bins, flag="n_bins"):
    """Refuse a bin count that none of ``methods`` takes.

    Parameters
    ----------
    methods : sequence of str
        Keys of :data:`METHODS`.
    n_bins : int or None
        Checked to be a positive integer when given.
    flag : str, default="n_bins"
        The name the message gives the bin count (``"--bins"`` on the command line).

    Returns
    -------
    int or None
        ``n_bins``, checked.

    Raises
    ------
    ValueError
        For an unknown method, an invalid ``n_bins``, or ``n_bins`` given when no
        method in ``methods`` bins (the message names those that do).

    Examples
    --------
    >>> from sparsecal.calibration.registry import check_bins_methods
    >>> check_bins_methods(["histogram"], 20)
    20
    >>> check_bins_methods(["isotonic"], 20, "--bins")
    Traceback (most recent call last):
    ...
    ValueError: --bins applies to methods with bins (histogram, scaling-binning), not to isotonic
    """
    from ..core.validation import check_positive_int
    return _taken_by_one(methods, n_bins, flag, "uses_bins", "bins", check_positive_int)


def make_calibrator(name, *, n_bins=10, seed=0, prior=None):
    """An unfitted calibrator of method ``name`` (see :meth:`Method.build`).

    Parameters
    ----------
    name : str
        A key of :data:`METHODS`.
    n_bins : int, default=10
    seed : int, default=0
    prior : float, optional
        The application prior of a method that takes one.

    Returns
    -------
    BaseCalibrator

    Raises
    ------
    ValueError
        For an unknown name.

    Examples
    --------
    >>> from sparsecal.calibration import make_calibrator
    >>> make_calibrator("scaling-binning", n_bins=15, seed=2)
    ScalingBinning(n_bins=15, seed=2)
    """
    return get_method(name).build(n_bins, seed, prior)


def calibrator_class(class_name):
    """The calibrator class stored under ``class_name`` in a saved calibrator.

    Raises
    ------
    ValueError
        For a class that is not a registered method.
    """
    classes = {m.class_name: m for m in METHODS.values()}
    try:
        return classes[class_name].cls
    except (KeyError, TypeError):
        raise ValueError(f"saved calibrator uses unknown class {class_name!r}; known: "
                         f"{sorted(classes)}") from None
