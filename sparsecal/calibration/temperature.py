"""Temperature scaling (Guo et al. 2017, Section 4.2) of a tagger's logits,
streaming over row chunks (a memory-mapped logit matrix is never loaded).
"""
import numpy as np

from ..core.validation import check_float_matrix, check_gold
from .base import Estimator

__all__ = ["TemperatureScaling"]

_CHUNK_BYTES = 32 << 20


def _rows(logits):
    return max(1, _CHUNK_BYTES // (logits.shape[1] * logits.dtype.itemsize))


def _check_logits(logits):
    logits, native = check_float_matrix(logits, "logits")
    if logits.shape[1] < 2:
        raise ValueError(f"logits must be [n_tokens, n_tags] with n_tags >= 2, got "
                         f"shape {logits.shape}")
    return logits, native


class TemperatureScaling(Estimator):
    """Temperature scaling: one ``T > 0`` minimising the dev NLL of the gold tags
    under ``softmax(logits / T)``.

    Parameters
    ----------
    bounds : (float, float), default=(0.05, 20.0)
        Search interval for ``T``.

    Attributes
    ----------
    temperature_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from sparsecal import TemperatureScaling
    >>> rng = np.random.default_rng(0)
    >>> logits = 2.0 * rng.normal(size=(20000, 5))          # a calibrated model ...
    >>> probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    >>> gold = (rng.random((20000, 1)) < probs.cumsum(axis=1)).argmax(axis=1)
    >>> ts = TemperatureScaling().fit(3.0 * logits, gold)    # ... made overconfident
    >>> round(ts.temperature_, 1)
    3.0
    """

    _fitted_attributes = ("temperature_",)

    def __init__(self, bounds=(0.05, 20.0)):
        self.bounds = bounds

    def __sklearn_tags__(self):
        from sklearn.utils import TransformerTags
        tags = super().__sklearn_tags__()
        tags.transformer_tags = TransformerTags(preserves_dtype=["float64", "float32"])
        return tags

    def fit(self, logits, gold):
        """Fit ``T`` on dev logits ``[n_tokens, n_tags]`` and gold tag indices
        (tokens with gold -1 are ignored)."""
        from scipy.optimize import minimize_scalar
        from scipy.special import logsumexp

        lo, hi = self._check_bounds()
        logits, _ = _check_logits(logits)
        gold = check_gold(gold, logits.shape[0], logits.shape[1])
        keep = gold >= 0
        if not keep.any():
            raise ValueError("no token has a gold tag")
        step = _rows(logits)
        # Each chunk's finiteness is checked once, while reading the gold logits.
        gold_logit = np.empty(logits.shape[0])
        for r0 in range(0, logits.shape[0], step):
            block = np.asarray(logits[r0:r0 + step], dtype=np.float64)
            if not np.isfinite(block).all():
                i, j = np.argwhere(~np.isfinite(block))[0]
                raise ValueError(f"logits[{r0 + i}, {j}] = {block[i, j].item()!r} is not finite")
            g = np.where(keep[r0:r0 + step], gold[r0:r0 + step], 0)
            gold_logit[r0:r0 + step] = block[np.arange(block.shape[0]), g]

        def nll(log_t):
            t = np.exp(log_t)
            total = 0.0
            for r0 in range(0, logits.shape[0], step):
                block = np.asarray(logits[r0:r0 + step], dtype=np.float64) / t
                k = keep[r0:r0 + step]
                total += np.sum(logsumexp(block[k], axis=1) - gold_logit[r0:r0 + step][k] / t)
            return total / keep.sum()

        res = minimize_scalar(nll, bounds=(np.log(lo), np.log(hi)), method="bounded",
                              options={"xatol": 1e-6})
        self.temperature_ = float(np.exp(res.x))
        return self

    def transform(self, logits, out=None):
        """Calibrated probabilities ``softmax(logits / T)`` (dtype of ``logits``),
        row chunk by row chunk; ``out`` may be a preallocated array or memmap."""
        from scipy.special import softmax

        self._check_fitted()
        logits, native = _check_logits(logits)
        if out is None:
            out = np.empty(logits.shape, dtype=native)
        elif getattr(out, "shape", None) != logits.shape:
            raise ValueError(f"out must have shape {logits.shape}, got "
                             f"{getattr(out, 'shape', None)}")
        step = _rows(logits)
        for r0 in range(0, logits.shape[0], step):
            block = np.asarray(logits[r0:r0 + step], dtype=np.float64)
            if not np.isfinite(block).all():
                raise ValueError(f"logits rows {r0}..{r0 + block.shape[0] - 1} hold a "
                                 "non-finite value")
            out[r0:r0 + block.shape[0]] = softmax(block / self.temperature_, axis=1)
        return out

    def _check_bounds(self):
        try:
            lo, hi = (float(b) for b in self.bounds)
        except (TypeError, ValueError):
            raise ValueError(f"bounds must be two numbers (low, high), got "
                             f"{self.bounds!r}") from None
        if not 0 < lo < hi < np.inf:
            raise ValueError(f"bounds must satisfy 0 < low < high < inf, got {self.bounds!r}")
        return lo, hi

    def fit_transform(self, logits, gold):
        return self.fit(logits, gold).transform(logits)
