"""Messages that say what is wrong (issue 30, classes 6 and 9).

Every input of every verb (the arguments ``flags.add_input`` marks, walked from
the parsers) given a FIFO is named as a FIFO, not as missing, and never blocks;
given a path that does not exist, it is named as missing. Every public function
with ``n_threads`` refuses every non-positive value (docs/reliability.md,
section 4). On the cluster path (class 9) a bad file is named as on one machine,
and what answers at ``--scheduler`` without being a Dask scheduler is said to be
so, not "out of memory".
"""
import signal
import socket
import threading

import numpy as np
import pytest

import sparsecal as sc
from sparsecal import crf, structured as st
from sparsecal.cli.main import VERBS, _parser, main

from _public_api import parameters

RNG = np.random.default_rng(5)
PROBS = RNG.dirichlet(np.ones(3), size=(4, 5))
SCORES = PROBS.reshape(20, 3)
GOLD = np.r_[SCORES[:10].argmax(1), RNG.integers(0, 3, 10)]   # some sentences right


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A valid file for every input of every verb."""
    d = tmp_path_factory.mktemp("inputs")
    np.save(d / "s.npy", SCORES)
    np.save(d / "g.npy", GOLD)
    np.save(d / "samples.npy", np.stack([SCORES, SCORES]))
    np.savez(d / "p.npz", emissions=np.log(PROBS), transitions=np.zeros((3, 3)),
             lengths=np.full(4, 5))
    (d / "l.txt").write_text("5\n" * 4)
    (d / "c.json").write_text('{"A": 9, "B": 5, "C": 1}')
    (d / "t.json").write_text('{"A": 0, "B": 1, "C": 2}')
    from sparsecal.io import save_entries
    save_entries(d / "e.npz", sc.threshold(SCORES, GOLD))
    st.save_events(d / "v.npz", st.softmax_sequence_events(PROBS, GOLD.reshape(4, 5), k=2))
    sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(3), min_entries=1).fit(
        sc.threshold(SCORES, GOLD)).save(d / "cal")
    events = st.load_events(d / "v.npz")
    sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(2), min_entries=1).fit(
        events.entries).save(d / "evcal")
    return {"s": d / "s.npy", "g": d / "g.npy", "m": d / "samples.npy", "p": d / "p.npz",
            "l": d / "l.txt", "c": d / "c.json", "t": d / "t.json", "e": d / "e.npz",
            "v": d / "v.npz", "cal": d / "cal", "evcal": d / "evcal", "d": d}


#: per verb, command lines that read each input (the first holding a flag is used)
BASES = {
    "evaluate": [["--scores", "{s}", "--gold", "{g}", "--tag-index", "{t}",
                  "--train-counts", "{c}"], ["--entries", "{e}"]],
    "fit": [["--scores", "{s}", "--gold", "{g}", "--tag-index", "{t}", "--train-counts", "{c}",
             "-o", "{d}/fit"], ["--entries", "{e}", "--grouping", "scw", "-o", "{d}/fit"]],
    "apply": [["{cal}", "--scores", "{s}", "-o", "{d}/out.npy"]],
    "compare": [["--scores", "{s}", "--gold", "{g}", "--dev-scores", "{s}", "--dev-gold", "{g}",
                 "--tag-index", "{t}", "--train-counts", "{c}", "--methods", "isotonic"],
                ["--entries", "{e}", "--dev-entries", "{e}", "--methods", "isotonic"]],
    "report": [["--scores", "{s}", "--gold", "{g}", "--dev-scores", "{s}", "--dev-gold", "{g}",
                "--tag-index", "{t}", "--train-counts", "{c}", "--methods", "isotonic",
                "-o", "{d}/r"],
               ["--entries", "{e}", "--dev-entries", "{e}", "--methods", "isotonic",
                "-o", "{d}/r"]],
    "groups": [["--train-counts", "{c}", "--tag-index", "{t}"]],
    "events": [["--scores", "{s}", "--lengths", "{l}", "--gold", "{g}", "--samples", "{m}",
                "--dev-scores", "{s}", "--dev-lengths", "{l}", "--dev-gold", "{g}",
                "--dev-samples", "{m}", "--tag-index", "{t}"],
               ["--potentials", "{p}", "--gold", "{g}", "--dev-potentials", "{p}",
                "--dev-gold", "{g}"],
               ["--events-file", "{v}", "--dev-events-file", "{v}"],
               ["--events-file", "{v}", "--calibrator", "{evcal}"]],
}


def _inputs():
    """(verb, flag) of every input of every verb."""
    return [(verb, a.option_strings[-1] if a.option_strings else a.dest) for verb in VERBS
            for a in _parser([verb])[1][verb]._actions if hasattr(a, "reads")]


INPUTS = _inputs()


def _argv(verb, flag, value, files):
    base = next(b for b in BASES[verb] if flag in b or (flag == "calibrator" and "{cal}" in b))
    i = base.index("{cal}") if flag == "calibrator" else base.index(flag) + 1
    argv = [a.format(**files) for a in base]
    argv[i] = str(value)
    return [verb, *argv, "-q"]


@pytest.fixture
def alarm():
    """Fail, rather than hang, if a read blocks on a FIFO."""
    def ring(*_):
        raise TimeoutError("blocked on a FIFO")
    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def test_every_input_has_a_command_line():
    assert len(INPUTS) >= 30
    for verb, flag in INPUTS:
        assert any(flag in b for b in BASES[verb]) or flag == "calibrator", (verb, flag)


@pytest.mark.parametrize("verb, flag", INPUTS, ids=[f"{v} {f}" for v, f in INPUTS])
def test_a_fifo_input_is_named_as_a_fifo(verb, flag, files, tmp_path, capsys, alarm):
    fifo = tmp_path / "pipe"
    import os
    os.mkfifo(fifo)
    rc = main(_argv(verb, flag, fifo, files))
    err = capsys.readouterr().err
    assert rc == 2 and "is a FIFO (named pipe), not a" in err and str(fifo) in err, err
    assert "does not exist" not in err and err.count("\n") == 1, err


@pytest.mark.parametrize("verb, flag", INPUTS, ids=[f"{v} {f}" for v, f in INPUTS])
def test_a_missing_input_is_named_as_missing(verb, flag, files, tmp_path, capsys):
    missing = tmp_path / "nothing-here"
    rc = main(_argv(verb, flag, missing, files))
    err = capsys.readouterr().err
    assert rc == 2 and str(missing) in err, err
    assert "does not exist" in err or "is not a saved calibrator" in err, err


def test_the_valid_command_lines_run(files, capsys, monkeypatch):
    """The command lines above are valid as they are (so each refusal is the
    input's; the report's page is not drawn)."""
    from sparsecal.cli import report
    monkeypatch.setattr(report.page, "write_report", lambda path, *a, **k: path)
    for verb, bases in BASES.items():
        for base in bases:
            assert main([verb, *(a.format(**files) for a in base), "-q"]) == 0, \
                capsys.readouterr().err


# ------------------------------------------------------------- n_threads -- #

EM, TR = np.zeros((1, 3, 2)), np.zeros((2, 2))
X, Y = np.array([0.2, 0.7, 0.9]), np.array([0, 1, 1])
#: every public function taking n_threads, called with it
THREADED = {
    "sparsecal.adapters.pytorch_crf.log_partition_from_torchcrf": lambda n: _torchcrf(
        "log_partition", n),
    "sparsecal.adapters.pytorch_crf.marginals_from_torchcrf": lambda n: _torchcrf(
        "marginals", n),
    "sparsecal.calibration.forecaster.Forecaster": lambda n: sc.Forecaster(n_threads=n).fit(
        {"mean": np.tile(X, 20)}, np.tile(Y, 20)),
    "sparsecal.core.binning.equal_mass_bins": lambda n: sc.core.equal_mass_bins(
        X, Y, n_bins=2, n_threads=n),
    "sparsecal.core.entries.threshold": lambda n: sc.threshold(
        np.array([[0.6, 0.4]]), [0], n_threads=n),
    "sparsecal.core.isotonic.isotonic_fit": lambda n: sc.core.isotonic_fit(X, Y, n_threads=n),
    "sparsecal.core.isotonic.isotonic_predict": lambda n: sc.core.isotonic_predict(
        X, np.array([0.0, 1.0]), np.array([0.0, 1.0]), n_threads=n),
    "sparsecal.crf.decoding.kbest": lambda n: crf.kbest(EM, TR, 2, n_threads=n),
    "sparsecal.crf.decoding.viterbi": lambda n: crf.viterbi(EM, TR, n_threads=n),
    "sparsecal.crf.posteriors.log_partition": lambda n: crf.log_partition(EM, TR, n_threads=n),
    "sparsecal.crf.posteriors.marginals": lambda n: crf.marginals(EM, TR, n_threads=n),
    "sparsecal.crf.posteriors.pair_marginals": lambda n: crf.pair_marginals(EM, TR,
                                                                            n_threads=n),
    "sparsecal.crf.posteriors.span_marginals": lambda n: crf.span_marginals(
        EM, TR, [0], [0], [[1, 0]], n_threads=n),
    "sparsecal.crf.streaming.stream_entries": lambda n: crf.stream_entries(
        [(EM, TR, None, np.zeros((1, 3), np.int64))], n_threads=n),
    "sparsecal.metrics.binary.calibration_error": lambda n: sc.calibration_error(
        X, Y, n_threads=n),
    "sparsecal.structured.events.crf_event_probabilities": lambda n: st.crf_event_probabilities(
        st.crf_sequence_events(EM, TR, np.zeros((1, 3), np.int64)), EM, TR, n_threads=n),
    "sparsecal.structured.sampling.sample_sequences": lambda n: st.sample_sequences(
        EM, TR, 2, n_threads=n),
    "sparsecal.structured.sequences.crf_sequence_events": lambda n: st.crf_sequence_events(
        EM, TR, np.zeros((1, 3), np.int64), n_threads=n),
    "sparsecal.structured.sequences.softmax_sequence_events":
        lambda n: st.softmax_sequence_events(np.full((1, 3, 2), 0.5),
                                             np.zeros((1, 3), np.int64), n_threads=n),
    "sparsecal.structured.spans.crf_span_events": lambda n: st.crf_span_events(
        EM, TR, np.zeros((1, 3), np.int64), ["O", "B-X"], n_threads=n),
    "sparsecal.structured.spans.softmax_span_events": lambda n: st.softmax_span_events(
        np.full((1, 3, 2), 0.5), np.zeros((1, 3), np.int64), ["O", "B-X"], n_threads=n),
}


def _torchcrf(what, n):
    torchcrf = pytest.importorskip("torchcrf")
    import torch
    from sparsecal import adapters
    model = torchcrf.CRF(2, batch_first=True)
    f = getattr(adapters, f"{what}_from_torchcrf")
    return f(model, torch.zeros(1, 3, 2), n_threads=n)


def test_every_n_threads_has_a_case():
    assert {key for key, _ in parameters({"n_threads"})} == set(THREADED)


@pytest.mark.parametrize("key", sorted(THREADED))
@pytest.mark.parametrize("bad", [0, -1, True, 2.0])
def test_every_non_positive_thread_count_is_refused(key, bad):
    with pytest.raises(ValueError, match="n_threads must be a positive integer"):
        THREADED[key](bad)
    THREADED[key](1)


# ------------------------------------------------------- the cluster path -- #

@pytest.fixture
def not_dask():
    """A TCP server that answers like an HTTP server, not a Dask scheduler."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    stop = threading.Event()

    def serve():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            try:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" * 50)
            except OSError:
                pass
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    server.close()


def test_a_scheduler_that_is_not_dask_is_named_so(files, not_dask, capsys):
    pytest.importorskip("distributed")
    rc = main(["evaluate", "--scores", str(files["s"]), "--gold", str(files["g"]),
               "--scheduler", not_dask, "-q"])
    err = capsys.readouterr().err
    assert rc == 2 and f"--scheduler '{not_dask}': cannot connect" in err, err
    assert "out of memory" not in err


BAD_FILES = {   # name -> (make it, the words of the refusal)
    "truncated": (lambda p: p.write_bytes(open(p.parent / "s.npy", "rb").read()[:200]),
                  "truncated or corrupt"),
    "1-D": (lambda p: np.save(p, SCORES[:, 0]), "must be a 2-D"),
    "integer": (lambda p: np.save(p, (SCORES * 10).astype(int)), "float32 or float64"),
}


@pytest.mark.parametrize("bad", sorted(BAD_FILES))
def test_the_cluster_path_names_a_bad_scores_file_as_one_machine_does(bad, files, capsys):
    pytest.importorskip("dask")
    from sparsecal.cli.cluster import _inputs
    path = files["d"] / f"bad-{bad}.npy"
    BAD_FILES[bad][0](path)
    one = main(["evaluate", "--scores", str(path), "--gold", str(files["g"]), "-q"])
    single = capsys.readouterr().err.split("error: ", 1)[1].strip()
    assert one == 2 and str(path) in single and BAD_FILES[bad][1] in single

    class Args:
        scores, gold, chunk_rows, tag_index, gold_format, gold_column = \
            str(path), str(files["g"]), None, None, None, None
    with pytest.raises(ValueError) as info:
        _inputs(Args)
    assert str(info.value) == single


def test_the_cluster_path_names_bad_gold_and_bad_values(files):
    pytest.importorskip("dask")
    from sparsecal.cli.cluster import _inputs, _naming_scores
    short = files["d"] / "short.npy"
    np.save(short, GOLD[:-1])

    class Args:
        scores, gold, chunk_rows, tag_index, gold_format, gold_column = \
            str(files["s"]), str(short), None, None, None, None
    with pytest.raises(ValueError, match=rf"^'{short}' with '{files['s']}': gold has 19 "
                                         "tokens but scores has 20 rows$"):
        _inputs(Args)
    nan = files["d"] / "nan.npy"
    bad = SCORES.copy()
    bad[7, 2] = np.nan
    np.save(nan, bad)
    with pytest.raises(ValueError, match=rf"^'{nan}': scores\[7, 2\] = nan is NaN"):
        with _naming_scores(str(files["s"]), str(nan)):   # the worker's error
            raise ValueError("scores[7, 2] = nan is NaN: scores must be probabilities")
