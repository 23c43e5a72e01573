"""Foreign inputs are not converted silently, and readers are as strict as their
formats (issue 30, classes 8 and 10).

Class 8: the adapters that take Python objects from other libraries
(``word_probabilities``' word ids, sklearn-crfsuite's marginals) refuse a
string, a boolean or a float where a number of the format belongs (NumPy would
convert ``"0.5"`` and ``True``), and a word id far past the sub-words there are
is named as a word without a sub-word before anything is allocated.

Class 10: the CoNLL-U reader refuses, with both engines alike, what the format
forbids (an empty field, a space in a field other than FORM, LEMMA and MISC, an
ID with a leading zero or a range ending before it starts), and per-token
softmax scores must be distributions in every function and verb that takes
them.
"""
import re

import numpy as np
import pytest

from sparsecal.adapters import crfsuite_scores, entries_from_crfsuite, word_probabilities
from sparsecal.io import read_conllu
from sparsecal.structured import (softmax_event_probabilities, softmax_sequence_events,
                                  softmax_span_events)

LOGITS = np.zeros((1, 4, 2))


@pytest.mark.parametrize("value, words", [
    ("1", "'1' (str)"), (True, "True (bool)"), (1.0, "1.0 (float)"),
    (np.float64(1), "(float64)"), (b"1", "b'1' (bytes)")])
def test_word_ids_of_another_type_are_refused(value, words):
    with pytest.raises(TypeError, match=r"word_ids must hold word indices \(integers\) or "
                                        r"None; value 1 is .*" + re.escape(words)):
        word_probabilities(LOGITS, [[None, value, 0, None]])
    np.testing.assert_array_equal(word_probabilities(LOGITS, [[None, np.int64(1), 0, None]]),
                                  np.full((2, 2), 0.5))


@pytest.mark.parametrize("word", [2, 10 ** 12, 2 ** 62 - 1])
def test_a_word_id_past_the_sub_words_is_named_before_allocating(word):
    with pytest.raises(ValueError, match=r"word_ids\[0\] has no sub-word for word 1 "):
        word_probabilities(LOGITS, [[None, 0, word, None]])


@pytest.mark.parametrize("value, words", [
    ("0.5", "value 1 is '0.5' (str)"), (True, "value 0 is True (bool)"),
    (None, "value 1 is None (NoneType)"), (np.bool_(True), "(bool)")])
def test_crfsuite_marginals_of_another_type_are_refused(value, words):
    marginals = [[{"N": 0.5, "V": 0.5}, {"N": 0.2, "V": 0.8}]]
    bad = [[{"N": 0.5, "V": value if words.startswith("value 1") else 0.5},
            {"N": 0.2, "V": 0.8}]]
    if not words.startswith("value 1"):
        bad = [[{"N": value, "V": 0.0}, {"N": 0.2, "V": 0.8}]]
    crfsuite_scores(marginals)
    for convert in (crfsuite_scores, lambda m: entries_from_crfsuite(m, [["N", "V"]])):
        with pytest.raises(TypeError, match=r"marginals must hold probabilities"):
            convert(bad)


# --------------------------------------------------------------- class 10 -- #

WORD = "1\tI\tI\tPRON\tPRP\t_\t0\troot\t_\t_"
#: a CoNLL-U file's first body line -> the words of the refusal (None: valid)
CONLLU = {
    WORD: None,
    WORD.replace("\tPRON\t", "\t\t"): "the UPOS field is empty",
    WORD.replace("\tI\tI\t", "\t\tI\t"): "the FORM field is empty",
    WORD[:-1]: "the MISC field is empty",
    WORD.replace("\t0\t", "\t\t"): "the HEAD field is empty",
    WORD.replace("PRON", "PR ON"): "the UPOS field holds a space",
    WORD.replace("\troot\t", "\tro ot\t"): "the DEPREL field holds a space",
    WORD.replace("\tI\tI\t", "\tI I\tI I\t"): None,   # FORM and LEMMA may hold spaces
    "0" + WORD: "bad ID '01'",
    "+" + WORD: r"bad ID '\+1'",
    " " + WORD: "the ID field holds a space",
    "01-2\tI'm\t_\t_\t_\t_\t_\t_\t_\t_\n" + WORD: "bad ID '01-2'",
    "2-1\tI'm\t_\t_\t_\t_\t_\t_\t_\t_\n" + WORD: "bad ID '2-1'",
    "1-1\tI'm\t_\t_\t_\t_\t_\t_\t_\t_\n" + WORD: None,
    WORD + "\n1.0\tx\t_\t_\t_\t_\t_\t_\t_\t_": "bad ID '1.0'",
    WORD + "\n0.1\tx\t_\t_\t_\t_\t_\t_\t_\t_": None,
}


@pytest.mark.parametrize("body", list(CONLLU), ids=[repr(b[:24]) for b in CONLLU])
def test_both_conllu_engines_refuse_what_the_format_forbids(body, tmp_path):
    pytest.importorskip("conllu")
    path = tmp_path / "t.conllu"
    path.write_text(f"# sent_id = 1\n{body}\n\n")
    words = CONLLU[body]
    for engine in ("numpy", "conllu"):
        if words is None:
            assert read_conllu(path, engine=engine).gold.tolist() == [0]
            continue
        with pytest.raises(ValueError, match=words) as info:
            read_conllu(path, engine=engine)
        assert "t.conllu' line " in str(info.value)


PROBS = np.array([[[0.7, 0.3], [0.4, 0.6], [0.5, 0.5]]])


@pytest.mark.parametrize("name", ["softmax_sequence_events", "softmax_span_events",
                                  "softmax_event_probabilities"])
def test_softmax_scores_must_be_distributions(name):
    """Sums of 1.62 (the issue's) are refused at the first such token; a padded
    position beyond a sentence's length is not a token; 1 +- 1e-4 is a sum of 1."""
    call = {"softmax_sequence_events": lambda p, **kw: softmax_sequence_events(
                p, [[0, 1, 0]], **kw),
            "softmax_span_events": lambda p, **kw: softmax_span_events(
                p, [[0, 1, 0]], ["O", "B-X"], **kw),
            "softmax_event_probabilities": lambda p, **kw: softmax_event_probabilities(
                softmax_sequence_events(PROBS[:, :kw.get("lengths", [3])[0]], [[0, 1, 0][
                    :kw.get("lengths", [3])[0]]]), p)}[name]
    call(PROBS)
    near = PROBS * (1 + 1e-4)
    call(np.clip(near, 0, 1))
    bad = PROBS.copy()
    bad[0, 1] = [0.81, 0.81]
    with pytest.raises(ValueError, match=r"scores\[0, 1\] sums to 1.62, not 1"):
        call(bad)
    padded = PROBS.copy()
    padded[0, 2] = 0.0   # beyond a length of 2: not a token
    call(padded, lengths=[2]) if name != "softmax_event_probabilities" else \
        softmax_event_probabilities(softmax_sequence_events(PROBS[:, :2], [[0, 1]]), padded)


def test_the_events_verb_refuses_scores_that_are_no_distribution(tmp_path, capsys):
    from sparsecal.cli.main import main
    scores = np.tile([[0.81, 0.81]], (6, 1))
    np.save(tmp_path / "s.npy", scores)
    np.save(tmp_path / "g.npy", np.zeros(6, np.int64))
    (tmp_path / "l.txt").write_text("3\n3\n")
    rc = main(["events", "--scores", str(tmp_path / "s.npy"), "--gold",
               str(tmp_path / "g.npy"), "--lengths", str(tmp_path / "l.txt")])
    err = capsys.readouterr().err
    assert rc == 2 and "s.npy" in err and "sums to 1.62, not 1" in err, err
