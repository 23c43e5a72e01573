"""The GUM entity-span example (examples/gum_entity_spans.py): its BIO gold
against a plain loop over the outermost mentions, and the study on a slice."""

import numpy as np
import pytest

from _examples import example
from _shared_data import require

pytest.importorskip("sklearn_crfsuite", reason="the CRF is sklearn-crfsuite's")
pytest.importorskip("sklearn", reason="the forecaster is fitted by scikit-learn")
GUM = require("gum")


@pytest.fixture(scope="module")
def ex():
    with example("gum_entity_spans") as namespace:
        yield namespace


def test_bio_gold_is_the_outermost_mentions(ex):
    from sparsecal.io import read_coref
    (forms, gold, lengths), names = ex["entity_spans"](GUM, "dev")
    c = read_coref(GUM / "en_gum-cc-by-dev.conllu.xz")
    assert len(names) == 21 and names[0] == "O" and forms.shape == gold.shape
    want = ["O"] * c.forms.shape[0]
    for m in range(c.n_mentions):                       # plain loop, outermost first
        if c.depth[m] == 0:
            t = c.types[c.mention_type[m]]
            want[c.start[m]] = f"B-{t}"
            for i in range(c.start[m] + 1, c.end[m]):
                want[i] = f"I-{t}"
    assert [names[g] for g in gold] == want
    assert lengths.sum() == gold.size and (gold > 0).mean() > 0.3
    (_, short, few), _ = ex["entity_spans"](GUM, "dev", limit=5)
    assert few.size == 5 and np.array_equal(short, gold[:few.sum()])


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_study_on_a_slice(ex, tmp_path):
    s = ex["run"](GUM, tmp_path / "out", tmp_path / "fig", limit=150, log=lambda *a: None)
    (_, gold, _), names = ex["entity_spans"](GUM, "test", limit=150)
    n_gold = int(sum(names[g].startswith("B-") for g in gold))
    assert s["span_f1_before"]["n_gold"] == s["span_f1_after"]["n_gold"] == n_gold
    assert all(0 <= v <= 1 for v in s["ece_top1"].values())
    assert [p.name for p in (tmp_path / "fig").iterdir()] == ["gum_entity_spans_forecaster.png"]
