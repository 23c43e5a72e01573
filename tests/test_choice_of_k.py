"""J&Y's heuristic choice of k (Section 2.5, Appendix A Algorithm 1): one
forecaster per candidate k, ECE (eq. 4, 20 fixed bins) on the rank-1 events,
checked against fits and an ECE written out here."""
import numpy as np
import pytest

pytest.importorskip("sklearn", reason="the forecaster is fitted by scikit-learn")

from sparsecal.calibration import Forecaster, clone, heuristic_k  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread_by_default")


def _ece(p, y, n_bins=20):
    """J&Y eq. 4: sum over fixed bins of |B|/n |acc(B) - conf(B)|."""
    b = np.minimum((p * n_bins).astype(int), n_bins - 1)
    return sum(np.sum(b == i) / p.size * abs(p[b == i].mean() - y[b == i].mean())
               for i in range(n_bins) if np.any(b == i))


def _events(rng, n_sentences, k=3):
    """k events per sentence; rank-3 events are correct at random, whatever
    their confidence (noise that a k = 3 forecaster must fit)."""
    rank = np.tile(np.arange(1, k + 1), n_sentences)
    mean = np.round(rng.random(rank.size), 2)
    truth = np.where(rank == 3, 0.5, mean / rank)
    return {"mean": mean, "rank": rank}, rng.random(rank.size) < truth


@pytest.mark.parametrize("validation", [False, True])
def test_matches_the_algorithm_written_out(validation):
    rng = np.random.default_rng(0)
    features, labels = _events(rng, 300)
    val = _events(rng, 200) if validation else None
    base = Forecaster(max_iter=15, min_samples_leaf=10)
    choice = heuristic_k(features, labels, ks=(3, 1, 2), forecaster=base, validation=val)
    vf, vy = val if validation else (features, labels)
    top = vf["rank"] == 1
    expected = []
    for k in (3, 1, 2):
        keep = features["rank"] <= k
        model = clone(base).fit({n: c[keep] for n, c in features.items()}, labels[keep])
        expected.append(_ece(model.predict({n: c[top] for n, c in vf.items()}), vy[top]))
    np.testing.assert_allclose(choice.ece, expected, rtol=1e-12, atol=1e-15)
    assert choice.k == (3, 1, 2)[int(np.argmin(expected))]
    assert choice.n_events.tolist() == [900, 300, 600]
    assert choice.n_positive.tolist() == [int(labels[features["rank"] <= k].sum())
                                          for k in (3, 1, 2)]
    assert choice.forecaster.n_threads is None and choice.forecaster.trees_.n_trees == 15


def test_a_single_candidate_and_the_default_forecaster():
    rng = np.random.default_rng(1)
    features, labels = _events(rng, 100, k=2)
    choice = heuristic_k(features, labels, ks=[2])
    assert choice.k == 2 and choice.ece.shape == (1,)
    assert choice.forecaster.get_params() == Forecaster().get_params()


def test_bad_input_is_named():
    rng = np.random.default_rng(2)
    features, labels = _events(rng, 50)
    cases = [
        ({"mean": features["mean"]}, labels, {}, "'rank' column"),
        ({**features, "rank": features["rank"] - 1}, labels, {}, "ranks 1, 2"),
        (features, labels[:-1], {}, "labels"),
        (features, labels, {"ks": ()}, "ks must be a non-empty"),
        (features, labels, {"ks": "23"}, "ks must be a non-empty"),
        (features, labels, {"ks": (2, 2)}, "ks must be distinct"),
        (features, labels, {"ks": (0,)}, "ks must be a positive integer"),
        (features, labels, {"n_bins": 0}, "n_bins"),
        (features, labels, {"validation": features}, r"validation must be a \(features"),
        (features, labels, {"validation": ({**features, "rank": features["rank"] + 1},
                                           labels)}, "no rank-1 validation event"),
        (features, np.ones_like(labels), {}, "all of one class"),
    ]
    for f, y, kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            heuristic_k(f, y, **kwargs)
