"""Stock betacal (no monkeypatch: its LogisticRegression stops at scikit-learn's
tol=1e-4) against BetaCalibration (issue 13: "matching betacal within 1e-4"): where
its solver converged (the Newton step from its solution, H^-1 g, is at most 1e-4:
its parameters are that close to the optimum) the predictions agree within 1e-4;
where it did not, our objective is the lower. A bounded form of
scripts/betacal_stock.py (which prints the table of docs/recalibration.md)."""
import importlib.util
import pathlib

import pytest

pytest.importorskip("betacal")

_path = pathlib.Path(__file__).parents[1] / "scripts" / "betacal_stock.py"
_spec = importlib.util.spec_from_file_location("betacal_stock", _path)
study = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(study)

CASES = [(seed, n) for n in (2, 3, 10, 100, 1000) for seed in range(4)] + [(2, 100000)]


@pytest.fixture(scope="module")
def rows():
    return [study.compare(seed, n) for seed, n in CASES]


def test_agrees_within_1e_4_where_betacal_converged(rows):
    converged = [r for r in rows if r["step"] <= 1e-4]
    assert {r["n"] for r in converged} >= {1000, 100000}   # not vacuous, n up to 1e5
    for r in converged:
        assert r["diff"] <= 1e-4, r


def test_our_objective_is_lower_where_it_did_not(rows):
    stopped = [r for r in rows if r["step"] > 1e-4]
    assert {r["n"] for r in stopped} >= {2, 3, 100}   # separable n = 2, early stops
    for r in stopped:
        assert r["ours"] <= r["theirs"] + 1e-12, r
    # and where it stopped early, the gap can exceed 1e-4 (the reason for the rule)
    assert max(r["diff"] for r in stopped if r["n"] >= 10) > 1e-4
