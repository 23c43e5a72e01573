"""One API for both paths (issue 15, item 1; issue 24, item 1; core/dispatch.py):
a public function given DaskEntries or dask arrays returns the result of the
distributed form registered onto it (same type, same values bit for bit), equal
to the single-machine result within docs/scale.md's 1e-12 relative; a function
without a distributed form refuses dask input with one TypeError and never
computes it."""
import dataclasses
import inspect
import subprocess
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

import sparsecal as sc
import sparsecal.distributed as dist
import sparsecal.distributed.forms  # noqa: F401  (registers the forms the walk reads)
import sparsecal.metrics
from sparsecal.core.dispatch import implements, is_distributed, takes_data
from _dask_cluster import tagger_scores

DATA = {"entries", "scores", "labels", "dev", "test", "x", "tag", "sorted_scores"}


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


#: the subpackages walked besides sparsecal and sparsecal.metrics. Classified by
#: signature (a parameter named in DATA or CRF_DATA takes data): plotting's
#: functions take results (``results``, ``plots``, ``diagrams``, ``table``), not
#: data; datasets' take sizes and seeds; io's loaders take paths (to_arrow and
#: write_parquet take entries and are walked).
WALKED = ("core", "calibration", "crf", "plotting", "datasets", "io", "structured", "adapters")
#: public functions that take distributed data through their own ``engine=``
#: (write_report: engine=sparsecal.distributed.CLUSTER_REPORT, tests/test_distributed_report.py)
ENGINES = {"write_report"}
CRF_DATA = {"emissions"}
#: what holds data in structured and adapters: sentences' scores, gold tags,
#: marginals, samples and a library's outputs (names, paths, models and Events
#: objects are not data)
SENTENCE_DATA = {"gold", "probabilities", "tags", "pair_marginals", "indicator", "values",
                 "confidence", "marginals", "logits", "word_ids"}


def _data_parameters(func):
    """The parameter names that hold data in ``func``'s subpackage: plotting's
    ``labels`` are the curves' legend names, not data."""
    if func.__module__.startswith("sparsecal.plotting"):
        return (DATA | CRF_DATA) - {"labels"}
    if func.__module__.split(".")[1] in ("structured", "adapters"):
        return DATA | CRF_DATA | SENTENCE_DATA
    return DATA | CRF_DATA


def _public_data_functions():
    """Every public function of sparsecal, sparsecal.metrics and the WALKED
    subpackages taking data, but the distributed path's own (which take dask
    data by design)."""
    import importlib
    out = {}
    modules = [sc, sparsecal.metrics] + [importlib.import_module(f"sparsecal.{m}")
                                         for m in WALKED]
    for module in modules:
        for name in module.__all__:
            obj = getattr(module, name)
            if (inspect.isfunction(obj) and not obj.__module__.startswith("sparsecal.distributed")
                    and name not in ENGINES
                    and _data_parameters(obj) & set(inspect.signature(obj).parameters)):
                out[name] = obj
    return out


def test_walk_covers_crf_and_skips_results():
    funcs = _public_data_functions()
    assert {"marginals", "viterbi", "kbest", "span_marginals"} <= set(funcs)
    assert not {"write_report", "make_tagger_outputs", "load_scores"} & set(funcs)
    with pytest.raises(TypeError, match=r"\.reliability_diagram does not take"):
        sc.plotting.reliability_diagram([], scores=_exploding((4,)))


def _form(func):
    """The distributed form registered onto ``func`` (None if none)."""
    return getattr(func, "distributed_form", None)


def _refusal(func):
    return getattr(func, "refusal", None)


def test_every_public_function_taking_data_dispatches_or_refuses():
    """Read from the registrations: each function's decorator (a refusal) or
    the form sparsecal.distributed registered onto it, never both."""
    funcs = _public_data_functions()
    missing = sorted(n for n, f in funcs.items() if _form(f) is None and not _refusal(f))
    assert not missing, f"neither dispatched nor refused: {missing}"
    assert not [n for n, f in funcs.items() if _form(f) is not None and _refusal(f)]
    forms = {n: _form(f) for n, f in funcs.items() if _form(f) is not None}
    assert (len(forms), len(funcs) - len(forms)) == (23, 43)
    assert all(f.__module__.startswith("sparsecal.distributed.") for f in forms.values())


def test_methods_dispatch_through_the_same_registrations():
    """Fit and transform of the grouped set-ups, the cross-fitted members and
    select's scores: registered forms, not attributes of DaskEntries."""
    from sparsecal.calibration import ensemble, selection
    from sparsecal.calibration.grouped import EntryTransformer
    for func, form in [(sc.GroupedCalibrator.fit, dist.fit_grouped),
                       (EntryTransformer.transform, dist.calibrators.transform),
                       (ensemble.cross_fit_members, dist.cross_fit_members),
                       (selection.cross_fit_scores, dist.cross_fit_scores)]:
        assert _form(func) is form, func
    assert not [n for n in vars(dist.DaskEntries) if "fit" in n or "transform" in n]


def test_plugin_loads_on_the_first_distributed_argument():
    """sc.threshold of a dask array, without importing sparsecal.distributed:
    the one plugin load registers the forms; NumPy input loads nothing."""
    code = ("import sys, numpy as np, dask.array as da, sparsecal as sc\n"
            "sc.smce(sc.threshold(np.eye(3), [0, 1, 2]))\n"
            "print('sparsecal.distributed' in sys.modules)\n"
            "e = sc.threshold(da.from_array(np.eye(3), chunks=2), [0, 1, 2])\n"
            "print(type(e).__name__, sc.smce(e, n_bins=1).n)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "DaskEntries", "3"]


def test_registration_errors_and_a_toy_dispatch():
    """implements() only onto a @takes_data function without refuse=; a form
    gets the arguments it takes; another argument not at its default is
    refused by name; an unregistered form is one TypeError."""
    @takes_data
    def total(x, *, scale=1.0, label="sum"):
        return float(np.sum(x)) * scale

    @takes_data(refuse="it is a toy")
    def refused(x):
        return x

    for target in (refused, np.sum):
        with pytest.raises(TypeError, match="does not dispatch"):
            implements(target)
    a = _exploding((4,))
    with pytest.raises(TypeError, match="total does not take distributed .*no distributed form"):
        total(a)
    with pytest.raises(TypeError, match="refused does not take distributed .*it is a toy"):
        refused(x=a)
    seen = []

    @implements(total)
    def cluster_total(x, *, scale=1.0):
        seen.append((x, scale))
        return "cluster"

    assert total([1.0, 2.0], scale=2.0) == 6.0 and not seen
    assert total(a, scale=3.0, label="sum") == "cluster" and seen == [(a, 3.0)]
    with pytest.raises(TypeError, match=r"total: label='mean' is not supported"):
        total(a, label="mean")


def _equal(a, b):
    """Bit-for-bit equality of two results of the same type."""
    assert type(a) is type(b)
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _equal(x, y)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    elif dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            _equal(getattr(a, f.name), getattr(b, f.name))
    elif isinstance(a, sc.Entries):
        for f in ("score", "tag", "label", "token"):
            _equal(getattr(a, f), getattr(b, f))
        assert (a.n_tags, a.n_tokens, a.threshold) == (b.n_tags, b.n_tokens, b.threshold)
    elif hasattr(a, "to_dict"):
        _equal(a.to_dict(), b.to_dict())
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _equal(a[k], b[k])
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b)
    else:
        assert a == b


def _close(a, b):
    """Equal within 1e-12 relative (docs/scale.md), same type."""
    assert type(a) is type(b)
    if isinstance(a, (list, tuple)):
        for x, y in zip(a, b):
            _close(x, y)
    elif dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            _close(getattr(a, f.name), getattr(b, f.name))
    elif isinstance(a, (float, np.floating, np.ndarray)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    elif hasattr(a, "to_dict"):
        _close(a.to_dict(), b.to_dict())
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k])
    else:
        assert a == b


@pytest.fixture(scope="module", params=[(0, 1, np.float64), (1, 2, np.float32),
                                        (2, 300, np.float64)], ids=lambda p: f"n{p[1]}")
def data(request):
    seed, n, dtype = request.param
    x, gold = tagger_scores(seed, n, 5, dtype)
    chunks = max(1, n // 3)
    return (x, gold, sc.threshold(x, gold),
            sc.threshold(da.from_array(x, chunks=(chunks, 5)), gold))


def test_threshold_dispatches(data):
    x, gold, one, de = data
    assert isinstance(de, dist.DaskEntries)
    _equal(de.compute(), one)


ENTRY_CASES = [("smce", (), {}), ("gmce", ("groups",), {}), ("smce_and_gmce", ("groups",), {}),
               ("mce", (), {"min_entries": 2, "bin_size": 1}), ("top_label_ece", (), {}),
               ("evaluate", ("groups",), {"ci": None})]


@pytest.mark.filterwarnings("ignore:.*fewer than")
@pytest.mark.parametrize("name,extra,kw", ENTRY_CASES, ids=[c[0] for c in ENTRY_CASES])
def test_entry_functions_dispatch(data, name, extra, kw):
    x, gold, one, de = data
    groups = sc.TagGroups.from_counts({0: 5, 1: 1, 3: 3, 4: 2}, 2, n_tags=5)
    args = [groups if a == "groups" else a for a in extra]
    try:
        ref = getattr(sc, name)(one, *args, **kw)
    except ValueError as e:   # too few entries: the same error on the cluster
        with pytest.raises(ValueError, match=str(e)[:30]):
            getattr(sc, name)(de, *args, **kw)
        return
    got = getattr(sc, name)(de, *args, **kw)
    _equal(got, _form(getattr(sc, name))(de, *args, **kw))
    if name == "evaluate":
        _close(got.to_dict(), ref.to_dict())
    else:
        _close(got, ref)


ARRAY_CASES = [("calibration_error", {}), ("smooth_ece", {}), ("smooth_reliability", {}),
               ("brier_corp", {}), ("log_loss_corp", {}), ("dcf", {"prior": 0.3}),
               ("min_dcf", {"prior": 0.3}), ("cllr", {}), ("min_cllr", {}),
               ("bayes_error_plot", {})]


@pytest.mark.parametrize("name,kw", ARRAY_CASES, ids=[c[0] for c in ARRAY_CASES])
def test_array_functions_dispatch(name, kw):
    rng = np.random.default_rng(3)
    q = rng.random(400).round(2)                       # ties
    y = (rng.random(400) < q).astype(np.uint8)
    dq = da.from_array(q, chunks=130)
    got = getattr(sc, name)(dq, y, **kw)
    _equal(got, _form(getattr(sc, name))(dq, y, **kw))
    ref = getattr(sc, name)(q, y, **kw)
    if name == "smooth_reliability":   # kernel sums over merged grids
        np.testing.assert_allclose(got.mesh, ref.mesh, rtol=1e-12)
        np.testing.assert_allclose(got.curve, ref.curve, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(got.density, ref.density, rtol=1e-9, atol=1e-12)
    elif name == "smooth_ece":
        assert abs(got.value - ref.value) <= 1e-9 * ref.value
    else:
        _close(got, ref)


def test_dcf_planted_prior_changes_value():
    """The prior reaches the distributed form (0.3 -> 0.5 changes DCF)."""
    q = np.array([0.1, 0.4, 0.6, 0.9, 0.35])
    y = np.array([0, 1, 0, 1, 1])
    dq = da.from_array(q, chunks=2)
    assert sc.dcf(dq, y, prior=0.3).value == sc.dcf(q, y, prior=0.3).value
    assert sc.dcf(dq, y, prior=0.5).value == sc.dcf(q, y, prior=0.5).value
    assert sc.dcf(q, y, prior=0.3).value != sc.dcf(q, y, prior=0.5).value


def test_unsupported_option_is_one_clear_error(data):
    de = data[3]
    with pytest.raises(TypeError, match=r"\.gmce: progress=True is not supported"):
        sc.gmce(de, sc.TagGroups.scw(5), progress=True)
    with pytest.raises(TypeError, match=r"scores_are='llr' is not supported on distributed"):
        sc.dcf(_exploding((2,)), [0, 1], prior=0.5, scores_are="llr")
    with pytest.raises(TypeError, match=r"scores_are='llr' is not supported on distributed"):
        sc.bayes_error_plot(_exploding((2,)), [0, 1], scores_are="llr")


CI_OPTIONS = [dict(ci="simulation"), dict(ci="bootstrap", n_bins=3),
              dict(binning="fixed", n_bins=4, norm=1), dict(norm=np.inf, ci="simulation"),
              dict(debias=True, ci="score", bin_size=2)]


def _ci_cases():
    for kw in CI_OPTIONS:
        for name in ("smce", "gmce", "smce_and_gmce"):
            yield name, kw


@pytest.mark.parametrize("name,kw", list(_ci_cases()),
                         ids=[f"{n}-{'-'.join(map(str, k.values()))}" for n, k in _ci_cases()])
def test_ce_options_dispatch(data, name, kw):
    """Every binning, norm, debias and interval of the single machine runs on
    the cluster: equal to the distributed form bit for bit, to the single
    machine within 1e-12 (interval ends included)."""
    x, gold, one, de = data
    args = () if name == "smce" else (sc.TagGroups.from_counts({0: 5, 1: 1, 3: 3}, 2,
                                                               n_tags=5),)
    got = getattr(sc, name)(de, *args, **kw)
    _equal(got, _form(getattr(sc, name))(de, *args, **kw))
    _close(got, getattr(sc, name)(one, *args, **kw))


@pytest.mark.parametrize("kw", CI_OPTIONS, ids=lambda k: "-".join(map(str, k.values())))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_calibration_error_options_dispatch(kw, dtype):
    rng = np.random.default_rng(5)
    q = rng.random(300).round(2).astype(dtype)          # ties
    y = (rng.random(300) < q).astype(np.uint8)
    dq = da.from_array(q, chunks=(0, 100, 0, 120, 80))  # empty chunks
    got = sc.calibration_error(dq, y, **kw)
    _equal(got, dist.calibration_error(dq, y, **kw))
    ref = sc.calibration_error(q, y, **kw)
    _close(got, ref)
    assert got.ci_low == ref.ci_low or abs(got.ci_low - ref.ci_low) <= 1e-12 * ref.ci_low


@pytest.mark.parametrize("n", [1, 2])
def test_calibration_error_options_tiny(n):
    q, y = np.array([0.3, 0.3])[:n], np.array([1, 0])[:n]
    for kw in CI_OPTIONS[:4]:
        _close(sc.calibration_error(da.from_array(q, chunks=1), y, **kw),
               sc.calibration_error(q, y, **kw))


def test_planted_interval_changes_reach_the_cluster():
    """Confidence level 0.95 -> 0.9 and the bootstrap seed change the ends on
    the cluster, to the single machine's ends."""
    rng = np.random.default_rng(8)
    q = rng.random(200).round(2)
    y = (rng.random(200) < q ** 2).astype(np.uint8)
    dq = da.from_array(q, chunks=70)
    for a, b in [(sc.ConfidenceInterval("simulation"),
                  sc.ConfidenceInterval("simulation", confidence_level=0.9)),
                 (sc.ConfidenceInterval("bootstrap", n_resamples=50),
                  sc.ConfidenceInterval("bootstrap", n_resamples=50, random_state=1))]:
        got_a, got_b = sc.calibration_error(dq, y, ci=a), sc.calibration_error(dq, y, ci=b)
        assert (got_a.ci_low, got_a.ci_high) != (got_b.ci_low, got_b.ci_high)
        for got, spec in [(got_a, a), (got_b, b)]:
            ref = sc.calibration_error(q, y, ci=spec)
            np.testing.assert_allclose([got.ci_low, got.ci_high], [ref.ci_low, ref.ci_high],
                                       rtol=1e-12)


APPLICATION_OPTIONS = [
    ("dcf", dict(prior=0.3, c_miss=2.0, c_fa=0.5)), ("dcf", dict(prior=0.4, normalize=False)),
    ("dcf", dict(prior=0.3, training_prior=0.2)),
    ("min_dcf", dict(prior=0.3, c_miss=3.0, normalize=False)),
    ("min_dcf", dict(prior=0.6, training_prior=0.7)),
    ("cllr", dict(training_prior=0.25)), ("min_cllr", dict(training_prior=0.25)),
    ("bayes_error_plot", dict(prior_log_odds=[-1.0, 0.0, 2.5], training_prior=0.4)),
    ("cllr", dict(scores_are="probability"))]


@pytest.mark.parametrize("name,kw", APPLICATION_OPTIONS,
                         ids=[f"{n}-{'-'.join(map(str, k))}" for n, k in APPLICATION_OPTIONS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_application_options_dispatch(name, kw, dtype):
    rng = np.random.default_rng(4)
    q = rng.random(300).round(2).astype(dtype)           # ties
    y = (rng.random(300) < q).astype(np.uint8)
    dq = da.from_array(q, chunks=(100, 0, 200))
    got = getattr(sc, name)(dq, y, **kw)
    _equal(got, _form(getattr(sc, name))(dq, y, **kw))
    _close(got, getattr(sc, name)(q, y, **kw))


def test_planted_costs_change_the_cluster_value():
    q, y = np.array([0.1, 0.4, 0.6, 0.9, 0.35]), np.array([0, 1, 0, 1, 1])
    dq = da.from_array(q, chunks=2)
    for kw in [dict(c_miss=5.0), dict(c_fa=5.0), dict(normalize=False),
               dict(training_prior=0.2)]:
        got = sc.dcf(dq, y, prior=0.3, **kw)
        assert got.value == sc.dcf(q, y, prior=0.3, **kw).value
        assert got.value != sc.dcf(dq, y, prior=0.3).value


def test_application_options_checked_before_computing():
    with pytest.raises(ValueError, match="c_miss"):
        sc.dcf(_exploding((4,)), np.zeros(4, np.uint8), prior=0.3, c_miss=-1.0)
    with pytest.raises(ValueError, match="training_prior"):
        sc.cllr(_exploding((4,)), np.zeros(4, np.uint8), training_prior=1.5)
    with pytest.raises(ValueError, match="scores_are"):
        sc.min_dcf(_exploding((4,)), np.zeros(4, np.uint8), prior=0.3, scores_are="logit")


class _Boom(Exception):
    pass


def _exploding(shape, dtype=np.float64):
    """A dask array whose compute raises _Boom."""
    def boom():
        raise _Boom("computed")
    return da.from_delayed(dask.delayed(boom)(), shape=shape, dtype=dtype)


REFUSED_CASES = {
    "classwise_ece": lambda a: sc.classwise_ece(_exploding((4, 3)), np.zeros(4, int)),
    "argsort_scores": lambda a: sc.core.binning.argsort_scores(a),
    "equal_mass_bins": lambda a: sc.core.equal_mass_bins(a, np.zeros(4, np.uint8)),
    "fixed_width_bins": lambda a: sc.core.fixed_width_bins(a, np.zeros(4, np.uint8)),
    "lookup_bins": lambda a: sc.core.binning.lookup_bins(a, np.array([0.0, 0.5])),
    "histogram_counts": lambda a: sc.core.binning.histogram_counts(a, np.linspace(0, 1, 3)),
    "isotonic_fit": lambda a: sc.core.isotonic_fit(a, np.zeros(4)),
    "isotonic_predict": lambda a: sc.core.isotonic_predict(a, np.array([0.0, 1.0]),
                                                           np.array([0.0, 1.0])),
    "isotonic_fit_pooled": lambda a: sc.core.isotonic.isotonic_fit_pooled(a, np.zeros(4),
                                                                          np.ones(4)),
    "partition_by_group": lambda a: sc.core.groups.partition_by_group(
        _exploding((4,), np.int32), np.zeros(3, np.int32)),
    "score_table": lambda a: sc.metrics.resampling.score_table(a, np.zeros(4, np.uint8)),
}


@pytest.mark.parametrize("name", sorted(REFUSED_CASES))
def test_refused_functions_raise_without_computing(name):
    with pytest.raises(TypeError, match=rf"\.{name} does not take distributed"):
        REFUSED_CASES[name](_exploding((4,)))


@pytest.mark.parametrize("name", ["viterbi", "kbest", "marginals", "pair_marginals",
                                  "log_partition", "span_marginals"])
def test_crf_refuses_dask_emissions_without_computing(name):
    import sparsecal.crf as crf
    em, tr = _exploding((2, 3, 4)), np.zeros((4, 4))
    args = {"kbest": (em, tr, 2), "span_marginals": (em, tr, [0], [0], [[1]])}.get(name,
                                                                                   (em, tr))
    with pytest.raises(TypeError, match=rf"\.{name} does not take distributed"):
        getattr(crf, name)(*args)


def test_refused_entry_functions_raise(data):
    de = data[3]
    for f, args in [(sc.io.to_arrow, ())]:
        with pytest.raises(TypeError, match=rf"\.{f.__name__} does not take"):
            f(de, *args)
    with pytest.raises(TypeError, match=r"\.save_entries does not take"):
        sc.io.save_entries("never-written.npz", de)


def test_numpy_input_is_not_dispatched():
    q = np.array([0.2, 0.7])
    assert not is_distributed(q) and not is_distributed(sc.threshold(np.eye(2), [0, 1]))
    assert is_distributed(da.from_array(q))


@pytest.mark.parametrize("kw", [dict(n_resamples=60), dict(n_resamples=60, binning="fixed",
                                                            n_bins=4),
                                dict(n_resamples=40, bin_size=30, random_state=3)],
                         ids=["equal-mass", "fixed", "bin_size"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_calibration_test_dispatches(kw, dtype):
    rng = np.random.default_rng(6)
    q = rng.random(250).round(2).astype(dtype)            # ties
    y = (rng.random(250) < q ** 1.5).astype(np.uint8)
    dq = da.from_array(q, chunks=(90, 0, 160))
    got = sc.calibration_test(dq, y, **kw)
    _equal(got, dist.arrays.binary_calibration_test(dq, y, **kw))
    ref = sc.calibration_test(q, y, **kw)
    assert (got.p_value, got.n_resamples, got.n_bins, got.n) == (
        ref.p_value, ref.n_resamples, ref.n_bins, ref.n)
    assert abs(got.statistic - ref.statistic) <= 1e-12 * ref.statistic


def test_calibration_test_planted_seed_and_tiny():
    q = np.array([0.1, 0.1, 0.5, 0.8, 0.8, 0.3, 0.9, 0.2])
    y = np.array([0, 1, 1, 1, 0, 0, 1, 0])
    dq = da.from_array(q, chunks=3)
    p = [sc.calibration_test(dq, y, n_bins=2, n_resamples=30, random_state=s).p_value
         for s in (0, 1)]
    assert p == [sc.calibration_test(q, y, n_bins=2, n_resamples=30, random_state=s).p_value
                 for s in (0, 1)]
    for n in (1, 2):
        got = sc.calibration_test(da.from_array(q[:n], chunks=1), y[:n], n_bins=1,
                                  n_resamples=9)
        ref = sc.calibration_test(q[:n], y[:n], n_bins=1, n_resamples=9)
        assert (got.p_value, got.n, got.n_bins) == (ref.p_value, ref.n, ref.n_bins)
    with pytest.raises(ValueError, match="n_resamples"):
        sc.calibration_test(_exploding((4,)), np.zeros(4, np.uint8), n_resamples=0)


BRIER_OPTIONS = [{}, dict(n_bins=3), dict(binning="fixed", n_bins=7), dict(bin_size=2)]


@pytest.mark.parametrize("kw", BRIER_OPTIONS, ids=lambda k: "-".join(map(str, k.values())))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 301])
def test_brier_decomposition_dispatches(kw, dtype, n):
    """The merged bins and exact squared-error sum through the single
    machine's formula: brier, calibration, refinement within 1e-12 relative;
    within_bin (their difference) within 1e-12 of brier."""
    rng = np.random.default_rng(n)
    q = rng.random(n).round(2).astype(dtype)                  # ties
    y = (rng.random(n) < q).astype(np.uint8)
    chunks = (n,) if n < 3 else (100, 0, 150, 51)              # an empty chunk
    dq = da.from_array(q, chunks=(chunks,))
    got = sc.brier_decomposition(dq, y, **kw)
    _equal(got, dist.arrays.binary_brier_decomposition(dq, y, **kw))
    ref = sc.brier_decomposition(q, y, **kw)
    assert type(got) is type(ref) and got.n == ref.n == n
    np.testing.assert_allclose([got.brier, got.calibration, got.refinement],
                               [ref.brier, ref.calibration, ref.refinement],
                               rtol=1e-12, atol=1e-300)
    assert abs(got.within_bin - ref.within_bin) <= 1e-12 * ref.brier + 1e-300
    # the reference formula, brute force over the single-machine bins
    bins = sc.calibration_error(q, y, **kw).bins
    nz = bins.count > 0
    w, qb, pb = bins.count[nz] / n, bins.sum_score[nz] / bins.count[nz], \
        bins.sum_label[nz] / bins.count[nz]
    np.testing.assert_allclose(got.calibration, np.sum(w * (qb - pb) ** 2), rtol=1e-12,
                               atol=1e-300)
    np.testing.assert_allclose(got.refinement, np.sum(w * pb * (1 - pb)), rtol=1e-12,
                               atol=1e-300)
    np.testing.assert_allclose(got.brier, np.mean((q.astype(float) - y) ** 2), rtol=1e-12)


def test_brier_decomposition_planted_bins_and_refusals():
    """Another bin count reaches the cluster; options are checked before any
    chunk is computed; no points is the single machine's error."""
    rng = np.random.default_rng(9)
    q = rng.random(200).round(2)
    y = (rng.random(200) < q ** 2).astype(np.uint8)
    dq = da.from_array(q, chunks=70)
    a, b = sc.brier_decomposition(dq, y, n_bins=3), sc.brier_decomposition(dq, y, n_bins=9)
    assert a.calibration != b.calibration
    assert b.calibration == pytest.approx(sc.brier_decomposition(q, y, n_bins=9).calibration,
                                          rel=1e-12)
    with pytest.raises(ValueError, match="binning"):
        sc.brier_decomposition(_exploding((4,)), np.zeros(4, np.uint8), binning="quantile")
    with pytest.raises(ValueError, match="bin_size"):
        sc.brier_decomposition(_exploding((4,)), np.zeros(4, np.uint8), binning="fixed",
                               bin_size=2)
    with pytest.raises(ValueError, match="no points"):
        sc.brier_decomposition(da.from_array(np.zeros(0), chunks=1), np.zeros(0, np.uint8))
    with pytest.raises(ValueError, match="no points"):
        sc.brier_decomposition(np.zeros(0), np.zeros(0, np.uint8))


def _chunked(n, dtype, seed):
    """Tagger scores (ties) with an empty chunk, one-row chunks and a chunk
    whose scores are all below the threshold; single-machine and dask entries."""
    x, gold = tagger_scores(seed, n, 5, dtype)
    x = x.round(2).astype(dtype)
    if n > 4:
        x[3:5] = 0.001                                         # all below 0.01
    chunks = (n,) if n < 3 else (3, 0, 2, 1, n - 6)
    return sc.threshold(x, gold), sc.threshold(da.from_array(x, chunks=(chunks, 5)), gold)


SIZES = [(1, np.float64), (2, np.float32), (300, np.float32), (300, np.float64)]


@pytest.mark.parametrize("n,dtype", SIZES, ids=lambda v: str(v))
def test_top_label_dispatches(n, dtype):
    one, de = _chunked(n, dtype, n)
    conf, correct = sc.top_label(de)
    assert all(isinstance(a, da.Array) for a in (conf, correct))
    assert (conf.dtype, correct.dtype) == (np.dtype(dtype), np.dtype(np.uint8))
    ref = sc.top_label(one)
    _equal(dask.compute(conf, correct), tuple(ref))
    # brute force: each token's highest score (first tag on ties), gold or not
    x, gold = tagger_scores(n, n, 5, dtype)
    x = x.round(2).astype(dtype)
    if n > 4:
        x[3:5] = 0.001
    kept = (x >= 0.01).any(axis=1)
    np.testing.assert_array_equal(conf.compute(), np.where(x >= 0.01, x, -1).max(axis=1)[kept])
    np.testing.assert_array_equal(correct.compute(),
                                  (np.where(x >= 0.01, x, -1).argmax(axis=1) == gold)[kept])


@pytest.mark.parametrize("n,dtype", SIZES, ids=lambda v: str(v))
@pytest.mark.parametrize("k,seed", [(2, 0), (3, 7)])
def test_stratified_token_folds_dispatch(n, dtype, k, seed):
    one, de = _chunked(n, dtype, n + 1)
    groups = sc.TagGroups.from_counts({0: 5, 1: 1, 3: 3, 4: 2}, 2, n_tags=5)
    fold = sc.calibration.stratified_token_folds(de, groups, k, seed)
    assert isinstance(fold, da.Array) and fold.dtype == np.int64
    sizes = [len(b) for b in dask.compute(*de.blocks)]          # known chunk sizes
    assert fold.chunks == (tuple(m for m in sizes if m),)     # (concatenate drops empties)
    ref = sc.calibration.stratified_token_folds(one, groups, k, seed)
    np.testing.assert_array_equal(fold.compute(), ref)
    assert fold.shape == ref.shape


def test_stratified_token_folds_planted_seed_and_errors(data):
    x, gold, one, de = data
    if len(one) < 50:
        return
    groups = sc.TagGroups.scw(5)
    a, b = (sc.calibration.stratified_token_folds(de, groups, 3, s).compute() for s in (0, 1))
    assert (a != b).any()
    np.testing.assert_array_equal(b, sc.calibration.stratified_token_folds(one, groups, 3, 1))
    with pytest.raises(ValueError, match="n_folds"):
        sc.calibration.stratified_token_folds(de, groups, 1)


def _rows_cases():
    for method in (sc.IsotonicCalibrator(), sc.HistogramBinning()):
        for groups in (sc.TagGroups.scw(5), sc.TagGroups.from_counts({0: 5, 1: 1, 3: 3}, 2,
                                                                     n_tags=5)):
            yield method, groups


@pytest.mark.parametrize("n,dtype", SIZES[2:], ids=lambda v: str(v))
@pytest.mark.parametrize("method,groups", list(_rows_cases()),
                         ids=["iso-scw", "iso-tfg", "hist-scw", "hist-tfg"])
def test_cross_fit_predict_dispatches(n, dtype, method, groups):
    """Out-of-fold calibrated entries equal the single machine's bit for bit
    (isotonic, histogram members)."""
    one, de = _chunked(n, dtype, n + 2)
    setup = sc.GroupedCalibrator(method, groups)
    got = sc.calibration.cross_fit_predict(setup, de, n_folds=3, seed=4)
    assert isinstance(got, dist.DaskEntries) and len(got.blocks) == len(de.blocks)
    ref = sc.calibration.cross_fit_predict(setup, one, n_folds=3, seed=4)
    _equal(got.compute(), ref)
    assert (ref.score != one.score).any()                      # calibrated, not copied
    other = sc.calibration.cross_fit_predict(setup, de, n_folds=3, seed=5).compute()
    _equal(other, sc.calibration.cross_fit_predict(setup, one, n_folds=3, seed=5))


def test_cross_fit_predict_errors(data):
    de = data[3]
    with pytest.raises(TypeError, match="calibrator must be a GroupedCalibrator"):
        sc.calibration.cross_fit_predict(sc.IsotonicCalibrator(), de)
    with pytest.raises(ValueError, match="n_folds"):
        sc.calibration.cross_fit_predict(sc.GroupedCalibrator(sc.IsotonicCalibrator(),
                                                  sc.TagGroups.scw(5)), de, n_folds=1)


#: one call per structured / adapters function with an exploding dask array as
#: its data (the dispatch is its first statement: the other arguments are not read)
SENTENCE_CASES = {
    "coreference_entries": lambda a: sc.structured.coreference_entries(a, [[0]]),
    "sample_entities": lambda a: sc.structured.sample_entities(a, 2),
    "crf_event_probabilities": lambda a: sc.structured.crf_event_probabilities(
        None, a, np.zeros((2, 2))),
    "softmax_event_probabilities": lambda a: sc.structured.softmax_event_probabilities(
        None, a),
    "crf_sequence_events": lambda a: sc.structured.crf_sequence_events(
        a, np.zeros((2, 2)), [0]),
    "softmax_sequence_events": lambda a: sc.structured.softmax_sequence_events(a, [0]),
    "crf_span_events": lambda a: sc.structured.crf_span_events(a, np.zeros((2, 2)), [0],
                                                               ["O", "B-X"]),
    "softmax_span_events": lambda a: sc.structured.softmax_span_events(a, [0],
                                                                       ["O", "B-X"]),
    "decode_spans": lambda a: sc.structured.decode_spans(a, ["O", "B-X"]),
    "most_frequent_pairs": lambda a: sc.structured.most_frequent_pairs(a, 2),
    "pair_entries": lambda a: sc.structured.pair_entries(a, [0, 1]),
    "rerank_sequences": lambda a: sc.structured.rerank_sequences(None, a),
    "rerank_spans": lambda a: sc.structured.rerank_spans(None, a, [0], ["O", "B-X"]),
    "span_f1": lambda a: sc.structured.span_f1([], a, 4),
    "sample_confidence": lambda a: sc.structured.sample_confidence(a),
    "sample_frequency": lambda a: sc.structured.sample_frequency(a),
    "sample_percentiles": lambda a: sc.structured.sample_percentiles(a),
    "sample_sequences": lambda a: sc.structured.sample_sequences(a, np.zeros((2, 2)), 3),
    "crfsuite_scores": lambda a: sc.adapters.crfsuite_scores(a),
    "entries_from_crfsuite": lambda a: sc.adapters.entries_from_crfsuite(a, [0]),
    "gold_ids": lambda a: sc.adapters.gold_ids(a),
    "log_partition_from_torchcrf": lambda a: sc.adapters.log_partition_from_torchcrf(None, a),
    "marginals_from_torchcrf": lambda a: sc.adapters.marginals_from_torchcrf(None, a),
    "word_probabilities": lambda a: sc.adapters.word_probabilities(a, [[0]]),
    "coreference_scores": lambda a: sc.structured.coreference_scores(a, [0, 0]),
    "eval_word_scores": lambda a: sc.adapters.eval_word_scores(a, np.zeros((2, 3), int)),
    "trainer_compute_metrics": lambda a: sc.adapters.trainer_compute_metrics(word_ids=a),
}


def test_sentence_functions_are_all_classified():
    """Every structured / adapters function taking data is refused by name (the
    walk above requires a table entry; this requires a call below)."""
    walked = {n for n, f in _public_data_functions().items()
              if f.__module__.split(".")[1] in ("structured", "adapters")}
    assert walked == set(SENTENCE_CASES)
    assert all(_refusal(_public_data_functions()[n]) for n in walked)


@pytest.mark.parametrize("name", sorted(SENTENCE_CASES))
def test_sentence_functions_refuse_dask_without_computing(name):
    with pytest.raises(TypeError, match=rf"\.{name} does not take distributed"):
        SENTENCE_CASES[name](_exploding((2, 3, 4)))
