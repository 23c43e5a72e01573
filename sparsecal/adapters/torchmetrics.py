"""torchmetrics ``Metric`` classes: SMCE, GMCE and top-label ECE accumulated by
``update()`` over batches (and processes) and exact at ``compute()``.

Only the thresholded entries are kept, as list states reduced by ``"cat"``. Token
ids: each ``update()`` numbers its rows from 0 and records its entry and row
counts; ``compute()`` (after a sync, which concatenates every state in rank
order) shifts each update's rows past the rows of the updates before it, so every
row of every process is one token. A process without updates joins a sync with
empty states (scores in torch's default dtype, float32 unless changed, like every
process's probabilities).
"""
import numpy as np

from .._extras import require
from ..core.entries import Entries
from ..core.groups import check_groups
from ..core.validation import check_n_tags, check_unit_interval
from ..metrics.binary import calibration_error
from ..metrics.marginal import check_ce_options, smce, smce_and_gmce
from ..metrics.toplabel import top_label

torch = require("torch", "torchmetrics", "sparsecal.adapters.torchmetrics")
_tm = require("torchmetrics", "torchmetrics", "sparsecal.adapters.torchmetrics")

__all__ = ["GMCEMetric", "SMCEMetric", "TopLabelECEMetric"]

_STATES = ("score", "tag", "label", "token", "n_entries", "n_rows")


class _EntryMetric(_tm.Metric):
    """Thresholded entries of ``probs [..., n_tags]`` against ``target [...]``."""

    is_differentiable = False
    higher_is_better = False
    full_state_update = False

    def __init__(self, n_tags, *, threshold=0.01, ignore_index=-100, **kwargs):
        super().__init__(**kwargs)
        self.n_tags = check_n_tags(n_tags)
        self.threshold = check_unit_interval(threshold, "threshold")
        self.ignore_index = int(ignore_index)
        for name in _STATES:
            self.add_state(name, default=[], dist_reduce_fx="cat")

    def update(self, probs, target):
        """Keep the entries ``probs >= threshold`` of the rows whose ``target`` is
        not ``ignore_index`` (``-1``: gold outside the inventory, all negatives)."""
        probs, target = probs.detach(), target.detach()
        if probs.shape[-1] != self.n_tags or probs.shape[:-1] != target.shape:
            raise ValueError(f"probs has shape {tuple(probs.shape)}, expected "
                             f"{tuple(target.shape)} + ({self.n_tags},) (target's shape "
                             "and n_tags)")
        if not probs.is_floating_point() or target.is_floating_point():
            raise TypeError("probs must be floating point and target integer")
        keep = target.reshape(-1) != self.ignore_index
        p, gold = probs.reshape(-1, self.n_tags)[keep], target.reshape(-1)[keep]
        if p.numel() and not ((p >= 0) & (p <= 1)).all():
            raise ValueError("probs must be probabilities in [0, 1] (apply softmax first)")
        row, tag = torch.nonzero(self._kept(p), as_tuple=True)   # row-major order
        self.score.append(p[row, tag])
        self.tag.append(tag.to(torch.int64))
        self.label.append((tag == gold[row]).to(torch.int64))
        self.token.append(row.to(torch.int64))
        self.n_entries.append(torch.tensor([row.numel()], device=p.device))
        self.n_rows.append(torch.tensor([p.shape[0]], device=p.device))

    def _kept(self, p):
        return p >= self.threshold

    def extra_repr(self):
        """``n_tags``, ``threshold`` and the entries kept so far (in torch's repr)."""
        kept = sum(int(n.sum()) for n in self.n_entries) if isinstance(
            self.n_entries, list) else int(self.n_entries.sum())
        return f"n_tags={self.n_tags}, threshold={self.threshold:g}, entries={kept}"

    def sync(self, *args, **kwargs):
        """torchmetrics' ``Metric.sync``, an idle process's states typed empty ones."""
        # torchmetrics gives an idle process float states of the metric's dtype,
        # which gloo/NCCL cannot gather with the others' integers
        for name in _STATES:
            state = getattr(self, name)
            if isinstance(state, list) and not state:
                dtype = torch.get_default_dtype() if name == "score" else torch.int64
                state.append(torch.zeros(0, dtype=dtype, device=self.device))
        return super().sync(*args, **kwargs)

    def entries(self):
        """This process's entries so far (every process's inside
        ``with metric.sync_context():``), tokens numbered as the module says.

        Returns
        -------
        Entries
        """
        s = {name: _numpy(getattr(self, name)) for name in _STATES}
        counts, rows = s["n_entries"].astype(np.int64), s["n_rows"].astype(np.int64)
        start = np.cumsum(rows) - rows
        token = s["token"].astype(np.int64) + np.repeat(start, counts)
        score = s["score"] if s["score"].dtype.kind == "f" else s["score"].astype(np.float32)
        return Entries(score, s["tag"].astype(np.int64), s["label"].astype(np.uint8), token,
                       n_tags=self.n_tags, n_tokens=int(rows.sum()), threshold=self.threshold)


def _numpy(state):
    """A cat state (a list of tensors before a sync, one tensor after) as NumPy."""
    if isinstance(state, list):
        state = torch.cat(state) if state else torch.zeros(0)
    return state.cpu().numpy()


class SMCEMetric(_EntryMetric):
    """SMCE (:func:`sparsecal.smce`) of the entries of every ``update()``.

    Parameters
    ----------
    n_tags : int
        The last dimension of ``probs``.
    threshold : float, default 0.01
    ignore_index : int, default -100
        Rows with this ``target`` are not tokens.
    n_bins, bin_size, binning, norm, debias
        As in :func:`sparsecal.smce`.
    **kwargs
        torchmetrics ``Metric`` options (``sync_on_compute``, ...).

    Examples
    --------
    >>> import torch
    >>> m = SMCEMetric(3, threshold=0.0, n_bins=2)
    >>> m.update(torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1]]), torch.tensor([0, 2]))
    >>> round(float(m.compute()), 4)
    0.2333
    """

    def __init__(self, n_tags, *, threshold=0.01, ignore_index=-100, n_bins=None,
                 bin_size=None, binning="equal-mass", norm=2, debias=False, **kwargs):
        super().__init__(n_tags, threshold=threshold, ignore_index=ignore_index, **kwargs)
        check_ce_options(n_bins, bin_size, binning, norm, debias, None)
        self.options = dict(n_bins=n_bins, bin_size=bin_size, binning=binning, norm=norm,
                            debias=debias)

    def compute(self):
        """The SMCE of every update's entries (every process's), a float64 tensor."""
        return torch.tensor(smce(self.entries(), **self.options).value, dtype=torch.float64)


class GMCEMetric(SMCEMetric):
    """GMCE (:func:`sparsecal.gmce`): one value per tag group, NaN for a group
    without entries.

    Parameters
    ----------
    groups : TagGroups
        Over ``n_tags`` tags (``TagGroups.from_counts`` of the training counts).
    threshold, ignore_index, n_bins, bin_size, binning, norm, debias, **kwargs
        As in :class:`SMCEMetric`.

    Examples
    --------
    >>> import torch
    >>> from sparsecal import TagGroups
    >>> m = GMCEMetric(TagGroups([0, 0, 1]), threshold=0.0, n_bins=2)
    >>> m.update(torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1]]), torch.tensor([0, 2]))
    >>> m.compute().round(decimals=4).tolist()
    [0.2062, 0.6403]
    """

    def __init__(self, groups, **kwargs):
        check_groups(groups)
        super().__init__(groups.tag_to_group.size, **kwargs)
        self.groups = groups

    def extra_repr(self):
        return f"n_groups={self.groups.n_groups}, {super().extra_repr()}"

    def compute(self):
        """One GMCE per group (NaN: no entries), a float64 tensor."""
        per_group = smce_and_gmce(self.entries(), self.groups, pooled=False,
                                  **self.options)[1]
        return torch.tensor([np.nan if g is None else g.value for g in per_group],
                            dtype=torch.float64)


class TopLabelECEMetric(_EntryMetric):
    """Top-label ECE (:func:`sparsecal.top_label_ece`) of every row's argmax; keeps
    one entry per row (its highest score, the first of ties) whatever the tagset.

    Parameters
    ----------
    n_tags : int
    ignore_index : int, default -100
    n_bins, binning, norm
        As in :func:`sparsecal.top_label_ece`.
    **kwargs
        torchmetrics ``Metric`` options.

    Examples
    --------
    >>> import torch
    >>> m = TopLabelECEMetric(3, n_bins=2)
    >>> m.update(torch.tensor([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1]]), torch.tensor([0, 2]))
    >>> round(float(m.compute()), 4)
    0.25
    """

    def __init__(self, n_tags, *, ignore_index=-100, n_bins=20, binning="fixed", norm=1,
                 **kwargs):
        super().__init__(n_tags, threshold=0.0, ignore_index=ignore_index, **kwargs)
        check_ce_options(n_bins, None, binning, norm, False, None)
        self.options = dict(n_bins=n_bins, binning=binning, norm=norm)

    def _kept(self, p):
        best = p.argmax(-1, keepdim=True)   # the first of ties
        return torch.zeros_like(p, dtype=torch.bool).scatter(-1, best, True)

    def compute(self):
        """The top-label ECE of every update's rows, a float64 tensor."""
        conf, correct = top_label(self.entries())
        return torch.tensor(calibration_error(conf, correct, **self.options).value,
                            dtype=torch.float64)
