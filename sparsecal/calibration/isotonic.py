"""Isotonic regression (Zadrozny & Elkan 2002) as a calibrator, on the compiled
pool-adjacent-violators kernel; Kranzlein, Liu & Schneider 2021, Section 2.2."""
from ..core.isotonic import isotonic_fit, isotonic_predict
from .base import BaseCalibrator, check_unit_array

__all__ = ["IsotonicCalibrator"]


class IsotonicCalibrator(BaseCalibrator):
    """Isotonic regression (Zadrozny & Elkan 2002) by pool adjacent violators on
    the compiled core: non-decreasing, piecewise linear, constant outside the dev
    range; the same function as scikit-learn's ``IsotonicRegression(y_min=0,
    y_max=1, out_of_bounds="clip")``.

    Attributes
    ----------
    x_knots_, y_knots_ : ndarray of float64
        The fitted function's knots (``y_knots_`` non-decreasing, in [0, 1]).

    References
    ----------
    Zadrozny & Elkan 2002; Kranzlein, Liu & Schneider 2021, Section 2.2;
    docs/architecture.md, Semantics 7.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import IsotonicCalibrator
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.random(1000)
    >>> labels = (rng.random(1000) < scores ** 2).astype(np.uint8)   # overconfident
    >>> cal = IsotonicCalibrator().fit(scores, labels)
    >>> bool(np.all(np.diff(cal.predict(np.linspace(0, 1, 11))) >= 0))
    True
    """

    _array_state = ("x_knots_", "y_knots_")

    def __init__(self):
        pass

    def _fit(self, x, y, w):
        self.x_knots_, self.y_knots_ = isotonic_fit(x, y, w)
        return self

    def _predict(self, x):
        return isotonic_predict(x, self.x_knots_, self.y_knots_)

    def _check_state(self, fields):
        check_knots(self.x_knots_, self.y_knots_, fields)


def check_knots(x_knots, y_knots, fields):
    """Check fitted isotonic knots: one or more, of one length, in [0, 1] and
    non-decreasing (``fields`` names them, see
    :class:`~sparsecal.io.calibrators.StateFields`).

    Raises
    ------
    ValueError
        For empty knots or knots of two lengths; for a knot outside [0, 1] or
        below the one before it (the first such knot is named).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.calibration.isotonic import check_knots
    >>> from sparsecal.io.calibrators import StateFields
    >>> check_knots(np.array([0.1, 0.9]), np.array([0.0, 1.5]), StateFields(array="c0."))
    Traceback (most recent call last):
    ...
    ValueError: c0.y_knots_ must lie in [0, 1]; c0.y_knots_[1] = 1.5
    """
    xs, ys = fields.array("x_knots_"), fields.array("y_knots_")
    if x_knots.shape[0] == 0 or x_knots.shape != y_knots.shape:
        raise ValueError(f"{xs} and {ys} must be non-empty and of one length, got "
                         f"{x_knots.shape[0]} and {y_knots.shape[0]} values")
    check_unit_array(x_knots, xs, "non-decreasing")
    check_unit_array(y_knots, ys, "non-decreasing")
