"""--metrics on every verb that prints or writes measures (issue 13, item 6): the
same flag (names, help, validation) from one definition, and compare's measures per
method x grouping equal to the library call."""
import json
import math

import pytest

import sparsecal as sc
from sparsecal.cli.main import build_parser, main
from test_cli import data  # noqa: F401 - the CLI's data files, as a fixture

VERBS = ("evaluate", "compare", "report", "events")


def _action(verb, dest):
    sub = build_parser(verb)._subparsers._group_actions[0].choices[verb]
    return next(a for a in sub._actions if a.dest == dest)


def test_one_metrics_flag_for_every_verb():
    actions = [_action(v, "metrics") for v in VERBS]
    assert len({(a.help, tuple(a.choices or ()), a.nargs) for a in actions}) == 1
    assert set(_action("compare", "metrics").choices) == set(sc.metrics.measures.MEASURES)


def test_prior_help_names_what_takes_it_from_the_registries():
    """--prior's help lists the measures and (where methods are fit) the methods
    that take a prior, read from the registries: one text per kind of verb."""
    measures = [m.name for m in sc.metrics.measures.MEASURES.values() if "prior" in m.options]
    methods = [m.name for m in sc.calibration.registry.METHODS.values() if m.uses_prior]
    assert measures and methods
    helps = {v: _action(v, "prior").help for v in VERBS + ("fit",)}
    assert len({helps[v] for v in ("compare", "report", "events")}) == 1
    for verb, text in helps.items():   # evaluate fits no method; fit has no --metrics
        assert all(f" {name}" in text for name in measures) == (verb != "fit"), verb
        assert all(f" {name}" in text for name in methods) == (verb != "evaluate"), verb


def _compare(data, out, *flags):
    return main(["compare", "--scores", data.p("test.npy"), "--gold", data.p("test_gold.npy"),
                 "--dev-scores", data.p("dev.npy"), "--dev-gold", data.p("dev_gold.npy"),
                 "--train-counts", data.p("counts.json"), "--json", str(out), "-q", *flags])


def _same(a, b):
    """Equal JSON values, NaN equal to NaN."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


def test_compare_metrics_equal_the_library(data, tmp_path):
    out = tmp_path / "c.json"
    names = ["ece", "cllr", "min-dcf"]
    assert _compare(data, out, "--methods", "isotonic", "gaussian", "--metrics", *names,
                    "--prior", "0.2", "--seed", "3", "--bin-size", "150") == 0
    got = json.loads(out.read_text())
    evaluation = {"bin_size": 150, "metrics": names, "prior": 0.2}
    want = sc.compare_methods(data.dev_entries, data.test_entries, data.tfg,
                              methods=["isotonic", "gaussian"], prior=0.2, seed=3,
                              evaluation=evaluation)
    assert _same(got, json.loads(json.dumps(want.to_dict())))
    assert list(got["metrics"]) == names
    # each cell is evaluate's over that method x grouping's recalibrated entries
    model = want.models[("gaussian", "tfg")]
    after = sc.evaluate(model.transform(data.test_entries), data.tfg, ci=None,
                        **{k: v for k, v in evaluation.items()})
    cell = got["metrics"]["min-dcf"]["methods"]["gaussian/tfg"]
    assert cell == [after.metrics["min-dcf"]["pooled"]] + after.metrics["min-dcf"]["groups"]
    frame = want.to_frame()
    assert frame["cllr All"].tolist()[0] == got["metrics"]["cllr"]["none"][0]
    shown = sc.calibration.registry.METHODS["gaussian"].display_name
    text = want.to_markdown()
    assert "| Cllr | None | | " in text and f"| minDCF | {shown} | 5 | " in text


def test_compare_without_metrics_has_no_measure_table(data, tmp_path):
    out = tmp_path / "c.json"
    assert _compare(data, out, "--methods", "platt") == 0
    assert "metrics" not in json.loads(out.read_text())


@pytest.mark.parametrize("flags, message", [
    (["--metrics", "dcf"], "--metrics dcf needs --prior"),
    (["--metrics", "nonsense"], "invalid choice"),
    (["--metrics", "ece", "--prior", "0.2", "--methods", "isotonic"],
     "not to isotonic"),
])
def test_compare_refuses_as_evaluate(data, tmp_path, capsys, flags, message):
    try:
        rc = _compare(data, tmp_path / "c.json", *flags)
    except SystemExit as exc:   # argparse's refusal of an unknown name
        rc = exc.code
    assert rc == 2 and message in capsys.readouterr().err


def test_report_comparison_carries_the_measures(data, tmp_path, monkeypatch):
    from sparsecal.plotting import report as report_module
    monkeypatch.setattr(report_module, "_figures", lambda directory, *a: [])   # numbers only
    out = tmp_path / "rep"
    rc = main(["report", "--scores", data.p("test.npy"), "--gold", data.p("test_gold.npy"),
               "--dev-scores", data.p("dev.npy"), "--dev-gold", data.p("dev_gold.npy"),
               "--train-counts", data.p("counts.json"), "--methods", "platt",
               "--metrics", "ece", "min-dcf", "--prior", "0.2", "--ci", "simulation",
               "-o", str(out), "-q"])
    assert rc == 0
    numbers = json.loads((out / "numbers.json").read_text())
    want = sc.compare_methods(data.dev_entries, data.test_entries, data.tfg,
                              methods=["platt"], ci="simulation",
                              evaluation={"metrics": ["ece", "min-dcf"], "prior": 0.2})
    assert _same(numbers["comparison"]["metrics"],
                 json.loads(json.dumps(want.to_dict()))["metrics"])
    assert "<td>minDCF</td><td>Platt" in (out / "index.html").read_text()


def test_events_metrics_equal_the_api(tmp_path, capsys):
    """events --metrics: the measures per event type, as evaluate's; --prior serves
    a measure with the forecaster too (which takes none)."""
    pytest.importorskip("torch")
    from test_cli_events import Corpus, crf_events
    c = Corpus(str(tmp_path), seed=1)
    rc = main(["events", "--potentials", c.p("crf.npz"), "--gold", c.p("gold.npy"),
               "--k", "2", "--metrics", "ece", "min-dcf", "--prior", "0.4", "--json",
               c.p("j.json"), "-q"])
    assert rc == 0, capsys.readouterr().err
    ev = crf_events(c, 2)
    want = sc.evaluate(ev.entries, sc.TagGroups.per_tag(2), ci=None, top_label=True,
                       metrics=["ece", "min-dcf"], prior=0.4)
    got = json.loads(open(c.p("j.json")).read())["evaluation"]
    assert _same(got["metrics"], json.loads(want.to_json())["metrics"])
    rc = main(["events", "--potentials", c.p("crf.npz"), "--gold", c.p("gold.npy"),
               "--metrics", "dcf"])
    assert rc == 2 and "--metrics dcf needs --prior" in capsys.readouterr().err
