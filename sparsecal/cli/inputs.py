"""The verbs' inputs: scores, gold, entries and groups from the flags; every
error names the file or the flag."""
from ..core.entries import threshold
from ..core.groups import TagGroups
from ..core.jsonfile import read_json
from ..core.validation import check_gold, check_positive_int, check_unit_interval
from ..io.arrays import load_entries, load_gold, load_scores, load_tag_index
from ..io.entry_shards import is_entry_shards, load_entry_shards
from .flags import with_flags


def scores_from_args(args, prefix=""):
    """The matrix of ``--{prefix}scores`` (array ``--{prefix}key`` of a
    multi-array file)."""
    attr = prefix.replace("-", "_")
    try:
        return load_scores(getattr(args, attr + "scores"), key=getattr(args, attr + "key"))
    except ValueError as exc:   # "name one with key": the flag of this file
        raise ValueError(with_flags(str(exc), {"key": f"--{prefix}key"})) from None


def entries_from_args(args, console, prefix=""):
    """Entries from ``--{prefix}entries``, or from ``--{prefix}scores`` and
    ``--{prefix}gold`` thresholded."""
    attr = prefix.replace("-", "_")
    scores, gold, entries = (getattr(args, attr + name, None)
                             for name in ("scores", "gold", "entries"))
    which = f" {prefix[:-1]}" if prefix else ""
    if entries:
        with console.step("reading" + which):   # a file, or a cluster's shards
            return (load_entry_shards if is_entry_shards(entries) else load_entries)(entries)
    if not scores or not gold:
        raise ValueError(f"give --{prefix}scores and --{prefix}gold (or --{prefix}entries)")
    check_unit_interval(args.threshold, "--threshold")
    if getattr(args, attr + "scores_format") == "crfsuite":
        with console.step("reading" + which):
            return _crfsuite_entries(scores, gold, args)
    with console.step("reading" + which):
        matrix = scores_from_args(args, prefix)
        gold_arr = load_gold(gold, tag_index=getattr(args, "tag_index", None),
                             format=getattr(args, "gold_format", None),
                             column=getattr(args, "gold_column", None))
    try:
        check_gold(gold_arr, *matrix.shape)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{gold!r} with {scores!r}: {exc}") from None
    try:
        with console.step("thresholding" + which) as progress:
            return threshold(matrix, gold_arr, args.threshold, n_threads=args.n_threads,
                             progress=progress)
    except ValueError as exc:
        raise ValueError(f"{scores!r}: {exc}") from None


def _crfsuite_entries(scores, gold, args):
    """Entries of sklearn-crfsuite's predict_marginals output (JSON) and gold
    labels (JSON lists of label lists)."""
    from ..adapters.crfsuite import entries_from_crfsuite
    labels = None
    if getattr(args, "tag_index", None):
        index = load_tag_index(args.tag_index)
        labels = sorted(index, key=index.get)
    marginals = read_json(scores, "crfsuite marginals", kind=list)
    y = read_json(gold, "gold labels", kind=list)
    try:
        return entries_from_crfsuite(marginals, y, labels, threshold=args.threshold)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{scores!r} with {gold!r}: {exc}") from None


def tfg_groups(train_counts, n_groups, n_tags=None, tag_index=None):
    """TFG groups from a JSON counts file."""
    check_positive_int(n_groups, "--groups")
    counts = read_json(train_counts, "train counts")
    index = _tag_index(tag_index, n_tags, counts) if tag_index else None
    try:
        return TagGroups.from_counts(counts, n_groups, n_tags=n_tags, tag_index=index)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"train counts {train_counts!r}"
                         + (f" (with tag index {tag_index!r})" if tag_index else "")
                         + f": {exc}") from None


def groups_from_args(args, n_tags, console):
    """TFG groups of ``--train-counts``, else every tag as one group (SCW)."""
    if getattr(args, "train_counts", None):
        return tfg_groups(args.train_counts, args.groups, n_tags,
                          getattr(args, "tag_index", None))
    console.info("(no --train-counts: evaluating all tags as one group, SCW)")
    index = getattr(args, "tag_index", None)
    return TagGroups.scw(n_tags, tag_names=_index_names(index, n_tags) if index else None)


def _index_names(path, n_tags):
    """The name of each of ``n_tags`` columns from a tag-index file ("" if none)."""
    names = [""] * n_tags
    for name, i in _tag_index(path, n_tags).items():
        names[i] = name
    return names


def _tag_index(path, n_tags, counts=None):
    """The tag index of ``--tag-index``, every column it names one of the
    ``n_tags`` columns of the scores (None: not known here), except names the
    training ``counts`` (a JSON object) do not name: padding, ignored as
    :func:`~sparsecal.core.groups.load_train_counts` ignores it."""
    index = load_tag_index(path)
    beyond = [(tag, column) for tag, column in index.items()
              if n_tags is not None and column >= n_tags
              and (counts is None or tag in counts)]
    if beyond:
        tag, column = min(beyond, key=lambda item: item[1])
        raise ValueError(f"--tag-index {path!r} places tag {tag!r} in column {column}, but "
                         f"there are {n_tags} tag columns (0..{n_tags - 1}): the index "
                         "and the scores disagree (a name beyond them is taken as padding "
                         "only where --train-counts gives it no count)")
    return index


def check_same_tags(dev_tags, test_tags):
    if dev_tags != test_tags:
        raise ValueError(f"dev has {dev_tags} tags but test has {test_tags}")

