"""pytorch-crf: the calibration of a ``torchcrf.CRF`` layer's marginals.

Trains a small tagger (word embeddings, a linear layer of emissions and a
``torchcrf.CRF`` layer on top, the layer's own negative log-likelihood) on a slice
of UD English-EWT with morphological ``UPOS|FEATS`` tags, computes the token
marginals of the test sentences with ``sparsecal.adapters.marginals_from_torchcrf`` (the
layer's potentials through ``sparsecal.crf``; Nguyen & O'Connor 2015, §4.2),
thresholds them into entries and evaluates them: SMCE, GMCE per tag-frequency
group, top-label ECE, with the calibration curves. Needs
``pip install ".[crf]"`` in the checkout.

Usage::

    python examples/adapter_torchcrf.py --train 300 --test 150 --out torchcrf_out
"""
import numpy as np
import torch
from torch import nn
from torchcrf import CRF

import sparsecal as sc
from sparsecal.adapters import marginals_from_torchcrf
from _ud_slice import report, start


def batch(sentences, vocab, tag_index):
    """Padded ``(word ids, tag ids, mask)`` tensors, batch first."""
    length = max(len(w) for w, _ in sentences)
    words = torch.zeros(len(sentences), length, dtype=torch.long)
    tags = torch.zeros(len(sentences), length, dtype=torch.long)
    mask = torch.zeros(len(sentences), length, dtype=torch.bool)
    for i, (ws, ts) in enumerate(sentences):
        words[i, :len(ws)] = torch.tensor([vocab.get(w.lower(), 1) for w in ws])
        tags[i, :len(ts)] = torch.tensor([tag_index[t] for t in ts])
        mask[i, :len(ws)] = True
    return words, tags, mask


def main(argv=None):
    args, train, test, tags = start(__doc__, argv, epochs=6)
    tag_index = {t: i for i, t in enumerate(tags)}
    vocab = {w: i + 2 for i, w in enumerate(sorted({w.lower() for ws, _ in train for w in ws}))}
    embed, emit = nn.Embedding(len(vocab) + 2, 64), nn.Linear(64, len(tags))
    crf = CRF(len(tags), batch_first=True)
    params = [*embed.parameters(), *emit.parameters(), *crf.parameters()]
    optimizer = torch.optim.Adam(params, lr=0.02)
    rng = np.random.default_rng(0)
    for _ in range(args.epochs):
        order = rng.permutation(len(train))
        for first in range(0, len(train), 32):
            words, gold, mask = batch([train[i] for i in order[first:first + 32]], vocab,
                                      tag_index)
            loss = -crf(emit(embed(words)), gold, mask, reduction="mean")
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    words, gold, mask = batch(test, vocab, tag_index)
    with torch.no_grad():
        probs = marginals_from_torchcrf(crf, emit(embed(words)), mask)
    entries = sc.threshold(probs[mask].numpy(), gold[mask].numpy(), threshold=0.01)
    report(entries, train, tags, args.out)


if __name__ == "__main__":
    main()
