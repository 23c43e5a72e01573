"""What the command line tells its user (issue 25): every flag has help text and
every verb a description; every error hint names the flag the user types, not
the API argument; every ``sparsecal.xxx`` it names exists; ``sparsecal --help``
imports no verb."""
import ast
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sparsecal.cli.flags import with_flags
from sparsecal.cli.main import VERBS, build_parser, main
from test_cli import ROOT, data  # noqa: F401 - the CLI's data files, as a fixture


def verb_parsers():
    parser = build_parser()
    return next(a for a in parser._actions if a.dest == "command").choices


def test_every_verb_has_a_description_and_every_flag_help():
    """Walks the parser: a paragraph per verb that its --help shows, help text
    for every flag and positional (a hidden flag is a refusal, tested below)."""
    parsers = verb_parsers()
    assert list(parsers) == list(VERBS)
    for verb, p in parsers.items():
        text = " ".join((p.description or "").split())
        assert len(text) > 150 and text.endswith("."), verb
        assert "\n\n" not in (p.description or "").strip(), verb   # one paragraph
        assert " ".join(text.split()[:8]) in " ".join(p.format_help().split()), verb
        for action in p._actions:
            if action.help == "==SUPPRESS==":
                continue
            assert action.help and len(action.help) > 10, (verb, action.option_strings)


def test_main_help_lists_the_verbs_without_importing_them():
    code = ("import sys\nfrom sparsecal.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit as e:\n    assert e.code == 0\n"
            f"print(sorted(m for m in sys.modules if m.startswith(('sparsecal.cli.', "
            f"'sparsecal.metrics', 'sparsecal.calibration'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.returncode == 0, out.stderr
    help_text, modules = out.stdout.rsplit("\n", 2)[:2]
    assert all(f"    {verb} " in help_text for verb in VERBS)
    assert eval(modules) == ["sparsecal.cli._progress", "sparsecal.cli.flags",
                             "sparsecal.cli.main"]


# ------------------------------------------------------------------ hints -- #

def test_with_flags_writes_argument_names_as_flags_outside_quotes():
    names = {"tag_index": "--tag-index", "n_resamples": "--n-resamples"}
    assert with_flags("'tag_index.json' keyed by names: pass tag_index ({name: column})",
                      names) == "'tag_index.json' keyed by names: pass --tag-index ({name: column})"
    assert with_flags("n_resamples must be a positive integer, got 0; x.n_resamples, "
                      "n_resamples_max, tag_index.json", names) == \
        "--n-resamples must be a positive integer, got 0; x.n_resamples, " \
        "n_resamples_max, tag_index.json"
    assert with_flags("the forecaster's tag_index", names) == "the forecaster's --tag-index"


def _named_counts_argv(verb, data, out):
    """``verb`` with training counts keyed by tag names and no --tag-index."""
    test = ["--scores", data.p("test.npy"), "--gold", data.p("test_gold.npy")]
    dev = ["--dev-scores", data.p("dev.npy"), "--dev-gold", data.p("dev_gold.npy")]
    counts = ["--train-counts", data.p("counts_named.json")]
    fit = ["--scores", data.p("dev.npy"), "--gold", data.p("dev_gold.npy"), "-o", out]
    return {"evaluate": ["evaluate", *test, *counts],
            "compare": ["compare", *test, *dev, *counts, "--methods", "isotonic"],
            "report": ["report", *test, *counts, "-o", out],
            "fit": ["fit", *fit, *counts],
            "fit --select": ["fit", *fit, *counts, "--select", "--methods", "isotonic",
                             "--folds", "2"],
            "groups": ["groups", *counts]}[verb]


@pytest.mark.parametrize("verb", ["evaluate", "compare", "report", "fit", "fit --select",
                                  "groups"])
def test_the_tag_index_hint_names_the_flag(data, capsys, tmp_path, verb):
    rc = main(_named_counts_argv(verb, data, str(tmp_path / "out")))
    err = capsys.readouterr().err
    assert rc == 2 and "keyed by tag names" in err and "pass --tag-index" in err, err
    assert "tag_index" not in err


def test_the_key_hint_names_the_flag_of_its_file(data, capsys, tmp_path):
    import numpy as np
    np.savez(tmp_path / "two.npz", a=np.zeros((2, 2)), b=np.zeros((2, 2)))
    for flag, value in (("--scores", "--key"), ("--dev-scores", "--dev-key")):
        argv = ["compare", "--scores", data.p("test.npy"), "--gold", data.p("test_gold.npy"),
                "--dev-scores", data.p("dev.npy"), "--dev-gold", data.p("dev_gold.npy")]
        argv[argv.index(flag) + 1] = str(tmp_path / "two.npz")
        assert main(argv) == 2
        assert f"name one with {value}" in capsys.readouterr().err


@pytest.mark.parametrize("typed", ["--level", "--confidence-level"])
def test_a_hint_uses_the_spelling_typed(data, capsys, typed):
    rc = main(["evaluate", "--scores", data.p("test.npy"), "--gold", data.p("test_gold.npy"),
               "--ci", typed, "2"])
    err = capsys.readouterr().err
    assert rc == 2 and f"{typed} must" in err and "confidence_level" not in err, err


def test_warnings_name_the_flags_too(data, capsys, tmp_path):
    rc = main(["fit", "--scores", data.p("dev.npy"), "--gold", data.p("dev_gold.npy"),
               "--train-counts", data.p("counts.json"), "--grouping", "per-tag",
               "--group-min-entries", "20", "-o", str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert rc == 0 and "sparsecal fit: warning:" in err and "fewer than 200" in err, err
    assert "(--group-min-entries=20)" in err and "min_entries" not in err


# --------------------------------------------------- module paths named -- #

_PATH = re.compile(r"\bsparsecal(?:\.[A-Za-z_]\w*)+")


def _resolves(dotted):
    """A module, or an attribute of one (``sparsecal.select``)."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for name in parts[i:]:
                obj = getattr(obj, name)
        except AttributeError:
            return False
        return True
    return False


def _cli_strings():
    """Every string constant of sparsecal/cli (docstrings are --help text)."""
    import sparsecal.cli   # the installed package's sources (the wheel's in CI)
    paths = sorted(Path(sparsecal.cli.__file__).parent.glob("*.py"))
    assert len(paths) > 5, paths
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield path.name, node.value


def test_every_module_named_to_the_user_exists(tmp_path, capsys):
    named = {(where, m.rstrip(".")) for where, text in _cli_strings()
             for m in _PATH.findall(text)}
    assert main(["demo", "--tokens", "600", "-o", ""]) == 0
    named |= {("demo output", m) for m in _PATH.findall(capsys.readouterr().out)}
    assert ("demo.py", "sparsecal.datasets.synthetic") in named
    assert ("demo output", "sparsecal.datasets.synthetic") in named
    missing = sorted((where, m) for where, m in named if not _resolves(m))
    assert missing == []


def test_the_demo_report_names_the_generator_module():
    from sparsecal.cli.demo import NOTES
    names = _PATH.findall(NOTES)
    assert names == ["sparsecal.datasets.synthetic"] and all(map(_resolves, names))
    assert not _resolves("sparsecal.synthetic")   # the name it printed before
