"""The one registry of recalibration methods.

Everything that names a method (:func:`compare_methods`, the report, the
``--method`` flags, loading saved calibrators) looks it up here. Adding a
binary calibrator is one :class:`~sparsecal.calibration.base.BaseCalibrator`
class and one entry in :data:`METHODS`, which also declares its fit on
distributed entries. :class:`~sparsecal.calibration.temperature.TemperatureScaling`
rescales logits before the softmax and so is not a method here.
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

__all__ = ["METHODS", "Method", "calibrator_class", "check_prior_methods", "get_method",
           "make_calibrator"]


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
        ``"module.Class"`` in this package, imported on first use of :attr:`cls`.
    uses_bins, uses_seed, uses_prior : bool
        Whether the shared options ``n_bins``, ``seed`` and ``prior`` (as
        ``application_prior``) are passed to ``cls``.
    distributed_fit : str or None
        Its fit on distributed entries, a key of :data:`DISTRIBUTED_FITS`; None:
        it has none.
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
        """Refuse a fit on distributed entries (weighted if ``weighted``) that this
        method does not have: a TypeError without one, a ValueError for weights it
        does not take.
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
        """The calibrator class (its module imported on first use)."""
        module = importlib.import_module(f".{self.class_path.rpartition('.')[0]}",
                                         __package__)
        return getattr(module, self.class_name)

    def build(self, n_bins=10, seed=0, prior=None):
        """An unfitted calibrator with the shared options it takes (the others ignored)."""
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
        A key of :data:`METHODS`; another raises a ValueError listing them.

    Returns
    -------
    Method

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
    """``prior`` checked; refused, naming the methods that take one, if none of ``methods`` do."""
    from ..core.validation import check_prior
    return _taken_by_one(methods, prior, flag, "uses_prior", "an application prior",
                         check_prior)


def _taken_by_one(methods, value, flag, uses, what, check):
    """``value`` checked, or None; an error naming the takers when no method ``uses`` it."""
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
    """``n_bins`` checked, refused (naming the binning methods) if none of ``methods`` bins."""
    from ..core.validation import check_positive_int
    return _taken_by_one(methods, n_bins, flag, "uses_bins", "bins", check_positive_int)


def make_calibrator(name, *, n_bins=10, seed=0, prior=None):
    """An unfitted calibrator of method ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`METHODS`.
    n_bins : int, default=10
        Bins of the binning methods.
    seed : int, default=0
        Random state of the seeded methods (scaling-binning's dev split).
    prior : float, optional
        The application prior of a method that takes one; the others ignore it.

    Returns
    -------
    BaseCalibrator

    Examples
    --------
    >>> from sparsecal.calibration import make_calibrator
    >>> make_calibrator("scaling-binning", n_bins=15, seed=2)
    ScalingBinning(n_bins=15, seed=2)
    """
    return get_method(name).build(n_bins, seed, prior)


def calibrator_class(class_name):
    """The registered calibrator class called ``class_name`` (a ValueError otherwise)."""
    classes = {m.class_name: m for m in METHODS.values()}
    try:
        return classes[class_name].cls
    except (KeyError, TypeError):
        raise ValueError(f"saved calibrator uses unknown class {class_name!r}; known: "
                         f"{sorted(classes)}") from None
