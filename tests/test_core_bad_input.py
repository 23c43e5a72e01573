"""Bad values at every public entry point of sparsecal.core (issue 11).

Each case asserts the exception type, a message fragment that names the argument
(or the environment variable) and the problem, and that no input was modified.
No value reaches a compiled kernel that could crash it: thread counts are checked
and capped, sizes are checked before anything is allocated.
"""
import warnings

import numpy as np
import pytest

from sparsecal.core import threads
from sparsecal.core.binning import (argsort_scores, bin_statistics, equal_mass_bin_starts,
                                    equal_mass_bins, fixed_width_bins, lookup_bins)
from sparsecal.core.entries import Entries, threshold
from sparsecal.core.groups import TagGroups, partition_by_group
from sparsecal.core.isotonic import isotonic_fit, isotonic_predict
from sparsecal.core.threads import check_n_threads, env_n_threads, get_n_threads, max_threads

pytestmark = pytest.mark.usefixtures("one_thread_by_default")

SCORES = np.array([[0.7, 0.2, 0.1], [0.005, 0.9, 0.095]])
GOLD = np.array([0, 2])
X = np.array([0.9, 0.1, 0.4, 0.1, 0.7])
Y = np.array([1, 0, 0, 1, 1], dtype=np.uint8)
KNOTS = (np.array([0.1, 0.4]), np.array([0.0, 1.0]))

#: Values that are not a positive integer, each refused by every size or count.
NOT_POSITIVE_INT = [0, -1, -(2**40), 2.0, 1e12, 2.5, True, "3", None, np.float64(4.0),
                    float("nan")]
#: Thread counts refused; np.int64 and Python ints above the cap are clamped instead.
BAD_THREADS = [v for v in NOT_POSITIVE_INT if v is not None]


def _cases():
    nan_scores = SCORES.copy()
    nan_scores[1, 2] = np.nan
    c = [
        # threshold
        ("threshold scores 1-D", threshold, (X, GOLD), {}, ValueError, "scores must be 2-dim"),
        ("threshold scores empty", threshold, (np.zeros((0, 3)), np.zeros(0, int)), {},
         ValueError, "scores is empty"),
        ("threshold scores int", threshold, (np.ones((2, 3), int), GOLD), {}, TypeError,
         "scores must be float32 or float64"),
        ("threshold scores str", threshold, ([["a", "b"]], [0]), {}, TypeError,
         "scores must be float32 or float64"),
        ("threshold scores ragged", threshold, ([[0.1], [0.1, 0.2]], GOLD), {}, ValueError,
         "scores is not an array of numbers"),
        ("threshold scores NaN", threshold, (nan_scores, GOLD), {}, ValueError,
         "scores[1, 2] = nan is NaN"),
        ("threshold scores > 1", threshold, (SCORES * 2, GOLD), {}, ValueError,
         "outside [0, 1]"),
        ("threshold gold length", threshold, (SCORES, GOLD[:1]), {}, ValueError,
         "gold has 1 tokens"),
        ("threshold gold range", threshold, (SCORES, np.array([0, 3])), {}, ValueError,
         "gold[1] = 3 is out of range"),
        ("threshold gold float", threshold, (SCORES, GOLD.astype(float)), {}, TypeError,
         "gold must hold integer"),
        ("threshold gold uint64 huge", threshold, (SCORES, np.array([0, 2**64 - 1],
                                                                     dtype=np.uint64)),
         {}, ValueError, "out of range"),
        ("threshold t", threshold, (SCORES, GOLD), {"threshold": 1.5}, ValueError,
         "threshold must lie in [0, 1]"),
        ("threshold t NaN", threshold, (SCORES, GOLD), {"threshold": float("nan")},
         ValueError, "threshold must lie in [0, 1]"),
        ("threshold t str", threshold, (SCORES, GOLD), {"threshold": "0.1"}, TypeError,
         "threshold must be a real number"),
        ("threshold missing_gold", threshold, (SCORES, GOLD), {"missing_gold": "x"},
         ValueError, "missing_gold must be one of"),
        ("threshold token_offset -1", threshold, (SCORES, GOLD), {"token_offset": -1},
         ValueError, "token_offset must be a non-negative integer"),
        ("threshold token_offset bool", threshold, (SCORES, GOLD), {"token_offset": True},
         ValueError, "token_offset must be a non-negative integer"),
        ("threshold token_offset float", threshold, (SCORES, GOLD), {"token_offset": 1.0},
         ValueError, "token_offset must be a non-negative integer"),
        # Entries
        ("Entries score NaN", Entries, ([np.nan], [0], [0]), {}, ValueError,
         "score contains NaN"),
        ("Entries tag shape", Entries, (X, [0], Y), {}, ValueError, "tag has shape"),
        ("Entries tag float", Entries, (X, X, Y), {}, TypeError, "tag must hold integers"),
        ("Entries tag negative", Entries, (X, [0, 1, -1, 0, 0], Y), {}, ValueError,
         "tag indices must be non-negative"),
        ("Entries tag > int32", Entries, (X, [0, 1, 2**31, 0, 0], Y), {}, ValueError,
         "int32"),
        ("Entries tag >= n_tags", Entries, (X, [0, 1, 2, 0, 0], Y), {"n_tags": 2},
         ValueError, "tag index 2 is out of range"),
        ("Entries n_tags float", Entries, (X, [0, 1, 1, 0, 0], Y), {"n_tags": 2.5},
         ValueError, "n_tags must be a positive integer"),
        ("Entries n_tokens negative", Entries, (X, [0, 1, 1, 0, 0], Y), {"n_tokens": -3},
         ValueError, "n_tokens must be a non-negative integer"),
        ("Entries label 2", Entries, (X, [0] * 5, [0, 1, 2, 0, 0]), {}, ValueError,
         "label must be 0 or 1"),
        ("Entries token float", Entries, (X, [0] * 5, Y, X), {}, TypeError,
         "token must hold integers"),
        ("Entries threshold", Entries, (X, [0] * 5, Y), {"threshold": -0.1}, ValueError,
         "threshold must lie in [0, 1]"),
        # binning
        ("bin_statistics binning", bin_statistics, (X, Y), {"binning": "quantile"},
         ValueError, "binning must be one of"),
        ("bin_statistics empty", bin_statistics, ([], []), {}, ValueError, "no points"),
        ("bin_statistics labels length", bin_statistics, (X, Y[:2]), {}, ValueError,
         "labels has 2 values"),
        ("bin_statistics fixed bin_size", bin_statistics, (X, Y),
         {"binning": "fixed", "bin_size": 2}, ValueError, "bin_size applies to equal-mass"),
        ("bin_statistics scores 2-D", bin_statistics, (SCORES, Y), {}, ValueError,
         "scores must be 1-dimensional"),
        ("bin_statistics scores object", bin_statistics,
         (np.array([0.5, None], dtype=object), Y[:2]), {}, TypeError,
         "scores must hold real numbers"),
        ("equal_mass_bins both", equal_mass_bins, (X, Y), {"n_bins": 2, "bin_size": 2},
         ValueError, "exactly one of n_bins and bin_size"),
        ("equal_mass_bin_starts n 0", equal_mass_bin_starts, (0,), {"n_bins": 2},
         ValueError, "empty set"),
        ("fixed_width_bins memory", fixed_width_bins, (X, Y), {"n_bins": 10**13},
         ValueError, "n_bins=10000000000000 fixed-width bins needs"),
        ("argsort NaN", argsort_scores, (np.array([0.1, np.nan]),), {}, ValueError,
         "scores contains NaN"),
        ("lookup boundaries unsorted", lookup_bins, (X, [0.5, 0.2]), {}, ValueError,
         "boundaries must be sorted"),
        ("lookup boundaries NaN", lookup_bins, (X, [np.nan]), {}, ValueError,
         "boundaries must be sorted ascending and not NaN"),
        ("lookup boundaries str", lookup_bins, (X, ["a"]), {}, TypeError,
         "boundaries must hold real numbers"),
        ("lookup boundaries 2-D", lookup_bins, (X, [[0.5]]), {}, ValueError,
         "boundaries must be 1-dimensional"),
        # isotonic
        ("isotonic_fit x inf", isotonic_fit, ([0.1, np.inf], [0, 1]), {}, ValueError,
         "x must be finite"),
        ("isotonic_fit y shape", isotonic_fit, (X, Y[:3]), {}, ValueError, "y has shape"),
        ("isotonic_fit y NaN", isotonic_fit, ([0.1, 0.2], [0.0, np.nan]), {}, ValueError,
         "y must be finite"),
        ("isotonic_fit y str", isotonic_fit, ([0.1, 0.2], ["a", "b"]), {}, TypeError,
         "y must hold real numbers"),
        ("isotonic_fit weights zero", isotonic_fit, (X, Y), {"sample_weight": np.zeros(5)},
         ValueError, "positive weight"),
        ("isotonic_fit weights negative", isotonic_fit, (X, Y),
         {"sample_weight": -np.ones(5)}, ValueError, "sample_weight must be finite and "
                                                     "non-negative"),
        ("isotonic_fit weights str", isotonic_fit, (X, Y), {"sample_weight": ["a"] * 5},
         TypeError, "sample_weight must hold real numbers"),
        ("isotonic_fit y_min NaN", isotonic_fit, (X, Y), {"y_min": float("nan")},
         ValueError, "y_min must not be NaN"),
        ("isotonic_fit y_max None", isotonic_fit, (X, Y), {"y_max": None}, TypeError,
         "y_max must be a real number"),
        ("isotonic_fit y_min > y_max", isotonic_fit, (X, Y), {"y_min": 1.0, "y_max": 0.0},
         ValueError, "y_min (1.0) must not exceed y_max (0.0)"),
        ("isotonic_predict x NaN", isotonic_predict, ([np.nan], *KNOTS), {}, ValueError,
         "x contains NaN"),
        ("isotonic_predict knots empty", isotonic_predict, (X, [], []), {}, ValueError,
         "non-empty 1-D arrays of one length"),
        ("isotonic_predict knots lengths", isotonic_predict, (X, [0.1, 0.2], [0.5]), {},
         ValueError, "of one length"),
        ("isotonic_predict knots unsorted", isotonic_predict, (X, [0.4, 0.1], [0.0, 1.0]),
         {}, ValueError, "x_knots must be strictly increasing"),
        ("isotonic_predict knots tied", isotonic_predict, (X, [0.1, 0.1], [0.0, 1.0]),
         {}, ValueError, "x_knots must be strictly increasing"),
        ("isotonic_predict knots NaN", isotonic_predict, (X, [0.1, np.nan], [0.0, 1.0]),
         {}, ValueError, "must be finite"),
        ("isotonic_predict knots 2-D", isotonic_predict, (X, [[0.1]], [[0.0]]), {},
         ValueError, "x_knots must be 1-dimensional"),
        # groups
        ("TagGroups empty", TagGroups, ([],), {}, ValueError, "non-empty"),
        ("TagGroups float", TagGroups, ([0.0, 1.0],), {}, TypeError,
         "tag_to_group must hold integers"),
        ("TagGroups negative", TagGroups, ([0, -1],), {}, ValueError,
         "group indices must lie in [0, 1)"),
        ("TagGroups out of range", TagGroups, ([0, 2], 2), {}, ValueError,
         "group indices must lie in [0, 2)"),
        ("TagGroups n_groups memory", TagGroups, ([0, 1], 10**15), {}, ValueError,
         "n_groups=1000000000000000 needs"),
        ("TagGroups train_counts", TagGroups, ([0, 1],), {"train_counts": [1]}, ValueError,
         "train_counts must have one count per tag"),
        ("TagGroups tag_names", TagGroups, ([0, 1],), {"tag_names": ["a"]}, ValueError,
         "tag_names must have one name per tag"),
        ("scw too many tags", TagGroups.scw, (10**15,), {}, ValueError,
         "n_tags must be at most 2**31 - 1, got 1000000000000000"),
        ("per_tag too many tags", TagGroups.per_tag, (10**15,), {}, ValueError,
         "n_tags must be at most 2**31 - 1, got 1000000000000000"),
        ("partition unknown tag", partition_by_group, ([0, 3], [0, 1, 1]), {}, ValueError,
         "tag[1] = 3 is an unknown tag"),
        ("partition tag float", partition_by_group, ([0.0], [0, 1]), {}, TypeError,
         "tag must hold integers"),
        ("partition map float", partition_by_group, ([0], [0.5, 1.0]), {}, TypeError,
         "tag_to_group must hold integers"),
        ("partition map range", partition_by_group, ([0], [0, 2], 2), {}, ValueError,
         "tag_to_group values must lie in [0, 2)"),
        ("partition n_groups memory", partition_by_group, ([0], [0, 1], 10**15), {},
         ValueError, "n_groups=1000000000000000 needs"),
    ]
    # Every size and count: not a positive integer -> ValueError naming it.
    for v in NOT_POSITIVE_INT:
        if v is None:
            continue
        c += [
            (f"equal-mass n_bins={v!r}", equal_mass_bins, (X, Y), {"n_bins": v}, ValueError,
             "n_bins must be a positive integer"),
            (f"equal-mass bin_size={v!r}", equal_mass_bins, (X, Y), {"bin_size": v},
             ValueError, "bin_size must be a positive integer"),
            (f"fixed n_bins={v!r}", fixed_width_bins, (X, Y), {"n_bins": v}, ValueError,
             "n_bins must be a positive integer"),
            (f"bin_statistics n_bins={v!r}", bin_statistics, (X, Y), {"n_bins": v},
             ValueError, "n_bins must be a positive integer"),
            (f"TagGroups n_groups={v!r}", TagGroups, ([0, 0],), {"n_groups": v}, ValueError,
             "n_groups must be a positive integer"),
            (f"scw n_tags={v!r}", TagGroups.scw, (v,), {}, ValueError,
             "n_tags must be a positive integer"),
            (f"per_tag n_tags={v!r}", TagGroups.per_tag, (v,), {}, ValueError,
             "n_tags must be a positive integer"),
            (f"partition n_groups={v!r}", partition_by_group, ([0], [0]), {"n_groups": v},
             ValueError, "n_groups must be a positive integer"),
        ]
    # Every n_threads argument.
    for v in BAD_THREADS:
        c += [
            (f"threshold n_threads={v!r}", threshold, (SCORES, GOLD), {"n_threads": v},
             ValueError, "n_threads must be a positive integer"),
            (f"bin_statistics n_threads={v!r}", bin_statistics, (X, Y), {"n_threads": v},
             ValueError, "n_threads must be a positive integer"),
            (f"argsort n_threads={v!r}", argsort_scores, (X,), {"n_threads": v}, ValueError,
             "n_threads must be a positive integer"),
            (f"lookup n_threads={v!r}", lookup_bins, (X, [0.5]), {"n_threads": v},
             ValueError, "n_threads must be a positive integer"),
            (f"isotonic_fit n_threads={v!r}", isotonic_fit, (X, Y), {"n_threads": v},
             ValueError, "n_threads must be a positive integer"),
            (f"isotonic_predict n_threads={v!r}", isotonic_predict, (X, *KNOTS),
             {"n_threads": v}, ValueError, "n_threads must be a positive integer"),
            (f"get_n_threads {v!r}", get_n_threads, (v,), {}, ValueError,
             "n_threads must be a positive integer"),
        ]
    return c


CASES = _cases()


def _snapshot(values):
    out = []
    for v in values:
        if isinstance(v, np.ndarray):
            out.append((v, v.copy()))
        elif isinstance(v, list):
            out.append((v, [list(x) if isinstance(x, list) else x for x in v]))
    return out


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input(case):
    _, func, args, kwargs, exc, fragment = case
    before = _snapshot(list(args) + list(kwargs.values()))
    with pytest.raises(exc) as info:
        func(*args, **kwargs)
    assert fragment in str(info.value)
    for value, copy in before:
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(value, copy)
        else:
            assert value == copy or all(a is b or a == b for a, b in zip(value, copy))


def test_unreadable_array_named():
    # An object NumPy cannot read (like a GPU tensor) gets one message naming the argument.
    class NoArray:
        def __array__(self, dtype=None, copy=None):
            raise TypeError("can't convert cuda:0 device type tensor to numpy")

    with pytest.raises(TypeError, match="scores cannot be read as a NumPy array"):
        threshold(NoArray(), GOLD)
    with pytest.raises(TypeError, match="scores cannot be read as a NumPy array"):
        bin_statistics(NoArray(), Y)
    with pytest.raises(TypeError, match="labels cannot be read as a NumPy array"):
        bin_statistics(X, NoArray())
    with pytest.raises(TypeError, match="x cannot be read as a NumPy array"):
        isotonic_predict(NoArray(), *KNOTS)


@pytest.mark.parametrize("gold,where", [
    ([[0, 1], [1, 0, 1]], "row 1 has 3 values, row 0 has 2 values"),
    ([[0], [1], [1, 0]], "row 2 has 2 values, row 0 has 1 value"),
    ([[], [1]], "row 1 has 1 value, row 0 has 0 values"),
    ([[[1, 2], [3, 4]], [[1, 2], [3]]], r"row 1\[1\] has 1 value, row 0\[0\] has 2 values"),
    ([[[1, 2]], [[1, 2, 3]]], r"row 1\[0\] has 3 values, row 0\[0\] has 2 values"),
    ([[1, [2]], [1, 2]], r"row 0\[1\] has 1 value, row 0\[0\] is a single value"),
])
def test_ragged_input_names_the_argument_and_the_first_odd_row(gold, where):
    # issue 25: not NumPy's "inhomogeneous shape after 1 dimensions"
    with pytest.raises(ValueError, match=r"^gold is not an array of numbers: it is ragged "
                                         rf"\(rows of different lengths\): {where}$"):
        threshold(np.full((2, 2), 0.5), gold)


def test_tensor_requiring_grad_named():
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="scores cannot be read as a NumPy array"):
        bin_statistics(torch.tensor(X, requires_grad=True), Y)


# -- thread counts ----------------------------------------------------------- #

@pytest.fixture
def fresh_warning(monkeypatch):
    """The clamp warning is issued once per process: reset it for this test."""
    monkeypatch.setattr(threads, "_warned", False)


@pytest.mark.parametrize("value", [10**6, 2**40, np.int64(2**62), 2**100])
def test_huge_thread_counts_are_clamped(fresh_warning, value):
    # Formerly: an OpenMP segfault (lookup), a 107 GiB histogram (sort) or an
    # OverflowError converting to a C int.
    with pytest.warns(RuntimeWarning, match=f"n_threads={value} is more than 4 threads per "
                                            "CPU"):
        assert check_n_threads(value) == max_threads()
    perm, _ = argsort_scores(X, n_threads=value)   # no second warning, no crash
    np.testing.assert_array_equal(perm, np.argsort(X, kind="stable"))
    np.testing.assert_array_equal(lookup_bins(X, [0.5], n_threads=value), X >= 0.5)
    np.testing.assert_array_equal(threshold(SCORES, GOLD, n_threads=value).tag,
                                  threshold(SCORES, GOLD, n_threads=1).tag)


def test_clamp_warns_once(fresh_warning):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            check_n_threads(10**6)
    assert len(caught) == 1


def test_cap_is_four_threads_per_cpu(monkeypatch):
    monkeypatch.setattr(threads, "_usable_cpus", lambda: 3)
    assert max_threads() == 12 and check_n_threads(12) == 12


@pytest.mark.parametrize("value", ["abc", "0", "-1", "2.5", "1e3", "true", "0x10"])
def test_bad_thread_variable(monkeypatch, value):
    monkeypatch.setenv("SPARSECAL_NUM_THREADS", value)
    with pytest.raises(ValueError, match="SPARSECAL_NUM_THREADS must be a positive integer, "
                                         "got"):
        env_n_threads()
    # checked whenever the default is used, whatever the input size
    with pytest.raises(ValueError, match="SPARSECAL_NUM_THREADS"):
        get_n_threads(n_items=10)
    with pytest.raises(ValueError, match="SPARSECAL_NUM_THREADS"):
        argsort_scores(X)
    assert get_n_threads(2) == 2   # an explicit count does not read it


def test_thread_variable_message_quotes_the_value(monkeypatch):
    monkeypatch.setenv("SPARSECAL_NUM_THREADS", "abc")
    with pytest.raises(ValueError) as info:
        env_n_threads()
    assert str(info.value) == "SPARSECAL_NUM_THREADS must be a positive integer, got 'abc'"


def test_huge_thread_variable_clamped(monkeypatch, fresh_warning):
    monkeypatch.setenv("SPARSECAL_NUM_THREADS", str(10**9))
    with pytest.warns(RuntimeWarning, match="SPARSECAL_NUM_THREADS=1000000000"):
        assert env_n_threads() == max_threads()


@pytest.mark.parametrize("value", ["", "  ", " 3 "])
def test_blank_or_padded_thread_variable(monkeypatch, value):
    monkeypatch.setenv("SPARSECAL_NUM_THREADS", value)
    assert env_n_threads() == (3 if value.strip() else None)
