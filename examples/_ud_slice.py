"""Shared by the adapter examples: a slice of UD English-EWT, and the evaluation
and figures each example ends with.

The tags are the morphological ``UPOS|FEATS`` tags of ``ud_ewt_crf.py`` (a sparse,
long-tailed tagset); dev/test tags never seen in the training slice are ``<UNK>``.
"""
import argparse
import collections
import os

import sparsecal as sc
from sparsecal import plotting
from ud_ewt_crf import UNK_TAG, read_conllu

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data",
                    "ud_ewt")


def start(doc, argv=None, *, epochs=None):
    """Parse an example's options (``--data``, ``--train``, ``--test``, ``--out``, and
    ``--epochs`` for a torch model, then seeded and on one thread) and load its
    slice; returns ``(args, train, test, tags)``."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--data", default=DATA, help="folder of the UD EWT .conllu.xz files")
    parser.add_argument("--train", type=int, default=300, help="training sentences")
    parser.add_argument("--test", type=int, default=150, help="test sentences")
    parser.add_argument("--out", default="adapter_out", help="folder of the figures")
    if epochs is not None:
        parser.add_argument("--epochs", type=int, default=epochs)
    args = parser.parse_args(argv)
    if epochs is not None:
        import torch
        torch.manual_seed(0)
        torch.set_num_threads(1)
    return (args, *load(args))


def load(args):
    """``(train, test, tags)``: lists of (words, tags) sentences and the tag
    inventory (by descending training count, then ``<UNK>``)."""
    def split(name, limit):
        path = os.path.join(args.data, f"en_ewt-ud-{name}.conllu.xz")
        return [([w for w, _ in s], [t for _, t in s]) for s in read_conllu(path, limit)]
    train, test = split("train", args.train), split("test", args.test)
    counts = collections.Counter(t for _, tags in train for t in tags)
    tags = [t for t, _ in counts.most_common()] + [UNK_TAG]
    known = set(tags)
    test = [(words, [t if t in known else UNK_TAG for t in ts]) for words, ts in test]
    print(f"UD EWT slice: {len(train)} training / {len(test)} test sentences, "
          f"{len(tags) - 1} tags in training (+{UNK_TAG})")
    return train, test, tags


def report(entries, train, tags, out_dir, n_groups=3):
    """Print the evaluation of ``entries`` with TFG groups from the training
    slice and save its calibration curves (pooled and per group)."""
    os.makedirs(out_dir, exist_ok=True)
    counts = collections.Counter(t for _, ts in train for t in ts)
    groups = sc.TagGroups.from_counts({i: counts[t] for i, t in enumerate(tags[:-1])},
                                      n_groups, n_tags=len(tags))
    result = sc.evaluate(entries, groups, ci=sc.ConfidenceInterval(random_state=0),
                         top_label=True)
    print(result.to_markdown())
    plotting.save_figure(plotting.reliability_diagram(result.smce, scale="logit"),
                         os.path.join(out_dir, "reliability.png"))
    plotting.save_figure(plotting.GroupReliabilityDisplay.from_results(
        result, scale="logit").plot().figure_,
                         os.path.join(out_dir, "groups.png"))
    return result
