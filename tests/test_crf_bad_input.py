"""Bad input to every ``sparsecal.crf`` entry point: one clear error naming the
argument, raised before any work, and the caller's inputs left unchanged
(values, dtype, ``requires_grad``, ``grad``), for tensors and NumPy arrays alike.
"""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sparsecal import crf  # noqa: E402

F64 = torch.float64
B, N, C = 4, 5, 3


def valid():
    g = torch.Generator().manual_seed(0)
    return dict(emissions=torch.randn(B, N, C, generator=g, dtype=F64).requires_grad_(True),
                transitions=torch.randn(C, C, generator=g, dtype=F64),
                lengths=torch.tensor([5, 2, 1, 3]),
                start=torch.randn(C, generator=g, dtype=F64),
                end=torch.randn(C, generator=g, dtype=F64))


def _stream(n_threads=None, **kw):
    """stream_entries on one batch of the inputs (gold of shape (B, N))."""
    batch = dict(gold=torch.zeros(B, N, dtype=torch.int64), **kw)
    return crf.stream_entries([batch], n_threads=n_threads)


ENTRY_POINTS = {
    "marginals": crf.marginals,
    "pair_marginals": crf.pair_marginals,
    "log_partition": lambda **kw: crf.log_partition(backend="lean", **kw),
    "span_marginals": lambda **kw: crf.span_marginals(  # a span in every sentence
        batch_index=list(range(B)), span_start=[0] * B, tags=[[0]] * B, **kw),
    "viterbi": crf.viterbi,
    "kbest": lambda **kw: crf.kbest(k=2, **kw),
    "stream_entries": _stream,
}


def _set(key, value):
    return lambda kw: kw.update({key: value})


def _poke(key, idx, value):
    def edit(kw):
        x = kw[key].detach().clone()
        x[idx] = value
        kw[key] = x
    return edit


def _no_path(kw):
    e = kw["emissions"].detach().clone()
    e[2, 0] = -math.inf                      # sentence 2: every tag impossible
    kw["emissions"] = e


def _drop_lengths_add(mask):
    def edit(kw):
        kw.pop("lengths")
        kw["mask"] = mask
    return edit


prefix = torch.arange(N)[None] < torch.tensor([5, 2, 1, 3])[:, None]
holes = prefix.clone()
holes[0, 2] = False
empty_row = prefix.clone()
empty_row[1] = False

# (id, edit of the valid inputs, exception, message fragment)
BAD = [
    ("emissions-2d", _set("emissions", torch.zeros(B, N, dtype=F64)), ValueError,
     "emissions must be 3-dimensional"),
    ("emissions-empty", _set("emissions", torch.zeros(B, N, 0, dtype=F64)), ValueError,
     "emissions is empty"),
    ("emissions-int", _set("emissions", torch.zeros(B, N, C, dtype=torch.int64)), TypeError,
     "emissions must be float32 or float64, got dtype torch.int64"),
    ("emissions-f16", _set("emissions", torch.zeros(B, N, C, dtype=torch.float16)),
     TypeError, "emissions must be float32 or float64, got dtype torch.float16"),
    ("emissions-bf16", _set("emissions", torch.zeros(B, N, C, dtype=torch.bfloat16)),
     TypeError, "emissions must be float32 or float64, got dtype torch.bfloat16"),
    ("emissions-object", _set("emissions", np.array([[[None]]])), TypeError,
     "emissions must be a numeric array"),
    ("emissions-nan", _poke("emissions", (0, 2, 1), math.nan), ValueError,
     "emissions[0, 2, 1] is NaN"),
    ("emissions-posinf", _poke("emissions", (3, 1, 0), math.inf), ValueError,
     "emissions[3, 1, 0] is +inf"),
    ("emissions-huge", _poke("emissions", (1, 0, 2), 1e308), ValueError,
     "emissions[1, 0, 2] = 1e+308 is too large in magnitude"),
    ("emissions-huge-negative", _poke("emissions", (1, 0, 2), -1e308), ValueError,
     "emissions[1, 0, 2] = -1e+308 is too large in magnitude"),
    ("emissions-huge-f32", lambda kw: kw.update(
        emissions=torch.full((B, N, C), 1e38, dtype=torch.float32)), ValueError,
     "is too large in magnitude: finite potentials must lie within +-1.42e+37"),
    ("transitions-shape", _set("transitions", torch.zeros(C, C + 1, dtype=F64)), ValueError,
     "transitions has shape (3, 4), expected (3, 3)"),
    ("transitions-int", _set("transitions", torch.zeros(C, C, dtype=torch.int64)), TypeError,
     "transitions must be float32 or float64"),
    ("transitions-f16", _set("transitions", torch.zeros(C, C, dtype=torch.float16)),
     TypeError, "transitions must be float32 or float64"),
    ("transitions-nan", _poke("transitions", (1, 1), math.nan), ValueError,
     "transitions[1, 1] is NaN"),
    ("transitions-posinf", _poke("transitions", (0, 2), math.inf), ValueError,
     "transitions[0, 2] is +inf"),
    ("start-shape", _set("start", torch.zeros(C + 1, dtype=F64)), ValueError,
     "start has shape (4,), expected (3,)"),
    ("start-nan", _poke("start", 0, math.nan), ValueError, "start[0] is NaN"),
    ("start-int", _set("start", torch.zeros(C, dtype=torch.int32)), TypeError,
     "start must be float32 or float64"),
    ("end-shape", _set("end", torch.zeros(C - 1, dtype=F64)), ValueError,
     "end has shape (2,), expected (3,)"),
    ("end-posinf", _poke("end", 2, math.inf), ValueError, "end[2] is +inf"),
    ("allowed-float", _set("allowed", torch.ones(C, C)), TypeError,
     "allowed must be a boolean mask"),
    ("allowed-shape", _set("allowed", torch.ones(C, 2, dtype=torch.bool)), ValueError,
     "allowed has shape (3, 2), expected (3, 3)"),
    ("lengths-too-long", _set("lengths", torch.tensor([5, 6, 1, 1])), ValueError,
     "lengths[1] = 6 exceeds the padded length N=5"),
    ("lengths-zero", _set("lengths", torch.tensor([5, 0, 1, 1])), ValueError,
     "lengths[1] = 0: every sentence needs at least 1 token"),
    ("lengths-negative", _set("lengths", torch.tensor([5, 2, -3, 1])), ValueError,
     "lengths[2] = -3"),
    ("lengths-float", _set("lengths", torch.tensor([5.0, 2, 1, 3])), TypeError,
     "lengths must hold integers"),
    ("lengths-shape", _set("lengths", torch.tensor([5, 2])), ValueError,
     "lengths has shape (2,), expected (4,)"),
    ("mask-holes", _drop_lengths_add(holes), ValueError,
     "mask row 0 is not a run of leading Trues"),
    ("mask-empty-row", _drop_lengths_add(empty_row), ValueError,
     "mask row 1 is all False"),
    ("mask-float", _drop_lengths_add(prefix.double()), TypeError, "mask must be boolean"),
    ("mask-shape", _drop_lengths_add(prefix[:, :4]), ValueError,
     "mask has shape (4, 4), expected (4, 5)"),
    ("mask-disagrees", _set("mask", torch.arange(N)[None] < torch.tensor([5, 2, 1, 2])[:, None]),
     ValueError, "lengths and mask disagree"),
    ("no-path-emissions", _no_path, ValueError,
     "sentence 2 (length 1) has no tag sequence with a finite score"),
    ("no-path-transitions", _set("allowed", torch.zeros(C, C, dtype=torch.bool)),
     ValueError, "sentence 0 (length 5) has no tag sequence"),
    ("n_threads-negative", _set("n_threads", -1), ValueError,
     "n_threads must be a positive integer, got -1"),
    ("n_threads-float", _set("n_threads", 2.5), ValueError,
     "n_threads must be a positive integer, got 2.5"),
    ("n_threads-bool", _set("n_threads", True), ValueError,
     "n_threads must be a positive integer, got True"),
    ("n_threads-str", _set("n_threads", "4"), ValueError,
     "n_threads must be a positive integer, got '4'"),
]


def _snapshot(kw):
    return {k: (v.detach().clone(), v.dtype, v.requires_grad, v.grad)
            for k, v in kw.items() if torch.is_tensor(v)}


def _assert_unchanged(kw, snap):
    for k, (x, dtype, rg, grad) in snap.items():
        v = kw[k]
        assert v.dtype == dtype and v.requires_grad == rg and v.grad is grad, k
        assert torch.equal(v.detach(), x) or (
            v.is_floating_point() and torch.allclose(v.detach(), x, equal_nan=True)
            and bool((v.detach().isnan() == x.isnan()).all())), k


def _call(entry, kw):
    return ENTRY_POINTS[entry](**kw)


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("case_id, edit, exc, fragment", BAD, ids=[b[0] for b in BAD])
def test_bad_input_matrix(entry, case_id, edit, exc, fragment):
    kw = valid()
    edit(kw)
    snap = _snapshot(kw)
    with pytest.raises(exc) as info:
        _call(entry, kw)
    assert fragment in str(info.value), str(info.value)
    _assert_unchanged(kw, snap)


@pytest.mark.parametrize("case_id, edit, exc, fragment",
                         [b for b in BAD if not b[0].startswith(("n_threads", "emissions-object"))],
                         ids=[b[0] for b in BAD
                              if not b[0].startswith(("n_threads", "emissions-object"))])
def test_numpy_inputs_give_the_same_errors(case_id, edit, exc, fragment):
    """NumPy arrays are read like tensors: the same error, the same message."""
    if case_id == "emissions-bf16":
        pytest.skip("NumPy has no bfloat16")
    kw = valid()
    edit(kw)
    kw = {k: v.detach().numpy() if torch.is_tensor(v) else v for k, v in kw.items()}
    with pytest.raises(exc) as info:
        crf.marginals(**kw)
    assert fragment in str(info.value), str(info.value)


@pytest.mark.parametrize("backend", ["lean", "torch-struct"])
def test_no_path_log_partition(backend):
    """log_partition: "log" gives -inf for a sentence without a path
    (documented, differentiable); the other backends raise naming it."""
    kw = valid()
    _no_path(kw)
    z = crf.log_partition(backend="log", **kw)
    assert z[2] == -math.inf and torch.isfinite(z[[0, 1, 3]]).all()
    with pytest.raises(ValueError, match="sentence 2"):
        crf.log_partition(backend=backend, **kw)


@pytest.mark.parametrize("entry", ["marginals", "pair_marginals", "stream_entries"])
def test_unknown_backend(entry):
    kw = valid()
    with pytest.raises(ValueError, match="backend must be one of"):
        if entry == "stream_entries":
            crf.stream_entries([], backend="nope")
        else:
            getattr(crf, entry)(backend="nope", **kw)
    with pytest.raises(ValueError, match="backend must be one of"):
        crf.span_marginals(batch_index=0, span_start=0, tags=[0], backend="torch-struct",
                           **kw)


@pytest.mark.parametrize("k", [0, -1, 2.5, True, "3"])
def test_kbest_bad_k(k):
    kw = valid()
    with pytest.raises(ValueError, match="k must be a positive integer"):
        crf.kbest(k=k, **kw)


def test_stream_entries_ragged_lists_name_the_batch_and_the_row():
    """Issue 25: ragged per-sentence lists get one message naming the argument, the
    batch and the first row (sentence) of another length, not NumPy's."""
    e, t = torch.zeros(2, 3, 2), torch.zeros(2, 2)
    good = dict(emissions=e, transitions=t, gold=[[0, 1, 1], [1, 0, -1]])
    with pytest.raises(ValueError, match=r"^gold of batch 1 is not an array of numbers: it "
                                         r"is ragged \(rows of different lengths\): row 1 "
                                         r"has 2 values, row 0 has 3 values$"):
        crf.stream_entries([good, dict(good, gold=[[0, 1, 1], [1, 0]])])
    with pytest.raises(ValueError, match=r"^batch 0: lengths is not an array .* row 1 has "
                                         r"2 values, row 0 has 1 value$"):
        crf.stream_entries([dict(good, lengths=[[3], [2, 1]])])
    with pytest.raises(ValueError, match=r"^batch 0: emissions is not an array .* row "
                                         r"1\[0\] has 1 value, row 0\[0\] has 2 values$"):
        crf.stream_entries([dict(good, emissions=[[[0.0, 1.0]], [[0.0]]])])
    with pytest.raises(ValueError, match=r"^batch 0: lengths\[1\] = 0"):  # others too
        crf.stream_entries([dict(good, lengths=[3, 0])])
    with pytest.raises(ValueError, match="emissions is not an array of numbers: it is "
                                         r"ragged .* row 1\[0\] has 1 value"):
        crf.marginals([[[0.0, 1.0]], [[0.0]]], t)


def test_kbest_numpy_integer_k():
    kw = valid()
    paths, probs = crf.kbest(k=np.int64(2), **kw)
    assert paths.shape == (B, 2, N)


@pytest.mark.parametrize("value", ["abc", "-2", "2.5"])
def test_bad_thread_variable(monkeypatch, value):
    monkeypatch.setenv("SPARSECAL_NUM_THREADS", value)
    with pytest.raises(ValueError, match="SPARSECAL_NUM_THREADS must be a positive integer"):
        crf.marginals(**valid())


def test_huge_n_threads_is_clamped_and_restored():
    """torch.set_num_threads(10**6) crashes the process at the next matrix
    product: the CRF clamps to the CPUs available, and restores the setting."""
    before = torch.get_num_threads()
    m = crf.marginals(n_threads=10**6, **valid())
    assert torch.isfinite(m).all() and torch.get_num_threads() == before


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_valid_calls_leave_inputs_unchanged(entry):
    """Huge potentials and -inf entries, requires_grad inputs: unchanged after
    every entry point, and no gradient attached to them."""
    kw = valid()
    e = kw["emissions"].detach() * 1e20
    e[1, 1, 0] = -math.inf
    kw["emissions"] = e.requires_grad_(True)
    kw["transitions"] = kw["transitions"].clone().requires_grad_(True)
    kw["allowed"] = torch.ones(C, C, dtype=torch.bool)
    kw["allowed"][0, 1] = False
    snap = _snapshot(kw)
    _call(entry, kw)
    _assert_unchanged(kw, snap)


def test_mixed_float_dtypes_cast_to_emissions():
    """float64 transitions with float32 emissions (and the reverse) are cast to
    the emissions' dtype, as documented."""
    kw = valid()
    kw["emissions"] = kw["emissions"].detach().float()
    m = crf.marginals(**kw)
    assert m.dtype == torch.float32
    kw["transitions"] = kw["transitions"].float()
    kw["emissions"] = kw["emissions"].double()
    assert crf.marginals(**kw).dtype == F64
