"""HMM versus CRF calibration of POS tagging on UD English-EWT (Nguyen & O'Connor
2015, Section 4.2, Figures 3 and 4).

The tags are the Penn Treebank tags of EWT's XPOS column (N&O tag WSJ with the
same 45-tag set). Both models see the same evidence — the word, its tag and
its neighbour's tag (N&O: "only basic transition and emission features") —
and an unknown word only through its class
(:func:`sparsecal.structured.word_classes`):

1. an HMM (:class:`sparsecal.structured.SupervisedHMM`, add-k counts; the
   pseudocount chosen by dev accuracy) on the whole training set;
2. a linear-chain CRF with word, word-class and bias features and tag
   transitions (sklearn-crfsuite, L-BFGS, L2 chosen by dev accuracy) on its
   first ``--crf-sentences`` sentences (N&O: 3,000, so that both reach about
   the same accuracy);
3. both as log potentials — the CRF's from its weights — through the same
   forward-backward (:mod:`sparsecal.crf`): token marginals and tag-pair
   marginals of the test set;
4. calibration of the token and pair entries at or above 0.01 (the
   package's threshold; N&O keep all): CalibErr of all token predictions
   (Fig. 3), per tag for the most frequent tags (Fig. 4a) and per tag pair
   (Fig. 4b, :func:`sparsecal.mce`'s per-tag CE_2, bins of 200 entries), with the
   averages over the 5 and all tags, the 5 and 100 pairs, and how many tags
   and pairs the CRF calibrates better.

Figures go to ``--figures`` (``docs/figures`` in the repository), numbers to
``--out/summary.json``.

Usage::

    python examples/ud_ewt_hmm_crf.py --data ../shared/data/ud_ewt

Needs torch and sklearn-crfsuite (``pip install ".[torch,crfsuite]"`` in the checkout).
"""
import argparse
import json
import os
import time

import numpy as np

import sparsecal as sc
from sparsecal import crf
from sparsecal.io import read_conllu
from sparsecal.structured import SupervisedHMM, most_frequent_pairs, pair_entries, word_classes

SPLITS = ("train", "dev", "test")


def load(data_dir, limit=None):
    """The three splits as :class:`~sparsecal.io.CorpusTags` of XPOS, with one tag
    index (train's; a dev/test tag unseen in train has gold -1)."""
    train = read_conllu(os.path.join(data_dir, "en_ewt-ud-train.conllu.xz"), "xpos")
    index = train.tag_index
    out = {"train": train}
    for split in SPLITS[1:]:
        out[split] = read_conllu(os.path.join(data_dir, f"en_ewt-ud-{split}.conllu.xz"),
                                 "xpos", tag_index=index, unknown=-1)
    if limit is not None:
        out = {k: first_sentences(v, limit) for k, v in out.items()}
    return out, [t for t, _ in sorted(index.items(), key=lambda kv: kv[1])]


def first_sentences(corpus, n):
    """(forms, gold, lengths) of the first ``n`` sentences."""
    forms, gold, lengths = split_arrays(corpus)
    n = min(n, lengths.shape[0])
    end = int(lengths[:n].sum())
    return forms[:end], gold[:end], lengths[:n]


def split_arrays(corpus):
    if isinstance(corpus, tuple):
        return corpus
    return (np.asarray(corpus.forms, dtype=str), corpus.gold, np.diff(corpus.offsets))


# ------------------------------------------------------------------ CRF -- #

def crf_features(forms, lengths):
    """sklearn-crfsuite features: per sentence, per token ``{w, cls, bias}``."""
    cls = word_classes(forms)
    out, start = [], 0
    for L in lengths:
        out.append([{"w": forms[i], "cls": str(cls[i]), "bias": 1.0}
                    for i in range(start, start + L)])
        start += L
    return out


def train_crf(forms, gold, lengths, tag_names, c2):
    import sklearn_crfsuite

    labels, start = [], 0
    for L in lengths:
        labels.append([tag_names[g] if g >= 0 else "_" for g in gold[start:start + L]])
        start += L
    model = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.0, c2=c2, max_iterations=100,
                                 all_possible_transitions=True)
    model.fit(crf_features(forms, lengths), labels)
    return model


def crf_potentials(model, forms, lengths, tag_names):
    """The CRF's log potentials from its weights: emission ``sum_f w(f, c)`` over
    the token's features (``-inf`` for a tag missing from the CRF's training
    data: crfsuite never predicts it), transitions ``w(a, b)``, no start / end."""
    C = len(tag_names)
    col = {t: i for i, t in enumerate(tag_names)}
    attrs = {}
    for (attr, label), w in model.state_features_.items():
        attrs.setdefault(attr, np.zeros(C))[col[label]] = w
    trans = np.zeros((C, C))
    for (a, b), w in model.transition_features_.items():
        trans[col[a], col[b]] = w
    cls = word_classes(forms)
    zero = np.zeros(C)
    bias = attrs.get("bias", zero)
    em_flat = np.stack([attrs.get(f"w:{w}", zero) for w in forms]) \
        + np.stack([attrs.get(f"cls:{c}", zero) for c in cls]) + bias
    em_flat[:, [t not in model.classes_ for t in tag_names]] = -np.inf
    return {"emissions": pad(em_flat, lengths), "transitions": trans,
            "start": np.zeros(C), "end": np.zeros(C), "lengths": lengths}


def pad(flat, lengths, fill=0):
    """Token rows ``[n_tokens, ...]`` -> a padded ``[B, N, ...]`` batch."""
    B, N = lengths.shape[0], int(lengths.max())
    out = np.full((B, N) + flat.shape[1:], fill, dtype=flat.dtype)
    sentence = np.repeat(np.arange(B), lengths)
    position = np.arange(flat.shape[0]) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    out[sentence, position] = flat
    return out


# ------------------------------------------------------------ posteriors -- #

def posteriors(pot, gold, batch=64, threshold=0.01, pairs=True):
    """Token marginals ``[n_tokens, C]`` (corpus order), Viterbi accuracy, and
    (with ``pairs``) tag-pair entries, in batches of sentences."""
    lengths = pot["lengths"]
    C = pot["transitions"].shape[0]
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    tokens = np.zeros((offsets[-1], C))
    correct = 0
    pair_list = []
    for b0 in range(0, lengths.shape[0], batch):
        idx = np.arange(b0, min(b0 + batch, lengths.shape[0]))
        L = lengths[idx]
        N = int(L.max())
        kw = {"emissions": pot["emissions"][idx, :N], "transitions": pot["transitions"],
              "start": pot["start"], "end": pot["end"], "lengths": L}
        m = crf.marginals(**kw).numpy()
        rows = np.arange(offsets[idx[0]], offsets[idx[-1] + 1])
        g = pad(gold[rows], L, fill=-1)
        real = np.arange(N)[None] < L[:, None]
        tokens[rows] = m[real]
        path, _ = crf.viterbi(**kw)
        correct += int(((path.numpy() == g) & (g >= 0))[real].sum())
        if pairs and N > 1:
            pm = crf.pair_marginals(**kw).numpy()
            pair_list.append(pair_entries(pm, g, L, threshold=threshold))
    accuracy = correct / max(int((gold >= 0).sum()), 1)
    if not pairs:
        return tokens, accuracy, None
    pair = sc.Entries(np.concatenate([e.score for e in pair_list]),
                      np.concatenate([e.tag for e in pair_list]),
                      np.concatenate([e.label for e in pair_list]), n_tags=C * C)
    return tokens, accuracy, pair


def averages(per_tag, order, ns):
    """N&O's "Average (n)": the mean CE of the n most frequent tags (or pairs) that
    were evaluated."""
    ce = [per_tag[t].value for t in order if t in per_tag]
    return {f"average_{n}": float(np.mean(ce[:n])) for n in ns}


def calibration(tokens, gold, pair, seed, threshold=0.01, min_entries=None):
    """Overall, per-tag and per-pair calibration of one model, on the entries at
    or above the threshold (Kranzlein et al. 2021, Section 3.1: N&O keep every
    tag of every token, whose near-zero scores then fill most bins)."""
    ent = sc.threshold(tokens, gold, threshold=threshold)
    ci = sc.ConfidenceInterval(random_state=seed)
    overall = sc.calibration_error(ent.score, ent.label, ci=ci)
    # N&O's per-tag CE is the plug-in CE_2 (mce's default is the debiased one)
    per_tag = sc.mce(ent, min_entries=min_entries, debias=False)
    per_pair = sc.mce(pair, min_entries=min_entries, debias=False)
    return ent, overall, per_tag, per_pair


# ------------------------------------------------------------------ main -- #

def run(data_dir, out_dir, figures_dir=None, *, limit=None, crf_sentences=3000,
        hmm_pseudocounts=(0.01, 0.1, 1.0), crf_c2=(0.1, 1.0), min_entries=None, seed=0,
        log=print):
    """Fit both taggers, compute posteriors, measure calibration; returns the summary
    (``min_entries``: of a tag or pair to get its own CE, :func:`sparsecal.mce`)."""
    os.makedirs(out_dir, exist_ok=True)
    splits, tag_names = load(data_dir, limit)
    data = {k: split_arrays(v) for k, v in splits.items()}
    C = len(tag_names)
    f_tr, g_tr, l_tr = data["train"]
    log(f"UD EWT XPOS: {C} tags; sentences " + ", ".join(
        f"{k} {data[k][2].shape[0]:,}" for k in SPLITS))

    t0 = time.perf_counter()
    best = None
    for a in hmm_pseudocounts:
        hmm = SupervisedHMM(a, a).fit(f_tr, g_tr, l_tr, n_tags=C)
        _, acc, _ = posteriors(hmm.potentials(*data["dev"][::2]), data["dev"][1],
                               pairs=False)
        log(f"HMM pseudocount {a}: dev accuracy {acc:.2%}")
        best = max(best or (acc, a, hmm), (acc, a, hmm), key=lambda x: x[0])
    hmm_acc_dev, hmm_a, hmm = best
    log(f"HMM fitted in {time.perf_counter() - t0:.0f} s")

    t0 = time.perf_counter()
    sub = first_sentences((f_tr, g_tr, l_tr), crf_sentences)
    best = None
    for c2 in crf_c2:
        model = train_crf(*sub, tag_names, c2)
        pot = crf_potentials(model, data["dev"][0], data["dev"][2], tag_names)
        _, acc, _ = posteriors(pot, data["dev"][1], pairs=False)
        log(f"CRF c2 {c2}: dev accuracy {acc:.2%}")
        best = max(best or (acc, c2, model), (acc, c2, model), key=lambda x: x[0])
    crf_acc_dev, crf_c2_best, model = best
    log(f"CRF ({sub[2].shape[0]:,} training sentences) fitted in "
        f"{time.perf_counter() - t0:.0f} s")

    forms, gold, lengths = data["test"]
    pots = {"HMM": hmm.potentials(forms, lengths),
            "CRF": crf_potentials(model, forms, lengths, tag_names)}
    results, summary = {}, {"n_tags": C, "n_test_tokens": int(gold.shape[0]),
                            "hmm_pseudocount": hmm_a, "crf_c2": crf_c2_best,
                            "crf_sentences": int(sub[2].shape[0])}
    tag_order = np.argsort(-np.bincount(g_tr, minlength=C), kind="stable")
    pair_order, _ = most_frequent_pairs(pad(g_tr, l_tr, fill=-1), C, n=100, lengths=l_tr)
    for name, pot in pots.items():
        tokens, acc, pair = posteriors(pot, gold)
        ent, overall, per_tag, per_pair = calibration(tokens, gold, pair, seed,
                                                     min_entries=min_entries)
        results[name] = (ent, overall, per_tag, per_pair)
        summary[name] = {"test_accuracy": acc, "calib_err": overall.value,
                         "calib_err_ci": [overall.ci_low, overall.ci_high],
                         "overconfident_share": _overconfident_share(overall),
                         **{f"tags_{k}": v for k, v in
                            averages(per_tag.per_tag, tag_order, (5, C)).items()},
                         **{f"pairs_{k}": v for k, v in
                            averages(per_pair.per_tag, pair_order, (5, 100)).items()}}
        log(f"{name}: test accuracy {acc:.2%}, CalibErr {overall.value:.4f} "
            f"[{overall.ci_low:.4f}, {overall.ci_high:.4f}]")
    for k, order, n, what in ((2, tag_order, C, "tags"), (3, pair_order, 100, "pairs")):
        both = [t for t in order[:n] if t in results["CRF"][k].per_tag
                and t in results["HMM"][k].per_tag]
        summary[f"crf_better_{what}"] = [
            sum(results["CRF"][k].per_tag[t].value < results["HMM"][k].per_tag[t].value
                for t in both), len(both)]
    with open(os.path.join(out_dir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
    if figures_dir is not None:
        draw(results, tag_names, tag_order, pair_order, figures_dir)
    return summary


def _overconfident_share(ce):
    """Share of the entries in bins whose mean score exceeds their label rate."""
    b = ce.bins
    over = b.sum_score > b.sum_label
    return float(b.count[over].sum() / b.count.sum())


def draw(results, tag_names, tag_order, pair_order, figures_dir):
    """Fig. 3 (reliability of all token predictions) and Fig. 4 (per tag, per pair)."""
    import matplotlib
    matplotlib.use("Agg")
    from sparsecal.plotting import PerTagDisplay, reliability_diagram, save_figure

    os.makedirs(figures_dir, exist_ok=True)
    names = list(results)
    fig = reliability_diagram([results[n][1] for n in names], labels=names,
                              title="UD EWT test, all XPOS tags: HMM vs CRF")
    save_figure(fig, os.path.join(figures_dir, "ud_ewt_hmm_crf_reliability.png"))
    C = len(tag_names)
    pair_names = {a * C + b: f"{tag_names[a]}-{tag_names[b]}" for a in range(C)
                  for b in range(C)}
    for key, label, top, fname in ((2, "tags", 5, "ud_ewt_hmm_crf_tags.png"),
                                   (3, "tag pairs", 5, "ud_ewt_hmm_crf_pairs.png")):
        fig = PerTagDisplay.from_results(
            {n: results[n][key] for n in names}, top=top,
            tag_names=pair_names if key == 3 else list(tag_names)).plot(
            title=f"CalibErr of the {top} most frequent {label} (UD EWT test)").figure_
        save_figure(fig, os.path.join(figures_dir, fname))


def arguments(doc, out):
    """The command-line flags shared by the UD EWT structured examples."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--data", default=os.path.join("..", "shared", "data", "ud_ewt"))
    parser.add_argument("--out", default=out)
    parser.add_argument("--figures", default=os.path.join("docs", "figures"))
    parser.add_argument("--limit", type=int, help="sentences per split (quick runs)")
    return parser


def main(argv=None):
    parser = arguments(__doc__, "ud_ewt_hmm_crf_out")
    parser.add_argument("--crf-sentences", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    summary = run(args.data, args.out, args.figures, limit=args.limit,
                  crf_sentences=args.crf_sentences, seed=args.seed)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
