"""Weighted logistic regression by Newton's method, the one solver of the logistic
calibrators (Platt, prior-weighted logistic, beta, fusion), with their logit,
prior weights and degenerate-data rule. SciPy is imported inside the functions."""
import numpy as np

from ..core.validation import DegenerateDataError

__all__ = ["fit_log_odds", "fit_logistic", "logit", "prior_weights"]

#: Newton iterations at most (separable data drive the parameters to infinity)
MAX_ITER = 200


def logit(p, eps=0.0):
    """``log(p / (1 - p))`` in float64, ``p`` first clipped to ``[eps, 1 - eps]``."""
    p = np.asarray(p, dtype=np.float64)
    if eps:
        p = np.clip(p, eps, 1.0 - eps)
    return np.log(p) - np.log1p(-p)


def prior_weights(positive, sample_weight, prior):
    """Weights of the prior-weighted objective and their prior (lecture notes ``004``).

    Positives share ``prior`` of the weight and negatives ``1 - prior``, times the
    sample weights; without ``prior`` it is the dev positive rate (plain maximum
    likelihood). Labels of one class raise a DegenerateDataError.
    """
    w = np.ones(positive.shape[0]) if sample_weight is None else sample_weight
    w_pos, w_all = float(w[positive].sum()), float(w.sum())
    if not 0.0 < w_pos < w_all:
        raise DegenerateDataError("logistic calibration needs both positive and negative "
                                  "dev labels (with positive weight)")
    prior = w_pos / w_all if prior is None else float(prior)
    return np.where(positive, prior / w_pos, (1.0 - prior) / (w_all - w_pos)) * w, prior


def fit_log_odds(s, positive, sample_weight, prior):
    """``(a, g, prior)`` of the prior-weighted logistic regression on one feature ``s``.

    Minimises ``sum_i w_i log(1 + exp(-z_i (a s_i + g + logit(prior))))`` with the
    :func:`prior_weights` ``w_i``, so that ``a s + g`` is a log-likelihood ratio;
    one class or ``s`` all equal raise a DegenerateDataError.
    """
    weights, prior = prior_weights(positive, sample_weight, prior)
    used = s if sample_weight is None else s[sample_weight > 0]
    if used.min() == used.max():
        raise DegenerateDataError("logistic calibration needs dev scores of more than one "
                                  "value (these have zero variance)")
    (a,), g = fit_logistic(s[:, None], positive, weights, shift=float(logit(prior)))
    return float(a), g, prior


def fit_logistic(features, positive, weights, *, shift=0.0, l2=0.0, intercept=True):
    """``(beta, c)`` minimising the weighted logistic loss by Newton steps with backtracking.

    ``L = sum_i weights_i log(1 + exp(-z_i (features_i . beta + c + shift))) + l2 / 2
    ||beta||^2``, ``z_i = +-1``; ``c`` is unpenalised, and 0 without ``intercept``.
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
