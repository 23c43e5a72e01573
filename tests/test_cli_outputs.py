"""No output path destroys an input or a device (issue 30, class 1).

Every output flag of every verb, found by walking the parsers (the arguments
``flags.add_output`` marks), is given each path that writing would destroy
something through: an input itself, a symbolic or a hard link to one, a
directory holding one, another output of the same command, a FIFO and a
character device. Each is refused with exit status 2 and one line naming the
flag, before anything is read or written; the Python writers refuse the
paths that are not regular files the same way (``io/atomic.py:
check_output``, the one home of the rule).
"""
import hashlib
import os
import stat
from pathlib import Path

import numpy as np
import pytest

from sparsecal.cli.main import VERBS, _parser, main

#: the arguments a verb's parser requires, and the inputs it names
BASE = {
    "evaluate": ["--scores", "{scores}", "--gold", "{gold}"],
    "fit": ["--scores", "{scores}", "--gold", "{gold}", "-o", "{free}/fit-out"],
    "apply": ["{calibrator}", "--scores", "{scores}", "-o", "{free}/apply-out.npy"],
    "compare": ["--scores", "{scores}", "--gold", "{gold}", "--dev-scores", "{scores}",
                "--dev-gold", "{gold}"],
    "report": ["--scores", "{scores}", "--gold", "{gold}", "-o", "{free}/report-out"],
    "groups": ["--train-counts", "{gold}"],
    "demo": ["--tokens", "10"],
    "events": ["--scores", "{scores}", "--gold", "{gold}"],
}
#: string options that name neither an input nor an output
NOT_PATHS = {"key", "dev_key", "gold_column", "scheduler", "title", "method"}


def _subparser(verb):
    return _parser([verb])[1][verb]


def _outputs():
    """(verb, its output flag) for every output argument of every verb."""
    return [(verb, a.option_strings[-1]) for verb in VERBS
            for a in _subparser(verb)._actions if hasattr(a, "writes")]


OUTPUTS = _outputs()


def test_every_path_argument_is_marked_an_input_or_an_output():
    """The enumeration below misses no output: every argument that takes one
    string is an input, an output, or one of the few that name no path."""
    import argparse
    for verb in VERBS:
        for a in _subparser(verb)._actions:
            if type(a) is argparse._StoreAction and a.type is None and a.choices is None \
                    and a.nargs is None:
                assert hasattr(a, "reads") or hasattr(a, "writes") or a.dest in NOT_PATHS, \
                    (verb, a.dest)
            if a.dest in ("output", "json", "calibrated_output") or a.dest.startswith("save_"):
                assert hasattr(a, "writes"), (verb, a.dest)
    assert len(OUTPUTS) == 12, OUTPUTS   # evaluate 2, fit 2, events 4, one each else


@pytest.fixture
def files(tmp_path):
    """Inputs (whose bytes must survive) and a free directory for outputs."""
    d = tmp_path / "in"
    d.mkdir()
    np.save(d / "scores.npy", np.full((4, 3), 1 / 3))
    np.save(d / "gold.npy", np.array([0, 1, 2, 0]))
    (d / "calibrator").mkdir()
    (d / "calibrator" / "calibrator.json").write_text("{}")
    free = tmp_path / "out"
    free.mkdir()
    return {"scores": str(d / "scores.npy"), "gold": str(d / "gold.npy"),
            "calibrator": str(d / "calibrator"), "free": str(free), "dir": d}


def _digest(root):
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(root).rglob("*")) if p.is_file()}


def _argv(verb, flag, target, files):
    base = [a.format(**files) for a in BASE[verb]]
    if flag in base:   # the required output under test: replace its value
        i = base.index(flag)
        base = base[:i] + base[i + 2:]
    elif "-o" in base and flag == "--output":
        i = base.index("-o")
        base = base[:i] + base[i + 2:]
    return [verb, *base, flag, str(target)]


def _targets(files, tmp_path):
    """(name, path, the words of the refusal) for every destructive output path."""
    links = tmp_path / "links"
    links.mkdir()
    (links / "to-gold.npy").symlink_to(files["gold"])
    os.link(files["scores"], links / "hard-scores.npy")
    os.mkfifo(tmp_path / "fifo")
    holder = tmp_path / "holder"
    holder.mkdir()
    np.save(holder / "gold.npy", np.array([0, 1, 2, 0]))
    targets = [("the scores", files["scores"], "is the input --scores"),
               ("a symbolic link to the gold", links / "to-gold.npy", "is the input --gold"),
               ("a hard link to the scores", links / "hard-scores.npy",
                "is the input --scores"),
               ("a FIFO", tmp_path / "fifo", "is a FIFO"),
               ("a directory holding the gold", holder, "holds the input --gold")]
    try:   # a copy of /dev/null (needs the right to make device nodes)
        os.mknod(tmp_path / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        targets.append(("a character device", tmp_path / "null", "is a character device"))
    except (PermissionError, AttributeError, OSError):
        pass
    return targets, holder


@pytest.mark.parametrize("verb, flag", OUTPUTS, ids=[f"{v} {f}" for v, f in OUTPUTS])
def test_destructive_output_paths_are_refused(verb, flag, files, tmp_path, capsys):
    targets, holder = _targets(files, tmp_path)
    for name, target, words in targets:
        if any(f"--{i}" in words and "{%s}" % i not in BASE[verb]
               for i in ("scores", "gold")):
            continue   # not an input of this verb
        argv = _argv(verb, flag, target, files)
        if "holds the input --gold" in words:   # the gold read from inside the output
            argv = [str(holder / "gold.npy") if a == files["gold"] else a for a in argv]
        before, kind = _digest(tmp_path), os.lstat(target).st_mode
        rc = main(argv)
        err = capsys.readouterr().err
        assert rc == 2, (name, argv, err)
        assert err.startswith(f"sparsecal {verb}: error: {flag} ") and words in err, (name, err)
        assert err.count("\n") == 1, err
        assert _digest(tmp_path) == before, name   # nothing read over, nothing written
        assert os.lstat(target).st_mode == kind, name   # a FIFO stays a FIFO


TWICE = [(v, f) for v, f in OUTPUTS if [v2 for v2, _ in OUTPUTS].count(v) > 1]


@pytest.mark.parametrize("verb, flag", TWICE, ids=[f"{v} {f}" for v, f in TWICE])
def test_an_output_twice_is_refused(verb, flag, files, capsys):
    others = [f for v, f in OUTPUTS if v == verb and f != flag]
    target = os.path.join(files["free"], "same")
    argv = _argv(verb, flag, target, files)
    other = others[0]   # the same path
    if other in argv:
        argv[argv.index(other) + 1] = target
    elif other == "--output" and "-o" in argv:
        argv[argv.index("-o") + 1] = target
    else:
        argv += [other, target]
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2 and "is the output" in err and "same" in err, err
    assert os.listdir(files["free"]) == []


@pytest.mark.parametrize("verb, flag", OUTPUTS, ids=[f"{v} {f}" for v, f in OUTPUTS])
def test_an_output_in_a_missing_directory_is_refused_before_any_work(verb, flag, files,
                                                                     capsys):
    target = os.path.join(files["free"], "missing", "x")
    rc = main(_argv(verb, flag, target, files))
    err = capsys.readouterr().err
    assert rc == 2 and f"{flag} " in err and "does not exist" in err, err


def _writers():
    """Every Python writer of a file output, as (name, write(path))."""
    import sparsecal as sc
    from sparsecal.io import save_entries, write_parquet
    from sparsecal.plotting.save import save_figure
    from sparsecal.structured import save_events, softmax_sequence_events
    entries = sc.threshold(np.array([[0.7, 0.3], [0.2, 0.8]]), [0, 1])
    result = sc.evaluate(entries, sc.TagGroups.scw(2), n_bins=2)
    events = softmax_sequence_events(np.array([[[0.9, 0.1], [0.4, 0.6]]]), [[0, 1]], k=1)

    def figure(path):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig = plt.figure()
        try:
            save_figure(fig, path + ".png")
        finally:
            plt.close(fig)

    return [("save_entries", lambda p: save_entries(p, entries)),
            ("EvaluationResult.to_json", result.to_json),
            ("write_parquet", lambda p: write_parquet(entries, p)),
            ("save_events", lambda p: save_events(p, events)),
            ("save_figure", figure)]


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_python_writers_refuse_paths_that_are_not_files(tmp_path, kind):
    for name, write in _writers():
        target = tmp_path / (f"{name}-{kind}" + (".png" if name == "save_figure" else ""))
        os.mkfifo(target) if kind == "fifo" else target.mkdir()
        if name == "write_parquet":
            pytest.importorskip("pyarrow")
        with pytest.raises(ValueError, match=r"is a (FIFO \(named pipe\)|directory), not a file: choose"):
            write(str(target)[:-4] if name == "save_figure" else str(target))
        assert (stat.S_ISFIFO(os.lstat(target).st_mode) if kind == "fifo"
                else os.listdir(target) == []), name
