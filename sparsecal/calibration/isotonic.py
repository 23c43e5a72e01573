"""Isotonic regression (Zadrozny & Elkan 2002) as a calibrator, on the compiled
pool-adjacent-violators kernel; Kranzlein, Liu & Schneider 2021, Section 2.2."""
from ..core.isotonic import isotonic_fit, isotonic_predict
from .base import BaseCalibrator, check_unit_array

__all__ = ["IsotonicCalibrator"]


class IsotonicCalibrator(BaseCalibrator):
    """Isotonic regression (Zadrozny & Elkan 2002) by pool adjacent violators:
    non-decreasing, piecewise linear, constant outside the dev range, as
    scikit-learn's ``IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip")``.

    Attributes
    ----------
    x_knots_, y_knots_ : ndarray of float64
        The fitted function's knots.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import IsotonicCalibrator
    >>> rng = np.random.default_rng(0)
    >>> scores = rng.random(1000)
    >>> cal = IsotonicCalibrator().fit(scores, rng.random(1000) < scores ** 2)
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
    """Check fitted isotonic knots: one or more, of one length, in [0, 1], non-decreasing."""
    xs, ys = fields.array("x_knots_"), fields.array("y_knots_")
    if x_knots.shape[0] == 0 or x_knots.shape != y_knots.shape:
        raise ValueError(f"{xs} and {ys} must be non-empty and of one length, got "
                         f"{x_knots.shape[0]} and {y_knots.shape[0]} values")
    check_unit_array(x_knots, xs, "non-decreasing")
    check_unit_array(y_knots, ys, "non-decreasing")
