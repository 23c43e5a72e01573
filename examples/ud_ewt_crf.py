"""Real end-to-end use of sparsecal: calibrate a CRF tagger on UD English-EWT.

The tagset is the morphological tag ``UPOS|FEATS`` (e.g. ``NOUN|Number=Sing``):
321 tags in train, long-tailed — a sparse tagset like CCG supertags. The script

1. trains a small linear-chain CRF tagger (window features -> MLP emissions +
   learned transitions) on train, with early stopping on dev accuracy;
2. extracts token marginals of dev and test with forward-backward
   (``sparsecal.crf``), thresholded straight into entries;
3. evaluates SMCE and per-group GMCE over tag frequency groups (TFG) built from
   the training counts;
4. recalibrates per TFG group with isotonic regression fit on dev, and reports
   test calibration before and after (the layout of Kranzlein et al. 2021,
   Table 1), plus the tagger's accuracy, and saves the calibration curves
   (pooled and per group) and the CE per method and group as PNG figures.

Adapting it to your tagger: replace ``train_tagger`` by your model and feed its
emissions and transitions (log potentials) to ``sparsecal.crf.stream_entries``
(or, for a softmax tagger, its probabilities to ``sparsecal.threshold``); steps
3-4 stay as they are.

Usage (the full run: 8 epochs over all of train, 30 minutes or more on a 2-core
machine; ``--limit`` and ``--epochs`` make a quick one)::

    python examples/ud_ewt_crf.py --data ../shared/data/ud_ewt --out ud_ewt_out
    python examples/ud_ewt_crf.py --data ../shared/data/ud_ewt --out ud_ewt_out \
        --limit 300 --epochs 2

Needs the torch extra (``pip install ".[torch]"`` in the checkout).
"""
import argparse
import collections
import json
import lzma
import os
import time
import zlib

import numpy as np
import torch
from torch import nn

import sparsecal as sc
from sparsecal import crf
from sparsecal.calibration.comparison import compare_methods
from _crf_nll import crf_nll
from _figures import save_figures

UNK_TAG = "<UNK>"   # dev/test tags never seen in train (like CCG's <UNKNOWN>)
PROGRESS_EVERY = 10.0   # seconds between the progress lines of a long step


def say(*parts):
    """Print a progress line at once (also when stdout is a pipe or a file)."""
    print(*parts, flush=True)


# ------------------------------------------------------------------ data -- #

def read_conllu(path, limit=None):
    """Sentences as lists of (form, "UPOS|FEATS") pairs (multiword tokens and
    empty nodes skipped)."""
    sentences, current = [], []
    with lzma.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if current:
                    sentences.append(current)
                    current = []
                    if limit is not None and len(sentences) >= limit:
                        break
                continue
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            if "-" in cols[0] or "." in cols[0]:
                continue
            current.append((cols[1], f"{cols[3]}|{cols[5]}"))
    if current and (limit is None or len(sentences) < limit):
        sentences.append(current)
    return sentences


N_HASH = 1 << 18   # hashed feature buckets


def _hash(feature):
    return zlib.crc32(feature.encode("utf-8")) % N_HASH


def token_features(form):
    """Hashed sparse features of one word form: lowercased word, prefixes,
    suffixes and word shape."""
    low = form.lower()
    shape = "".join("X" if c.isupper() else "x" if c.islower() else "d" if c.isdigit()
                    else c for c in form)[:6]
    feats = [f"w={low}", f"shape={shape}", f"cap={form[:1].isupper()}"]
    feats += [f"s{k}={low[-k:]}" for k in (1, 2, 3, 4) if len(low) >= k]
    feats += [f"p{k}={low[:k]}" for k in (1, 2, 3) if len(low) >= k]
    return [_hash(f) for f in feats]


class Encoded:
    """Sentences as padded feature-id tensors, gold tag ids and lengths."""

    def __init__(self, sentences, tag_index):
        self.lengths = np.array([len(s) for s in sentences], dtype=np.int64)
        self.tokens = [[token_features(w) for w, _ in s] for s in sentences]
        self.gold = [np.array([tag_index.get(t, tag_index[UNK_TAG]) for _, t in s])
                     for s in sentences]

    def batches(self, batch_size, shuffle=False, rng=None):
        """Batches of similar-length sentences (little padding)."""
        order = np.argsort(self.lengths, kind="stable")
        chunks = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
        if shuffle:
            rng.shuffle(chunks)
        for idx in chunks:
            yield idx, self._pad(idx)

    def _pad(self, idx):
        n = int(self.lengths[idx].max())
        width = max(len(f) for i in idx for f in self.tokens[i])
        feats = np.zeros((len(idx), n, width), dtype=np.int64)   # 0 = padding id
        mask = np.zeros((len(idx), n, width), dtype=np.float32)
        gold = np.full((len(idx), n), -1, dtype=np.int64)
        for b, i in enumerate(idx):
            for t, f in enumerate(self.tokens[i]):
                feats[b, t, :len(f)] = np.asarray(f) + 1
                mask[b, t, :len(f)] = 1.0
            gold[b, :self.lengths[i]] = self.gold[i]
        return (torch.from_numpy(feats), torch.from_numpy(mask), torch.from_numpy(gold),
                torch.from_numpy(self.lengths[idx]))


# ----------------------------------------------------------------- model -- #

class WindowCRFTagger(nn.Module):
    """Emissions from hashed token features of a +-1 window through an MLP;
    a learned [C, C] transition matrix with start/end scores."""

    def __init__(self, n_tags, dim=64, hidden=256):
        super().__init__()
        self.embed = nn.EmbeddingBag(N_HASH + 1, dim, mode="sum", padding_idx=0)
        self.mlp = nn.Sequential(nn.Linear(3 * dim, hidden), nn.ReLU(), nn.Dropout(0.2),
                                 nn.Linear(hidden, n_tags))
        self.transitions = nn.Parameter(torch.zeros(n_tags, n_tags))
        self.start = nn.Parameter(torch.zeros(n_tags))
        self.end = nn.Parameter(torch.zeros(n_tags))

    def emissions(self, feats, mask):
        B, N, W = feats.shape
        tok = self.embed(feats.view(B * N, W), per_sample_weights=mask.view(B * N, W)
                         ).view(B, N, -1)
        pad = tok.new_zeros(B, 1, tok.shape[-1])
        window = torch.cat([torch.cat([pad, tok[:, :-1]], 1), tok,
                            torch.cat([tok[:, 1:], pad], 1)], dim=-1)
        return self.mlp(window)

    def nll(self, feats, mask, gold, lengths):
        """Mean negative log-likelihood per token of the gold sequences."""
        return crf_nll(self.emissions(feats, mask), self.transitions, self.start, self.end,
                       gold, lengths)


def train_tagger(train, dev, n_tags, *, epochs=8, batch_size=32, lr=2e-3, seed=0,
                 log=say):
    """Train with Adam; keep the parameters of the epoch with the best dev accuracy."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = WindowCRFTagger(n_tags)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    best, best_state = -1.0, None
    n_batches = -(-len(train.lengths) // batch_size)
    for epoch in range(epochs):
        model.train()
        start, total = time.perf_counter(), 0.0
        shown = start
        for b, (_, (feats, mask, gold, lengths)) in enumerate(
                train.batches(batch_size, True, rng), 1):
            opt.zero_grad()
            loss = model.nll(feats, mask, gold, lengths)
            loss.backward()
            opt.step()
            total += float(loss.detach()) * int(lengths.sum())
            if time.perf_counter() - shown >= PROGRESS_EVERY and b < n_batches:
                shown = time.perf_counter()
                log(f"  epoch {epoch + 1}/{epochs}: batch {b}/{n_batches} "
                    f"({shown - start:.0f} s)")
        acc = accuracy(model, dev)
        log(f"epoch {epoch + 1}: train NLL/token {total / train.lengths.sum():.3f}, "
            f"dev accuracy {acc:.2%} ({time.perf_counter() - start:.0f} s)")
        if acc > best:
            best = acc
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    model.eval()
    return model


def _potentials(model, encoded, batch_size=64):
    """Yield per-batch CRF potentials with gold tags, in corpus order."""
    with torch.no_grad():
        for idx, (feats, mask, gold, lengths) in encoded.batches(batch_size):
            yield idx, {"emissions": model.emissions(feats, mask),
                        "transitions": model.transitions, "start": model.start,
                        "end": model.end, "lengths": lengths, "gold": gold}


def accuracy(model, encoded):
    """Token accuracy of Viterbi decoding."""
    model.eval()
    correct = total = 0
    for _, pot in _potentials(model, encoded):
        paths, _ = crf.viterbi(pot["emissions"], pot["transitions"], lengths=pot["lengths"],
                               start=pot["start"], end=pot["end"])
        real = pot["gold"] >= 0
        correct += int(((paths == pot["gold"]) & real).sum())
        total += int(real.sum())
    return correct / total


def marginal_entries(model, encoded, threshold, n_tags, dense_out=None):
    """Thresholded token marginals of a whole split, tokens in corpus order;
    with ``dense_out`` ([n_tokens, n_tags]) the dense marginals go there too."""
    order = []

    def batches():
        for idx, pot in _potentials(model, encoded):
            order.append(idx)
            yield pot

    entries = crf.stream_entries(batches(), threshold=threshold, n_tags=n_tags,
                                 dense_out=dense_out)
    # stream_entries numbers tokens in batch order; map them back to corpus order.
    sent_start = np.concatenate(([0], np.cumsum(encoded.lengths)))
    batch_tokens = np.concatenate([np.concatenate(
        [np.arange(sent_start[i], sent_start[i + 1]) for i in idx]) for idx in order])
    if dense_out is not None:
        dense_out[batch_tokens] = dense_out.copy()
    token = batch_tokens[entries.token]
    sort = np.argsort(token, kind="stable")
    return sc.Entries(entries.score[sort], entries.tag[sort], entries.label[sort],
                      token[sort], n_tags=n_tags, n_tokens=int(encoded.lengths.sum()),
                      threshold=threshold)


# ------------------------------------------------------------------ main -- #

def run(data_dir, out_dir, *, limit=None, epochs=8, threshold=0.01, n_groups=5, seed=0,
        save_scores=False, log=say):
    """Train, extract marginals, evaluate, recalibrate; returns the summary dict.

    With ``save_scores`` the dense dev/test marginals, gold tags, training counts
    and tag index are written to ``out_dir`` for ``sparsecal evaluate/compare``."""
    torch.set_num_threads(1)   # faster than 2 on a 2-core machine (docs/performance.md)
    os.makedirs(out_dir, exist_ok=True)
    started = time.perf_counter()
    log(f"reading UD EWT from {data_dir}" + (f" ({limit} sentences per split)" if limit else ""))
    train_s = read_conllu(os.path.join(data_dir, "en_ewt-ud-train.conllu.xz"), limit)
    dev_s = read_conllu(os.path.join(data_dir, "en_ewt-ud-dev.conllu.xz"), limit)
    test_s = read_conllu(os.path.join(data_dir, "en_ewt-ud-test.conllu.xz"), limit)
    counts = collections.Counter(t for s in train_s for _, t in s)
    tags = [t for t, _ in counts.most_common()] + [UNK_TAG]
    tag_index = {t: i for i, t in enumerate(tags)}
    n_tags = len(tags)
    log(f"UD EWT: {len(train_s):,}/{len(dev_s):,}/{len(test_s):,} sentences, "
        f"{n_tags - 1} UPOS|FEATS tags in train (+{UNK_TAG})")
    log("hashing the features of every token")
    train, dev, test = (Encoded(s, tag_index) for s in (train_s, dev_s, test_s))

    log(f"training the CRF tagger: {epochs} epochs")
    model = train_tagger(train, dev, n_tags, epochs=epochs, seed=seed, log=log)
    test_acc = accuracy(model, test)
    log(f"test accuracy (Viterbi): {test_acc:.2%}")
    log("marginals of dev and test (forward-backward), thresholded into entries")

    dense = {}
    if save_scores:
        dense = {name: np.empty((int(enc.lengths.sum()), n_tags), dtype=np.float32)
                 for name, enc in (("dev", dev), ("test", test))}
    dev_e = marginal_entries(model, dev, threshold, n_tags, dense.get("dev"))
    test_e = marginal_entries(model, test, threshold, n_tags, dense.get("test"))
    train_counts = {t: counts[t] for t in tags[:-1]}
    if save_scores:   # the inputs of the sparsecal command line
        for name, enc in (("dev", dev), ("test", test)):
            np.save(os.path.join(out_dir, f"{name}_scores.npy"), dense[name])
            np.save(os.path.join(out_dir, f"{name}_gold.npy"), np.concatenate(enc.gold))
        for fname, obj in (("train_counts.json", train_counts),
                           ("tag_index.json", tag_index)):
            with open(os.path.join(out_dir, fname), "w", encoding="utf-8") as f:
                json.dump(obj, f, indent=1)
    groups = sc.TagGroups.from_counts(train_counts, n_groups, tag_index=tag_index,
                                      n_tags=n_tags)
    before = sc.evaluate(test_e, groups, ci=sc.ConfidenceInterval(random_state=seed),
                         top_label=True)
    model_cal = sc.GroupedCalibrator(sc.IsotonicCalibrator(), groups).fit(dev_e)
    after = sc.evaluate(model_cal.transform(test_e), groups,
                        ci=sc.ConfidenceInterval(random_state=seed), top_label=True)
    change = sc.compare(before, after)
    log("\n## Test calibration before recalibration\n")
    log(before.to_markdown())
    log("\n## TFG isotonic recalibration (fit on dev), test\n")
    log(change.to_markdown("uncalibrated", "TFG isotonic"))
    log("\nfitting and evaluating every method x {SCW, TFG}")
    table = compare_methods(dev_e, test_e, groups, seed=seed)
    log("\n## Every method x {SCW, TFG} (Kranzlein et al. 2021, Table 1 layout), test\n")
    log(table.to_markdown(all_groups=True))
    save_figures(out_dir, before, after, table)
    summary = {"test_accuracy": test_acc, "n_tags": n_tags, "threshold": threshold,
               "before": before.to_dict(), "after": after.to_dict(),
               "change": change.to_dict(), "table1": table.to_dict()}
    with open(os.path.join(out_dir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
    model_cal.save(os.path.join(out_dir, "tfg_isotonic"))
    log(f"\nfigures, summary.json and the TFG isotonic calibrator in {out_dir} "
        f"(done in {time.perf_counter() - started:.0f} s)")
    return summary


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.path.join("..", "shared", "data", "ud_ewt"))
    parser.add_argument("--out", default="ud_ewt_out")
    parser.add_argument("--epochs", type=int, default=8,
                        help="training epochs (default: 8; all of train: 30 min or more)")
    parser.add_argument("--limit", type=int,
                        help="sentences per split, for a quick run (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save-scores", action="store_true",
                        help="also save dense dev/test marginals for the CLI")
    args = parser.parse_args(argv)
    run(args.data, args.out, limit=args.limit, epochs=args.epochs, seed=args.seed,
        save_scores=args.save_scores)


if __name__ == "__main__":
    main()
