"""Jagannatha & Yu (2020)'s pipeline on real spans: proper-name spans of UD
English-EWT (maximal runs of PROPN, tagged BIO), a CRF tagger, span events of its
top-k sequences, a forecaster, and re-ranking.

1. Spans: each maximal run of ``PROPN`` tokens is one ``NAME`` span (``B-NAME``,
   ``I-NAME``, ``O`` elsewhere).
2. A linear-chain CRF (sklearn-crfsuite; word, word-class and bias features and
   transitions, as in ``ud_ewt_hmm_crf.py``) trained on the training set, read
   back as log potentials.
3. Span events of the top 3 sequences of dev and test with their exact
   length-normalised marginals ``p^(1/l)`` (J&Y eq. 6, one model so no MC average)
   and the features rank, length, type (:func:`sparsecal.structured.crf_span_events`).
4. The forecaster: :func:`sparsecal.calibration.heuristic_k` over k in {1, 2, 3} on dev
   (J&Y Algorithm 1), then the chosen forecaster on the test events; Platt scaling of
   the confidence alone as J&Y's baseline.
5. ECE (20 fixed bins, J&Y eq. 4) of the test spans of the top-1 sequence (J&Y
   Table 3) before and after; span F1 before and after re-ranking with cutoff 0.5
   (J&Y Table 4, :func:`sparsecal.structured.rerank_spans`).

Usage::

    python examples/ud_ewt_spans.py --data ../shared/data/ud_ewt

Needs torch, scikit-learn and sklearn-crfsuite.
"""
import json
import os
import sys

import numpy as np

import sparsecal as sc
from sparsecal.calibration import heuristic_k
from sparsecal.io import read_conllu
from sparsecal.structured import crf_span_events, rerank_spans

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ud_ewt_hmm_crf import arguments, crf_potentials, pad, train_crf  # noqa: E402

NAMES = ["O", "B-NAME", "I-NAME"]


def name_spans(data_dir, split, limit=None):
    """(forms, BIO gold ids, lengths) of a split: runs of PROPN as NAME spans."""
    corpus = read_conllu(os.path.join(data_dir, f"en_ewt-ud-{split}.conllu.xz"), "upos")
    lengths = np.diff(corpus.offsets)
    forms = np.asarray(corpus.forms, dtype=str)
    propn = corpus.gold == corpus.tag_index["PROPN"]
    first = np.zeros(propn.shape[0], bool)
    first[corpus.offsets[:-1]] = True
    prev = np.concatenate([[False], propn[:-1]]) & ~first
    gold = np.where(propn, np.where(prev, 2, 1), 0)
    if limit is not None:
        lengths = lengths[:limit]
        end = int(lengths.sum())
        forms, gold = forms[:end], gold[:end]
    return forms, gold, lengths


def span_events(model, forms, gold, lengths, k, tag_names=NAMES):
    pot = crf_potentials(model, forms, lengths, tag_names)
    return crf_span_events(pot["emissions"], pot["transitions"],
                           pad(gold, lengths, fill=-1), tag_names, k=k, lengths=lengths,
                           normalize=True)


def features(ev):
    return {**ev.features, "mean": ev.entries.score}


def ece(p, y, ci=None):
    """J&Y eq. 4: 20 fixed-width bins, norm 1 (``ci``: as in
    :func:`sparsecal.calibration_error`)."""
    return sc.calibration_error(p, y, norm=1, binning="fixed", n_bins=20, ci=ci)


def run(data_dir, out_dir, figures_dir=None, *, limit=None, k_max=3, c2=0.1,
        log=print):
    """The whole pipeline; returns the summary dict (also written to ``out_dir``)."""
    data = {s: name_spans(data_dir, s, limit) for s in ("train", "dev", "test")}
    return span_study(data, NAMES, out_dir, figures_dir, k_max=k_max, c2=c2, log=log,
                      title="UD EWT test: NAME spans of the top-1 sequence",
                      figure="ud_ewt_spans_forecaster.png")


def span_study(data, tag_names, out_dir, figures_dir=None, *, k_max=3, c2=0.1, log=print,
               title, figure):
    """Steps 2-5 on ``data[split] = (forms, BIO gold ids, lengths)`` tagged with
    ``tag_names``; the summary, also written to ``out_dir``."""
    os.makedirs(out_dir, exist_ok=True)
    model = train_crf(*data["train"], tag_names, c2)
    dev = span_events(model, *data["dev"], k_max, tag_names)
    test = span_events(model, *data["test"], k_max, tag_names)
    log(f"span events (top {k_max}): dev {len(dev):,} ({dev.entries.label.mean():.1%} "
        f"correct), test {len(test):,}")
    choice = heuristic_k(features(dev), dev.entries.label, ks=tuple(range(1, k_max + 1)),
                         forecaster=sc.Forecaster(max_iter=100))
    log(f"heuristic k = {choice.k} (ECE on dev rank-1 spans per k: "
        + ", ".join(f"{k}: {e:.4f}" for k, e in zip(choice.ks, choice.ece)) + ")")
    keep = test.rank <= choice.k
    conf = np.zeros(len(test))
    conf[keep] = choice.forecaster.predict({n: c[keep] for n, c in features(test).items()})
    top = test.rank == 1
    platt = sc.PlattCalibrator().fit(dev.entries.score[dev.rank == 1],
                                     dev.entries.label[dev.rank == 1])
    y = test.entries.label[top]
    results = {"uncalibrated": ece(test.entries.score[top], y),
               "Platt (confidence alone)": ece(platt.predict(test.entries.score[top]), y),
               f"forecaster (top-{choice.k})": ece(conf[top], y)}
    gold_padded = pad(data["test"][1], data["test"][2], fill=-1)
    rerank = rerank_spans(test, conf, gold_padded, tag_names, cutoff=0.5)
    summary = {"n_dev_events": len(dev), "n_test_events": len(test),
               "heuristic_k": choice.to_dict(),
               "ece_top1": {name: r.value for name, r in results.items()},
               "span_f1_before": rerank.spans_before.to_dict(),
               "span_f1_after": rerank.spans_after.to_dict(), "n_changed": rerank.n_changed}
    for name, r in results.items():
        log(f"test ECE of the rank-1 spans, {name}: {r.value:.4f}")
    log(f"span F1 before {rerank.spans_before.f1:.4f}, after re-ranking "
        f"{rerank.spans_after.f1:.4f} ({rerank.n_changed} spans changed)")
    with open(os.path.join(out_dir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
    if figures_dir is not None:
        import matplotlib
        matplotlib.use("Agg")
        from sparsecal.plotting import ModifiedReliabilityDisplay, save_figure
        os.makedirs(figures_dir, exist_ok=True)
        fig = ModifiedReliabilityDisplay.from_results(results).plot(title=title).figure_
        save_figure(fig, os.path.join(figures_dir, figure))
    return summary


def main(argv=None):
    args = arguments(__doc__, "ud_ewt_spans_out").parse_args(argv)
    print(json.dumps(run(args.data, args.out, args.figures, limit=args.limit), indent=2))


if __name__ == "__main__":
    main()
