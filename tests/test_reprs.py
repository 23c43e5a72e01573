"""Every result object has a concise ``repr`` (issue 25): one summary line with its
key numbers, never the thousands of characters of every per-tag cell; the tables
stay in ``to_frame()`` / ``_repr_html_`` / ``to_markdown()``. A walk over the
``__all__`` of every subpackage makes sure that no public class is forgotten: each
is built here on a large input (300 tags) and its summary checked by value."""
import importlib
import inspect
import warnings

import numpy as np
import pytest

import sparsecal as sc
from sparsecal import calibration as cal, metrics, structured as st
from sparsecal.datasets import make_tagger_outputs

SUBPACKAGES = ["sparsecal", "sparsecal.core", "sparsecal.metrics", "sparsecal.calibration",
               "sparsecal.io", "sparsecal.plotting", "sparsecal.datasets", "sparsecal.cli",
               "sparsecal.crf", "sparsecal.structured", "sparsecal.adapters",
               "sparsecal.distributed"]
#: public classes that are not results: exceptions, the calibrators' abstract base,
#: and the figures (matplotlib objects, with the default ``<... object at 0x...>``)
NOT_RESULTS = {"BaseCalibrator", "BayesErrorDisplay", "ReliabilityDisplay",
               "SmoothReliabilityDisplay", "GroupReliabilityDisplay",
               "MethodComparisonDisplay", "ModifiedReliabilityDisplay", "PerTagDisplay"}
N_TAGS = 300
MAX_CHARS = 300


def g4(x):
    return f"{x:.4g}"


@pytest.fixture(scope="module")
def data():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dev = make_tagger_outputs(20000, n_tags=N_TAGS, split_seed=1)
        test = make_tagger_outputs(20000, n_tags=N_TAGS, split_seed=2)
        entries = {name: sc.threshold(d.scores, d.gold, 0.01)
                   for name, d in (("dev", dev), ("test", test))}
        per_tag = sc.TagGroups.per_tag(N_TAGS)
        before = sc.evaluate(entries["test"], per_tag, ci="score", debias=True, per_tag=True,
                             min_entries=100, top_label=True, metrics=["ece", "brier"])
        model = sc.GroupedCalibrator(sc.IsotonicCalibrator(), per_tag,
                                     fallback=sc.TagGroups.scw(N_TAGS)).fit(entries["dev"])
        after = sc.evaluate(model.transform(entries["test"]), per_tag, ci=None, per_tag=True,
                            min_entries=100, top_label=True, metrics=["ece", "brier"])
    return dict(dev_tagger=dev, test_tagger=test, per_tag=per_tag, before=before, after=after,
                model=model, **entries)


def _public_classes():
    seen, out = set(), []
    for name in SUBPACKAGES:
        try:
            module = importlib.import_module(name)
        except ImportError:   # an extra (torch, dask) not installed
            continue
        for attr in module.__all__:
            obj = getattr(module, attr)
            if (inspect.isclass(obj) and not issubclass(obj, BaseException)
                    and attr not in NOT_RESULTS and obj not in seen):
                seen.add(obj)
                out.append(obj)
    return out


# ---- one builder per result class: (object, the parts its repr must show) ---- #

def _calibration_error(d):
    q = d["test_tagger"].scores[:, 0]
    x = sc.calibration_error(q, d["test_tagger"].gold == 0, ci="simulation", n_bins=15)
    return x, [f"value={g4(x.value)}", f"n={x.n}", "15 bins", "norm=2",
               f"95% CI [{g4(x.ci_low)}, {g4(x.ci_high)}]"]


def _mce(d):
    x = sc.mce(d["test"], min_entries=40, bin_size=20, ci="score")
    assert len(x.per_tag) > 100 and len(x.too_few) > 10
    return x, [f"value={g4(x.value)}, debiased", f"{len(x.per_tag)} tags",
               f"{len(x.too_few)} with fewer than 40 entries"]


def _evaluation(d):
    x = d["before"]
    gmce = [c.value for c in x.gmce if c is not None]
    return x, [f"SMCE={g4(x.smce.value)}", f"95% CI [{g4(x.smce.ci_low)}, "
               f"{g4(x.smce.ci_high)}]", f"{x.smce.n} entries",
               f"GMCE of {N_TAGS} per-tag groups in [{g4(min(gmce))}, {g4(max(gmce))}]",
               f"MCE={g4(x.mce.value)}", f"top-label ECE={g4(x.top_label_ece.value)}",
               "metrics ece, brier"]


def _comparison(d):
    x = sc.compare(d["before"], d["after"])
    smce = x.rows[0]
    change = [(r["before"], r["after"]) for r in x.rows if r["name"].startswith("GMCE")]
    both = [(b, a) for b, a in change if b is not None and a is not None]
    lower = sum(a < b for b, a in both)
    assert len(both) == N_TAGS and 0 < lower < N_TAGS
    return x, [f"SMCE {g4(smce['before'])} -> {g4(smce['after'])} "
               f"({smce['relative_change']:+.1%})",
               f"GMCE lower in {lower} of {len(both)} groups", f"{len(x.rows)} rows"]


def _calibration_test(d):
    x = sc.calibration_test(d["test_tagger"].scores[:, 0], d["test_tagger"].gold == 0, n_resamples=19)
    return x, [f"statistic={x.statistic!r}", f"p_value={x.p_value!r}"]


def _smooth_ece(d):
    x = sc.smooth_ece(d["test_tagger"].scores[:2000, 0], d["test_tagger"].gold[:2000] == 0)
    return x, [f"value={x.value!r}", f"n={x.n}"]


def _smooth_reliability(d):
    x = sc.smooth_reliability(d["test_tagger"].scores[:2000, 0], d["test_tagger"].gold[:2000] == 0,
                              n_points=5000)
    return x, [f"value={x.smooth_ece.value!r}", f"n={x.smooth_ece.n}"]


def _classwise(d):
    x = sc.classwise_ece(d["test_tagger"].scores, d["test_tagger"].gold)
    return x, [f"value={x.value!r}", f"n={x.n}"]


def _brier_corp(d):
    x = sc.brier_corp(d["test_tagger"].scores[:, 0], d["test_tagger"].gold == 0)
    return x, [f"score={x.score!r}", f"miscalibration={x.miscalibration!r}"]


def _bayes_error_plot(d):
    x = sc.bayes_error_plot(d["test_tagger"].scores[:, 0], d["test_tagger"].gold == 0,
                            prior_log_odds=np.linspace(-5, 5, 2001))
    return x, ["2001 prior log-odds in [-5, 5]",
               f"actual DCF in [{g4(x.actual_dcf.min())}, {g4(x.actual_dcf.max())}]",
               f"min DCF in [{g4(x.min_dcf.min())}, {g4(x.min_dcf.max())}]"]


def _dcf(d):
    x = sc.dcf(d["test_tagger"].scores[:, 0], d["test_tagger"].gold == 0, prior=0.3)
    return x, [f"value={x.value!r}", "prior=0.3"]


def _brier(d):
    x = sc.brier_decomposition(d["test_tagger"].scores[:, 0], d["test_tagger"].gold == 0)
    return x, [f"brier={x.brier!r}", f"n={x.n}"]


def _interval(d):
    return sc.ConfidenceInterval("bootstrap"), ["method='bootstrap'", "n_resamples=1000"]


def _entries(d):
    x = d["test"]
    return x, [f"n={len(x)}", f"n_tags={N_TAGS}", f"positives={int(x.label.sum())}"]


def _tag_groups(d):
    x = sc.TagGroups.from_counts(d["dev_tagger"].train_counts, 100, n_tags=N_TAGS)
    sizes = np.bincount(x.tag_to_group, minlength=100)
    assert sizes[0] != sizes[-1]
    return x, [f"n_tags={N_TAGS}", "n_groups=100", f"tags_per_group=[{sizes[0]}, "
               f"{sizes[1]}, {sizes[2]}, ..., {sizes[-2]}, {sizes[-1]}])"]


def _bin_stats(d):
    from sparsecal.core import equal_mass_bins
    x = equal_mass_bins(d["dev_tagger"].scores[:, 0], d["dev_tagger"].gold == 0, n_bins=2000)
    return x, ["n_bins=2000", "n=20000", "equal-mass"]


def _synthetic(d):
    return d["test_tagger"], ["n_tokens=20000", f"n_tags={N_TAGS}", "float32"]


def _corpus_tags(d, tmp_path):
    from sparsecal.io import read_conll_columns
    tags = [f"T{i}" for i in range(N_TAGS)]
    lines = [f"w{i} {tags[i % N_TAGS]}" + ("\n" if i % 7 == 6 else "") for i in range(3000)]
    (tmp_path / "c.txt").write_text("\n".join(lines) + "\n")
    x = read_conll_columns(tmp_path / "c.txt")
    return x, ["n_tokens=3000", f"n_sentences={x.n_sentences}", f"n_tags={N_TAGS}"]


def _k_choice(d):
    rng = np.random.default_rng(0)
    rank = np.tile(np.arange(1, 31), 100)
    mean = rng.random(rank.size)
    x = cal.heuristic_k({"mean": mean, "rank": rank}, rng.random(rank.size) < mean / rank,
                        ks=tuple(range(1, 31)), forecaster=sc.Forecaster(max_iter=5))
    i = x.ks.index(x.k)
    return x, [f"k={x.k}", f"ECE={g4(x.ece[i])}", "30 candidates from 1 to 30"]


def _selection(d):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = sc.select(d["dev"], train_counts=d["dev_tagger"].train_counts,
                      methods=["histogram", "platt"], n_groups=[1, 3], n_bins=[5, 10],
                      n_folds=2)
    best = x.best_params
    return x, [f"best {best['method']}",
               f"{best['n_groups']} group{'s' * (best['n_groups'] != 1)}",
               f"SMCE={g4(x.best_score)}", f"{len(x.cv_results['score'])} candidates"]


def _method_comparison(d):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = sc.compare_methods(d["dev"], d["test"], d["per_tag"],
                               methods=["histogram", "platt"])
    (method, grouping), best = min(x.after.items(), key=lambda kv: kv[1].smce.value)
    return x, [f"uncalibrated SMCE={g4(x.before.smce.value)}", "4 recalibrations",
               f"{N_TAGS} groups", f"best {method}/{grouping} SMCE={g4(best.smce.value)}"]


def _event_confidence(d):
    p = np.random.default_rng(0).random((20, 5000))
    x = st.sample_confidence(p)
    return x, ["5000 events", "20 samples", f"mean {g4(x.mean.mean())}",
               "percentiles (10, 90)"]


def _sample_estimate(d):
    x = st.sample_frequency(np.random.default_rng(0).random((5000, 20)) < 0.3)
    return x, ["5000 items", "20 samples", "95% wilson intervals",
               f"mean {g4(x.estimate.mean())}"]


def _span_data(d):
    names = ["O"] + [f"{p}-T{i}" for i in range(10) for p in "BI"]
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(len(names)) * 0.05, size=(400, 8))
    gold = probs.argmax(-1)
    gold[rng.random(gold.shape) < 0.2] = 0
    return names, probs, gold


def _events(d):
    names, probs, gold = _span_data(d)
    x = st.softmax_span_events(probs, gold, names, k=2)
    return x, ["kind='span'", f"{len(x)} events over 400 sentences",
               f"{len(x.type_names)} types", f"{int(x.entries.label.sum())} correct"]


def _spans(d):
    names, _, gold = _span_data(d)
    x = st.decode_spans(gold, names)
    return x, [f"({len(x)} spans, {len(x.type_names)} types: "
               f"{', '.join(x.type_names[:3])}, ...)"]


def _span_scores(d):
    names, _, gold = _span_data(d)
    spans = st.decode_spans(gold, names)
    x = st.span_f1(spans, spans, gold.shape[1])
    return x, ["f1=1.0", f"n_gold={len(spans)}"]


def _reranking(d):
    names, probs, gold = _span_data(d)
    ev = st.softmax_span_events(probs, gold, names, k=2)
    x = st.rerank_spans(ev, ev.entries.score[::-1], gold, names)
    return x, [f"{x.chosen.size} chosen", f"n_changed={x.n_changed}",
               f"span F1 {g4(x.spans_before.f1)} -> {g4(x.spans_after.f1)}"]


def _hmm(d):
    words = [f"w{i % 997}" for i in range(20000)]
    x = st.SupervisedHMM().fit(words, d["dev_tagger"].gold, [20] * 1000, n_tags=N_TAGS)
    return x, ["transition_pseudocount=1.0", "fitted: 300 tags, 997 word types"]


def _calibrator(cls):
    def build(d):
        dev = d["dev_tagger"]
        if cls is sc.TemperatureScaling:
            return (cls().fit(np.log(dev.scores[:2000] + 1e-9), dev.gold[:2000]),
                    ["TemperatureScaling("])
        if cls is sc.LogisticFusion:
            X = np.column_stack([dev.scores[:, 0], dev.scores[:, 1]])
            return cls().fit(X, dev.gold == 0), ["LogisticFusion("]
        if cls is sc.Forecaster:
            f = {"mean": dev.scores[:5000, 0], "rank": np.arange(5000) % 300}
            return cls(max_iter=2).fit(f, dev.gold[:5000] == 0), ["Forecaster(", "max_iter=2"]
        if cls is sc.GroupedCalibrator:
            return d["model"], ["groups=TagGroups(kind='per-tag', n_tags=300, n_groups=300)"]
        if cls is sc.CrossFittedCalibrator:
            setup = sc.GroupedCalibrator(sc.IsotonicCalibrator(), d["per_tag"],
                                         fallback=sc.TagGroups.scw(N_TAGS))
            return cls(setup, n_folds=2).fit(d["dev"]), ["CrossFittedCalibrator("]
        x = cls().fit(d["dev"].score, d["dev"].label)
        return x, [f"{cls.__name__}("]
    return build


def _dask_entries(d):
    da = pytest.importorskip("dask.array")
    import sparsecal.distributed as sd
    x = sd.threshold(da.from_array(d["test_tagger"].scores, chunks=(1000, N_TAGS)), d["test_tagger"].gold)
    return x, ["n_blocks=20", f"n_tags={N_TAGS}"]


def _coref_corpus(d, tmp_path):
    from sparsecal.io import read_coref
    row = "{}\tw\tw\tNOUN\tNN\t_\t0\troot\t_\t{}\n"
    miscs = ["Entity=(1-person(2-place)", "Entity=1)", "_", "Entity=(3-time)"]
    text = "# newdoc id = d0\n" + "".join(row.format(i + 1, m) for i, m in enumerate(miscs))
    (tmp_path / "c.conllu").write_text(text + "\n")
    return read_coref(tmp_path / "c.conllu"), ["n_tokens=4", "n_documents=1",
                                               "n_mentions=3", "n_entities=3"]


def _metric(name):
    def build(d):
        torch = pytest.importorskip("torch")
        from sparsecal import adapters
        e = d["test"]
        arg = e.n_tags if name != "GMCEMetric" else sc.TagGroups.per_tag(e.n_tags)
        m = getattr(adapters, name)(arg)
        probs = torch.softmax(torch.randn(50, e.n_tags, generator=torch.Generator()
                                          .manual_seed(0)), -1)
        m.update(probs, torch.arange(50) % e.n_tags)
        kept = int((probs >= 0.01).sum()) if name != "TopLabelECEMetric" else 50
        threshold = "0.01" if name != "TopLabelECEMetric" else "0"   # top-label: every argmax
        parts = [f"n_tags={e.n_tags}", f"threshold={threshold},", f"entries={kept}"]
        return m, parts + ([f"n_groups={e.n_tags}"] if name == "GMCEMetric" else [])
    return build


BUILDERS = {
    "CorefCorpus": _coref_corpus,
    **{name: _metric(name) for name in ("SMCEMetric", "GMCEMetric", "TopLabelECEMetric")},
    "CalibrationError": _calibration_error, "MarginalCalibrationError": _mce,
    "EvaluationResult": _evaluation, "Comparison": _comparison,
    "CalibrationTest": _calibration_test, "SmoothECE": _smooth_ece,
    "SmoothReliability": _smooth_reliability, "ClasswiseECE": _classwise,
    "ScoreDecomposition": _brier_corp, "BayesErrorPlot": _bayes_error_plot,
    "DetectionCost": _dcf, "BrierDecomposition": _brier, "ConfidenceInterval": _interval,
    "Entries": _entries, "TagGroups": _tag_groups, "BinStats": _bin_stats,
    "SyntheticTagger": _synthetic, "CorpusTags": _corpus_tags, "KChoice": _k_choice,
    "SelectionResult": _selection, "MethodComparison": _method_comparison,
    "EventConfidence": _event_confidence, "SampleEstimate": _sample_estimate,
    "Events": _events, "Spans": _spans, "SpanScores": _span_scores,
    "Reranking": _reranking, "SupervisedHMM": _hmm, "DaskEntries": _dask_entries,
    **{name: _calibrator(getattr(sc, name)) for name in (
        "BetaCalibration", "CrossFittedCalibrator", "Forecaster", "GaussianCalibration",
        "GroupedCalibrator", "HistogramBinning", "IsotonicCalibrator", "LogisticFusion",
        "PlattCalibrator", "PriorWeightedLogistic", "ScalingBinning",
        "TemperatureScaling")},
}


def test_every_public_class_is_built_here():
    missing = sorted(c.__name__ for c in _public_classes() if c.__name__ not in BUILDERS)
    assert not missing, f"public classes without a repr check: {missing}"


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_repr_is_a_short_summary_with_the_key_numbers(name, data, tmp_path):
    build = BUILDERS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        obj, parts = (build(data, tmp_path) if "tmp_path" in
                      inspect.signature(build).parameters else build(data))
    assert type(obj).__name__ == name
    text = repr(obj)
    assert text.startswith(f"{name}(") and text.endswith(")"), text
    assert len(text) <= MAX_CHARS and "\n" not in text, f"{len(text)} chars: {text[:500]}"
    assert len(str(obj)) <= MAX_CHARS, str(obj)[:500]
    for part in parts:
        assert part in text, f"{part!r} not in {text!r}"


def test_the_tables_stay_available(data):
    """The summary replaces none of the views of the full table."""
    pytest.importorskip("pandas")
    res = sc.mce(data["test"], min_entries=100)
    assert len(res.to_frame()) == len(res.per_tag) + len(res.too_few)
    assert res._repr_html_().count("<tr>") == 1 + len(res.per_tag) + len(res.too_few)
    assert data["before"].to_markdown().count("\n|") >= N_TAGS
    assert len(data["before"].to_frame()) == N_TAGS + 1


def test_summaries_of_missing_values():
    """A result without an interval, with an empty group, or a NaN shows no made-up
    number."""
    from sparsecal.metrics.evaluation import Comparison
    ce = sc.calibration_error([0.1, 0.4, 0.6, 0.9], [0, 0, 1, 1], n_bins=2)
    assert repr(ce) == "CalibrationError(value=0.25, norm=2, n=4, 2 bins)"
    assert repr(Comparison([{"name": "SMCE", "before": 0.02, "after": None, "change": None,
                             "relative_change": None}])) == \
        "Comparison(SMCE 0.02 -> —, 1 row)"
    res = metrics.MarginalCalibrationError(float("nan"), {}, {3: 12}, 100)
    assert repr(res) == ("MarginalCalibrationError(value=nan, 0 tags, 1 with fewer than "
                         "100 entries)")
    assert repr(sc.TagGroups([0, 1, 1, 2, 2, 2, 3, 4, 5, 6])) == (
        "TagGroups(kind='custom', n_tags=10, n_groups=7, tags_per_group=[1, 2, 3, ..., 1, 1])")
    assert repr(sc.TagGroups.scw(4)) == "TagGroups(kind='scw', n_tags=4, n_groups=1)"
    assert repr(sc.TagGroups([0, 0, 0], 2)) == \
        "TagGroups(kind='custom', n_tags=3, n_groups=2, tags_per_group=[3, 0])"
