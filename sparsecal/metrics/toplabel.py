"""Top-label calibration: one prediction per token, its highest-scoring tag
(Jagannatha & Yu 2020; Kranzlein et al. 2021, Section 3.2)."""
import numpy as np

from .binary import calibration_error
from ..core.entries import check_entries
from .._docs import fill_doc
from ..core.dispatch import takes_data

__all__ = ["top_label", "top_label_ece"]


@takes_data
def top_label(entries):
    """Per token with any entry, its highest score (ties: the first tag) and whether
    that tag is gold; threshold at 0 to keep every token.

    Parameters
    ----------
    entries : Entries
        With tokens, in token order (as :func:`sparsecal.threshold` returns them).

    Returns
    -------
    confidence : ndarray (dtype of the scores)
    correct : ndarray of uint8

    Examples
    --------
    >>> from sparsecal import threshold
    >>> [a.tolist() for a in top_label(threshold([[0.6, 0.4], [0.1, 0.9]], [0, 0], 0.0))]
    [[0.6, 0.9], [1, 0]]
    """
    entries = check_entries(entries)
    if entries.token is None:
        raise ValueError("top-label calibration needs the token of each entry")
    step = np.diff(entries.token)
    if (step < 0).any():
        raise ValueError("entries must be in token order (as threshold() returns them)")
    new_token = np.concatenate(([True], step != 0))
    best = np.maximum.reduceat(entries.score, np.flatnonzero(new_token))
    token_id = np.cumsum(new_token) - 1
    tied = np.flatnonzero(entries.score == best[token_id])   # every token's best entries
    winner = tied[np.concatenate(([True], np.diff(token_id[tied]) != 0))]   # the first
    return entries.score[winner], entries.label[winner]


@takes_data
@fill_doc
def top_label_ece(entries, *, n_bins=20, binning="fixed", norm=1, ci=None):
    """Top-label ECE: the CE of each token's argmax entry (Jagannatha & Yu 2020).

    Parameters
    ----------
    {entries}
    n_bins : int, default=20
    binning : {"fixed", "equal-mass"}, default="fixed"
    norm : {1, 2, inf}, default=1
    {ci}

    Returns
    -------
    CalibrationError

    Examples
    --------
    >>> from sparsecal import threshold
    >>> from sparsecal.datasets.synthetic import make_tagger_outputs
    >>> data = make_tagger_outputs(2000, n_tags=40, split_seed=1)
    >>> top_label_ece(threshold(data.scores, data.gold, 0.0)).n
    2000
    """
    conf, correct = top_label(entries)
    return calibration_error(conf, correct, norm=norm, binning=binning, n_bins=n_bins, ci=ci)
