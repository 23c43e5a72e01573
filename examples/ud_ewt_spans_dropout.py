"""Jagannatha & Yu (2020)'s full pipeline with MC dropout on real spans and
sequences: proper-name spans of UD English-EWT, a neural CRF tagger with
dropout, MC-dropout features, the forecaster, and re-ranking.

1. Spans: each maximal run of ``PROPN`` tokens is one ``NAME`` span (BIO), as
   in ``ud_ewt_spans.py``.
2. A small neural CRF tagger in PyTorch: embeddings of the lower-cased word,
   its 3-letter suffix and its shape (:func:`sparsecal.structured.word_classes`
   and whether it begins the sentence) -> dropout -> a BiLSTM -> dropout ->
   emissions, under a linear-chain CRF (transitions, start and end scores)
   trained by the negative log-likelihood, ``log Z`` from
   :func:`sparsecal.crf.log_partition` (autograd).
3. MC dropout (J&Y Section 2.6, Appendix A Algorithm 1):
   :func:`sparsecal.structured.mc_dropout_samples` runs the emissions S = 10 times with
   dropout on; the top-k sequences (k = 3) are decoded from the **MC-dropout
   average of the emissions** with the (deterministic) transitions, as J&Y do
   ("the logits ... averaged over 10 MC-Dropout samples before being fed into
   the final output layer"). The events are the 3 sequences (J&Y Section 3.1)
   and the spans in them (Section 3.2); each event is scored in each sample by
   its exact CRF marginal, length-normalised ``p^(1/l)`` (eqs. 5, 6), and
   :func:`sparsecal.structured.sample_confidence` gives the features mean, p10, p90, std
   (J&Y's "mean" and "Var"), next to rank, length and type.
4. Calibration of the rank-1 test events: ECE (20 fixed bins, J&Y eq. 4) with a
   95% bootstrap interval, and the log loss with its CORP decomposition
   (:func:`sparsecal.log_loss_corp`: miscalibration MCB, discrimination DSC) of:
   the uncalibrated probability, Platt on the MC mean alone (J&Y's baseline),
   and forecasters chosen by :func:`sparsecal.calibration.heuristic_k` over k in {1, 2, 3}
   on dev (and the k = 3 one) for three feature sets (each with rank, length
   and type): the dropout-off model's ``p^(1/l)`` ("no MC features"); J&Y's MC
   mean and "Var" (p10, p90, std); the dropout-off ``p^(1/l)`` with "Var".
5. Re-ranking on test: span F1 with :func:`sparsecal.structured.rerank_spans` (cutoff 0.5,
   J&Y Table 4) and exact match with :func:`sparsecal.structured.rerank_sequences`
   (J&Y Table 2), with the sentences made right / wrong and McNemar's exact
   p-value.

Figures go to ``--figures`` (``docs/figures``), numbers to ``--out/summary.json``.
About 3 minutes on a busy 2-core machine (loading and 3 epochs: about one).

Usage::

    python examples/ud_ewt_spans_dropout.py --data ../shared/data/ud_ewt

Needs torch and scikit-learn (``pip install ".[torch,sklearn]"`` in the checkout).
"""
import json
import os
import sys
import time

import numpy as np
import torch
from torch import nn

import sparsecal as sc
from sparsecal import crf
from sparsecal.calibration import heuristic_k
from sparsecal.structured import (crf_event_probabilities, crf_sequence_events,
                                  crf_span_events, decode_spans, mc_dropout_samples,
                                  rerank_sequences, rerank_spans, sample_confidence,
                                  span_f1, word_classes)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _crf_nll import crf_nll  # noqa: E402
from ud_ewt_hmm_crf import arguments, pad  # noqa: E402
from ud_ewt_spans import NAMES, ece, name_spans  # noqa: E402

SPLITS = ("train", "dev", "test")
#: the forecasters' feature sets (all with rank, length and type): the
#: dropout-off model's p^(1/l); J&Y's MC mean and "Var" (p10, p90, std); both
FEATURE_SETS = {"no MC features": "plain", "MC-dropout features": "mc",
                "dropout-off p + Var": "p_var"}


# ------------------------------------------------------------- features -- #

def token_keys(forms, lengths):
    """Per token: lower-cased word, lower-cased 3-letter suffix, and shape id
    (word class x sentence-initial)."""
    lower = np.strings.lower(forms)
    first = np.zeros(forms.shape[0], np.int64)
    first[np.cumsum(lengths) - lengths] = 1
    return {"word": lower, "suffix": np.strings.slice(lower, -3, None),
            "shape": word_classes(forms) * 2 + first}


def vocabularies(keys, min_count=2):
    """The training values seen at least ``min_count`` times, sorted."""
    out = {}
    for name in ("word", "suffix"):
        values, counts = np.unique(keys[name], return_counts=True)
        out[name] = values[counts >= min_count]
    return out


def lookup(values, vocabulary):
    """Ids ``2 + index`` of known values, 1 for unknown ones (0 is padding)."""
    pos = np.minimum(np.searchsorted(vocabulary, values), max(vocabulary.shape[0] - 1, 0))
    known = vocabulary.shape[0] > 0 and vocabulary[pos] == values
    return np.where(known, pos + 2, 1)


def encode(forms, lengths, vocab):
    """Padded ids ``[B, N, 3]`` (word, suffix, shape; 0 = padding)."""
    keys = token_keys(forms, lengths)
    ids = np.stack([lookup(keys["word"], vocab["word"]),
                    lookup(keys["suffix"], vocab["suffix"]), keys["shape"] + 1], axis=1)
    return torch.from_numpy(pad(ids.astype(np.int64), lengths))


# ---------------------------------------------------------------- model -- #

class DropoutCRFTagger(nn.Module):
    """Embeddings -> dropout -> BiLSTM -> dropout -> emissions, with CRF
    transitions, start and end scores. ``forward(ids)`` returns the emissions
    ``[B, N, C]`` (the only random part: MC dropout samples these)."""

    def __init__(self, sizes, n_tags, dims=(48, 24, 8), hidden=48, dropout=0.3):
        super().__init__()
        self.embed = nn.ModuleList(nn.Embedding(n, d, padding_idx=0)
                                   for n, d in zip(sizes, dims))
        self.drop_in = nn.Dropout(dropout)
        self.lstm = nn.LSTM(sum(dims), hidden, batch_first=True, bidirectional=True)
        self.drop_out = nn.Dropout(dropout)
        self.out = nn.Linear(2 * hidden, n_tags)
        self.transitions = nn.Parameter(torch.zeros(n_tags, n_tags))
        self.start = nn.Parameter(torch.zeros(n_tags))
        self.end = nn.Parameter(torch.zeros(n_tags))

    def forward(self, ids):
        x = self.drop_in(torch.cat([e(ids[..., i]) for i, e in enumerate(self.embed)], -1))
        lengths = (ids[..., 0] > 0).sum(1)
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True,
                                                   enforce_sorted=False)
        h, _ = nn.utils.rnn.pad_packed_sequence(self.lstm(packed)[0], batch_first=True,
                                                total_length=ids.shape[1])
        return self.out(self.drop_out(h))

    def potentials(self, emissions, lengths):
        """Keyword arguments of the ``sparsecal.crf`` functions."""
        return {"emissions": emissions, "transitions": self.transitions.detach(),
                "start": self.start.detach(), "end": self.end.detach(),
                "lengths": torch.as_tensor(lengths)}


def batches(lengths, size, rng=None):
    """Index chunks of similar-length sentences (shuffled with ``rng``)."""
    order = np.argsort(lengths, kind="stable")
    chunks = [order[i:i + size] for i in range(0, order.shape[0], size)]
    if rng is not None:
        rng.shuffle(chunks)
    return chunks


def train_tagger(ids, gold, lengths, vocab, *, epochs=3, batch_size=32, lr=3e-3, seed=0,
                 log=print):
    """Adam on the CRF negative log-likelihood; seeded."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    sizes = (vocab["word"].shape[0] + 2, vocab["suffix"].shape[0] + 2,
             int(ids[..., 2].max()) + 1)
    model = DropoutCRFTagger(sizes, len(NAMES))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    gold_t, len_t = torch.from_numpy(gold), torch.from_numpy(lengths)
    for epoch in range(epochs):
        model.train()
        t0, total = time.perf_counter(), 0.0
        for idx in batches(lengths, batch_size, rng):
            n = int(lengths[idx].max())
            opt.zero_grad()
            loss = crf_nll(model(ids[idx, :n]), model.transitions, model.start, model.end,
                           gold_t[idx, :n], len_t[idx])
            loss.backward()
            opt.step()
            total += float(loss.detach()) * int(lengths[idx].sum())
        log(f"epoch {epoch + 1}: train NLL/token {total / lengths.sum():.4f} "
            f"({time.perf_counter() - t0:.0f} s)")
    return model.eval()


def viterbi_span_f1(model, ids, gold, lengths):
    """Span F1 of the dropout-off tagger's Viterbi output (its own quality)."""
    with torch.no_grad():
        paths, _ = crf.viterbi(**model.potentials(model(ids), lengths))
    return span_f1(decode_spans(paths.numpy(), NAMES, "bio", lengths),
                   decode_spans(gold, NAMES, "bio", lengths), gold.shape[1])


# --------------------------------------------------------------- events -- #

def mc_events(model, ids, gold, lengths, *, k=3, n_samples=10, seed=0):
    """Span and sequence events of the top k of the MC-averaged emissions, with
    their J&Y features. Returns ``({"span": (events, features, P), "sequence":
    ...}, samples, deterministic)``: ``features`` maps each name of
    :data:`FEATURE_SETS` to its columns, ``P`` [S, n_events] is every event's
    ``p^(1/l)`` in every sample, ``samples`` [S, B, N, C] the MC-dropout
    emissions and ``deterministic`` [B, N, C] the dropout-off ones."""
    with torch.no_grad():
        deterministic = model(ids)
    samples = mc_dropout_samples(model, ids, n_samples=n_samples, seed=seed)
    pot = model.potentials(samples.mean(0), lengths)
    em = pot.pop("emissions")
    events = {"span": crf_span_events(em, gold=gold, tag_names=NAMES, k=k, **pot),
              "sequence": crf_sequence_events(em, gold=gold, k=k, **pot)}
    out = {}
    for kind, ev in events.items():
        P = np.stack([crf_event_probabilities(ev, s, normalize=True, **pot)
                      for s in samples])
        det = crf_event_probabilities(ev, deterministic, normalize=True, **pot)
        mc = sample_confidence(P).features()
        var = {n: mc[n] for n in ("p_low", "p_high", "std")}
        out[kind] = (ev, {"plain": {**ev.features, "p": det}, "mc": {**ev.features, **mc},
                          "p_var": {**ev.features, "p": det, **var}},
                     P)
    return out, samples, deterministic


# ---------------------------------------------------------- calibration -- #

def forecasts(dev, test, ks=(1, 2, 3)):
    """Test confidences of every method for one event kind, and the heuristic-k
    choices. ``dev`` / ``test`` are ``(Events, features, P)``."""
    (dev_ev, dev_f, _), (test_ev, test_f, _) = dev, test
    y_dev, top = dev_ev.entries.label, dev_ev.rank == 1
    platt = sc.PlattCalibrator().fit(dev_f["mc"]["mean"][top], y_dev[top])
    conf = {"uncalibrated p": test_ev.entries.score,
            "uncalibrated MC mean p^(1/l)": test_f["mc"]["mean"],
            "Platt (MC mean alone)": platt.predict(test_f["mc"]["mean"])}
    choices = {}
    for name, cols in FEATURE_SETS.items():
        choice = heuristic_k(dev_f[cols], y_dev, ks=ks,
                             forecaster=sc.Forecaster(max_iter=100))
        choices[name] = choice
        models = {choice.k: choice.forecaster}
        if max(ks) not in models:                   # also J&Y's full top-k forecaster
            models[max(ks)] = sc.Forecaster(max_iter=100).fit(dev_f[cols], y_dev)
        for k, model in models.items():
            keep = test_ev.rank <= k
            c = np.zeros(len(test_ev))
            c[keep] = model.predict({n: v[keep] for n, v in test_f[cols].items()})
            conf[f"forecaster, {name}, k = {k}"] = c
    return conf, choices


def evaluate(kind, test_ev, conf, gold):
    """ECE of the rank-1 test events per method (with a 95% bootstrap interval),
    their log loss with its CORP decomposition, and re-ranking by each forecaster."""
    top, y = test_ev.rank == 1, test_ev.entries.label[test_ev.rank == 1]
    ci = sc.ConfidenceInterval("bootstrap", random_state=0)
    results = {name: ece(c[top], y, ci=ci) for name, c in conf.items()}
    corp = {name: sc.log_loss_corp(c[top], y) for name, c in conf.items()}
    reranked = {}
    for name, c in conf.items():
        if name.startswith("forecaster"):
            r = (rerank_spans(test_ev, c, gold, NAMES, cutoff=0.5) if kind == "span"
                 else rerank_sequences(test_ev, c, gold, NAMES))
            reranked[name] = r
    return results, corp, reranked


def sentence_changes(test_ev, r):
    """Sentences the re-ranking made right and made wrong, and McNemar's exact
    two-sided p-value (a binomial test of the changed sentences at 1/2)."""
    from scipy.stats import binomtest

    top = np.flatnonzero(test_ev.rank == 1)
    top = top[np.argsort(test_ev.sentence[top], kind="stable")]
    label = test_ev.entries.label.astype(bool)
    fixed = int((label[r.chosen] & ~label[top]).sum())
    broken = int((~label[r.chosen] & label[top]).sum())
    p = binomtest(fixed, fixed + broken).pvalue if fixed + broken else 1.0
    return {"made_right": fixed, "made_wrong": broken, "mcnemar_p": float(p)}


def summarise(kind, results, corp, reranked, choices, test_ev):
    out = {"ece_top1": {n: r.value for n, r in results.items()},
           "log_loss_top1": {n: d.to_dict() for n, d in corp.items()},
           "ece_top1_bootstrap_95": {n: [r.ci_low, r.ci_high] for n, r in results.items()},
           "heuristic_k": {n: c.to_dict() for n, c in choices.items()}, "reranking": {}}
    for name, r in reranked.items():
        d = {"n_changed": r.n_changed, "span_f1_before": r.spans_before.to_dict(),
             "span_f1_after": r.spans_after.to_dict()}
        if kind == "sequence":
            d.update(exact_match_before=r.exact_match_before,
                     exact_match_after=r.exact_match_after, **sentence_changes(test_ev, r))
        out["reranking"][name] = d
    return out


def load(data_dir, limit=None):
    """Per split ``(ids [B, N, 3] tensor, gold [B, N] with -1 padding, lengths)``,
    the vocabularies from the training split."""
    data = {s: name_spans(data_dir, s, limit) for s in SPLITS}
    vocab = vocabularies(token_keys(data["train"][0], data["train"][2]))
    return {s: (encode(forms, lengths, vocab), pad(gold, lengths, fill=-1), lengths)
            for s, (forms, gold, lengths) in data.items()}, vocab


def event_counts(events):
    e = events.entries.label
    return {"n": len(events), "correct": int(e.sum()), "rank1": int((events.rank == 1).sum()),
            "rank1_correct": int(e[events.rank == 1].sum())}


def study(model, splits, out_dir, figures_dir=None, *, n_samples=10, k_max=3, seed=0,
          log=print):
    """Steps 3-5 for a trained tagger on the dev and test ``splits`` (as
    :func:`load`); returns the summary dict (also written to ``out_dir``)."""
    os.makedirs(out_dir, exist_ok=True)
    ev = {s: mc_events(model, *splits[s], k=k_max, n_samples=n_samples, seed=seed)[0]
          for s in ("dev", "test")}
    summary = {"n_samples": n_samples, "k": k_max,
               "viterbi_span_f1": {s: viterbi_span_f1(model, *splits[s]).to_dict()
                                   for s in ("dev", "test")}}
    log("span F1 of the tagger's Viterbi output (dropout off): " + ", ".join(
        f"{s} {v['f1']:.4f}" for s, v in summary["viterbi_span_f1"].items()))
    figure_data = {}
    for kind in ("span", "sequence"):
        for s in ("dev", "test"):
            summary[f"{s}_{kind}_events"] = event_counts(ev[s][kind][0])
        conf, choices = forecasts(ev["dev"][kind], ev["test"][kind],
                                  ks=tuple(range(1, k_max + 1)))
        results, corp, reranked = evaluate(kind, ev["test"][kind][0], conf, splits["test"][1])
        summary[kind] = summarise(kind, results, corp, reranked, choices, ev["test"][kind][0])
        figure_data[kind] = results
        log_results(kind, results, corp, reranked, log)
    save(summary, out_dir)
    if figures_dir is not None:
        draw(figure_data, figures_dir, n_samples)
    return summary


def save(summary, out_dir):
    with open(os.path.join(out_dir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)


def log_results(kind, results, corp, reranked, log):
    for name, r in results.items():
        log(f"{kind}s, test ECE of rank-1 events, {name}: {r.value:.4f} "
            f"[{r.ci_low:.4f}, {r.ci_high:.4f}], log loss {corp[name].score:.4f} "
            f"(MCB {corp[name].miscalibration:.4f}, DSC {corp[name].discrimination:.4f})")
    for name, r in reranked.items():
        exact = ("" if kind == "span" else
                 f", exact match {r.exact_match_before:.4f} -> {r.exact_match_after:.4f}")
        log(f"{kind}s, re-ranking by {name}: span F1 {r.spans_before.f1:.4f} -> "
            f"{r.spans_after.f1:.4f}{exact} ({r.n_changed} changed)")


def run(data_dir, out_dir, figures_dir=None, *, limit=None, epochs=3, lr=3e-3,
        batch_size=32, n_samples=10, k_max=3, seed=0, log=print):
    """The whole pipeline; returns the summary dict (also written to ``out_dir``)."""
    t0 = time.perf_counter()
    torch.set_num_threads(1)
    splits, vocab = load(data_dir, limit)
    model = train_tagger(*splits["train"], vocab, epochs=epochs, batch_size=batch_size,
                         lr=lr, seed=seed, log=log)
    t_train = time.perf_counter() - t0
    summary = study(model, splits, out_dir, figures_dir, n_samples=n_samples, k_max=k_max,
                    seed=seed, log=log)
    summary.update(sentences={s: int(v[2].shape[0]) for s, v in splits.items()},
                   epochs=epochs, load_and_train_seconds=round(t_train, 1),
                   seconds=round(time.perf_counter() - t0, 1))
    save(summary, out_dir)
    return summary


TITLES = {"span": "NAME spans of the top-1 sequence", "sequence": "top-1 tag sequences"}


def draw(results, figures_dir, n_samples):
    """J&Y's reliability plot (accuracy - confidence per bin, 20 bins) of every
    method, one figure per event kind."""
    import matplotlib
    matplotlib.use("Agg")
    from sparsecal.plotting import ModifiedReliabilityDisplay, save_figure
    os.makedirs(figures_dir, exist_ok=True)
    for kind, res in results.items():
        fig = ModifiedReliabilityDisplay.from_results(res).plot(
            title=f"UD EWT test, {TITLES[kind]} (dropout CRF, {n_samples} MC samples)"
        ).figure_   # the methods' key below the axes
        save_figure(fig, os.path.join(figures_dir, f"ud_ewt_dropout_{kind}s.png"))


def main(argv=None):
    parser = arguments(__doc__, "ud_ewt_spans_dropout_out")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--samples", type=int, default=10)
    args = parser.parse_args(argv)
    print(json.dumps(run(args.data, args.out, args.figures, limit=args.limit,
                         epochs=args.epochs, n_samples=args.samples), indent=2))


if __name__ == "__main__":
    main()
