"""Jagannatha & Yu (2020)'s span events on GUM's entity mentions (issue 27,
item 3; docs/coreference.md): the pipeline of ``ud_ewt_spans.py`` with GUM's ten
entity types in place of proper names.

1. Spans: the outermost mentions (nesting depth 0 in
   :func:`sparsecal.io.read_coref`; on GUM they never overlap nor cross a
   sentence) tagged BIO with their entity type (``B-person``, ``I-person``, ...,
   21 tags).
2.-5. As ``ud_ewt_spans.py``: a linear-chain CRF (sklearn-crfsuite, word,
   word-class and bias features), span events of the top 3 sequences with their
   length-normalised marginals, the forecaster chosen by
   :func:`sparsecal.calibration.heuristic_k` on dev, Platt on the confidence
   alone, ECE (20 fixed bins) of the test rank-1 spans, span F1 before and after
   re-ranking (cutoff 0.5).

About one minute on a busy 2-core machine; ``--limit 300`` (sentences per split)
about 10 seconds.

Usage::

    python examples/gum_entity_spans.py --data ../shared/data/gum

Needs scikit-learn and sklearn-crfsuite.
"""
import argparse
import json
import os
import sys

import numpy as np

from sparsecal.io import read_coref

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ud_ewt_spans import span_study  # noqa: E402


def entity_spans(data_dir, split, limit=None):
    """(forms, BIO gold ids, lengths, tag names) of a split's outermost mentions."""
    c = read_coref(os.path.join(data_dir, f"en_gum-cc-by-{split}.conllu.xz"))
    tag_names = ["O"] + [f"{p}-{t}" for t in c.types for p in ("B", "I")]
    top = np.flatnonzero(c.depth == 0)
    gold = np.zeros(c.forms.shape[0], np.int64)
    length = c.end[top] - c.start[top]
    inside = np.repeat(c.start[top], length) + np.arange(length.sum()) - np.repeat(
        np.cumsum(length) - length, length)
    gold[inside] = np.repeat(2 + 2 * c.mention_type[top], length)      # I-type
    gold[c.start[top]] = 1 + 2 * c.mention_type[top]                    # B-type
    lengths = np.diff(c.offsets)
    forms = np.asarray(c.forms, dtype=str)
    if limit is not None:
        lengths = lengths[:limit]
        forms, gold = forms[:lengths.sum()], gold[:lengths.sum()]
    return (forms, gold, lengths), tag_names


def run(data_dir, out_dir, figures_dir=None, *, limit=None, log=print):
    """The span study on GUM; the summary, also written to ``out_dir``."""
    data, names = {}, None
    for split in ("train", "dev", "test"):
        data[split], names = entity_spans(data_dir, split, limit)
    return span_study(data, names, out_dir, figures_dir, log=log,
                      title="GUM test: entity mentions of the top-1 sequence",
                      figure="gum_entity_spans_forecaster.png")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.path.join("..", "shared", "data", "gum"))
    parser.add_argument("--out", default="gum_entity_spans_out")
    parser.add_argument("--figures", default=os.path.join("docs", "figures"))
    parser.add_argument("--limit", type=int, help="sentences per split (quick runs)")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.data, args.out, args.figures, limit=args.limit), indent=2))


if __name__ == "__main__":
    main()
