"""The ``sparsecal`` command line: the parser, the run of one verb, its errors.

Each verb is a module of this package (``evaluate``, ``fit``, ...) with
``add_arguments(parser)`` and ``run(args, console)``; its docstring is its
``--help`` description. Only the verb typed is imported. Exit codes: 0
success; 2 bad input or usage (one line on stderr naming the flag or file;
``--debug`` raises instead); 130 interrupted.
"""
import argparse
import atexit
import functools
import gc
import importlib
import os
import sys
import warnings

from ._progress import Console
from .flags import check_applies, check_paths, check_threads, flag_names, with_flags

__all__ = ["main", "build_parser"]

#: verb -> its line in ``sparsecal --help``, in the order shown
VERBS = {
    "evaluate": "SMCE/GMCE table, with confidence intervals on request",
    "fit": "fit a grouped recalibration model on dev outputs",
    "apply": "apply a fitted calibrator to a score matrix",
    "compare": "every method x {SCW, TFG}: the paper's Table 1",
    "report": "HTML report with tables and figures (+ PNG, SVG, JSON)",
    "groups": "the TFG group summary table",
    "demo": "the built-in default job on a generated CCG-like tagger",
    "events": "events of interest (top-k sequences, spans) of a CRF or softmax tagger: "
              "table, forecaster, re-ranking",
}


def build_parser(command=None):
    """The parser of the ``sparsecal`` command line; with ``command``, of that
    verb alone (all that parsing its command line needs).

    Examples
    --------
    >>> build_parser("groups").parse_args(["groups", "--train-counts", "c.json"]).groups
    5
    """
    return _parser(VERBS if command is None else [command])[0]


def _parser(verbs, arguments=True):
    """(the parser with ``verbs``, {verb: its sub-parser}); without ``arguments``
    the verbs are listed only (``sparsecal --help`` imports none of them)."""
    parser = argparse.ArgumentParser(
        prog="sparsecal",
        description="Measure and repair the calibration of taggers with large, sparse "
                    "tagsets (Kranzlein et al. 2021; Nguyen & O'Connor 2015). "
                    "'sparsecal COMMAND --help' describes each command.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-q", "--quiet", action="store_true",
                        help="no messages, no progress: errors and warnings only")
    common.add_argument("--debug", action="store_true",
                        help="on an error, show Python's traceback instead of one line")
    parsers = {}
    for name in verbs:
        if not arguments:
            sub.add_parser(name, help=VERBS[name])
            continue
        module = importlib.import_module(f".{name}", __package__)
        p = sub.add_parser(name, help=VERBS[name], description=module.__doc__,
                           parents=[common])
        module.add_arguments(p)
        p.set_defaults(func=module.run)
        parsers[name] = p
    return parser, parsers


def main(argv=None):
    """Run one ``sparsecal`` command, as the ``sparsecal`` console script does.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name; None (the console script) reads
        ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit code: 0 on success; 2 on an error (one line on stderr names
        the flag or file; ``--debug`` raises instead); 130 when interrupted.
        Wrong usage exits with code 2 through ``argparse``.

    Examples
    --------
    >>> import json
    >>> from sparsecal.cli import main
    >>> with open("counts.json", "w") as f:
    ...     json.dump({"N": 500, "NP": 300, "S/NP": 20, "PP": 2}, f)
    >>> with open("tags.json", "w") as f:
    ...     json.dump({"N": 0, "NP": 1, "S/NP": 2, "PP": 3}, f)
    >>> main(["groups", "--train-counts", "counts.json", "--tag-index", "tags.json",
    ...       "--groups", "2"])
    | Group | Tag types | Train tokens | Train share | Most frequent tags |
    |---|---|---|---|---|
    | 1 | 1 | 500 | [60.8%, 60.8%] | N |
    | 2 | 3 | 322 | [0.2%, 36.5%] | NP, S/NP, PP |
    0
    >>> main(["groups", "--train-counts", "missing.json"])
    2
    """
    if argv is None:   # the program itself: the console script, python -m sparsecal
        # Python's last garbage collection would traverse every object of NumPy and
        # sparsecal (~10 ms) just before the exit frees them: freeze them first.
        atexit.register(gc.freeze)
        argv = sys.argv[1:]
    verb = argv[0] if argv and argv[0] in VERBS else None
    parser, parsers = _parser(VERBS if verb is None else [verb], arguments=verb is not None)
    args = parser.parse_args(argv)   # without a verb: help or a usage error (exit)
    names = flag_names(parsers[verb], argv)
    console = Console(args.quiet)
    with warnings.catch_warnings():
        warnings.showwarning = functools.partial(_show_warning, console, verb, names)
        try:
            check_threads(args)   # first: its error names the flag, not a file
            check_paths(parsers[verb], args, argv)   # no output destroys an input
            check_applies(parsers[verb], args, argv)   # no flag is ignored
            return args.func(args, console)
        except KeyboardInterrupt:
            print(f"sparsecal {verb}: interrupted", file=sys.stderr)
            return 130
        except Exception as exc:   # noqa: BLE001 - the CLI's one place for errors
            if args.debug:
                raise
            print(f"sparsecal {verb}: error: {with_flags(_describe(exc), names)}",
                  file=sys.stderr)
            return 2


def _describe(exc):
    """One line for an exception: the message of an expected error, or what went
    wrong and how to see more for anything else."""
    if isinstance(exc, OSError) and exc.strerror:   # without the "[Errno N]" prefix
        text = exc.strerror + (f": {os.fspath(exc.filename)!r}" if exc.filename else "")
        return " ".join(text.split())
    if isinstance(exc, (ValueError, TypeError, OSError, ImportError)):
        return " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, MemoryError):
        return "out of memory (use fewer tokens per file, or a machine with more memory)"
    return (f"internal error ({type(exc).__name__}: {exc}); please report it with the "
            "output of --debug")


def _show_warning(console, verb, names, message, category, filename, lineno, file=None,
                  line=None):
    console.warn(f"sparsecal {verb}: warning: {with_flags(str(message), names)}")
