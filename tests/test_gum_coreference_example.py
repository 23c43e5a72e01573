"""The GUM coreference example (examples/gum_coreference.py) in its quick mode,
with its model's gradient against finite differences and its antecedent
matrices, heads and MAP entities against plain loops."""

import numpy as np
import pytest

from _examples import example
from _shared_data import require

GUM = require("gum")


@pytest.fixture(scope="module")
def ex():
    with example("gum_coreference") as namespace:
        yield namespace


@pytest.fixture(scope="module")
def dev(ex):
    return ex["load"](GUM, "dev", 2)


def test_heads_and_candidates_by_loops(ex, dev):
    c = dev["corpus"]
    assert dev["M"] == int((c.mention_document < 2).sum())
    mention, ante, starts = ex["candidates"](dev, 5)
    want = []
    for i in range(dev["M"]):
        want.append((i, -1))
        j = i - 1
        while j >= 0 and dev["doc"][j] == dev["doc"][i] and i - j <= 5:
            want.append((i, j))
            j -= 1
    assert list(zip(mention.tolist(), ante.tolist())) == want
    assert (mention[starts] == np.arange(dev["M"])).all() and (ante[starts] == -1).all()
    # exact match: the same lower-cased words
    lower = [f.lower() for f in c.forms]
    text = [" ".join(lower[a:b]) for a, b in zip(dev["start"], dev["end"])]
    for i, j in [(3, 1), (10, 2), (40, 7)]:
        assert (dev["text"][i] == dev["text"][j]) == (text[i] == text[j])
    pron = np.flatnonzero(dev["kind"] == 0)
    assert pron.size > 20 and (dev["end"][pron] - dev["start"][pron] == 1).mean() > 0.9


def test_gradient_is_the_finite_difference_of_the_loss(ex, dev):
    from scipy.optimize import check_grad
    loss, width = ex["AntecedentModel"](10, 1e-2).objective(dev)
    w = np.random.default_rng(0).normal(size=width) * 0.3
    value, grad = loss(w)
    assert value > 0 and np.abs(grad).max() > 1e-3
    assert check_grad(lambda v: loss(v)[0], lambda v: loss(v)[1], w) < 1e-5 * np.linalg.norm(grad)
    # at zero weights every candidate is equally likely: the loss is the mean log
    # of (candidates / gold candidates)
    mention, ante, starts = ex["candidates"](dev, 10)
    n = np.diff(np.r_[starts, mention.size])
    same = (ante >= 0) & (dev["entity"][np.maximum(ante, 0)] == dev["entity"][mention])
    g = np.add.reduceat(same, starts)
    assert loss(np.zeros(width))[0] == pytest.approx(np.mean(np.log(n / np.maximum(g, 1))))


def test_antecedent_matrices_and_map_entities(ex, dev):
    model = ex["AntecedentModel"](8, 1e-2).fit(dev)
    P = model.antecedents(dev)
    assert len(P) == 2
    for Pd in P:
        np.testing.assert_allclose(Pd.sum(1), 1.0)
        assert not np.triu(Pd, 1).any() and not np.tril(Pd, -9).any()
        ent = ex["map_entities"](Pd)
        root = []
        for i, a in enumerate(Pd.argmax(1)):              # plain loop
            root.append(i if a == i else root[a])
        assert ent.tolist() == root


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_quick_study(ex, tmp_path):
    s = ex["run"](GUM, tmp_path / "out", tmp_path / "fig", quick=True, log=lambda *a: None)
    assert s["mentions"] == {"train": 5932, "dev": 1098, "test": 1017}
    t = s["scores"]["test"]
    assert 0.3 < t["conll"] < 1 and t["conll"] == pytest.approx(
        np.mean([t[k]["f1"] for k in ("muc", "b3", "ceafe")]))
    for r in s["pairwise_ce"].values():
        assert 0 <= r["ci_low"] <= r["value"] <= r["ci_high"] < 0.5
    assert 0 < s["calibration_test"]["p_value"] <= 1
    assert 0.3 < s["decision_accuracy"] < 1 and s["decision_ce"]["value"] < 0.5
    for v in s["entities"].values():
        items = v["items"]
        inside = [it["low"] <= it["gold"] <= it["high"] for it in items]
        if v["n_items"] <= 16:
            assert v["coverage"] == pytest.approx(np.mean(inside))
    assert sorted(p.name for p in (tmp_path / "fig").iterdir()) == [
        "gum_coreference_entities.png", "gum_coreference_reliability.png"]
    assert (tmp_path / "out" / "summary.json").is_file()
