"""A synthetic CCG-like tagger with known, frequency-dependent miscalibration.

A Zipfian tagset (the top tag near 22% of training tokens, as CCG's ``N``) and
sparse per-token distributions. Per token: a latent tag is drawn from the prior;
the true distribution ``p`` is a softmax with a large logit on it, smaller ones
on a few confusable tags and a low background; the gold tag is drawn from ``p``
(so ``p`` is calibrated); the tagger reports ``p_j ** tau_j`` renormalised, with
``tau_j < 1`` for frequent tags (overconfident) rising above 1 for rare ones
(underconfident), the pattern of Kranzlein et al. 2021, Section 3.3.
"""
from dataclasses import dataclass

import numpy as np

from ..core.validation import check_n_tags, check_positive_int, check_size

__all__ = ["SyntheticTagger", "make_tagger_outputs"]


@dataclass(frozen=True)
class SyntheticTagger:
    """Outputs of a synthetic tagger on one split.

    Attributes
    ----------
    scores : ndarray of float32, shape (n_tokens, n_tags)
        The tagger's (miscalibrated) probabilities.
    gold : ndarray of int32, shape (n_tokens,)
    true_probs : ndarray of float32 or None
        The calibrated distributions the gold tags were drawn from.
    train_counts : dict
        Training gold count per tag index (the same for every split of a tagger).

    Examples
    --------
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> data = make_tagger_outputs(100, n_tags=20, keep_true_probs=True)
    >>> data.scores.shape == data.true_probs.shape, len(data.train_counts)
    (True, 20)
    """

    scores: np.ndarray
    gold: np.ndarray
    true_probs: np.ndarray
    train_counts: dict


_BLOCK = 8192   # tokens drawn at a time (part of the generator's definition)


def _tag_prior(n_tags, zipf_exponent):
    ranks = np.arange(1, n_tags + 1, dtype=np.float64)
    prior = ranks ** -zipf_exponent
    return prior / prior.sum()


def make_tagger_outputs(n_tokens=20000, n_tags=426, *, split_seed=0, tagger_seed=0,
                        zipf_exponent=1.1, n_train=927497, miscalibration=1.0,
                        n_confusable=3, keep_true_probs=False):
    """One split of synthetic tagger outputs, a fixed function of the arguments
    (drawn in blocks of 8192 tokens: bounded memory).

    Parameters
    ----------
    n_tokens, n_tags : int
    split_seed : int
        Seed of this split's tokens (differ it between dev and test).
    tagger_seed : int
        Seed of the tagger (its training counts); the same for all its splits.
    zipf_exponent : float, default=1.1
        Of the tag frequencies.
    n_train : int
        Training tokens behind ``train_counts``.
    miscalibration : float, default=1.0
        Scales the distortion ``tau``; 0: a calibrated tagger.
    n_confusable : int, default=3
        Tags per token competing with the latent tag.
    keep_true_probs : bool, default=False
        Also return the calibrated distributions.

    Returns
    -------
    SyntheticTagger

    Examples
    --------
    >>> from sparsecal import threshold, TagGroups
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> test = make_tagger_outputs(2000, n_tags=50, split_seed=2)
    >>> entries = threshold(test.scores, test.gold, 0.01)
    >>> groups = TagGroups.from_counts(test.train_counts, 2, n_tags=50)
    >>> frequent = groups.tag_to_group[entries.tag] == 0
    >>> bool(entries.score[frequent].mean() > entries.label[frequent].mean())  # overconfident
    True
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
