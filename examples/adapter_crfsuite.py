"""sklearn-crfsuite: the calibration of a CRF's ``predict_marginals``.

Trains an sklearn-crfsuite CRF (L-BFGS, word and suffix features of a ±1 window)
on a slice of UD English-EWT with morphological ``UPOS|FEATS`` tags, turns its
``predict_marginals`` on test sentences into thresholded entries with
``sparsecal.adapters.entries_from_crfsuite`` (columns in the order of the training tags,
plus ``<UNK>``), and evaluates them: SMCE, GMCE per tag-frequency group, top-label
ECE, with the calibration curves. Needs ``pip install ".[crfsuite]"`` in the checkout.

Usage::

    python examples/adapter_crfsuite.py --train 300 --test 150 --out crfsuite_out
"""
import sklearn_crfsuite

from sparsecal.adapters import entries_from_crfsuite
from _ud_slice import report, start


def features(words):
    """Per token: the lower-cased word, its suffixes, its shape, and its neighbours."""
    def one(i):
        w = words[i]
        f = {"w": w.lower(), "s2": w[-2:], "s3": w[-3:], "title": w.istitle(),
             "digit": w.isdigit()}
        f["-1"] = words[i - 1].lower() if i > 0 else "<s>"
        f["+1"] = words[i + 1].lower() if i + 1 < len(words) else "</s>"
        return f
    return [one(i) for i in range(len(words))]


def main(argv=None):
    args, train, test, tags = start(__doc__, argv)
    crf = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.05, c2=0.01, max_iterations=30)
    crf.fit([features(w) for w, _ in train], [t for _, t in train])
    marginals = crf.predict_marginals([features(w) for w, _ in test])
    entries = entries_from_crfsuite(marginals, [t for _, t in test], labels=tags)
    report(entries, train, tags, args.out)


if __name__ == "__main__":
    main()
