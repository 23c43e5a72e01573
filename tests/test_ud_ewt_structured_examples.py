"""The structured examples on slices of UD English-EWT (the full runs are the
examples themselves): HMM versus CRF (examples/ud_ewt_hmm_crf.py, Nguyen &
O'Connor 2015 Section 4.2) and proper-name spans with J&Y's forecaster and
re-ranking (examples/ud_ewt_spans.py)."""
import runpy
from pathlib import Path

import numpy as np
import pytest

from _shared_data import require

from _examples import example as example_namespace

pytest.importorskip("torch", reason="the posteriors come from sparsecal.crf")
pytest.importorskip("sklearn_crfsuite", reason="the examples' CRF is sklearn-crfsuite's")
pytest.importorskip("sklearn", reason="the forecaster is fitted by scikit-learn")
ROOT = Path(__file__).resolve().parents[1]
UD_EWT = require("ud_ewt")
SCRIPT = ROOT / "examples" / "ud_ewt_hmm_crf.py"
example = pytest.fixture(scope="module")(
    lambda: runpy.run_path(str(SCRIPT), run_name="ud_ewt_hmm_crf_under_test"))


@pytest.fixture(scope="module")
def data(example):
    return example["load"](UD_EWT, limit=60)


def test_crf_potentials_from_weights_give_crfsuites_marginals(example, data):
    """The CRF read back as log potentials and run through sparsecal.crf gives
    the marginals crfsuite computes itself."""
    from sparsecal import crf

    splits, names = data
    model = example["train_crf"](*splits["train"], names, c2=0.1)
    forms, gold, lengths = splits["dev"]
    pot = example["crf_potentials"](model, forms, lengths, names)
    ours = crf.marginals(**pot).numpy()
    theirs = model.predict_marginals(example["crf_features"](forms, lengths))
    real = np.arange(ours.shape[1])[None] < lengths[:, None]
    ref = np.array([[tok.get(t, 0.0) for t in names] for s in theirs for tok in s])
    np.testing.assert_allclose(ours[real], ref, atol=1e-6)


def test_hmm_is_a_distribution_over_the_tags(example, data):
    splits, names = data
    from sparsecal.structured import SupervisedHMM
    hmm = SupervisedHMM().fit(*splits["train"], n_tags=len(names))
    tokens, acc, pair = example["posteriors"](hmm.potentials(*splits["test"][::2]),
                                              splits["test"][1])
    np.testing.assert_allclose(tokens.sum(1), 1, atol=1e-9)
    assert 0.3 < acc <= 1 and pair.n_tags == len(names) ** 2


@pytest.mark.filterwarnings("ignore:.*have bins of fewer than:UserWarning")
def test_pipeline_on_a_slice(example, tmp_path):
    summary = example["run"](UD_EWT, tmp_path / "out", tmp_path / "fig", limit=60,
                             crf_sentences=60, hmm_pseudocounts=(0.1,), crf_c2=(0.1,),
                             min_entries=20, log=lambda *a: None)
    for model in ("HMM", "CRF"):
        s = summary[model]
        assert 0.3 < s["test_accuracy"] <= 1
        lo, hi = s["calib_err_ci"]
        assert lo <= s["calib_err"] <= hi and 0 <= s["overconfident_share"] <= 1
    assert summary["crf_sentences"] == 60
    assert (tmp_path / "out" / "summary.json").is_file()
    assert sorted(p.name for p in (tmp_path / "fig").iterdir()) == [
        "ud_ewt_hmm_crf_pairs.png", "ud_ewt_hmm_crf_reliability.png",
        "ud_ewt_hmm_crf_tags.png"]


@pytest.fixture(scope="module")
def spans_example():
    with example_namespace("ud_ewt_spans") as namespace:
        yield namespace


def test_name_spans_are_runs_of_propn(spans_example):
    import sparsecal as sc
    forms, gold, lengths = spans_example["name_spans"](UD_EWT, "dev", limit=50)
    corpus = sc.io.read_conllu(UD_EWT / "en_ewt-ud-dev.conllu.xz", "upos")
    upos = np.array(sorted(corpus.tag_index, key=corpus.tag_index.get))[
        corpus.gold[:gold.shape[0]]]
    assert ((gold > 0) == (upos == "PROPN")).all()
    start = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    for i, g in enumerate(gold):                 # B exactly where a run begins
        begins = upos[i] == "PROPN" and (i in start or upos[i - 1] != "PROPN")
        assert (g == 1) == begins


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_spans_pipeline_on_a_slice(spans_example, tmp_path):
    s = spans_example["run"](UD_EWT, tmp_path / "out", tmp_path / "fig", limit=150,
                             log=lambda *a: None)
    assert s["heuristic_k"]["k"] in (1, 2, 3) and len(s["heuristic_k"]["ece"]) == 3
    assert s["span_f1_before"]["n_gold"] == s["span_f1_after"]["n_gold"] > 0
    for v in s["ece_top1"].values():
        assert 0 <= v <= 1
    assert (tmp_path / "fig" / "ud_ewt_spans_forecaster.png").is_file()
