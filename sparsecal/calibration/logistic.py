"""Weighted logistic regression by Newton's method, and the prior weights of the
score-calibration lecture notes (``004``), shared by the logistic calibrators
(:mod:`~sparsecal.calibration.beta`, :mod:`~sparsecal.calibration.prior_logistic`,
:mod:`~sparsecal.calibration.fusion`).

The models have a handful of parameters, so each Newton step solves a small
``k x k`` system; Python loops over iterations only, never over points. SciPy is
imported inside the functions (``import sparsecal`` stays quick).
"""
import numpy as np

from ..core.validation import DegenerateDataError


__all__ = ["fit_logistic", "logit", "prior_weights"]

#: Newton iterations at most (separable data drive the parameters to infinity)
MAX_ITER = 200


def logit(p):
    """``log(p / (1 - p))`` in float64 (``p`` in (0, 1); ±inf at 0 and 1).

    Parameters
    ----------
    p : float or ndarray

    Returns
    -------
    float or ndarray of float64

    Examples
    --------
    >>> from sparsecal.calibration.logistic import logit
    >>> float(logit(0.5)), round(float(logit(0.75)), 6)
    (0.0, 1.098612)
    """
    p = np.asarray(p, dtype=np.float64)
    return np.log(p) - np.log1p(-p)


def prior_weights(positive, sample_weight, prior):
    """Per-point weights of the prior-weighted objective and the effective prior.

    Positives share ``prior`` and negatives ``1 - prior`` of the total weight
    (``w_i = prior / n_T`` or ``(1 - prior) / n_F``, lecture notes ``004``,
    "Calibration: prior-weighted logistic regression"), each point also scaled
    by its sample weight. Without ``prior`` it is the (weighted) dev positive
    rate, and the weights are ``w_i / sum(w)``: plain maximum likelihood.

    Parameters
    ----------
    positive : ndarray of bool, shape (n,)
    sample_weight : ndarray of float64, shape (n,), or None
    prior : float in (0, 1), or None

    Returns
    -------
    weights : ndarray of float64, shape (n,)
        Summing to 1.
    prior : float
        The prior the weights stand for.

    Raises
    ------
    ValueError
        If the dev labels (with positive weight) are all of one class.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.calibration.logistic import prior_weights
    >>> w, p = prior_weights(np.array([True, False, False, False]), None, 0.5)
    >>> w.tolist(), p
    ([0.5, 0.16666666666666666, 0.16666666666666666, 0.16666666666666666], 0.5)
    """
    w = np.ones(positive.shape[0]) if sample_weight is None else sample_weight
    w_pos, w_all = float(w[positive].sum()), float(w.sum())
    if not 0.0 < w_pos < w_all:
        raise DegenerateDataError("a prior-weighted calibrator needs both positive and negative "
                         "dev labels (with positive weight)")
    if prior is None:
        prior = w_pos / w_all
    return np.where(positive, prior / w_pos, (1.0 - prior) / (w_all - w_pos)) * w, prior


def fit_logistic(features, positive, weights, *, shift=0.0, l2=0.0, intercept=True):
    """Minimise the weighted logistic loss by damped Newton steps.

    ``L(beta, c) = sum_i weights_i log(1 + exp(-z_i (features_i . beta + c +
    shift))) + l2 / 2 ||beta||^2`` with ``z_i = +1`` for positives and ``-1``
    for negatives (the intercept ``c`` is not penalised). ``shift`` is the
    prior log-odds of the prior-weighted objective (lecture notes ``004``), so
    that ``features . beta + c`` is a log-likelihood ratio.

    Parameters
    ----------
    features : ndarray of float64, shape (n, k)
        Finite.
    positive : ndarray of bool, shape (n,)
    weights : ndarray of float64, shape (n,)
        Non-negative.
    shift : float, default=0.0
    l2 : float, default=0.0
        Ridge penalty on ``beta``.
    intercept : bool, default=True
        Fit ``c`` (else ``c = 0``).

    Returns
    -------
    beta : ndarray of float64, shape (k,)
    c : float

    References
    ----------
    Boyd & Vandenberghe 2004, *Convex Optimization*, Section 9.5 (Newton's
    method with backtracking line search).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.calibration.logistic import fit_logistic
    >>> x = np.array([[0.0], [0.0], [0.0], [1.0], [1.0], [1.0]])
    >>> y = np.array([0, 0, 1, 0, 1, 1], dtype=bool)     # rates 1/3 and 2/3
    >>> beta, c = fit_logistic(x, y, np.ones(6))
    >>> bool(np.isclose(beta[0], 2 * np.log(2))), bool(np.isclose(c, -np.log(2)))
    (True, True)
    """
    from scipy.special import expit, log_expit

    x = np.hstack([features, np.ones((features.shape[0], 1))]) if intercept else features
    penalty = np.full(x.shape[1], float(l2))
    if intercept:
        penalty[-1] = 0.0
    z = np.where(positive, 1.0, -1.0)

    def loss(theta):
        return -np.sum(weights * log_expit(z * (x @ theta + shift))) \
            + 0.5 * np.sum(penalty * theta * theta)

    theta = np.zeros(x.shape[1])
    value = loss(theta)
    for _ in range(MAX_ITER):
        eta = x @ theta + shift
        p = expit(eta)
        grad = x.T @ (weights * (p - positive)) + penalty * theta
        hess = (x * (weights * p * (1.0 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        decrement = float(grad @ step)          # Newton decrement squared
        if not decrement > 1e-30:
            break
        t = 1.0
        while t > 1e-12:
            new = loss(theta - t * step)
            if new <= value - 1e-4 * t * decrement:
                break
            t *= 0.5
        else:
            break                               # no decrease left in float64
        theta, value = theta - t * step, new
        if 0.5 * decrement < 1e-15 * max(abs(value), 1e-300):
            break
    beta = theta[:-1] if intercept else theta
    return beta, float(theta[-1]) if intercept else 0.0
