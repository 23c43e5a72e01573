"""Every size is bounded before it is allocated (issue 30, class 2).

The public API is walked for every parameter that sets a size (``n_bins``,
``n_resamples``, ``k``, ``n_tags``, ...; ``tests/_public_api.py``), and every
integer flag of every verb is taken from the parsers: each must have a case
here, and each case gives a size far beyond what the data can use or the memory
the process may have. It is refused with one ``ValueError`` naming the argument
(the flag on the command line) before anything is allocated, or, where the
documentation says the size is clamped to what the data can use (equal-mass
bins, the entries of a bin), accepted at once. The memory compared with is the
smallest of the machine's, the address-space limit (``RLIMIT_AS``) and the
cgroup's (``core/validation.py: memory_limit``).
"""
import warnings

import numpy as np
import pytest

import sparsecal as sc
from sparsecal import crf, structured as st
from sparsecal.cli.main import VERBS, _parser, main
from sparsecal.core import validation

from _public_api import parameters

pytestmark = pytest.mark.usefixtures("one_thread_by_default")

#: the names of size-like parameters
SIZES = {"n_bins", "bin_size", "n_resamples", "k", "ks", "n_tags", "n_groups", "n_folds",
         "n_points", "n_samples", "n_tokens", "n_train", "n_confusable", "batch_size",
         "n_workers", "min_entries", "n", "n_positions", "bandwidth", "max_length"}
#: result classes: they hold the sizes of what was computed, and allocate nothing
RESULTS = {"KChoice", "CalibrationError", "BrierDecomposition", "ClasswiseECE",
           "CalibrationTest", "ScoreDecomposition", "SmoothECE", "EventConfidence",
           "SampleEstimate", "MarginalCalibrationError"}
HUGE = 10 ** 12

RNG = np.random.default_rng(0)
SCORES = RNG.dirichlet(np.ones(6), size=300)
GOLD = RNG.integers(0, 6, 300)
E = sc.threshold(SCORES, GOLD)
G = sc.TagGroups.scw(6)
X, Y = E.score, E.label
EM, TR = np.zeros((2, 4, 3)), np.zeros((3, 3))
PROBS = np.full((2, 4, 3), 1 / 3)
NAMES = ["O", "B-X", "I-X"]


def _dask():
    da = pytest.importorskip("dask.array")
    from sparsecal import distributed
    return distributed, distributed.threshold(da.from_array(SCORES, chunks=100), GOLD)


def _grouped():
    return sc.GroupedCalibrator(sc.IsotonicCalibrator(), G)


#: "callable key:parameter" -> (call with the size, "refused" or "accepted")
CASES = {
    "sparsecal.calibration.choice_of_k.heuristic_k:ks": (
        lambda v: sc.calibration.heuristic_k({"rank": np.ones(len(X)), "mean": X}, Y,
                                             ks=[v]), "accepted"),
    "sparsecal.calibration.choice_of_k.heuristic_k:n_bins": (
        lambda v: sc.calibration.heuristic_k({"rank": np.ones(len(X)), "mean": X}, Y,
                                             n_bins=v), "refused"),
    "sparsecal.calibration.comparison.compare_methods:n_bins": (
        lambda v: sc.compare_methods(E, E, G, methods=["histogram"], n_bins=v), "accepted"),
    "sparsecal.calibration.ensemble.CrossFittedCalibrator:n_folds": (
        lambda v: sc.CrossFittedCalibrator(_grouped(), n_folds=v).fit(E), "refused"),
    "sparsecal.calibration.folds.positional_folds:n_folds": (
        lambda v: sc.calibration.positional_folds(np.zeros(5, np.int64),
                                                  np.zeros(1, np.int64), v, 0), "refused"),
    "sparsecal.calibration.folds.stratified_token_folds:n_folds": (
        lambda v: sc.calibration.stratified_token_folds(E, G, v), "refused"),
    "sparsecal.calibration.grouped.GroupedCalibrator:min_entries": (
        lambda v: _fit_quietly(sc.GroupedCalibrator(sc.IsotonicCalibrator(), G,
                                                    min_entries=v)), "accepted"),
    "sparsecal.calibration.grouped.cross_fit_predict:n_folds": (
        lambda v: sc.calibration.cross_fit_predict(_grouped(), E, n_folds=v), "refused"),
    "sparsecal.calibration.histogram.HistogramBinning:bin_size": (
        lambda v: sc.HistogramBinning(bin_size=v).fit(X, Y), "accepted"),
    "sparsecal.calibration.histogram.HistogramBinning:n_bins": (
        lambda v: sc.HistogramBinning(n_bins=v).fit(X, Y), "accepted"),
    "sparsecal.calibration.registry.make_calibrator:n_bins": (
        lambda v: sc.calibration.make_calibrator("histogram", n_bins=v).fit(X, Y),
        "accepted"),
    "sparsecal.calibration.scaling_binning.ScalingBinning:n_bins": (
        lambda v: sc.ScalingBinning(n_bins=v).fit(X, Y), "accepted"),
    "sparsecal.calibration.selection.select:n_bins": (
        lambda v: sc.select(E, methods=["histogram"], n_groups=[1], n_bins=[v], n_folds=2),
        "accepted"),
    "sparsecal.calibration.selection.select:n_folds": (
        lambda v: sc.select(E, methods=["isotonic"], n_groups=[1], n_folds=v), "refused"),
    "sparsecal.calibration.selection.select:n_groups": (
        lambda v: sc.select(E, train_counts={str(i): 10 + i for i in range(6)},
                            methods=["isotonic"], n_groups=[v], n_folds=2), "refused"),
    "sparsecal.core.binning.equal_mass_bins:bin_size": (
        lambda v: sc.core.equal_mass_bins(X, Y, bin_size=v), "accepted"),
    "sparsecal.core.binning.equal_mass_bins:n_bins": (
        lambda v: sc.core.equal_mass_bins(X, Y, n_bins=v), "accepted"),
    "sparsecal.core.binning.fixed_width_bins:n_bins": (
        lambda v: sc.core.fixed_width_bins(X, Y, n_bins=v), "refused"),
    "sparsecal.core.entries.Entries:n_tags": (
        lambda v: sc.Entries(X, E.tag, Y, n_tags=v), "refused"),
    "sparsecal.core.entries.Entries:n_tokens": (
        lambda v: sc.evaluate(sc.Entries(X, E.tag, Y, E.token, n_tags=6, n_tokens=v), G,
                              top_label=True, ci=None), "accepted"),
    "sparsecal.core.groups.TagGroups:n_groups": (
        lambda v: sc.TagGroups(np.zeros(6, np.int64), v), "refused"),
    "sparsecal.core.groups.load_train_counts:n_tags": (
        lambda v: sc.load_train_counts({"0": 1}, n_tags=v), "refused"),
    "sparsecal.crf.decoding.kbest:k": (lambda v: crf.kbest(EM, TR, v), "refused"),
    "sparsecal.crf.streaming.stream_entries:n_tags": (
        lambda v: crf.stream_entries([(EM, TR, None, np.zeros((2, 4), np.int64))], n_tags=v),
        "refused"),
    "sparsecal.datasets.synthetic.make_tagger_outputs:n_confusable": (
        lambda v: sc.datasets.make_tagger_outputs(10, n_confusable=v), "refused"),
    "sparsecal.datasets.synthetic.make_tagger_outputs:n_tags": (
        lambda v: sc.datasets.make_tagger_outputs(10, n_tags=v), "refused"),
    "sparsecal.datasets.synthetic.make_tagger_outputs:n_tokens": (
        lambda v: sc.datasets.make_tagger_outputs(v), "refused"),
    "sparsecal.datasets.synthetic.make_tagger_outputs:n_train": (
        lambda v: sc.datasets.make_tagger_outputs(10, n_tags=20, n_train=v ** 6), "refused"),
    "sparsecal.metrics.binary.calibration_error:bin_size": (
        lambda v: sc.calibration_error(X, Y, bin_size=v), "accepted"),
    "sparsecal.metrics.binary.calibration_error:n_bins": (
        lambda v: sc.calibration_error(X, Y, n_bins=v, binning="fixed"), "refused"),
    "sparsecal.metrics.brier.brier_decomposition:bin_size": (
        lambda v: sc.brier_decomposition(X, Y, bin_size=v), "accepted"),
    "sparsecal.metrics.brier.brier_decomposition:n_bins": (
        lambda v: sc.brier_decomposition(X, Y, n_bins=v, binning="fixed"), "refused"),
    "sparsecal.metrics.classwise.classwise_ece:n_bins": (
        lambda v: sc.classwise_ece(E, n_bins=v), "refused"),
    "sparsecal.metrics.consistency.calibration_test:bin_size": (
        lambda v: sc.calibration_test(X, Y, bin_size=v, n_resamples=9), "accepted"),
    "sparsecal.metrics.consistency.calibration_test:n_bins": (
        lambda v: sc.calibration_test(X, Y, n_bins=v, binning="fixed"), "refused"),
    "sparsecal.metrics.consistency.calibration_test:n_resamples": (
        lambda v: sc.calibration_test(X, Y, n_resamples=v), "refused"),
    "sparsecal.metrics.evaluation.evaluate:bin_size": (
        lambda v: sc.evaluate(E, G, bin_size=v, ci=None), "accepted"),
    "sparsecal.metrics.evaluation.evaluate:min_entries": (
        lambda v: sc.evaluate(E, G, per_tag=True, min_entries=v, ci=None), "refused"),
    "sparsecal.metrics.evaluation.evaluate:n_bins": (
        lambda v: sc.evaluate(E, G, n_bins=v, binning="fixed", ci=None), "refused"),
    "sparsecal.metrics.intervals.ConfidenceInterval:n_resamples": (
        lambda v: sc.smce(E, ci=sc.ConfidenceInterval("bootstrap", n_resamples=v)), "refused"),
    "sparsecal.metrics.marginal.gmce:bin_size": (
        lambda v: sc.gmce(E, G, bin_size=v), "accepted"),
    "sparsecal.metrics.marginal.gmce:n_bins": (
        lambda v: sc.gmce(E, G, n_bins=v, binning="fixed"), "refused"),
    "sparsecal.metrics.marginal.mce:bin_size": (
        lambda v: sc.mce(E, bin_size=v, min_entries=1), "accepted"),
    "sparsecal.metrics.marginal.mce:min_entries": (
        lambda v: sc.mce(E, min_entries=v), "refused"),
    "sparsecal.metrics.marginal.mce:n_bins": (
        lambda v: sc.mce(E, n_bins=v, min_entries=1), "accepted"),
    "sparsecal.metrics.marginal.smce:bin_size": (
        lambda v: sc.smce(E, bin_size=v), "accepted"),
    "sparsecal.metrics.marginal.smce:n_bins": (
        lambda v: sc.smce(E, n_bins=v, binning="fixed"), "refused"),
    "sparsecal.metrics.marginal.smce_and_gmce:bin_size": (
        lambda v: sc.smce_and_gmce(E, G, bin_size=v), "accepted"),
    "sparsecal.metrics.marginal.smce_and_gmce:n_bins": (
        lambda v: sc.smce_and_gmce(E, G, n_bins=v, binning="fixed"), "refused"),
    "sparsecal.metrics.smooth.smooth_ece:bandwidth": (
        lambda v: sc.smooth_ece(X, Y, bandwidth=1 / v), "refused"),
    "sparsecal.metrics.smooth.smooth_reliability:bandwidth": (
        lambda v: sc.smooth_reliability(X, Y, bandwidth=1 / v), "refused"),
    "sparsecal.metrics.smooth.smooth_reliability:n_points": (
        lambda v: sc.smooth_reliability(X, Y, n_points=v), "refused"),
    "sparsecal.metrics.toplabel.top_label_ece:n_bins": (
        lambda v: sc.top_label_ece(E, n_bins=v), "refused"),
    "sparsecal.plotting.report.write_report:n_bins": (
        lambda v: sc.plotting.write_report("never-written", E, G, n_bins=v,
                                           evaluation={"binning": "fixed"}), "refused"),
    "sparsecal.structured.coreference.sample_entities:n_samples": (
        lambda v: st.sample_entities(np.eye(3), v), "refused"),
    "sparsecal.structured.ensembles.mc_dropout_samples:n_samples": (
        lambda v: st.mc_dropout_samples(_torch_model(), _torch_input(), n_samples=v),
        "refused"),
    "sparsecal.structured.hmm.SupervisedHMM.fit:n_tags": (
        lambda v: st.SupervisedHMM().fit(["a", "b"], [0, 1], [2], n_tags=v), "refused"),
    "sparsecal.structured.pairs.most_frequent_pairs:n": (
        lambda v: st.most_frequent_pairs([[0, 1, 2]], 3, n=v), "accepted"),
    "sparsecal.structured.pairs.most_frequent_pairs:n_tags": (
        lambda v: st.most_frequent_pairs([[0, 1, 2]], v), "refused"),
    "sparsecal.structured.pairs.pair_groups:n_tags": (
        lambda v: st.pair_groups([1], v), "refused"),
    "sparsecal.structured.reranking.span_f1:n_positions": (
        lambda v: st.span_f1(*_spans(), v), "refused"),
    "sparsecal.structured.sampling.sample_sequences:n_samples": (
        lambda v: st.sample_sequences(EM, TR, v), "refused"),
    "sparsecal.structured.schemes.Spans.keys:n_positions": (
        lambda v: _spans()[0].keys(v), "refused"),
    "sparsecal.structured.sequences.crf_sequence_events:k": (
        lambda v: st.crf_sequence_events(EM, TR, np.zeros((2, 4), np.int64), k=v), "refused"),
    "sparsecal.structured.sequences.softmax_sequence_events:k": (
        lambda v: st.softmax_sequence_events(PROBS, np.zeros((2, 4), np.int64), k=v),
        "refused"),
    "sparsecal.structured.spans.crf_span_events:k": (
        lambda v: st.crf_span_events(EM, TR, np.zeros((2, 4), np.int64), NAMES, k=v),
        "refused"),
    "sparsecal.structured.spans.softmax_span_events:k": (
        lambda v: st.softmax_span_events(PROBS, np.zeros((2, 4), np.int64), NAMES, k=v),
        "refused"),
    "sparsecal.adapters.torchmetrics.SMCEMetric:n_tags": (
        lambda v: _metric("SMCEMetric", v), "refused"),
    "sparsecal.adapters.torchmetrics.SMCEMetric:n_bins": (
        lambda v: _metric("SMCEMetric", 3, n_bins=v), "accepted"),
    "sparsecal.adapters.torchmetrics.SMCEMetric:bin_size": (
        lambda v: _metric("SMCEMetric", 3, bin_size=v), "accepted"),
    "sparsecal.adapters.torchmetrics.TopLabelECEMetric:n_tags": (
        lambda v: _metric("TopLabelECEMetric", v), "refused"),
    "sparsecal.adapters.torchmetrics.TopLabelECEMetric:n_bins": (
        lambda v: _metric("TopLabelECEMetric", 3, n_bins=v), "refused"),
    "sparsecal.adapters.trainer.trainer_compute_metrics:n_bins": (
        lambda v: sc.adapters.trainer_compute_metrics(n_bins=v), "accepted"),
    "sparsecal.adapters.trainer.trainer_compute_metrics:n_groups": (
        lambda v: sc.adapters.trainer_compute_metrics(n_groups=v), "refused"),
    "sparsecal.adapters.trainer.trainer_compute_metrics:top_label_bins": (
        lambda v: sc.adapters.trainer_compute_metrics(top_label_bins=v), "refused"),
    "sparsecal.adapters.huggingface.stream_word_entries:batch_size": (
        lambda v: _stream_words(batch_size=v), "accepted"),
    "sparsecal.adapters.huggingface.stream_word_entries:max_length": (
        lambda v: _stream_words(max_length=v), "accepted"),
}
#: the same for sparsecal.distributed (dask arrays, no cluster: the options are
#: checked before any chunk is computed)
DISTRIBUTED = {
    "binned_errors:bin_size": (lambda d, e, v: d.binned_errors(e, bin_size=v), "accepted"),
    "binned_errors:n_bins": (lambda d, e, v: d.binned_errors(e, n_bins=v, binning="fixed"),
                             "refused"),
    "calibration_error:bin_size": (lambda d, e, v: d.calibration_error(
        _dask_array(X), _dask_array(Y), bin_size=v), "accepted"),
    "calibration_error:n_bins": (lambda d, e, v: d.calibration_error(
        _dask_array(X), _dask_array(Y), n_bins=v, binning="fixed"), "refused"),
    "compare_methods:n_bins": (lambda d, e, v: d.compare_methods(
        e, e, G, methods=["histogram"], groupings=["scw"], n_bins=v,
        evaluation={"binning": "fixed"}), "refused"),
    "cross_fit_members:n_folds": (lambda d, e, v: d.cross_fit_members(_grouped(), e, v),
                                  "refused"),
    "cross_fit_predict:n_folds": (lambda d, e, v: d.cross_fit_predict(_grouped(), e,
                                                                      n_folds=v), "refused"),
    "cross_fit_scores:n_folds": (lambda d, e, v: d.cross_fit_scores(
        [_grouped()], e, G, n_folds=v), "refused"),
    "DaskEntries:n_tags": (lambda d, e, v: d.DaskEntries(e.blocks, n_tags=v,
                                                         n_tokens=300, threshold=0.01,
                                                         dtype=e.dtype), "refused"),
    "DaskEntries:n_tokens": (lambda d, e, v: d.DaskEntries(e.blocks, n_tags=6, n_tokens=v,
                                                           threshold=0.01, dtype=e.dtype),
                             "accepted"),
    "evaluate:bin_size": (lambda d, e, v: d.evaluate(e, G, bin_size=v), "accepted"),
    "evaluate:min_entries": (lambda d, e, v: d.evaluate(e, G, per_tag=True, min_entries=v),
                             "refused"),
    "evaluate:n_bins": (lambda d, e, v: d.evaluate(e, G, n_bins=v, binning="fixed"),
                        "refused"),
    "fixed_width_bin_stats:n_bins": (lambda d, e, v: d.fixed_width_bin_stats(e, n_bins=v),
                                     "refused"),
    "fixed_width_bin_stats:n_groups": (lambda d, e, v: d.fixed_width_bin_stats(
        e, np.zeros(6, np.int64), v), "refused"),
    "gmce:bin_size": (lambda d, e, v: d.gmce(e, G, bin_size=v), "accepted"),
    "gmce:n_bins": (lambda d, e, v: d.gmce(e, G, n_bins=v, binning="fixed"), "refused"),
    "local_cluster:n_workers": (lambda d, e, v: _no_cluster(d, 10 ** 6), "refused"),
    "mce:bin_size": (lambda d, e, v: d.mce(e, bin_size=v, min_entries=1), "accepted"),
    "mce:min_entries": (lambda d, e, v: d.mce(e, min_entries=v), "refused"),
    "mce:n_bins": (lambda d, e, v: d.mce(e, n_bins=v, min_entries=1), "accepted"),
    "measures_by_group:bin_size": (lambda d, e, v: d.measures_by_group(
        e, G, ["brier"], bin_size=v), "accepted"),
    "measures_by_group:n_bins": (lambda d, e, v: d.measures_by_group(
        e, G, ["ece"], n_bins=v, binning="fixed"), "refused"),
    "measures_by_group:n_resamples": (lambda d, e, v: d.measures_by_group(
        e, G, ["calibration-test-p"], n_resamples=v), "refused"),
    "smce:bin_size": (lambda d, e, v: d.smce(e, bin_size=v), "accepted"),
    "smce:n_bins": (lambda d, e, v: d.smce(e, n_bins=v, binning="fixed"), "refused"),
    "smce_and_gmce:bin_size": (lambda d, e, v: d.smce_and_gmce(e, G, bin_size=v),
                               "accepted"),
    "smce_and_gmce:n_bins": (lambda d, e, v: d.smce_and_gmce(e, G, n_bins=v,
                                                             binning="fixed"), "refused"),
    "smooth_ece:bandwidth": (lambda d, e, v: d.smooth_ece(e, bandwidth=1 / v), "refused"),
    "smooth_reliability:bandwidth": (lambda d, e, v: d.smooth_reliability(
        e, bandwidth=1 / v), "refused"),
    "smooth_reliability:n_points": (lambda d, e, v: d.smooth_reliability(e, n_points=v),
                                    "refused"),
    "stratified_token_folds:n_folds": (lambda d, e, v: d.stratified_token_folds(e, G, v),
                                       "refused"),
    "tfg_from_gold:n_groups": (lambda d, e, v: d.tfg_from_gold(_dask_array(GOLD), v,
                                                                n_tags=6), "refused"),
    "tfg_from_gold:n_tags": (lambda d, e, v: d.tfg_from_gold(_dask_array(GOLD), n_tags=v),
                             "refused"),
    "token_folds:n_folds": (lambda d, e, v: d.token_folds(e, G, v), "refused"),
    "top_label_ece:n_bins": (lambda d, e, v: d.top_label_ece(e, n_bins=v), "refused"),
}


def _no_cluster(d, n_workers):
    """``local_cluster(n_workers)`` refused before any worker starts (a million
    workers: far more than the CPUs, few enough to build their specification)."""
    from unittest import mock
    with mock.patch("distributed.SpecCluster", side_effect=AssertionError("started")):
        with d.local_cluster(n_workers):
            pass


def _fit_quietly(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(E)


def _dask_array(x):
    import dask.array as da
    return da.from_array(np.asarray(x), chunks=100)


def _spans():
    from sparsecal.structured.schemes import Spans
    one = np.zeros(1, np.int64)
    return Spans(one, one, one + 1, one, ("X",)), Spans(one, one, one + 1, one, ("X",))


def _torch_model():
    """A dropout model that fails its third call: the size of the samples is
    checked after the first (whose output's size it needs), not after 10**12."""
    torch = pytest.importorskip("torch")

    class Once(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.dropout, self.calls = torch.nn.Dropout(0.5), 0

        def forward(self, x):
            self.calls += 1
            assert self.calls <= 2, "n_samples was not checked before the samples"
            return self.dropout(x)

    return Once()


def _torch_input():
    import torch
    return torch.zeros(4, 2)


def _metric(name, n_tags, **kw):
    """A torchmetrics metric of the package, updated once and computed."""
    import torch
    from sparsecal import adapters
    m = getattr(adapters, name)(n_tags, **kw)
    m.update(torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1]]), torch.tensor([0, 2]))
    return m.compute()


def _stream_words(**kw):
    pytest.skip("needs a Hugging Face model: tests/test_adapters_huggingface.py bounds "
                "batch_size and max_length by the sentences given")


def test_every_size_parameter_has_a_case():
    found = {f"{key}:{p}" for key, p in parameters(SIZES)
             if key.split(".")[-1] not in RESULTS and key.split(".")[-2] not in RESULTS}
    distributed = {k for k in found if k.startswith("sparsecal.distributed.")}
    covered = {f"sparsecal.distributed.{_where(k)}" for k in DISTRIBUTED}
    assert found - distributed <= set(CASES), sorted(found - distributed - set(CASES))
    assert distributed <= covered, sorted(distributed - covered)


def _where(case):
    """"smce:n_bins" -> "metrics.smce:n_bins" (the module defining it)."""
    from sparsecal import distributed
    name, _, param = case.partition(":")
    f = getattr(distributed, name)
    return f"{f.__module__.split('.', 2)[2]}.{f.__qualname__}:{param}"


def _check(call, verdict, name):
    if verdict == "refused":
        with pytest.raises(ValueError, match=rf"\b{name}\b") as info:
            call()
        assert "Error" not in type(info.value).__name__[:-5]   # not a MemoryError
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call()


@pytest.fixture
def bounded_memory():
    """The address space this process has now plus 2 GiB while a size is tried:
    a size that escaped its check fails at once instead of taking the machine."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/status") as f:
        used = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize"))
    resource.setrlimit(resource.RLIMIT_AS, (used + (2 << 30), hard))
    yield
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.mark.usefixtures("bounded_memory")
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_huge_size_is_refused_naming_it_or_clamped(case):
    call, verdict = CASES[case]
    name = case.rpartition(":")[2]
    _check(lambda: call(HUGE), verdict, "bandwidth" if name == "bandwidth" else name)


@pytest.mark.usefixtures("bounded_memory")
@pytest.mark.parametrize("case", sorted(DISTRIBUTED))
def test_a_huge_distributed_size_is_refused_naming_it_or_clamped(case):
    d, e = _dask()
    call, verdict = DISTRIBUTED[case]
    _check(lambda: call(d, e, HUGE), verdict, case.rpartition(":")[2])


# ------------------------------------------------------------- command line -- #

#: integer flags that are no size (a seed; threads, clamped: test_core_bad_input.py)
NOT_SIZES = {"seed", "n_threads"}
#: (verb, flag) -> (the other flags it needs, "refused" or "accepted")
FLAGS = {
    ("evaluate", "--groups"): (["--train-counts", "{counts}"], "refused"),
    ("evaluate", "--bins"): (["--binning", "fixed"], "refused"),
    ("evaluate", "--n-resamples"): (["--ci", "bootstrap"], "refused"),
    ("evaluate", "--bin-size"): ([], "accepted"),
    ("evaluate", "--min-entries"): (["--per-tag"], "refused"),
    ("evaluate", "--chunk-rows"): (["--dask"], "cluster"),
    ("fit", "--groups"): (["--train-counts", "{counts}"], "refused"),
    ("fit", "--bins"): (["--method", "histogram", "--grouping", "scw"], "accepted"),
    ("fit", "--group-min-entries"): (["--grouping", "scw"], "accepted"),
    ("fit", "--ensemble"): (["--grouping", "scw"], "refused"),
    ("fit", "--groups-grid"): (["--select", "--train-counts", "{counts}"], "refused"),
    ("fit", "--bins-grid"): (["--select", "--groups-grid", "1", "--methods", "histogram"],
                             "accepted"),
    ("fit", "--folds"): (["--select", "--groups-grid", "1", "--methods", "isotonic"],
                         "refused"),
    ("fit", "--chunk-rows"): (["--dask"], "cluster"),
    ("apply", "--chunk-rows"): (["--dask"], "cluster"),
    ("compare", "--groups"): (["--train-counts", "{counts}"], "refused"),
    ("compare", "--bins"): (["--binning", "fixed"], "refused"),
    ("compare", "--bin-size"): (["--methods", "isotonic"], "accepted"),
    ("compare", "--n-resamples"): (["--metrics", "calibration-test-p"], "refused"),
    ("compare", "--chunk-rows"): (["--dask"], "cluster"),
    ("report", "--groups"): (["--train-counts", "{counts}"], "refused"),
    ("report", "--bins"): (["--binning", "fixed"], "refused"),
    ("report", "--n-resamples"): ([], "refused"),
    ("report", "--bin-size"): (["--binning", "fixed"], "refused"),
    ("report", "--chunk-rows"): (["--dask"], "cluster"),
    ("groups", "--n-tags"): ([], "refused"),
    ("groups", "--groups"): ([], "refused"),
    ("demo", "--tokens"): ([], "refused"),
    ("demo", "--groups"): ([], "refused"),
    ("demo", "--bins"): ([], "accepted"),
    ("events", "--k"): ([], "refused"),
    ("events", "--groups"): (["{dev}", "--method", "isotonic", "--grouping", "tfg"],
                             "refused"),
    ("events", "--group-min-entries"): (["{dev}", "--method", "isotonic", "--grouping",
                                         "tfg"], "accepted"),
    ("events", "--choose-k"): (["{dev}"], "refused"),
    ("events", "--bins"): (["--binning", "fixed"], "refused"),
    ("events", "--n-resamples"): (["--ci", "bootstrap"], "refused"),
    ("events", "--bin-size"): ([], "accepted"),
}
#: each verb's inputs
BASE = {
    "evaluate": ["--scores", "{scores}", "--gold", "{gold}"],
    "fit": ["--scores", "{scores}", "--gold", "{gold}", "-o", "{out}/fit"],
    "apply": ["{out}/cal", "--scores", "{scores}", "-o", "{out}/applied.npy"],
    "compare": ["--scores", "{scores}", "--gold", "{gold}", "--dev-scores", "{scores}",
                "--dev-gold", "{gold}"],
    "report": ["--scores", "{scores}", "--gold", "{gold}", "-o", "{out}/report"],
    "groups": ["--train-counts", "{counts}"],
    "demo": ["-o", "", "--tokens", "300"],
    "events": ["--scores", "{scores}", "--gold", "{gold}", "--lengths", "{lengths}"],
}


def _int_flags():
    return sorted((verb, a.option_strings[-1]) for verb in VERBS
                  for a in _parser([verb])[1][verb]._actions
                  if a.type is int and a.dest not in NOT_SIZES)


def test_every_integer_flag_has_a_case():
    assert set(_int_flags()) == set(FLAGS)


@pytest.fixture(scope="module")
def cli_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("sizes")
    np.save(d / "scores.npy", SCORES[:40])
    np.save(d / "gold.npy", GOLD[:40])
    (d / "counts.json").write_text('{"0": 50, "1": 40, "2": 30, "3": 20, "4": 10, "5": 5}')
    (d / "lengths.txt").write_text("10\n10\n10\n10\n")
    files = {k: str(d / f"{k}.{e}") for k, e in
             (("scores", "npy"), ("gold", "npy"), ("counts", "json"), ("lengths", "txt"))}
    files["out"] = str(d)
    files["dev"] = ["--dev-scores", files["scores"], "--dev-gold", files["gold"],
                    "--dev-lengths", files["lengths"]]
    return files


def _cli_argv(verb, flag, value, files):
    extra, _ = FLAGS[(verb, flag)]
    argv = [verb]
    for a in BASE[verb] + extra:
        argv += files["dev"] if a == "{dev}" else [a.format(**files)]
    return argv + [flag, str(value), "-q"]


@pytest.mark.parametrize("verb, flag", sorted(FLAGS), ids=[f"{v} {f}" for v, f in
                                                           sorted(FLAGS)])
def test_a_huge_flag_is_refused_naming_it_or_clamped(verb, flag, cli_files, capsys):
    verdict = FLAGS[(verb, flag)][1]
    if verdict == "cluster":   # checked without a cluster: the rows there are, one chunk
        from sparsecal.cli.cluster import dask_scores
        pytest.importorskip("dask")
        assert dask_scores(cli_files["scores"], HUGE).numblocks == (1, 1)
        return
    if verb == "apply":
        pytest.skip("apply's only integer flag is --chunk-rows")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rc = main(_cli_argv(verb, flag, HUGE, cli_files))
    err = capsys.readouterr().err
    assert "internal error" not in err and "out of memory" not in err, err
    if verdict == "accepted":
        assert rc == 0, err
        return
    assert rc == 2 and f"{flag} " in err.replace("=", " "), err
    assert err.count("error:") == 1, err


# ------------------------------------------------------------ memory limit -- #

def test_sizes_are_checked_against_the_address_space_limit():
    """Under a 4 GiB RLIMIT_AS, 3e8 fixed-width bins (13 GiB) are refused naming
    n_bins and the limit, not attempted (a MemoryError), whatever the machine has."""
    import subprocess
    import sys
    code = ("import resource, numpy as np\n"
            "resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
            "import sparsecal as sc\n"
            "e = sc.threshold(np.array([[0.6, 0.4]]), [0])\n"
            "try:\n"
            "    sc.smce(e, n_bins=3 * 10**8, binning='fixed')\n"
            "except ValueError as exc:\n"
            "    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("n_bins=300000000 fixed-width bins needs 13.4 GiB, more "
                                  "than this process's address-space limit RLIMIT_AS "
                                  "(4.0 GiB)")


@pytest.mark.parametrize("cgroup, files, want", [
    ("0::/job/step\n", {"/sys/fs/cgroup/job/step/memory.max": "max\n",
                        "/sys/fs/cgroup/job/memory.max": "1073741824\n"}, 1 << 30),
    ("4:memory:/docker/abc\n1:cpu:/\n",
     {"/sys/fs/cgroup/memory/memory.limit_in_bytes": "2147483648\n"}, 2 << 30),
    ("0::/\n", {"/sys/fs/cgroup/memory.max": "max\n"}, None),
])
def test_the_cgroup_memory_limit_is_read(monkeypatch, cgroup, files, want):
    """cgroup v2 (``memory.max`` of the group and its ancestors, "max" for none)
    and v1 (``memory.limit_in_bytes``, the container's group seen as the root)."""
    import builtins
    import io
    files = {"/proc/self/cgroup": cgroup, **files}

    def fake_open(path, *args, **kwargs):
        if path in files:
            return io.StringIO(files[path])
        raise FileNotFoundError(path)

    monkeypatch.setattr(builtins, "open", fake_open)
    got = validation._cgroup_memory_limit()
    monkeypatch.undo()
    assert got == want
    if want is not None:
        monkeypatch.setattr(validation, "_cgroup_memory_limit", lambda: want)
        monkeypatch.setattr(validation, "physical_memory", lambda: 64 << 30)
        assert validation.memory_limit() == (want, "this process's cgroup memory limit")
        with pytest.raises(ValueError, match=r"n_tags=100000000 needs 6.0 GiB, more than this "
                                             r"process's cgroup memory limit"):
            validation.check_n_tags(10 ** 8)
