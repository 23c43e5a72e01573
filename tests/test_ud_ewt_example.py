"""The UD English-EWT end-to-end example (examples/ud_ewt_crf.py) on a slice."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "ud_ewt"
pytestmark = pytest.mark.skipif(not DATA.is_dir(),
                                reason=f"real data not available: {DATA} is absent")


@pytest.fixture(scope="module")
def example():
    sys.path.insert(0, str(REPO / "examples"))   # its helper modules (_figures)
    spec = importlib.util.spec_from_file_location("ud_ewt_crf",
                                                  REPO / "examples" / "ud_ewt_crf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    sys.path.remove(str(REPO / "examples"))


def test_read_conllu_tags_are_upos_feats(example):
    sents = example.read_conllu(DATA / "en_ewt-ud-dev.conllu.xz", limit=5)
    assert len(sents) == 5
    form, tag = sents[0][0]
    upos, feats = tag.split("|", 1)
    assert upos.isupper() and (feats == "_" or "=" in feats)


def test_pipeline_on_a_slice(example, tmp_path):
    torch.manual_seed(0)
    summary = example.run(DATA, tmp_path, limit=120, epochs=1, log=lambda *a: None)
    assert 0.05 < summary["test_accuracy"] <= 1.0
    before, after = summary["before"], summary["after"]
    assert before["smce"]["n"] == after["smce"]["n"] > 0
    assert len(before["gmce"]) == 5
    assert (tmp_path / "summary.json").is_file()
    for name in ("reliability", "groups", "methods"):
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "tfg_isotonic" / "calibrator.json").is_file()


def test_streamed_entries_in_corpus_order_equal_dense_marginals(example):
    """marginal_entries reorders streamed (length-bucketed) batches back to corpus
    order: it must equal thresholding dense marginals computed sentence by sentence."""
    import sparsecal as sc
    from sparsecal import crf

    sents = example.read_conllu(DATA / "en_ewt-ud-dev.conllu.xz", limit=40)
    tags = sorted({t for s in sents for _, t in s}) + [example.UNK_TAG]
    index = {t: i for i, t in enumerate(tags)}
    enc = example.Encoded(sents, index)
    torch.manual_seed(1)
    model = example.WindowCRFTagger(len(tags)).eval()
    got = example.marginal_entries(model, enc, 0.01, len(tags))
    rows, gold = [], []
    with torch.no_grad():
        for i in range(len(sents)):
            feats, mask, g, lengths = enc._pad(np.array([i]))
            m = crf.marginals(model.emissions(feats, mask), model.transitions,
                              lengths=lengths, start=model.start, end=model.end)
            rows.append(m[0, :lengths[0]].numpy())
            gold.append(g[0, :lengths[0]].numpy())
    want = sc.threshold(np.concatenate(rows), np.concatenate(gold), 0.01)
    np.testing.assert_array_equal(got.token, want.token)
    np.testing.assert_array_equal(got.tag, want.tag)
    np.testing.assert_array_equal(got.label, want.label)
    np.testing.assert_allclose(got.score, want.score, rtol=1e-5, atol=1e-6)
