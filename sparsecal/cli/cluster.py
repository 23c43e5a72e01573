"""``--scheduler ADDRESS`` / ``--dask``: ``evaluate``, ``fit``, ``apply``,
``compare`` and ``report`` on a Dask cluster (:mod:`sparsecal.distributed`).

The scores (a ``.npy`` file, read chunk by chunk by the workers, or a Zarr
store) and ``apply``'s output must be on a file system the workers share.
"""
import contextlib
import os
import re

from .inputs import check_same_tags, groups_from_args

__all__ = ["add_cluster_arguments", "cluster_evaluate", "cluster_apply", "wants_cluster"]
__all__ += ["cluster_fit", "cluster_compare", "cluster_report"]

#: seconds to wait for a scheduler before the one-line error
CONNECT_TIMEOUT = 10


def add_cluster_arguments(p):
    """Add ``--scheduler``, ``--dask`` and ``--chunk-rows`` to a verb's parser."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on this Dask scheduler (tcp://host:8786); the files must be "
                        "on a file system the workers share")
    g.add_argument("--dask", action="store_true",
                   help="run on a local Dask cluster (one worker process per core)")
    p.add_argument("--chunk-rows", type=int,
                   help="--scheduler/--dask: rows per task (default: about 32 MiB of scores)")


def wants_cluster(args):
    """True if the command line asks for a cluster (``--scheduler ''`` refused)."""
    scheduler = getattr(args, "scheduler", None)
    if scheduler is not None and not scheduler.strip():
        raise ValueError(f"--scheduler needs the scheduler's address (tcp://host:8786), got "
                         f"{scheduler!r}")
    return scheduler is not None or getattr(args, "dask", False)


@contextlib.contextmanager
def _client(args, console):
    """A ``distributed.Client`` of ``--scheduler`` or of a new local cluster."""
    from ..distributed._dask import require_dask
    require_dask()
    from distributed import Client

    from ..distributed import local_cluster
    named = _naming_scores(getattr(args, "scores", None), getattr(args, "dev_scores", None))
    if args.scheduler:
        try:
            client = Client(args.scheduler, timeout=CONNECT_TIMEOUT)
        except MemoryError:   # what answered sent a huge "frame length": not Dask
            raise ValueError(f"--scheduler {args.scheduler!r}: cannot connect (what answers "
                             "there is not a Dask scheduler)") from None
        except Exception as exc:   # noqa: BLE001 - whatever failed, it is the connection
            raise ValueError(f"--scheduler {args.scheduler!r}: cannot connect "
                             f"({' '.join(str(exc).split()) or type(exc).__name__})") from None
        with client, named:
            console.info(f"Dask scheduler {args.scheduler}; dashboard: {client.dashboard_link}")
            yield client
        return
    with local_cluster() as cluster, Client(cluster) as client, named:
        console.info(f"local Dask cluster, {len(cluster.workers)} workers; dashboard: "
                     f"{client.dashboard_link}")
        yield client


def _read_rows(path, r0, r1):
    """Rows ``r0:r1`` of a ``.npy`` matrix (on a worker): a view of the file's
    memory map, not a copy (the threshold kernel reads it with ``pread``)."""
    import numpy as np
    return np.load(path, mmap_mode="r")[r0:r1]


def dask_scores(path, chunk_rows=None, flag="--scores"):
    """A row-chunked dask array of a ``.npy`` score matrix (each chunk read by
    a worker) or of a Zarr store; errors name ``flag``."""
    import dask
    import dask.array as da

    from ..core.validation import check_positive_int
    from ..io.arrays import load_scores
    if os.path.isdir(path) and os.path.isfile(os.path.join(path, "zarr.json")):
        return da.from_zarr(path)
    if os.path.splitext(path)[1].lower() != ".npy":
        raise ValueError(f"{flag} {path!r}: on a cluster the scores must be a .npy file "
                         "or a Zarr store")
    header = load_scores(path)   # the header checked as on one machine, nothing read
    n, n_tags = header.shape
    rows = (max(1, (32 << 20) // (n_tags * header.dtype.itemsize)) if chunk_rows is None
            else check_positive_int(chunk_rows, "--chunk-rows"))
    read = dask.delayed(_read_rows, pure=True)
    return da.concatenate([da.from_delayed(read(path, r0, min(n, r0 + rows)),
                                           (min(n, r0 + rows) - r0, n_tags), header.dtype)
                           for r0 in range(0, n, rows)])


def _inputs(args, prefix=""):
    """The dask score matrix and the gold vector of ``--{prefix}scores`` and
    ``--{prefix}gold``, checked together as on one machine."""
    from ..core.validation import check_gold
    from ..io.arrays import load_gold
    name = prefix.replace("-", "_")
    scores, gold = getattr(args, f"{name}scores"), getattr(args, f"{name}gold")
    if not scores or not gold:
        raise ValueError(f"--scheduler/--dask: give --{prefix}scores and --{prefix}gold")
    matrix = dask_scores(scores, args.chunk_rows, f"--{prefix}scores")
    gold_arr = load_gold(gold, tag_index=args.tag_index, format=args.gold_format,
                         column=args.gold_column)
    try:
        check_gold(gold_arr, *matrix.shape)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{gold!r} with {scores!r}: {exc}") from None
    return matrix, gold_arr


@contextlib.contextmanager
def _naming_scores(*paths):
    """Name the file of a bad score that a worker found (``scores[r, c] = ...``):
    the one of ``paths`` (``.npy`` files; None for a set not given) holding a NaN,
    infinity or value outside [0, 1] there, as one machine names it."""
    try:
        yield
    except ValueError as exc:
        where = re.match(r"scores\[(\d+), (\d+)\]", str(exc))
        paths = [p for p in paths if p]
        if where is None or not paths:
            raise
        import numpy as np
        r, c = (int(i) for i in where.groups())
        for path in paths:
            m = np.load(path, mmap_mode="r") if path.endswith(".npy") else None
            if m is not None and r < m.shape[0] and c < m.shape[1] and \
                    not 0.0 <= float(m[r, c]) <= 1.0:
                raise ValueError(f"{path!r}: {exc}") from None
        raise ValueError(f"{' or '.join(map(repr, paths))}: {exc}") from None


def _check_flags(args):
    """One error line for the ``--metrics`` without a distributed form, before
    any file is read."""
    from ..distributed.measures import check_measures
    try:
        check_measures(args.metrics)
    except ValueError as exc:
        raise ValueError(f"--metrics: {exc}") from None


def _dev_and_test(args, console):
    """The dask score matrices and gold vectors of dev (or None without
    ``--dev-scores``) and test, and the groups."""
    dev = _inputs(args, "dev-") if args.dev_scores or args.dev_gold else None
    test = _inputs(args)
    if dev is not None:
        check_same_tags(dev[0].shape[1], test[0].shape[1])
    return dev, test, groups_from_args(args, test[0].shape[1], console)


def _entries(args):
    """Distributed entries of ``--entries`` (a directory of entry shards: one
    task per shard) or of ``--scores`` and ``--gold`` thresholded."""
    from ..distributed import load_entry_shards_dask, threshold
    if getattr(args, "entries", None):
        return load_entry_shards_dask(args.entries)
    scores, gold = _inputs(args)
    return threshold(scores, gold, args.threshold)


def cluster_evaluate(args, console, options):
    """``sparsecal evaluate`` on a cluster (``options``: the keywords of
    :func:`sparsecal.distributed.evaluate` from the checked flags)."""
    from ..distributed import evaluate, load_entry_shards_dask, save_entry_shards
    _check_flags(args)
    entries = _entries(args)
    groups = groups_from_args(args, entries.n_tags, console)
    with _client(args, console):
        if args.save_entries:   # a directory of .npz shards, written by the workers
            with console.step("writing the entries on the cluster"):
                save_entry_shards(entries, args.save_entries)
            # evaluated from the written shards: each chunk thresholded once
            entries = load_entry_shards_dask(args.save_entries)
        with console.step("evaluating on the cluster"):
            result = evaluate(entries, groups, **options)
    console.info(result.to_markdown())
    if args.save_entries:
        console.info(f"\nwrote {args.save_entries} (entry shards)")
    if args.json:
        result.to_json(args.json)
        console.info(f"\nwrote {args.json}")
    return 0


def cluster_apply(args, console):
    """``sparsecal apply`` on a cluster: the output is a Zarr store (``-o``
    ending in ``.zarr``) or a directory of ``.npy`` shards."""
    from ..calibration.loading import load_calibrator
    from ..distributed import apply_to_store
    model = load_calibrator(args.calibrator)     # grouped or cross-fitted
    scores = dask_scores(args.scores, args.chunk_rows)
    if scores.shape[1] != model.n_tags:
        raise ValueError(f"{args.scores!r} has {scores.shape[1]} tags but the calibrator "
                         f"was fit for {model.n_tags}")
    fmt = "zarr" if args.output.rstrip("/").endswith(".zarr") else "npy"
    with _client(args, console):
        with console.step("calibrating on the cluster"):
            try:
                apply_to_store(model, scores, args.output, format=fmt)
            except ValueError as exc:   # e.g. values outside [0, 1]
                raise ValueError(f"{args.scores!r}: {exc}") from None
    console.info(f"wrote {args.output} ({'Zarr store' if fmt == 'zarr' else '.npy shards'})")
    return 0


def cluster_fit(args, console, make_model, fit):
    """``sparsecal fit`` on a cluster: ``make_model(n_tags)`` fitted by
    ``fit(model, entries, step)`` on the workers; returns ``(model, n_tokens)``."""
    from ..distributed.calibrators import distributed_method
    entries = _entries(args)
    model = make_model(entries.n_tags)
    distributed_method(model.base)    # refused before the cluster starts
    with _client(args, console):   # an --ensemble's members: distributed/folds.py
        model = fit(model, entries, "fitting on the cluster")
    return model, entries.n_tokens


def cluster_select(args, console, run_select):
    """``sparsecal fit --select`` on a cluster: ``run_select(entries)`` (the
    :func:`sparsecal.select` call) on the distributed dev entries, with the
    client open; returns ``(its result, n_tokens)``."""
    entries = _entries(args)
    with _client(args, console):
        return run_select(entries), entries.n_tokens


def cluster_compare(args, console, options):
    """``sparsecal compare`` on a cluster (``options``: the keywords of
    :func:`sparsecal.distributed.compare_methods`); returns its result."""
    from ..distributed import compare_methods, threshold
    _check_flags(args)
    dev, test, groups = _dev_and_test(args, console)
    if dev is None:
        raise ValueError("--scheduler/--dask: give --dev-scores and --dev-gold")
    with _client(args, console):
        dev, test = (threshold(s, g, args.threshold) for s, g in (dev, test))
        with console.step("comparing on the cluster") as progress:
            return compare_methods(dev, test, groups, progress=progress, **options)


def cluster_report(args, console, options):
    """``sparsecal report`` on a cluster (``options``: the keywords of
    :func:`~sparsecal.plotting.report.write_report`); returns the page's path."""
    from ..distributed import CLUSTER_REPORT, threshold
    from ..plotting.report import write_report
    _check_flags(args)
    dev, test, groups = _dev_and_test(args, console)
    with _client(args, console):
        test = threshold(*test, args.threshold)
        dev = None if dev is None else threshold(*dev, args.threshold)
        with console.step("report on the cluster") as progress:
            return write_report(args.output, test, groups, dev=dev, progress=progress,
                                engine=CLUSTER_REPORT, **options)
