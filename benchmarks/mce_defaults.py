#!/usr/bin/env python
"""How well per-tag MCE tells a calibrated tagger from a miscalibrated one,
with the old default (plug-in CE_2 per tag) and the new one (Kumar et al.'s
debiased square per tag, averaged over tags, clipped at 0 once), and with the
per-tag clipping of Kumar et al.'s ``uncertainty-calibration`` package
(``get_calibration_error(mode="marginal", debias=True)``: each class's
``sqrt(max(D, 0))``, then the root mean square).

Cases (bins of 200 entries, tags with at least 400, threshold 0.01):

- issue 26: a Zipfian 300-tag tagger, 30,000 tokens, calibrated
  (``make_tagger_outputs(miscalibration=0)``: gold drawn from the scores)
  against the same scores sharpened, ``p^1.3`` renormalised; seeds 0-9;
- the synthetic suite of tests/test_defaults.py: ``make_tagger_outputs(20000)``
  with ``miscalibration=0`` against the default 1.0; seeds 0-2;
- UD English-EWT test (2,077 sentences, 25,094 tokens, 322 ``UPOS|FEATS``
  tags), the count-based tagger of ``examples/_ud_unigram.py`` trained on all
  of train: its real gold against gold drawn from its own scores (calibrated
  by construction, same scores); resampling seeds 0-4.

    PYTHONPATH=.:examples .venv/bin/python benchmarks/mce_defaults.py

Prints a markdown table per case (docs/metrics.md, "MCE").
"""
import warnings

import numpy as np

import sparsecal as sc
from sparsecal.datasets import make_tagger_outputs
from sparsecal.metrics.debiased import debiased_terms


def per_tag_clipped(result):
    """Kumar et al.'s package's marginal CE: each tag's ``sqrt(max(D, 0))``,
    then the root mean square over the tags."""
    d = [max(float(w @ t), 0.0) for w, t, _ in (debiased_terms(c.bins)
                                                for c in result.per_tag.values())]
    return float(np.sqrt(np.mean(d)))


def scores_of(entries):
    """(plug-in, debiased, per-tag clipped) MCE of thresholded entries."""
    plug_in = sc.mce(entries, debias=False).value
    debiased = sc.mce(entries)
    return plug_in, debiased.value, per_tag_clipped(debiased)


def drawn_gold(scores, seed):
    """Gold drawn from each row of ``scores``: a calibrated tagger by construction."""
    cum = np.cumsum(scores.astype(np.float64), 1)
    u = np.random.default_rng(seed).random(scores.shape[0]) * cum[:, -1]
    return (u[:, None] > cum).sum(1)


def issue_case(seed):
    data = make_tagger_outputs(30000, n_tags=300, miscalibration=0.0, split_seed=seed)
    sharp = data.scores.astype(np.float64) ** 1.3
    sharp /= sharp.sum(1, keepdims=True)
    return (sc.threshold(data.scores, data.gold),
            sc.threshold(sharp.astype(np.float32), data.gold))


def suite_case(seed):
    return tuple(sc.threshold(d.scores, d.gold) for d in
                 (make_tagger_outputs(20000, split_seed=seed, miscalibration=m)
                  for m in (0.0, 1.0)))


def ud_cases(seeds):
    import _ud_unigram
    scores, gold = _ud_unigram.load(train=12543, dev=1, test=2077)["test"]
    real = sc.threshold(scores, gold)
    return {seed: (sc.threshold(scores, drawn_gold(scores, seed)), real) for seed in seeds}


def table(title, cases):
    print(f"\n{title}\n")
    print("| seed | tags | plug-in: calibrated | miscalibrated | ratio | debiased: calibrated "
          "| miscalibrated | ratio | per-tag clipped: calibrated | miscalibrated | ratio |")
    print("|---" * 11 + "|")
    for seed, (good, bad) in cases.items():
        g, b = scores_of(good), scores_of(bad)
        cells = []
        for x, y in zip(g, b):
            cells += [f"{x:.4f}", f"{y:.4f}", "∞" if x == 0 else f"{y / x:.2f}"]
        print(f"| {seed} | {len(sc.mce(good).per_tag)} | " + " | ".join(cells) + " |")


def main():
    warnings.simplefilter("ignore", UserWarning)
    table("Issue 26: Zipfian 300 tags, 30,000 tokens; calibrated vs sharpened p^1.3",
          {s: issue_case(s) for s in range(10)})
    table("Synthetic suite: make_tagger_outputs(20000), miscalibration 0 vs 1",
          {s: suite_case(s) for s in range(3)})
    table("UD EWT test, unigram tagger: gold drawn from its scores vs the real gold",
          ud_cases(range(5)))


if __name__ == "__main__":
    main()
