"""A synthetic CCG-like tagger, overconfident on frequent tags, underconfident on rare ones."""
from dataclasses import dataclass

import numpy as np

from ..core.validation import check_n_tags, check_positive_int, check_size

__all__ = ["SyntheticTagger", "make_tagger_outputs"]


@dataclass(frozen=True)
class SyntheticTagger:
    """One split: ``scores`` (float32), ``gold``, ``true_probs`` (or None), ``train_counts``.

    Examples
    --------
    See :func:`make_tagger_outputs`.
    """

    scores: np.ndarray
    gold: np.ndarray
    true_probs: np.ndarray
    train_counts: dict

    def __repr__(self):
        n, k = self.scores.shape
        kept = "" if self.true_probs is None else ", with true_probs"
        return (f"SyntheticTagger(n_tokens={n}, n_tags={k}, scores {self.scores.dtype}, "
                f"{sum(self.train_counts.values())} training tokens{kept})")


_BLOCK = 8192   # tokens drawn at a time (part of the generator's definition)


def _tag_prior(n_tags, zipf_exponent):
    ranks = np.arange(1, n_tags + 1, dtype=np.float64)
    prior = ranks ** -zipf_exponent
    return prior / prior.sum()


def make_tagger_outputs(n_tokens=20000, n_tags=426, *, split_seed=0, tagger_seed=0,
                        zipf_exponent=1.1, n_train=927497, miscalibration=1.0,
                        n_confusable=3, keep_true_probs=False):
    """One split of a synthetic tagger's outputs, ``p ** tau`` of the calibrated ``p``.

    Parameters
    ----------
    n_tokens, n_tags : int
    split_seed, tagger_seed : int
        Seeds of the split's tokens and of the tagger (shared by its splits).
    zipf_exponent : float, default=1.1
    n_train : int
        Training tokens behind ``train_counts``.
    miscalibration : float, default=1.0
        Scales the distortion ``tau``; 0: a calibrated tagger.
    n_confusable : int, default=3
    keep_true_probs : bool, default=False

    Returns
    -------
    SyntheticTagger

    Examples
    --------
    >>> from sparsecal import threshold
    >>> test = make_tagger_outputs(2000, n_tags=50, split_seed=2)
    >>> e = threshold(test.scores, test.gold)        # tag 0 is the most frequent
    >>> [bool(e.score[m].mean() > e.label[m].mean()) for m in (e.tag < 5, e.tag >= 40)]
    [True, False]
    """
    n_tags = check_n_tags(n_tags)
    n_confusable = check_positive_int(n_confusable, "n_confusable", allow_zero=True)
    if n_tags < n_confusable + 2:
        raise ValueError(f"n_tags must be at least n_confusable + 2 = {n_confusable + 2}")
    n_train = check_positive_int(n_train, "n_train", allow_zero=True)
    if n_train >= 2 ** 63:
        raise ValueError(f"n_train must be below 2**63, got {n_train}")
    # the scores (and true probabilities) and the gold tags
    n_tokens = check_size(n_tokens, "n_tokens", 4 * n_tags * (1 + bool(keep_true_probs)) + 4)
    prior = _tag_prior(n_tags, zipf_exponent)
    tagger_rng = np.random.default_rng(tagger_seed)
    train_counts = dict(enumerate(tagger_rng.multinomial(n_train, prior).tolist()))
    # tau runs from 1 - 0.25m (most frequent) to 1 + 0.35m (rarest), by log frequency.
    log_f = np.log(prior)
    rarity = (log_f.max() - log_f) / (log_f.max() - log_f.min())
    tau = (1.0 + miscalibration * (-0.25 + 0.6 * rarity)).astype(np.float32)

    rng = np.random.default_rng(split_seed)
    scores = np.empty((n_tokens, n_tags), dtype=np.float32)
    gold = np.empty(n_tokens, dtype=np.int32)
    true_probs = np.empty_like(scores) if keep_true_probs else None
    confuse_prior = np.sqrt(prior) / np.sqrt(prior).sum()
    for r0 in range(0, n_tokens, _BLOCK):
        m = min(_BLOCK, n_tokens - r0)
        rows = np.arange(m)[:, None]
        logits = rng.normal(-5.0, 1.0, size=(m, n_tags))
        latent = rng.choice(n_tags, size=m, p=prior)
        strength = rng.normal(9.0, 2.0, size=m)
        confusable = rng.choice(n_tags, size=(m, n_confusable), p=confuse_prior)
        logits[rows, confusable] = (strength[:, None]
                                    * rng.uniform(0.0, 0.8, size=(m, n_confusable)))
        logits[rows[:, 0], latent] = strength
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        u = rng.random(m)[:, None]
        g = np.minimum((np.cumsum(p, axis=1) < u).sum(axis=1), n_tags - 1)
        reported = np.exp(tau * np.log(np.maximum(p, 1e-30)))
        reported /= reported.sum(axis=1, keepdims=True)
        scores[r0:r0 + m] = reported
        gold[r0:r0 + m] = g
        if keep_true_probs:
            true_probs[r0:r0 + m] = p
    return SyntheticTagger(scores, gold, true_probs, train_counts)
