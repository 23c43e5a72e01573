"""sparsecal.adapters.torchmetrics: the metrics accumulated batch by batch, and over
two gloo processes, equal the package's functions on the whole data at once."""
import socket

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import sparsecal as sc
from sparsecal.adapters import GMCEMetric, SMCEMetric, TopLabelECEMetric

C = 12
GROUPS = sc.TagGroups.from_counts(np.arange(C) ** 3, n_groups=3)


def _batches(seed, n=6):
    """``n`` batches of ``probs [B, T, C]`` and ``target [B, T]`` with -100 padding,
    some gold -1 and ties."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for k in range(n):
        B, T = 2 + k % 3, 3 + k
        probs = torch.softmax(torch.randn(B, T, C, generator=g) * 3, -1)
        probs[0, 0] = 1.0 / C   # a row of ties: top-label takes tag 0
        target = torch.randint(0, C, (B, T), generator=g)
        target[torch.rand(B, T, generator=g) < 0.2] = -100
        target[0, 1] = -1
        out.append((probs, target))
    return out


def _reference(batches, t):
    """Entries of the kept rows of every batch, thresholded by sparsecal."""
    p = torch.cat([b.reshape(-1, C) for b, _ in batches]).numpy()
    gold = torch.cat([y.reshape(-1) for _, y in batches]).numpy()
    keep = gold != -100
    return sc.threshold(p[keep], gold[keep], t), sc.threshold(p[keep], gold[keep], 0.0)


def _metrics():
    return (SMCEMetric(C, threshold=0.02, n_bins=7), GMCEMetric(GROUPS, threshold=0.02, n_bins=5),
            TopLabelECEMetric(C, n_bins=6))


def _expected(batches):
    ent, dense = _reference(batches, 0.02)
    return (sc.smce(ent, n_bins=7).value, [g.value for g in sc.gmce(ent, GROUPS, n_bins=5)],
            sc.top_label_ece(dense, n_bins=6).value, ent)


def test_updates_equal_the_functions_on_all_the_data():
    batches = _batches(0)
    metrics = _metrics()
    for probs, target in batches:
        for m in metrics:
            m.update(probs, target)
    smce, gmce, top, ent = _expected(batches)
    assert metrics[0].compute().item() == pytest.approx(smce, abs=1e-12)
    np.testing.assert_allclose(metrics[1].compute().numpy(), gmce, atol=1e-12)
    assert metrics[2].compute().item() == pytest.approx(top, abs=1e-12)
    got = metrics[0].entries()   # tokens shifted by the rows of the earlier updates
    for name in ("score", "tag", "label", "token"):
        np.testing.assert_array_equal(getattr(got, name), getattr(ent, name))
    assert got.n_tokens == ent.n_tokens
    top_entries = metrics[2].entries()   # one entry per kept row
    assert len(top_entries) == ent.n_tokens == top_entries.n_tokens
    np.testing.assert_array_equal(top_entries.token, np.arange(ent.n_tokens))


def test_empty_group_is_nan_and_reset_forgets():
    m = GMCEMetric(sc.TagGroups([0, 0, 1]), threshold=0.5, n_bins=2)
    m.update(torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1]]), torch.tensor([0, 2]))
    value = m.compute()
    # bins {0.7: gold} and {0.8: not gold}
    assert value[0].item() == pytest.approx((0.5 * 0.3 ** 2 + 0.5 * 0.8 ** 2) ** 0.5) and np.isnan(value[1].item())
    m.reset()
    m.update(torch.tensor([[0.2, 0.2, 0.6]]), torch.tensor([2]))
    assert m.entries().tag.tolist() == [2] and m.entries().n_tokens == 1


@pytest.mark.parametrize("probs, target, match", [
    (torch.full((2, 4), 0.25), torch.tensor([0, 1]), "probs has shape"),
    (torch.full((3, 3), 1 / 3), torch.tensor([0, 1]), "probs has shape"),
    (torch.tensor([[2.0, -1.0, 0.0]]), torch.tensor([0]), "probabilities"),
    (torch.tensor([[1, 0, 0]]), torch.tensor([0]), "floating point"),
])
def test_bad_input_names_the_argument(probs, target, match):
    with pytest.raises((ValueError, TypeError), match=match):
        SMCEMetric(3).update(probs, target)


def _worker(rank, port, seed, out, split):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=2)
    try:
        batches = _batches(seed)
        mine = batches[:split] if rank == 0 else batches[split:]   # unequal, or none
        metrics = _metrics()
        for probs, target in mine:
            for m in metrics:
                m.update(probs, target)
        values = [m.compute().numpy() for m in metrics]
        with metrics[0].sync_context():   # every process's entries
            ent = metrics[0].entries()
        np.savez(f"{out}/{rank}.npz", smce=values[0], gmce=values[1], top=values[2],
                 token=ent.token, score=ent.score)
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("split", [2, 6])   # rank 1 with 4 batches, or idle
def test_two_gloo_processes_give_the_single_process_numbers(tmp_path, split):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(_worker, args=(port, 3, str(tmp_path), split), nprocs=2, join=True)
    smce, gmce, top, ent = _expected(_batches(3))   # rank 0's batches, then rank 1's
    for rank in (0, 1):
        got = np.load(tmp_path / f"{rank}.npz")
        assert float(got["smce"]) == pytest.approx(smce, abs=1e-12)
        np.testing.assert_allclose(got["gmce"], gmce, atol=1e-12)
        assert float(got["top"]) == pytest.approx(top, abs=1e-12)
        np.testing.assert_array_equal(got["token"], ent.token)
        np.testing.assert_array_equal(got["score"], ent.score)
