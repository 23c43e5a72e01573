"""Print the tag frequency groups (TFG, Kranzlein et al. 2021, Section 3.3) of
training counts: per group its tag types, training tokens, the range of its
tags' training shares and its most frequent tags.
"""
import numpy as np

from . import flags
from .inputs import tfg_groups


def add_arguments(p):
    flags.add_input(p, "--train-counts", required=True, help="JSON {tag: training count}")
    flags.add_input(p, "--tag-index", help="JSON {tag: column}, for counts keyed by tag names")
    p.add_argument("--n-tags", type=int, help="tag inventory size (default: from the index "
                                              "or the counts)")
    p.add_argument("--groups", type=int, default=5, help="TFG groups (default: 5)")


def run(args, console):
    groups = tfg_groups(args.train_counts, args.groups, args.n_tags, args.tag_index)
    console.info("| Group | Tag types | Train tokens | Train share | Most frequent tags |")
    console.info("|---|---|---|---|---|")
    for row in groups.summary():
        members = groups.members(row["group"] - 1)
        top = members[np.argsort(-groups.train_counts[members], kind="stable")[:5]]
        names = ", ".join(groups.tag_names[t] if groups.tag_names else str(t) for t in top)
        share = (f"[{row['train_share_min']:.1%}, {row['train_share_max']:.1%}]"
                 if members.size else "—")
        console.info(f"| {row['group']} | {row['tag_types']} | {row['train_count']:,} | "
                     f"{share} | {names}{' …' if members.size > 5 else ''} |")
    return 0
