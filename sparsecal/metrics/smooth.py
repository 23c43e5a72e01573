"""Smooth ECE and the kernel reliability diagram (Błasiok & Nakkiran 2023),
computed as the reference ``relplot`` does (grid, reflected Gaussian kernel by
FFT, bandwidth by bisection), so that the numbers agree.
"""
from dataclasses import dataclass, field

import numpy as np

from ..core.validation import (check_allocation, check_positive_real,
                               check_scores_and_labels, check_size)
from .._docs import fill_doc
from ..core.dispatch import takes_data

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
    """Smooth ECE ``value`` of ``n`` points at ``bandwidth`` (the fixed point, or the
    one given).

    Examples
    --------
    See :func:`smooth_ece`.
    """

    value: float
    bandwidth: float
    n: int

    def __float__(self):
        return float(self.value)

    def to_dict(self):
        return {"value": self.value, "bandwidth": self.bandwidth, "n": self.n}


@dataclass(frozen=True)
class SmoothReliability:
    """The kernel reliability diagram on an even ``mesh`` of [0, 1]: the smoothed
    label rate ``curve``, the score ``density`` and the ``smooth_ece`` whose
    bandwidth both use.

    Examples
    --------
    See :func:`smooth_reliability`.
    """

    mesh: np.ndarray = field(repr=False)
    curve: np.ndarray = field(repr=False)
    density: np.ndarray = field(repr=False)
    smooth_ece: SmoothECE


def _grid_size(sigma):
    """Grid points of relplot's ``GaussianKernel.apply`` at ``sigma``."""
    return max(2000, round(20 / sigma)) // 2 + 1


#: the rows of the grid sums: the residual ``x - y`` and the count (smECE), the
#: label (the reliability curve)
_RESIDUAL, _COUNT, _LABEL = 0, 1, 2


def _grid_sums(x, y, m):
    """Grid sums (3, m) of ``x - y``, 1 and ``y``, each point split between two grid points."""
    pos = x * (m - 1)
    left = np.clip(pos.astype(np.int64), 0, m - 2)
    frac = pos - left
    return np.stack([np.bincount(left, w * (1 - frac), minlength=m)
                     + np.bincount(left + 1, w * frac, minlength=m)
                     for w in (x - y, np.ones_like(x), y)])


def _smooth(grid, sigma, mesh):
    """Kernel-weighted sums of grid rows at each ``mesh`` point (relplot's ``convolve``)."""
    m = grid.shape[1]
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


def _smece_at(grids, sigma):
    mesh = np.linspace(0.0, 1.0, max(round(10 / sigma), _MESH_POINTS))
    residual, count = _smooth(grids(_grid_size(sigma))[[_RESIDUAL, _COUNT]], sigma, mesh)
    density = count + _DENSITY_EPS
    return float(np.sum(np.abs(residual / density) * density) / np.sum(density))


def _bisection():
    """relplot's ``search_param``, sent whether each sigma is below the fixed point."""
    if (yield 1.0):
        return 1.0
    hi, lo = 1.0, 0.0
    for _ in range(_SEARCH_STEPS):
        mid = (hi + lo) / 2
        if (yield mid):
            lo = mid
        else:
            hi = mid
    return hi


def _search_bandwidths(grids, n_sets, fetch=None):
    """Each set's bandwidth, the bisections in lockstep (``fetch`` computes a step's sums)."""
    searches = [_bisection() for _ in range(n_sets)]
    sigma = {s: next(search) for s, search in enumerate(searches)}
    out = [None] * n_sets
    while sigma:
        if fetch is not None:
            fetch([(s, _grid_size(v)) for s, v in sigma.items() if v >= _MIN_BANDWIDTH])
        for s, v in list(sigma.items()):
            below = v < _MIN_BANDWIDTH or v < _smece_at(lambda m: grids(s, m), v)
            try:
                sigma[s] = searches[s].send(below)
            except StopIteration as done:
                out[s] = done.value
                del sigma[s]
    return out


def _local_grids(x, y):
    cache = {}

    def grids(m):
        if m not in cache:
            cache[m] = _grid_sums(x, y, m)
        return cache[m]
    return grids


def _smooth_eces(grids, counts, bandwidth, fetch=None):
    """SmoothECE of each set from its grid sums (None for an empty set)."""
    live = [s for s, n in enumerate(counts) if n]
    if bandwidth is None:
        found = _search_bandwidths(
            lambda i, m: grids(live[i], m), len(live),
            None if fetch is None else lambda req: fetch([(live[i], m) for i, m in req]))
    else:
        found = [bandwidth] * len(live)
        if fetch is not None:
            fetch([(s, _grid_size(bandwidth)) for s in live])
    out = [None] * len(counts)
    for s, sigma in zip(live, found):
        out[s] = SmoothECE(_smece_at(lambda m: grids(s, m), sigma), sigma, int(counts[s]))
    return out


def _reliability_from_grids(grids, ece, n_points):
    mesh = np.linspace(0.0, 1.0, n_points)
    sigma = ece.bandwidth
    total, count = _smooth(grids(_grid_size(sigma))[[_LABEL, _COUNT]], sigma, mesh)
    return SmoothReliability(mesh, total / (count + _DENSITY_EPS), count / ece.n, ece)


#: Bytes per point of a smoothing grid or mesh: its rows, their mirrored copy
#: and FFTs (a power of two at least four times as long) and the interpolation.
_POINT_BYTES = 256


def _check_bandwidth(bandwidth):
    """None, or a positive bandwidth whose grid (about 10 / bandwidth points) fits
    in memory."""
    if bandwidth is None:
        return None
    bandwidth = check_positive_real(bandwidth, "bandwidth")
    check_allocation(_POINT_BYTES * _grid_size(bandwidth), f"bandwidth={bandwidth!r}")
    return bandwidth


def _check_n_points(n_points):
    n_points = check_size(n_points, "n_points", _POINT_BYTES)
    if n_points < 2:
        raise ValueError(f"n_points must be at least 2, got {n_points}")
    return n_points


def _prepare(scores, labels, bandwidth):
    x, y = check_scores_and_labels(scores, labels)
    bandwidth = _check_bandwidth(bandwidth)
    grids = _local_grids(x.astype(np.float64), y.astype(np.float64))
    return grids, _smooth_eces(lambda s, m: grids(m), [x.shape[0]], bandwidth)[0]


@takes_data
@fill_doc
def smooth_ece(scores, labels, *, bandwidth=None):
    """Smooth ECE (smECE) of binary predictions, as ``relplot.smECE``:
    ``∫ |r̂_sigma(t)| δ̂_sigma(t) dt / ∫ δ̂_sigma(t) dt``, ``r̂`` the kernel
    regression of the residual ``f - y`` on the score and ``δ̂`` the scores'
    kernel density, at the fixed point ``sigma* = smECE_sigma*``.

    Parameters
    ----------
    {scores_labels}
    bandwidth : float, optional
        A fixed sigma; default the fixed point.

    Returns
    -------
    SmoothECE

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> f = rng.random(5000)
    >>> s = smooth_ece(f, rng.random(5000) < f ** 2)   # overconfident
    >>> round(s.value, 3), round(s.bandwidth, 3)
    (0.162, 0.162)
    """
    return _prepare(scores, labels, bandwidth)[1]


@takes_data
def smooth_reliability(scores, labels, *, bandwidth=None, n_points=_MESH_POINTS):
    """The kernel reliability diagram at smECE's bandwidth: the Nadaraya-Watson curve
    of the labels on the scores and the scores' density (relplot's
    ``prepare_rel_diagram`` without its bootstrap band).

    Parameters
    ----------
    scores, labels, bandwidth
        As in :func:`smooth_ece`.
    n_points : int, default=200
        Mesh points on [0, 1].

    Returns
    -------
    SmoothReliability

    Examples
    --------
    >>> smooth_reliability([0.2, 0.8, 0.8], [0, 1, 0], n_points=5).mesh.tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    n_points = _check_n_points(n_points)
    return _reliability_from_grids(*_prepare(scores, labels, bandwidth), n_points)
