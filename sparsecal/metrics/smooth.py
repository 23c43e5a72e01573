"""Smooth ECE and the kernel reliability diagram (Błasiok & Nakkiran 2023).

The residuals ``f - y`` are smoothed with a Gaussian kernel reflected at 0 and
1; smECE is the density-weighted mean of the smoothed absolute residual, at the
bandwidth sigma where ``smECE(sigma) = sigma`` (found by bisection). Computed as
the reference implementation ``relplot`` does (``relplot.metrics.smECE``,
``relplot.kernels.ReflectedGaussianKernel``), so that the numbers agree: points
are split linearly onto a grid of ``max(2000, round(20/sigma)) // 2 + 1`` points
(here with ``np.bincount``), the grid is reflected at both ends and convolved
with the kernel (here by FFT), and the result is interpolated onto an
evaluation mesh of ``max(200, round(10/sigma))`` points.
"""
from dataclasses import dataclass, field

import numpy as np

from ..core.validation import (check_positive_int, check_positive_real,
                               check_scores_and_labels)

__all__ = ["SmoothECE", "SmoothReliability", "smooth_ece", "smooth_reliability"]

#: relplot's constants: the density floor of ``BaseKernelMixin.smooth``, the
#: least evaluation mesh (``config.smECE_mesh_pts``), the bisection steps and
#: the smallest bandwidth of ``metrics.smECE``
_DENSITY_EPS = 1e-4
_MESH_POINTS = 200
_SEARCH_STEPS = 10
_MIN_BANDWIDTH = 1e-3


@dataclass(frozen=True)
class SmoothECE:
    """Smooth ECE at a bandwidth.

    Attributes
    ----------
    value : float
        smECE_sigma of the data.
    bandwidth : float
        sigma: the fixed point found by the search, or the one given.
    n : int
        Number of points.

    Examples
    --------
    >>> s = smooth_ece([0.2, 0.8, 0.8], [0, 1, 0])
    >>> float(s) == s.value, s.n, s.to_dict()["bandwidth"] == s.bandwidth
    (True, 3, True)
    """

    value: float
    bandwidth: float
    n: int

    def __float__(self):
        return float(self.value)

    def to_dict(self):
        """Value, bandwidth and size."""
        return {"value": self.value, "bandwidth": self.bandwidth, "n": self.n}


@dataclass(frozen=True)
class SmoothReliability:
    """The kernel reliability diagram: smoothed label rate and score density.

    Attributes
    ----------
    mesh : ndarray of float64
        Evaluation points, evenly spaced on [0, 1].
    curve : ndarray of float64
        Kernel-smoothed ``E[y | f]`` at each mesh point (Nadaraya-Watson with
        the reflected Gaussian kernel; ~0 where there is no data).
    density : ndarray of float64
        Kernel density of the scores at each mesh point (reflected kernel, so it
        integrates to ~1 over [0, 1]).
    smooth_ece : SmoothECE
        smECE and the bandwidth both curves use.

    Examples
    --------
    >>> r = smooth_reliability([0.2, 0.8, 0.8], [0, 1, 0], n_points=5)
    >>> r.mesh.tolist(), r.curve.shape, r.smooth_ece.n
    ([0.0, 0.25, 0.5, 0.75, 1.0], (5,), 3)
    """

    mesh: np.ndarray = field(repr=False)
    curve: np.ndarray = field(repr=False)
    density: np.ndarray = field(repr=False)
    smooth_ece: SmoothECE


def _grid_size(sigma):
    """Grid points of relplot's ``GaussianKernel.apply`` at bandwidth ``sigma``."""
    return max(2000, round(20 / sigma)) // 2 + 1


def _kernel_sums(x, weights, sigma, mesh):
    """Kernel-weighted sums ``sum_i w_i K_sigma(t - x_i)`` (reflected at 0 and 1) at
    each ``mesh`` point, one row per row of ``weights``.

    relplot's ``smooth_round_to_grid``, ``ReflectedGaussianKernel.convolve`` and
    ``interpolate``: linear split of each point onto an ``m``-point grid, the
    grid mirrored at both ends (without repeating the end points) and convolved
    with the kernel sampled on the grid (unnormalised, as relplot), then linear
    interpolation onto ``mesh``.
    """
    m = _grid_size(sigma)
    pos = x * (m - 1)
    left = np.clip(pos.astype(np.int64), 0, m - 2)
    frac = pos - left
    grid = np.stack([np.bincount(left, w * (1 - frac), minlength=m)
                     + np.bincount(left + 1, w * frac, minlength=m) for w in weights])
    t = np.linspace(0.0, 1.0, m)
    kernel = np.exp(-(t - 0.5) ** 2 / (2 * sigma ** 2)) / (np.sqrt(2 * np.pi) * sigma)
    mirrored = np.concatenate([grid[:, :0:-1], grid, grid[:, -2::-1]], axis=1)
    size = 1 << int(mirrored.shape[1] + m - 2).bit_length()    # >= full length, 2^k
    full = np.fft.irfft(np.fft.rfft(mirrored, size) * np.fft.rfft(kernel, size), size)
    start = m - 1 + m // 2     # relplot: 'valid' part, then [m // 2, m // 2 + m)
    smoothed = full[:, start:start + m]
    cell = np.clip((mesh * (m - 1)).astype(np.int64), 0, m - 2)
    residual = (mesh - cell / (m - 1)) * (m - 1)
    return smoothed[:, cell] * (1 - residual) + smoothed[:, cell + 1] * residual


def _smece_at(x, y, sigma):
    """relplot's ``smooth_ece(f, y, sigma)``."""
    mesh = np.linspace(0.0, 1.0, max(round(10 / sigma), _MESH_POINTS))
    residual, count = _kernel_sums(x, (x - y, np.ones_like(x)), sigma, mesh)
    density = count + _DENSITY_EPS
    return float(np.sum(np.abs(residual / density) * density) / np.sum(density))


def _search_bandwidth(x, y):
    """relplot's ``search_param``: the bisection for ``sigma = smECE(sigma)``."""
    def below(sigma):
        return sigma < _MIN_BANDWIDTH or sigma < _smece_at(x, y, sigma)

    if below(1.0):
        return 1.0
    hi, lo = 1.0, 0.0
    for _ in range(_SEARCH_STEPS):
        mid = (hi + lo) / 2
        if below(mid):
            lo = mid
        else:
            hi = mid
    return hi


def _prepare(scores, labels, bandwidth):
    x, y = check_scores_and_labels(scores, labels)
    x = x.astype(np.float64)
    y = y.astype(np.float64)
    sigma = _search_bandwidth(x, y) if bandwidth is None \
        else check_positive_real(bandwidth, "bandwidth")
    return x, y, SmoothECE(_smece_at(x, y, sigma), sigma, x.shape[0])


def smooth_ece(scores, labels, *, bandwidth=None):
    """Smooth ECE (smECE) of binary predictions, as ``relplot.smECE``.

    ``smECE_sigma = ∫ |r̂_sigma(t)| δ̂_sigma(t) dt / ∫ δ̂_sigma(t) dt`` with
    ``r̂_sigma`` the kernel regression of the residual ``f - y`` on the score
    and ``δ̂_sigma`` the kernel density of the scores (Gaussian kernel reflected
    at 0 and 1); the bandwidth is the fixed point ``sigma* = smECE_sigma*``.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Probabilities in [0, 1] (computed in float64 whatever the dtype).
    labels : array_like of {0, 1} or bool, shape (n,)
    bandwidth : float, optional
        A fixed sigma (``relplot.smECE_sigma``); default: the fixed point,
        found by relplot's bisection (10 halvings of [0, 1]).

    Returns
    -------
    SmoothECE

    Raises
    ------
    TypeError
        Non-numeric scores, labels or bandwidth.
    ValueError
        Invalid or empty scores, invalid labels, or a bandwidth that is not a
        finite number above 0.

    References
    ----------
    Błasiok & Nakkiran 2023, "Smooth ECE: Principled reliability diagrams via
    kernel smoothing", Sections 3-4 (definition, reflected kernel, fixed-point
    bandwidth); the ``relplot`` package (``metrics.smECE``), matched to ~1e-6.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> f = rng.random(5000)
    >>> y = (rng.random(5000) < f ** 2).astype(np.uint8)   # overconfident
    >>> s = smooth_ece(f, y)
    >>> round(s.value, 3), round(s.bandwidth, 3)
    (0.162, 0.162)
    >>> round(smooth_ece(f, (rng.random(5000) < f), bandwidth=0.05).value, 3)
    0.012
    """
    return _prepare(scores, labels, bandwidth)[2]


def smooth_reliability(scores, labels, *, bandwidth=None, n_points=_MESH_POINTS):
    """The kernel reliability diagram of Błasiok & Nakkiran 2023.

    The curve is the Nadaraya-Watson regression of the labels on the scores
    with the reflected Gaussian kernel at smECE's bandwidth, and the density
    the kernel density of the scores at the same bandwidth: relplot's
    ``prepare_rel_diagram`` main line (``KernelSmoother``) and ``density``,
    without its bootstrap band.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Probabilities in [0, 1].
    labels : array_like of {0, 1} or bool, shape (n,)
    bandwidth : float, optional
        As in :func:`smooth_ece` (default: smECE's fixed point).
    n_points : int, default=200
        Mesh points on [0, 1] (relplot's ``config.plot_mesh_pts``).

    Returns
    -------
    SmoothReliability

    Raises
    ------
    TypeError, ValueError
        As :func:`smooth_ece`, or ``n_points`` below 2.

    References
    ----------
    Błasiok & Nakkiran 2023, Section 5 (the smooth reliability diagram, its
    curve and its density); ``relplot.diagrams.prepare_rel_diagram``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> f = rng.random(2000)
    >>> r = smooth_reliability(f, rng.random(2000) < f ** 2, n_points=5)
    >>> r.curve.round(2).tolist()
    [0.03, 0.09, 0.27, 0.57, 0.77]
    >>> bool(abs(r.density.mean() - 1) < 0.1)    # a density on [0, 1]
    True
    """
    n_points = check_positive_int(n_points, "n_points")
    if n_points < 2:
        raise ValueError(f"n_points must be at least 2, got {n_points}")
    x, y, ece = _prepare(scores, labels, bandwidth)
    mesh = np.linspace(0.0, 1.0, n_points)
    total, count = _kernel_sums(x, (y, np.ones_like(x)), ece.bandwidth, mesh)
    return SmoothReliability(mesh, total / (count + _DENSITY_EPS), count / x.shape[0], ece)
