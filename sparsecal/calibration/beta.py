"""Beta calibration (Kull, Silva Filho & Flach 2017), the method of the ``betacal``
package, fit without scikit-learn."""
import numpy as np

from ..core.validation import check_choice
from .base import BaseCalibrator
from .logistic import fit_logistic

__all__ = ["BetaCalibration"]

#: betacal's ``LogisticRegression(C=99999999999)``: the ridge penalty 1 / C
BETACAL_C = 99999999999.0
_EPS = np.finfo(np.float64).eps


class BetaCalibration(BaseCalibrator):
    """Beta calibration ``p = sigmoid(a ln s - b ln(1 - s) + c)`` (Kull, Silva Filho &
    Flach 2017, Section 3), fit as ``betacal`` 1.1 fits it:

    - ``"abm"``: fit ``a, b, c``; if ``a < 0``, refit with ``a = 0``, else if
      ``b < 0`` with ``b = 0`` (the refit is not constrained again).
    - ``"ab"`` (``m = 1/2``): no intercept, so ``c = (a - b) ln 2``.
    - ``"am"`` (``a = b``): logistic regression on ``logit(s)``.

    Scores are clipped to ``[eps, 1 - eps]`` (the float64 machine epsilon); the
    ridge penalty ``||(a, b)||^2 / (2 C)`` with betacal's ``C = 99999999999``
    keeps separable data finite, solved by Newton's method to machine precision.

    Parameters
    ----------
    parameters : {"abm", "ab", "am"}, default="abm"

    Attributes
    ----------
    a_, b_, c_ : float
        The map's parameters (``a_ = b_`` for ``"am"``).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import BetaCalibration
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.random(20000)
    >>> truth = scores ** 3 / (scores ** 3 + (1 - scores))      # a = 3, b = 1, c = 0
    >>> cal = BetaCalibration().fit(scores, rng.random(20000) < truth)
    >>> round(cal.a_), round(cal.b_), round(cal.c_)
    (3, 1, 0)
    """

    _value_state = ("a_", "b_", "c_")

    def __init__(self, parameters="abm"):
        self.parameters = parameters

    def _check_params(self, prefix=""):
        check_choice(self.parameters, f"{prefix}parameters", {"abm", "ab", "am"})

    def _fit(self, x, y, w):
        s = np.clip(x.astype(np.float64), _EPS, 1.0 - _EPS)
        ln_s, ln_1s = np.log(s), np.log(1.0 - s)
        pos = y.astype(bool)
        w = np.ones(s.shape[0]) if w is None else w

        def fit(columns, intercept=True):
            return fit_logistic(np.column_stack(columns), pos, w, l2=1.0 / BETACAL_C,
                                intercept=intercept)

        if self.parameters == "am":
            (a,), c = fit([ln_s - ln_1s])
            b = a
        elif self.parameters == "ab":
            (a, minus_b), _ = fit([np.log(2.0) + ln_s, np.log(2.0) + ln_1s], intercept=False)
            b = -minus_b
            c = (a - b) * np.log(2.0)
        else:
            (a, b), c = fit([ln_s, -ln_1s])
            if a < 0:
                (b,), c = fit([-ln_1s])
                a = 0.0
            elif b < 0:
                (a,), c = fit([ln_s])
                b = 0.0
        self.a_, self.b_, self.c_ = float(a), float(b), float(c)
        return self

    def _predict(self, x):
        from scipy.special import expit

        s = np.clip(x.astype(np.float64), _EPS, 1.0 - _EPS)
        return expit(self.a_ * np.log(s) - self.b_ * np.log(1.0 - s) + self.c_).astype(x.dtype)
