"""Nguyen & O'Connor (2015)'s coreference study (Sections 5-6) on GUM: an
antecedent model's pairwise probabilities, their calibration, and entity-level
quantities with sampling-based intervals (docs/coreference.md).

1. Data: gold mentions, entities and types from :func:`sparsecal.io.read_coref`;
   UPOS, HEAD and FEATS from :func:`sparsecal.io.read_conllu`.
2. Model (N&O Definition 2, the mention-ranking family of Durrett & Klein
   2013): mention i picks NEW or one of the ``window`` previous mentions of its
   document with ``p(a_i = j) ~ exp(w . f(i, j))``. Binary features, those of
   pairs conjoined with the anaphor's kind (pronoun / proper / nominal, by the
   UPOS of the mention's syntactic head): mention and sentence distance bins,
   exact string match, head match, entity-type agreement, number agreement
   (``Number`` of the heads), kind of the antecedent, nesting; for two
   pronouns, same or different pronoun class (I, we, you, he, she, it, they);
   NEW: kind, type, the first word's determiner class (definite, indefinite),
   nested. Trained on train by the latent-antecedent log-likelihood (any gold
   antecedent in the window; NEW when none is) with an L2 penalty (L-BFGS);
   penalty and window chosen on dev by the CoNLL F1 of the most probable
   antecedents.
3. Test: S samples per document (:func:`sparsecal.structured.sample_entities`),
   pairwise probabilities ``q_ij`` (N&O Section 5.3), their calibration (CE with
   intervals, 10 equal-mass and 20 fixed bins,
   :func:`sparsecal.calibration_test`, Platt, isotonic and histogram
   binning fitted on dev pairs), the calibration of each mention's most
   probable antecedent decision (its probability against whether gold
   agrees), entity-level quantities with 95% sample intervals and how often
   they cover gold, and MUC / B-cubed / CEAF-e
   (:func:`sparsecal.structured.coreference_scores`).

Numbers go to ``--out/summary.json``, figures to ``--figures``. About 2
minutes on a busy 2-core machine (six settings, 1,000 samples per test
document); ``--quick`` (20 train, 4 dev and 4 test documents, one setting,
100 samples) about 10 seconds.

Usage::

    python examples/gum_coreference.py --data ../shared/data/gum
"""
import argparse
import json
import os

import numpy as np
from scipy import sparse
from scipy.optimize import minimize

import sparsecal as sc
from sparsecal.io import read_conllu, read_coref
from sparsecal.structured import (coreference_probabilities, coreference_scores,
                                  sample_entities, sample_percentiles)

SPLITS = ("train", "dev", "test")
KINDS = 3                                              # pronoun, proper, nominal
MENTION_BINS = np.array([1, 2, 3, 4, 5, 9, 17, 33])     # lower edges of i - j
SENTENCE_BINS = np.array([0, 1, 2, 3, 6, 11])           # lower edges of the sentence gap
PRONOUNS = {w: k for k, ws in enumerate((
    "i me my mine myself", "we us our ours ourselves", "you your yours yourself yourselves",
    "he him his himself", "she her hers herself", "it its itself",
    "they them their theirs themselves"), start=1) for w in ws.split()}
DETERMINERS = {"the": 1, "this": 1, "that": 1, "these": 1, "those": 1, "a": 2, "an": 2}


# ------------------------------------------------------------- mentions -- #

def _column(path, name):
    tags = read_conllu(path, name)
    names = np.array(sorted(tags.tag_index, key=tags.tag_index.get), dtype=object)
    return names[tags.gold], tags.offsets


def load(data_dir, split, n_docs=None):
    """The corpus of one split and the per-mention attributes the features use."""
    path = os.path.join(data_dir, f"en_gum-cc-by-{split}.conllu.xz")
    c = read_coref(path)
    upos, offsets = _column(path, "upos")
    head, _ = _column(path, "head")
    feats, _ = _column(path, "feats")
    sentence = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    head = head.astype(np.int64)
    head_at = np.where(head > 0, offsets[sentence] + head - 1, -1)
    M = c.n_mentions if n_docs is None else int(np.searchsorted(
        c.mention_document, n_docs))
    s, e = c.start[:M], c.end[:M]
    # the syntactic head: the first token whose head lies outside the mention
    length = e - s
    m_of = np.repeat(np.arange(M), length)
    tok = np.arange(length.sum()) - np.repeat(np.cumsum(length) - length, length) + s[m_of]
    out = (head_at[tok] < s[m_of]) | (head_at[tok] >= e[m_of])
    first = np.minimum.reduceat(np.where(out, tok, np.iinfo(np.int64).max),
                                np.cumsum(length) - length)
    h = np.where(first < e, first, e - 1)
    lower = np.array([f.lower() for f in c.forms], dtype=object)
    text = np.array([" ".join(lower[a:b]) for a, b in zip(s, e)], dtype=object)  # per mention
    hu = upos[h]
    kind = np.where(hu == "PRON", 0, np.where(hu == "PROPN", 1, 2))
    hf = feats[h].astype(str)
    number = np.where(np.char.find(hf, "Number=Sing") >= 0, 1,
                      np.where(np.char.find(hf, "Number=Plur") >= 0, 2, 0))
    return dict(
        corpus=c, M=M, doc=c.mention_document[:M], sentence=c.mention_sentence[:M],
        start=s, end=e, entity=c.entity[:M], type=c.mention_type[:M], kind=kind,
        depth=c.depth[:M], number=number,
        text=np.unique(text, return_inverse=True)[1].reshape(-1),
        head=np.unique(lower[h], return_inverse=True)[1].reshape(-1),
        pronoun=np.array([PRONOUNS.get(w, 0) for w in lower[h]]) * (kind == 0),
        det=np.array([DETERMINERS.get(w, 0) for w in lower[s]]),
        n_types=len(c.types), types=c.types)


# ------------------------------------------------------------- features -- #

def candidates(m, window):
    """Rows per mention: NEW, then the previous mentions of its document
    (nearest first); returns ``(mention, antecedent, starts)``, -1 for NEW."""
    i = np.arange(m["M"])
    doc_first = np.searchsorted(m["doc"], m["doc"])
    n = np.minimum(window, i - doc_first) + 1
    starts = np.cumsum(n) - n
    mention = np.repeat(i, n)
    back = np.arange(n.sum()) - np.repeat(starts, n)
    return mention, np.where(back == 0, -1, mention - back), starts


def features(m, mention, ante):
    """The binary feature matrix of the candidate rows (CSR) and its width."""
    rows, cols, width = [], [], 0

    def add(mask, col, size):
        nonlocal width
        r = np.flatnonzero(mask)
        rows.append(r)
        cols.append(width + (col[r] if np.ndim(col) else np.full(r.size, col)))
        width += size

    new, pair = ante < 0, ante >= 0
    j = np.where(pair, ante, 0)
    k = m["kind"][mention]
    dist = np.searchsorted(MENTION_BINS, mention - j, side="right") - 1
    sdist = np.searchsorted(SENTENCE_BINS, m["sentence"][mention] - m["sentence"][j],
                            side="right") - 1
    both_num = (m["number"][mention] > 0) & (m["number"][j] > 0)
    same_num = m["number"][mention] == m["number"][j]
    pi, pj = m["pronoun"][mention], m["pronoun"][j]
    nested = ((m["start"][j] <= m["start"][mention]) & (m["end"][mention] <= m["end"][j])) | \
        ((m["start"][mention] <= m["start"][j]) & (m["end"][j] <= m["end"][mention]))
    add(pair, k * len(MENTION_BINS) + dist, KINDS * len(MENTION_BINS))
    add(pair, k * len(SENTENCE_BINS) + sdist, KINDS * len(SENTENCE_BINS))
    add(pair & (m["text"][mention] == m["text"][j]), k, KINDS)
    add(pair & (m["head"][mention] == m["head"][j]), k, KINDS)
    add(pair & (m["type"][mention] == m["type"][j]), k, KINDS)
    add(pair & both_num & same_num, k, KINDS)
    add(pair & both_num & ~same_num, k, KINDS)
    add(pair & (pi > 0) & (pi == pj), 0, 1)
    add(pair & (pi > 0) & (pj > 0) & (pi != pj), 0, 1)
    add(pair, k * KINDS + m["kind"][j], KINDS * KINDS)
    add(pair & nested, 0, 1)
    add(pair, k * 3 + m["det"][j], KINDS * 3)
    add(new, k, KINDS)
    add(new, m["type"][mention], m["n_types"])
    add(new, k * 3 + m["det"][mention], KINDS * 3)
    add(new & (m["depth"][mention] > 0), 0, 1)
    r, c = np.concatenate(rows), np.concatenate(cols)
    X = sparse.csr_matrix((np.ones(r.size), (r, c)), shape=(mention.size, width))
    return X


class AntecedentModel:
    """The log-linear antecedent model, its training and its probabilities."""

    def __init__(self, window, l2):
        self.window, self.l2 = window, l2

    def _design(self, m):
        mention, ante, starts = candidates(m, self.window)
        return features(m, mention, ante), mention, ante, starts

    def _softmax(self, s, starts, n):
        top = np.maximum.reduceat(s, starts)
        e = np.exp(s - np.repeat(top, n))
        return e, np.repeat(np.add.reduceat(e, starts), n)

    def objective(self, m):
        """The penalised mean negative log-likelihood of the gold antecedents
        (a function of the weights returning value and gradient) and its width."""
        X, mention, ante, starts = self._design(m)
        n = np.diff(np.r_[starts, mention.size])
        ent = m["entity"]
        gold = (ante >= 0) & (ent[np.maximum(ante, 0)] == ent[mention])
        has = np.add.reduceat(gold, starts) > 0
        gold |= (ante < 0) & ~has[mention]
        N = m["M"]

        def loss(w):
            e, Z = self._softmax(X @ w, starts, n)
            eg = e * gold
            Zg = np.repeat(np.add.reduceat(eg, starts), n)
            value = (np.log(Z[starts]).sum() - np.log(Zg[starts]).sum()) / N
            grad = X.T @ (e / Z - eg / Zg) / N
            return value + self.l2 / 2 * w @ w, grad + self.l2 * w
        return loss, X.shape[1]

    def fit(self, m):
        loss, width = self.objective(m)
        res = minimize(loss, np.zeros(width), jac=True, method="L-BFGS-B",
                       options={"maxiter": 300})
        self.w_, self.train_loss_ = res.x, float(res.fun)
        return self

    def antecedents(self, m):
        """``P[d]``: the [M_d, M_d] antecedent matrix of document ``d`` (NEW on the
        diagonal), one per document."""
        X, mention, ante, starts = self._design(m)
        n = np.diff(np.r_[starts, mention.size])
        e, Z = self._softmax(X @ self.w_, starts, n)
        first = np.searchsorted(m["doc"], m["doc"])
        P = []
        for d in np.unique(m["doc"]):                   # a loop over documents
            lo, hi = np.searchsorted(m["doc"], [d, d + 1])
            rows = slice(starts[lo], starts[hi] if hi < starts.size else mention.size)
            i = mention[rows] - first[lo]
            j = np.where(ante[rows] < 0, mention[rows], ante[rows]) - first[lo]
            Pd = np.zeros((hi - lo, hi - lo))
            Pd[i, j] = (e / Z)[rows]
            P.append(Pd)
        return P


def map_entities(P):
    """Each mention's entity under its most probable antecedent (first mention)."""
    A = np.zeros_like(P)
    A[np.arange(P.shape[0]), P.argmax(1)] = 1.0
    return sample_entities(A, 1)[0]


def doc_gold(m):
    return [m["entity"][m["doc"] == d] for d in np.unique(m["doc"])]


def clustering_scores(P, gold):
    """MUC / B-cubed / CEAF-e / CoNLL of the most probable antecedents, all documents."""
    offset = np.cumsum([0] + [p.shape[0] for p in P])[:-1]
    pred = np.concatenate([map_entities(p) + o for p, o in zip(P, offset)])
    return coreference_scores(np.concatenate(gold), pred)


# ---------------------------------------------------------- sampling -- #

def sample(P, n_samples, rng, chunk=50):
    """``n_samples`` entity samples of one document, drawn in chunks (memory)."""
    return np.concatenate([sample_entities(P, min(chunk, n_samples - lo), random_state=rng)
                           for lo in range(0, n_samples, chunk)])


def pair_arrays(P, gold, samples):
    """Pairwise q_ij (i < j) and labels of every document; each mention's most
    probable antecedent decision, its probability and whether gold agrees
    (NEW: the mention is its entity's first)."""
    q, y, conf, right = [], [], [], []
    for Pd, g, e in zip(P, gold, samples):
        iu = np.triu_indices(Pd.shape[0], 1)
        q.append(coreference_probabilities(e)[iu])
        y.append(g[iu[0]] == g[iu[1]])
        a, i = Pd.argmax(1), np.arange(Pd.shape[0])
        first = np.zeros(g.size, bool)
        first[np.unique(g, return_index=True)[1]] = True
        conf.append(Pd[i, a])
        right.append(np.where(a == i, first, g[a] == g))
    cat = lambda xs: np.concatenate(xs)                 # noqa: E731
    return cat(q), cat(y).astype(np.uint8), cat(conf), cat(right).astype(np.uint8)


def entity_quantities(m, samples, gold):
    """Per sample: entities per document, entities per (document, type), and
    the test set's entities and mentions per type (an entity's type: its first
    mention's); with the gold values."""
    T = m["n_types"]
    per_doc, per_doc_type, g_doc, g_doc_type = [], [], [], []
    ments = g_ments = 0
    for d, e, g in zip(np.unique(m["doc"]), samples, gold):
        onehot = np.eye(T, dtype=np.int64)[m["type"][m["doc"] == d]]
        root = e == np.arange(e.shape[1])
        per_doc.append(root.sum(1))
        per_doc_type.append(root.astype(np.int64) @ onehot)        # (S, T)
        ments = ments + onehot[e].sum(1)               # mentions by their entity's type
        _, first, inverse = np.unique(g, return_index=True, return_inverse=True)
        g_doc.append(first.size)
        g_doc_type.append(onehot[first].sum(0))
        g_ments = g_ments + onehot[first[inverse.reshape(-1)]].sum(0)
    ents, g_ents = sum(per_doc_type), sum(g_doc_type)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_entity, g_per_entity = ments / ents, g_ments / g_ents
    return {
        "entities per document": (np.array(per_doc, float), np.array(g_doc)),
        "entities per (document, type)": (
            np.concatenate([c.T for c in per_doc_type]).astype(float),
            np.concatenate(g_doc_type)),
        "entities per type (test set)": (ents.T.astype(float), g_ents),
        "mentions per entity, by type": (per_entity.T, g_per_entity)}


def coverage(values, gold, level=0.95):
    """Sample intervals of each item and whether they cover gold."""
    ok = np.isfinite(values).all(1) & np.isfinite(gold)
    est = sample_percentiles(values[ok], confidence_level=level)
    inside = (est.low <= gold[ok]) & (gold[ok] <= est.high)
    return est, inside, ok


# ---------------------------------------------------------------- main -- #

def run(data_dir, out_dir, figures_dir=None, *, quick=False, seed=0, log=print):
    """The whole study; returns the summary written to ``out_dir/summary.json``."""
    n_docs = dict(train=20, dev=4, test=4) if quick else dict(train=None, dev=None,
                                                               test=None)
    grid = [(30, 1e-3)] if quick else [(w, l2) for w in (30, 100)
                                         for l2 in (1e-5, 1e-4, 1e-3)]
    S = 100 if quick else 1000
    data = {s: load(data_dir, s, n_docs[s]) for s in SPLITS}
    gold = {s: doc_gold(data[s]) for s in SPLITS}
    log("mentions " + ", ".join(f"{s} {data[s]['M']}" for s in SPLITS))
    dev_f1 = {}
    for window, l2 in grid:                             # settings chosen on dev
        model = AntecedentModel(window, l2).fit(data["train"])
        dev_f1[(window, l2)] = (clustering_scores(model.antecedents(data["dev"]),
                                                  gold["dev"])["conll"], model)
        log(f"window {window}, l2 {l2}: dev CoNLL F1 {dev_f1[(window, l2)][0]:.4f}")
    (window, l2), (_, model) = max(dev_f1.items(), key=lambda kv: kv[1][0])
    rng = np.random.default_rng(seed)
    P = {s: model.antecedents(data[s]) for s in ("dev", "test")}
    samples = {s: [sample(p, S, rng) for p in P[s]] for s in ("dev", "test")}
    pairs = {s: pair_arrays(P[s], gold[s], samples[s]) for s in ("dev", "test")}
    q, y, conf, right = pairs["test"]
    ci = sc.ConfidenceInterval(random_state=seed)
    calibrators = {"Platt": sc.PlattCalibrator(), "isotonic": sc.IsotonicCalibrator(),
                   "histogram binning": sc.HistogramBinning(n_bins=15)}
    recalibrated = {"uncalibrated": q}
    for name, cal in calibrators.items():
        cal.fit(pairs["dev"][0], pairs["dev"][1])
        recalibrated[name] = np.clip(cal.predict(q), 0, 1)
    results = {k: sc.calibration_error(v, y, ci=ci) for k, v in recalibrated.items()}
    fixed = {k: sc.calibration_error(v, y, binning="fixed", n_bins=20, ci=ci)
             for k, v in recalibrated.items()}
    test = sc.calibration_test(q, y, n_resamples=99 if quick else 999, random_state=seed)
    decisions = sc.calibration_error(conf, right, ci=ci)
    nonzero = q >= 0.01
    summary = {
        "window": window, "l2": l2, "n_samples": S,
        "dev_conll_f1": {f"window {w}, l2 {c}": v[0] for (w, c), v in dev_f1.items()},
        "mentions": {s: int(data[s]["M"]) for s in SPLITS},
        "scores": {s: clustering_scores(P[s], gold[s]) for s in ("dev", "test")},
        "n_pairs": int(q.size), "positive_rate": float(y.mean()),
        "pairwise_ce": {k: r.to_dict() for k, r in results.items()},
        "pairwise_ce_fixed_20": {k: r.to_dict() for k, r in fixed.items()},
        "pairwise_ce_q_at_least_0.01": sc.calibration_error(
            q[nonzero], y[nonzero], ci=ci).to_dict(),
        "calibration_test": {"statistic": float(test.statistic), "p_value": test.p_value},
        "q_at_least_0.01_mean_and_rate": {
            split: [float(pairs[split][0][pairs[split][0] >= 0.01].mean()),
                    float(pairs[split][1][pairs[split][0] >= 0.01].mean())]
            for split in ("dev", "test")},
        "recalibrated_0.5": {k: float(np.clip(c.predict(np.array([0.5])), 0, 1)[0])
                             for k, c in calibrators.items()},
        "decision_ce": decisions.to_dict(), "decision_accuracy": float(right.mean()),
        "entities": {}}
    for name, (values, g) in entity_quantities(data["test"], samples["test"],
                                                gold["test"]).items():
        est, inside, ok = coverage(values, g)
        summary["entities"][name] = {
            "n_items": int(ok.sum()), "coverage": float(inside.mean()),
            "mean_width": float((est.high - est.low).mean()),
            "items": [{"gold": float(gv), "mean": float(mv), "low": float(lo),
                       "high": float(hi)} for gv, mv, lo, hi in
                      zip(g[ok], est.estimate, est.low, est.high)][:16]}
    t = summary["scores"]["test"]
    log(f"chosen window {window}, l2 {l2}; test MUC {t['muc']['f1']:.4f}, B3 "
        f"{t['b3']['f1']:.4f}, CEAF-e {t['ceafe']['f1']:.4f}, CoNLL {t['conll']:.4f}")
    for k, r in results.items():
        log(f"pairwise CE ({k}): {r.value:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}]")
    log(f"calibration test p = {test.p_value:.4f}; CE of the most probable antecedent "
        f"decisions {decisions.value:.4f} (accuracy {right.mean():.4f})")
    for k, v in summary["entities"].items():
        log(f"{k}: 95% intervals cover gold {v['coverage']:.2f} of {v['n_items']}")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
    if figures_dir is not None:
        draw(fixed, summary["entities"]["entities per document"], figures_dir)
    return summary


def draw(results, per_doc, figures_dir):
    """The reliability diagram of the test pairs (20 fixed bins) and the
    entities-per-document intervals."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sparsecal.plotting import reliability_diagram, save_figure

    os.makedirs(figures_dir, exist_ok=True)
    names = ["uncalibrated", "Platt", "isotonic"]
    fig = reliability_diagram([results[n] for n in names], labels=names,
                              title="GUM test: pairwise coreference probabilities")
    save_figure(fig, os.path.join(figures_dir, "gum_coreference_reliability.png"))
    items = per_doc["items"]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    x = np.arange(len(items))
    mean = np.array([it["mean"] for it in items])
    err = np.array([[it["mean"] - it["low"], it["high"] - it["mean"]] for it in items]).T
    ax.errorbar(x, mean, yerr=err, fmt="o", ms=3, label="sampled (95% interval)")
    ax.plot(x, [it["gold"] for it in items], "kx", label="gold")
    ax.set_xticks(x)
    ax.set_xlabel("test document")
    ax.set_ylabel("entities")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    fig.tight_layout()   # the legend above the axes: it covers no document
    save_figure(fig, os.path.join(figures_dir, "gum_coreference_entities.png"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.path.join("..", "shared", "data", "gum"))
    parser.add_argument("--out", default="gum_coreference_out")
    parser.add_argument("--figures", default=os.path.join("docs", "figures"))
    parser.add_argument("--quick", action="store_true", help="a small slice (CI)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    summary = run(args.data, args.out, args.figures, quick=args.quick, seed=args.seed)
    print(json.dumps({k: summary[k] for k in ("window", "l2", "scores", "calibration_test")},
                     indent=2))


if __name__ == "__main__":
    main()
