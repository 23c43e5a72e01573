"""Weighted logistic regression by Newton's method, the one solver of the logistic
calibrators (Platt, prior-weighted logistic, beta, fusion), with their logit,
prior weights and degenerate-data rule. SciPy is imported inside the functions."""
import numpy as np

from ..core.validation import DegenerateDataError

__all__ = ["fit_log_odds", "fit_logistic", "logit", "prior_weights"]

#: Newton iterations at most (separable data drive the parameters to infinity)
MAX_ITER = 200


def logit(p, eps=0.0):
    """``log(p / (1 - p))`` in float64, ``p`` first clipped to ``[eps, 1 - eps]``.

    Parameters
    ----------
    p : float or array_like
    eps : float in [0, 0.5), default=0.0

    Returns
    -------
    float or ndarray of float64

    Examples
    --------
    >>> from sparsecal.calibration.logistic import logit
    >>> float(logit(0.5)), round(float(logit(0.75)), 6), round(float(logit(1.0, 1e-7)), 4)
    (0.0, 1.098612, 16.1181)
    """
    p = np.asarray(p, dtype=np.float64)
    if eps:
        p = np.clip(p, eps, 1.0 - eps)
    return np.log(p) - np.log1p(-p)


def prior_weights(positive, sample_weight, prior):
    """Weights of the prior-weighted objective (summing to 1) and their prior.

    Positives share ``prior`` of the weight and negatives ``1 - prior``:
    ``w_i = prior / n_T`` or ``(1 - prior) / n_F``, times the sample weight
    (lecture notes ``004``). Without ``prior`` it is the dev positive rate, and
    ``w_i = 1 / n``: plain maximum likelihood.

    Parameters
    ----------
    positive : ndarray of bool, shape (n,)
    sample_weight : ndarray of float64, shape (n,), or None
    prior : float in (0, 1), or None

    Returns
    -------
    weights : ndarray of float64, shape (n,)
    prior : float

    Raises
    ------
    DegenerateDataError
        If the labels (of positive weight) are all of one class.

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
        raise DegenerateDataError("logistic calibration needs both positive and negative "
                                  "dev labels (with positive weight)")
    prior = w_pos / w_all if prior is None else float(prior)
    return np.where(positive, prior / w_pos, (1.0 - prior) / (w_all - w_pos)) * w, prior


def fit_log_odds(s, positive, sample_weight, prior):
    """Prior-weighted logistic regression on one feature ``s``: minimises
    ``sum_i w_i log(1 + exp(-z_i (a s_i + g + logit(prior))))`` with the
    :func:`prior_weights` ``w_i``, so that ``a s + g`` is a log-likelihood ratio.

    Parameters
    ----------
    s : ndarray of float64, shape (n,)
        Finite.
    positive : ndarray of bool, shape (n,)
    sample_weight : ndarray of float64, shape (n,), or None
    prior : float in (0, 1), or None
        None: the (weighted) dev positive rate.

    Returns
    -------
    a, g, prior : float

    Raises
    ------
    DegenerateDataError
        For labels of one class, or ``s`` all equal (the slope is undetermined).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal.calibration.logistic import fit_log_odds
    >>> y = np.array([0, 0, 1, 0, 1, 1], dtype=bool)     # rates 1/3 and 2/3
    >>> a, g, prior = fit_log_odds(np.repeat([-1.0, 1.0], 3), y, None, None)
    >>> round(a, 6), abs(round(g, 6)), prior              # a = log 2, g = 0
    (0.693147, 0.0, 0.5)
    """
    weights, prior = prior_weights(positive, sample_weight, prior)
    used = s if sample_weight is None else s[sample_weight > 0]
    if used.min() == used.max():
        raise DegenerateDataError("logistic calibration needs dev scores of more than one "
                                  "value (these have zero variance)")
    (a,), g = fit_logistic(s[:, None], positive, weights, shift=float(logit(prior)))
    return float(a), g, prior


def fit_logistic(features, positive, weights, *, shift=0.0, l2=0.0, intercept=True):
    """Minimise the weighted logistic loss by Newton steps with backtracking.

    ``L(beta, c) = sum_i weights_i log(1 + exp(-z_i (features_i . beta + c +
    shift))) + l2 / 2 ||beta||^2``, ``z_i = +1`` for positives and ``-1`` for
    negatives; the intercept ``c`` is not penalised.

    Parameters
    ----------
    features : ndarray of float64, shape (n, k)
        Finite.
    positive : ndarray of bool, shape (n,)
    weights : ndarray of float64, shape (n,)
        Non-negative.
    shift : float, default=0.0
        The prior log-odds of the prior-weighted objective.
    l2 : float, default=0.0
        Ridge penalty on ``beta``.
    intercept : bool, default=True
        Fit ``c`` (else ``c = 0``).

    Returns
    -------
    beta : ndarray of float64, shape (k,)
    c : float

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
    # Columns and vector products without BLAS, whose threads stall on a busy
    # machine (a dot product of 10^6 values took 12 ms instead of 0.2 under load).
    cols = [np.ascontiguousarray(features[:, j], dtype=np.float64)
            for j in range(features.shape[1])]
    k, m = len(cols), len(cols) + intercept
    penalty = np.full(m, float(l2))
    if intercept:
        penalty[-1] = 0.0
    y = positive.astype(np.float64)
    sign = 1.0 - 2.0 * y                        # -z: the margin's sign flipped

    def evaluate(theta):
        """The linear predictor, ``exp(-|eta|)`` and the loss: one exponential
        serves the loss now and the probabilities of the next Newton step."""
        eta = np.full(y.shape[0], (theta[-1] if intercept else 0.0) + shift)
        for j in range(k):
            eta += theta[j] * cols[j]
        e = np.exp(-np.abs(eta))
        soft = np.maximum(sign * eta, 0.0)      # log(1 + exp(-z eta))
        soft += np.log1p(e)
        return eta, e, _dot(weights, soft) + 0.5 * float(penalty @ (theta * theta))

    theta = np.zeros(m)
    eta, e, value = evaluate(theta)
    for _ in range(MAX_ITER):
        inv = 1.0 / (1.0 + e)
        q = e * inv                              # expit(-|eta|)
        p = 0.5 + np.copysign(0.5 - q, eta)      # expit(eta)
        r = weights * (p - y)
        h = weights * q * inv                    # weights p (1 - p)
        terms = cols + [None] * intercept        # None: the intercept's column of ones
        grad = np.array([_dot(r, a) for a in terms]) + penalty * theta
        hess = np.diag(penalty)
        for i, a in enumerate(terms):
            for j in range(i, m):
                hess[i, j] += _dot(h, a, terms[j])
                hess[j, i] = hess[i, j]
        step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        decrement = float(grad @ step)          # Newton decrement squared
        if not decrement > 1e-30:
            break
        if 0.5 * decrement < 1e-15 * max(abs(value), 1e-300):
            # the last step: the decrease it promises is below the loss's rounding,
            # where a line search would only see noise
            theta = theta - step
            break
        t = 1.0
        while t > 1e-12:
            new_eta, new_e, new = evaluate(theta - t * step)
            if new <= value - 1e-4 * t * decrement:
                break
            t *= 0.5
        else:
            break                               # no decrease left in float64
        theta, eta, e, value = theta - t * step, new_eta, new_e, new
    beta = theta[:-1] if intercept else theta
    return beta, float(theta[-1]) if intercept else 0.0


def _dot(w, a=None, b=None):
    """``sum(w * a * b)`` over the columns given (None: ones), in one pass without
    BLAS."""
    operands = [v for v in (w, a, b) if v is not None]
    return float(np.einsum(",".join("i" * len(operands)) + "->", *operands))
