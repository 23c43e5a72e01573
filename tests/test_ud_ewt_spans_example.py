"""The real span example (examples/ud_ewt_spans.py: PROPN-run spans of UD
English-EWT, J&Y's forecaster and re-ranking) on a slice."""
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="span events come from sparsecal.crf")
pytest.importorskip("sklearn_crfsuite", reason="the example's CRF is sklearn-crfsuite's")
pytest.importorskip("sklearn", reason="the forecaster is fitted by scikit-learn")
ROOT = Path(__file__).resolve().parents[1]
UD_EWT = ROOT.parent / "shared" / "data" / "ud_ewt"
if not UD_EWT.is_dir():
    pytest.skip(f"real data not available: {UD_EWT} is absent", allow_module_level=True)


@pytest.fixture(scope="module")
def example():
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        yield runpy.run_path(str(ROOT / "examples" / "ud_ewt_spans.py"), run_name="spans")
    finally:
        sys.path.remove(str(ROOT / "examples"))


def test_name_spans_are_runs_of_propn(example):
    import sparsecal as sc
    forms, gold, lengths = example["name_spans"](UD_EWT, "dev", limit=50)
    corpus = sc.read_conllu(UD_EWT / "en_ewt-ud-dev.conllu.xz", "upos")
    upos = np.array(sorted(corpus.tag_index, key=corpus.tag_index.get))[
        corpus.gold[:gold.shape[0]]]
    assert ((gold > 0) == (upos == "PROPN")).all()
    start = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    for i, g in enumerate(gold):                 # B exactly where a run begins
        begins = upos[i] == "PROPN" and (i in start or upos[i - 1] != "PROPN")
        assert (g == 1) == begins


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_pipeline_on_a_slice(example, tmp_path):
    s = example["run"](UD_EWT, tmp_path / "out", tmp_path / "fig", limit=150,
                       log=lambda *a: None)
    assert s["heuristic_k"]["k"] in (1, 2, 3) and len(s["heuristic_k"]["ece"]) == 3
    assert s["span_f1_before"]["n_gold"] == s["span_f1_after"]["n_gold"] > 0
    for v in s["ece_top1"].values():
        assert 0 <= v <= 1
    assert (tmp_path / "fig" / "ud_ewt_spans_forecaster.png").is_file()
