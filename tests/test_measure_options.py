"""The measure x option matrix (issue 13, "an option accepted but ignored"): every
shared option (``measures.OPTIONS``) reaches each measure that declares it, with
the value its function gives for that option, and an option that no part of a call
takes is refused naming the option and the measures. A measure whose function takes
an option it does not declare fails here, so a new measure cannot ignore one."""
import inspect

import numpy as np
import pytest

from sparsecal import TagGroups, evaluate, threshold
from sparsecal.cli.main import main
from sparsecal.datasets.synthetic import make_tagger_outputs
from sparsecal.metrics.measures import MEASURES, OPTIONS, check_options, get_measure
from test_cli import data  # noqa: F401 - the CLI's data files, as a fixture

#: a value of each option other than its default
VALUES = {"n_bins": 7, "bin_size": 40, "binning": "fixed", "prior": 0.3,
          "n_resamples": 49, "random_state": 5}
#: the options evaluate uses whatever the measures (SMCE / GMCE's binning)
TABLE = {"n_bins", "bin_size", "binning"}
CELLS = [(m, o) for m in sorted(MEASURES) for o in OPTIONS]


@pytest.fixture(scope="module")
def split():
    data = make_tagger_outputs(2000, n_tags=12, split_seed=3)
    entries = threshold(data.scores, data.gold, 0.05)
    return entries, TagGroups.from_counts(data.train_counts, 2, n_tags=12)


def _evaluate_with(entries, groups, name, kw):
    """evaluate(metrics=[name]) with the options ``kw``: the resampling ones as
    ``measure_options`` (``ci`` is the one interval argument of evaluate)."""
    opts = {k: v for k, v in kw.items() if k in ("n_resamples", "random_state")}
    rest = {k: v for k, v in kw.items() if k not in opts}
    return evaluate(entries, groups, ci=None, metrics=[name], measure_options=opts or None,
                    **rest)


def _needs(name):
    """Options a measure cannot go without (DCF's prior)."""
    return {"prior": 0.3} if "prior" in get_measure(name).options else {}


@pytest.mark.parametrize("name", sorted(MEASURES))
def test_an_option_its_function_takes_is_declared_or_changes_nothing(split, name):
    """The declared options are options of the function; an option of the
    function left undeclared does not change the measure (brier: the score does
    not depend on the bins, only its decomposition does)."""
    entries, _ = split
    m = get_measure(name)
    takes = set(inspect.signature(m.function).parameters) & set(OPTIONS)
    assert set(m.options) <= takes
    base = m(entries.score, entries.label, **_needs(name))
    for option in takes - set(m.options) - {k for k, _ in m.fixed}:
        kw = {option: VALUES[option], **({"n_bins": 12} if option == "binning" else {})}
        result = m.function(entries.score, entries.label, **dict(m.fixed, **kw))
        assert m.value_of(result) == pytest.approx(base, rel=1e-12), option


@pytest.mark.parametrize("name, option", CELLS)
def test_each_option_reaches_the_measure_or_is_refused(split, name, option):
    entries, groups = split
    m = get_measure(name)
    kw = dict(_needs(name), **{option: VALUES[option]})
    if option == "binning":
        kw["n_bins"] = 12
    if option in m.options:
        got = _evaluate_with(entries, groups, name, kw).metrics[name]
        direct = dict(m.fixed, **{k: v for k, v in kw.items() if k in m.options})
        assert got["pooled"] == m.value_of(m.function(entries.score, entries.label,
                                                      **direct))
        default = m(entries.score, entries.label, **_needs(name))
        if option != "prior":   # the prior's default is "none": no value to compare
            assert got["pooled"] != default, "the option did not change the measure"
    elif option in TABLE:   # SMCE / GMCE take it; the measure has no bins
        got = _evaluate_with(entries, groups, name, kw).metrics[name]
        assert got["pooled"] == m(entries.score, entries.label, **_needs(name))
    else:
        with pytest.raises(ValueError, match=f"{option} .*does not apply to {name}: "
                                             "it applies to"):
            _evaluate_with(entries, groups, name, kw)


def test_check_options_names_the_flag_and_the_other_takers():
    with pytest.raises(ValueError, match=r"^--n-resamples \(a number of resamples\) does "
                                         r"not apply to ece, cllr: it applies to "
                                         r"calibration-test-p and to --ci$"):
        check_options([get_measure("ece"), get_measure("cllr")], {"n_resamples": 10},
                      names={"n_resamples": "--n-resamples"},
                      others={"n_resamples": "--ci"})
    # defaults and options used elsewhere pass
    check_options([get_measure("ece")], {"n_resamples": None, "binning": "equal-mass"})
    check_options([get_measure("ece")], {"n_resamples": 10}, used=("n_resamples",))


def test_measure_options_are_checked(split):
    entries, groups = split
    with pytest.raises(ValueError, match="^measure_options must be a dict of n_resamples"):
        evaluate(entries, groups, ci=None, metrics=["calibration-test-p"],
                 measure_options={"n_samples": 9})
    with pytest.raises(ValueError, match="^random_state .*does not apply to ece"):
        evaluate(entries, groups, ci=None, metrics=["ece"],
                 measure_options={"random_state": 1})


@pytest.mark.parametrize("n", [1, 2, 60])
def test_calibration_test_bins_as_calibration_error(n):
    """The statistic with bin_size / fixed bins is calibration_error's CE_2."""
    from sparsecal.metrics import calibration_error, calibration_test
    rng = np.random.default_rng(n)
    s = rng.integers(1, 10, n) / 10   # ties
    y = (rng.random(n) < s).astype(np.uint8)
    for kw in ({"bin_size": 7}, {"binning": "fixed", "n_bins": 4}, {"n_bins": 3}):
        t = calibration_test(s, y, n_resamples=19, **kw)
        assert t.statistic == calibration_error(s, y, **kw).value
        assert 1 / 20 <= t.p_value <= 1


def _evaluate(data, out, *flags):
    return main(["evaluate", "--scores", data.p("test.npy"), "--gold",
                 data.p("test_gold.npy"), "--train-counts", data.p("counts.json"),
                 "--json", str(out), "-q", *flags])


def test_cli_resampling_flags_reach_the_calibration_test(data, tmp_path):
    import json
    out = tmp_path / "e.json"
    assert _evaluate(data, out, "--metrics", "calibration-test-p", "--n-resamples", "29",
                     "--seed", "4", "--bin-size", "300") == 0
    got = json.loads(out.read_text())["metrics"]["calibration-test-p"]
    want = evaluate(data.test_entries, data.tfg, ci=None, metrics=["calibration-test-p"],
                    measure_options={"n_resamples": 29, "random_state": 4},
                    bin_size=300).metrics
    assert got == want["calibration-test-p"]


@pytest.mark.parametrize("flags, message", [
    (["--n-resamples", "50", "--metrics", "ece"],
     "--n-resamples (a number of resamples) does not apply to ece: it applies to "
     "calibration-test-p and to --ci"),
    (["--level", "0.9"], "--level applies to --ci: give --ci too"),
])
def test_cli_refuses_an_option_nothing_takes(data, tmp_path, capsys, flags, message):
    assert _evaluate(data, tmp_path / "e.json", *flags) == 2
    assert message in capsys.readouterr().err
