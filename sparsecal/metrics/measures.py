"""The one registry of scalar measures of binary predictions.

Everything that computes measures by name (:func:`evaluate`'s ``metrics=``,
``sparsecal evaluate --metrics``) looks them up here; adding a measure of
``(scores, labels)`` is one function and one entry in :data:`MEASURES`. Each
measure declares the shared :data:`OPTIONS` it takes (an option no part of a
call takes is refused by :func:`check_options`) and its form on distributed
entries (:attr:`Measure.mergeable`).
"""
import importlib
from dataclasses import dataclass

__all__ = ["MEASURES", "Measure", "check_options", "get_measure"]


@dataclass(frozen=True)
class Measure:
    """A scalar measure of binary predictions, by name.

    Attributes
    ----------
    name, display_name : str
        Its name in the API and on the command line (``"ece"``), and in tables.
    function_path : str
        ``"module.function"`` in :mod:`sparsecal.metrics`, imported on first use.
    fixed : tuple of (str, object)
        Keyword arguments always passed, e.g. ``(("norm", 1),)``.
    attribute : str or None
        The attribute of the result that holds the number (None: the result).
    options : tuple of str
        The keys of :data:`OPTIONS` passed on (default: the binning).
    mergeable : str or None
        Its form on distributed entries, a key of :data:`MERGEABLE_FORMS`.
    """

    name: str
    display_name: str
    function_path: str
    fixed: tuple = ()
    attribute: str = "value"
    options: tuple = ("n_bins", "bin_size", "binning")
    mergeable: str = None

    def check_prior(self, prior):
        """Refuse a missing ``prior`` if this measure needs one."""
        if "prior" in self.options and prior is None:
            raise ValueError(f"measure {self.name!r} needs prior (the application prior "
                             "of the positive class, in (0, 1))")

    @property
    def function(self):
        """The function (its module imported on first use)."""
        module, _, name = self.function_path.rpartition(".")
        return getattr(importlib.import_module(f".{module}", __package__), name)

    def __post_init__(self):
        unknown = set(self.options) - set(OPTIONS)
        if unknown:
            raise ValueError(f"measure {self.name!r}: unknown options {sorted(unknown)}")
        if self.mergeable is not None and self.mergeable not in MERGEABLE_FORMS:
            raise ValueError(f"measure {self.name!r}: unknown mergeable form "
                             f"{self.mergeable!r}; choose from {sorted(MERGEABLE_FORMS)}")

    def __call__(self, scores, labels, **options):
        """The measure of ``scores`` against ``labels`` as a float, with the
        :data:`OPTIONS` it takes (another one is refused).
        """
        check_options([self], options)
        return self.value_of(self.function(scores, labels, **self.arguments(**options)))

    def arguments(self, **options):
        """The keyword arguments :attr:`function` gets for these options (those it
        takes, then :attr:`fixed`).
        """
        unknown = set(options) - set(OPTIONS)
        if unknown:
            raise TypeError(f"unknown measure options {sorted(unknown)}: choose from "
                            f"{', '.join(OPTIONS)}")
        self.check_prior(options.get("prior"))
        kwargs = {k: options[k] for k in self.options if options.get(k) is not None}
        kwargs.update(self.fixed)
        return kwargs

    def value_of(self, result):
        """This measure's number in a result of :attr:`function`."""
        return float(result if self.attribute is None else getattr(result, self.attribute))


#: the options a measure may take (:attr:`Measure.options`) -> the value that
#: means "not given" (the measure's own default) and what the option is
OPTIONS = {
    "n_bins": (None, "a number of bins"),
    "bin_size": (None, "entries per equal-mass bin"),
    "binning": ("equal-mass", "the kind of bins"),
    "prior": (None, "an application prior"),
    "n_resamples": (None, "a number of resamples"),
    "random_state": (None, "a random state"),
}

_BINNED = ("n_bins", "bin_size", "binning")

#: the forms a measure may have on distributed entries (:attr:`Measure.mergeable`):
#: the merged statistics its value is computed from, for all entries and each
#: group in shared passes; :mod:`sparsecal.distributed.measures` implements each
MERGEABLE_FORMS = {
    "bins": "the merged bins (CE with the measure's fixed norm and debias)",
    "squared-errors": "merged sums of squared errors",
    "brier-corp": "the merged distinct-score tables (CORP, Brier rule)",
    "log-loss-corp": "the merged distinct-score tables (CORP, log-loss rule)",
    "application": "the LLRs of the merged distinct-score tables (the measure of its name)",
    "smooth-grids": "merged kernel grid sums",
    "table-replicates": "resamples of the merged distinct-score tables, on the workers",
}


def check_options(measures, given, used=(), names=None, others=None):
    """Refuse each option given that neither a measure of ``measures`` takes nor the
    rest of the call ``used``, naming the option, the measures and those that
    would take it (``names``: an option's name in the message; ``others``: what
    else takes it).
    """
    names, others = names or {}, others or {}
    for option, value in given.items():
        default, what = OPTIONS[option]
        if value is None or value == default or option in used:
            continue
        if not any(option in m.options for m in measures):
            takers = [m.name for m in MEASURES.values() if option in m.options]
            which = ", ".join(m.name for m in measures) or "no measure (none asked for)"
            raise ValueError(f"{names.get(option, option)} ({what}) does not apply to "
                             f"{which}: it applies to {', '.join(takers)}"
                             + (f" and to {others[option]}" if option in others else ""))


#: measure name -> Measure
MEASURES = {m.name: m for m in (
    Measure("ce", "CE", "binary.calibration_error", (("norm", 2),), mergeable="bins"),
    Measure("ece", "ECE", "binary.calibration_error", (("norm", 1),), mergeable="bins"),
    Measure("max-ce", "Max CE", "binary.calibration_error", (("norm", "max"),),
            mergeable="bins"),
    # the Brier score does not depend on the bins (its decomposition's terms do)
    Measure("brier", "Brier", "brier.brier_decomposition", attribute="brier", options=(),
            mergeable="squared-errors"),
    # issue 13: Kumar et al. 2019; Blasiok & Nakkiran 2023; Dimitriadis et al. 2021
    # (CORP: score = MCB - DSC + UNC); lecture notes 004 (Cllr, DCF); Brocker & Smith 2007
    Measure("debiased-ce", "Debiased CE", "binary.calibration_error", (("debias", True),),
            mergeable="bins"),
    Measure("smooth-ece", "Smooth ECE", "smooth.smooth_ece", options=(),
            mergeable="smooth-grids"),
    Measure("brier-mcb", "Brier MCB", "corp.brier_corp", attribute="miscalibration",
            options=(), mergeable="brier-corp"),
    Measure("brier-dsc", "Brier DSC", "corp.brier_corp", attribute="discrimination",
            options=(), mergeable="brier-corp"),
    Measure("brier-unc", "Brier UNC", "corp.brier_corp", attribute="uncertainty",
            options=(), mergeable="brier-corp"),
    Measure("log-loss", "Log loss", "corp.log_loss_corp", attribute="score", options=(),
            mergeable="log-loss-corp"),
    Measure("log-loss-mcb", "Log loss MCB", "corp.log_loss_corp",
            attribute="miscalibration", options=(), mergeable="log-loss-corp"),
    Measure("log-loss-dsc", "Log loss DSC", "corp.log_loss_corp",
            attribute="discrimination", options=(), mergeable="log-loss-corp"),
    Measure("log-loss-unc", "Log loss UNC", "corp.log_loss_corp", attribute="uncertainty",
            options=(), mergeable="log-loss-corp"),
    Measure("cllr", "Cllr", "application.cllr", attribute=None, options=(),
            mergeable="application"),
    Measure("min-cllr", "minCllr", "application.min_cllr", attribute=None, options=(),
            mergeable="application"),
    Measure("dcf", "DCF", "application.dcf", options=("prior",), mergeable="application"),
    Measure("min-dcf", "minDCF", "application.min_dcf", options=("prior",),
            mergeable="application"),
    Measure("calibration-test-p", "Calibration test p", "consistency.calibration_test",
            attribute="p_value", options=_BINNED + ("n_resamples", "random_state"),
            mergeable="table-replicates"),
)}


def get_measure(name):
    """The :class:`Measure` called ``name`` (a ValueError listing them otherwise)."""
    try:
        return MEASURES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown measure {name!r}: choose from "
                         f"{', '.join(sorted(MEASURES))}") from None
