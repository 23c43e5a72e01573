"""A deployable cross-fitted ensemble: the average of K fold calibrators, as
scikit-learn's ``CalibratedClassifierCV(ensemble=True)``, so that the set-up
evaluated by :func:`~sparsecal.calibration.grouped.cross_fit_predict` is the
one deployed, up to the averaging.
"""
import re

import numpy as np

from .._docs import fill_doc
from ..core.dispatch import takes_data
from ..core.entries import Entries
from ..core.validation import check_positive_int, check_unit_interval
from ..io.calibrators import (ENSEMBLE_FORMAT, StateError, StateFields, check_count, check_fields,
                              describe, load_state, save_state)
from .base import Estimator, clone
from .folds import check_n_folds, stratified_token_folds
from .grouped import EntryTransformer, GroupedCalibrator, check_grouped, fold_models

__all__ = ["CrossFittedCalibrator"]

_MEMBER_KEY = re.compile(r"m(0|[1-9][0-9]*)\.(.+)")


@fill_doc
class CrossFittedCalibrator(EntryTransformer, Estimator):
    """K clones of a :class:`GroupedCalibrator` set-up, one per stratified token fold
    (fit on the other folds), whose calibrated scores are averaged.

    Parameters
    ----------
    calibrator : GroupedCalibrator
        The set-up (need not be fitted).
    {folds}

    Attributes
    ----------
    calibrators_ : list of GroupedCalibrator
        One fitted member per fold that held entries.
    threshold_ : float
        The dev entries' threshold.

    Examples
    --------
    >>> import numpy as np
    >>> import sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> dev, test = (make_tagger_outputs(2000, split_seed=s) for s in (1, 2))
    >>> setup = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(426))
    >>> model = sc.CrossFittedCalibrator(setup, n_folds=3).fit(sc.threshold(dev.scores, dev.gold))
    >>> entries = sc.threshold(test.scores, test.gold)
    >>> members = [m.transform(entries).score for m in model.calibrators_]
    >>> bool(np.allclose(model.transform(entries).score, np.mean(members, axis=0)))
    True
    """

    def __init__(self, calibrator, *, n_folds=5, seed=0):
        self.calibrator = calibrator
        self.n_folds = n_folds
        self.seed = seed

    _fitted_attributes = ("calibrators_", "threshold_")

    @property
    def renormalize(self):
        """The set-up's ``renormalize``."""
        return self.calibrator.renormalize

    def _check_params(self):
        check_grouped(self.calibrator, "calibrator")
        check_n_folds(self.n_folds)
        check_positive_int(self.seed, "seed", allow_zero=True)

    def fit(self, entries):
        """Fit one member per stratified token fold of dev ``entries`` (Entries, or
        DaskEntries: the same members, fitted on the workers).
        """
        self._check_params()
        self.calibrators_ = cross_fit_members(self.calibrator, entries, self.n_folds,
                                              self.seed)
        self.threshold_ = entries.threshold
        return self

    def _tagset_size(self):
        return self.calibrator.groups.n_tags

    def _calibrate(self, scores, tags):
        """The mean of the members' calibrated scores (summed in float64)."""
        total = np.zeros(scores.shape, dtype=np.float64)
        for member in self.calibrators_:
            total += member._calibrate(scores, tags)
        return (total / len(self.calibrators_)).astype(scores.dtype)

    def get_state(self):
        """The fitted ensemble as ``(meta, arrays)``: member ``k``'s state under
        ``members[k]``, its arrays prefixed ``m{k}.``.
        """
        self._check_fitted()
        meta = {"n_tags": self._tagset_size(), "threshold": self.threshold_,
                "n_folds": int(self.n_folds), "seed": int(self.seed), "members": []}
        arrays = {}
        for k, member in enumerate(self.calibrators_):
            member_meta, member_arrays = member.get_state()
            meta["members"].append(member_meta)
            arrays.update({f"m{k}.{key}": a for key, a in member_arrays.items()})
        return meta, arrays

    @classmethod
    def from_state(cls, meta, arrays, fields=None):
        """Rebuild a fitted ensemble from :meth:`get_state`'s output, checking every field
        (1 to ``n_folds`` members of one set-up, tagset and threshold); an error is a
        :class:`~sparsecal.io.calibrators.StateError` naming the file and the field.
        """
        fields = StateFields() if fields is None else fields
        with fields.in_json():
            check_fields(meta, "", ("n_tags", "threshold", "n_folds", "seed", "members"),
                         ("format", "version"))
            n_tags = check_count(meta["n_tags"], "n_tags")
            threshold_ = check_unit_interval(meta["threshold"], "threshold")
            n_folds = check_positive_int(meta["n_folds"], "n_folds")
            seed = check_positive_int(meta["seed"], "seed", allow_zero=True)
            infos = meta["members"]
            if n_folds < 2:
                raise ValueError(f"n_folds must be at least 2, got {n_folds}")
            if not isinstance(infos, list) or not 1 <= len(infos) <= n_folds:
                raise ValueError(f"members must be a JSON array of 1 to n_folds={n_folds} "
                                 f"members, got {describe(infos)}")
        with fields.in_arrays():
            split = [{} for _ in infos]
            for key, a in arrays.items():
                match = _MEMBER_KEY.fullmatch(key)
                if not match or int(match.group(1)) >= len(infos):
                    raise ValueError(f"{key} is not an array of this ensemble")
                split[int(match.group(1))][match.group(2)] = a
        members = [_member(info, split[k], fields, k) for k, info in enumerate(infos)]
        with fields.in_json():
            setup = _setup(members[0])
            for k, m in enumerate(members):
                if m.groups.n_tags != n_tags or m.threshold_ != threshold_:
                    raise ValueError(f"members[{k}] has n_tags {m.groups.n_tags} and "
                                     f"threshold {m.threshold_}, not {n_tags} and "
                                     f"{threshold_}")
                if _setup(m) != setup:
                    raise ValueError(f"members[{k}] is not the set-up of members[0]")
        model = cls(clone(members[0]), n_folds=n_folds, seed=seed)
        model.calibrators_, model.threshold_ = members, threshold_
        return model

    def save(self, path):
        """Save to directory ``path``, atomically (:mod:`sparsecal.io.calibrators`)."""
        save_state(path, *self.get_state(), format=ENSEMBLE_FORMAT)

    @classmethod
    def load(cls, path):
        """Load an ensemble saved by :meth:`save`, checking every field."""
        meta, arrays = load_state(path, format=ENSEMBLE_FORMAT)
        return cls.from_state(meta, arrays, StateFields(path))


@takes_data
def cross_fit_members(calibrator, entries, n_folds=5, seed=0):
    """The members of a :class:`CrossFittedCalibrator`, in fold order."""
    if not isinstance(entries, Entries):
        raise TypeError("fit takes Entries (see sparsecal.threshold) or DaskEntries")
    fold = stratified_token_folds(entries, calibrator.groups, n_folds, seed)
    return [model for _, model in fold_models(calibrator, entries, fold)]


def _member(info, arrays, fields, k):
    """Member ``k`` from its state; an error also names the member."""
    try:
        return GroupedCalibrator.from_state(info, arrays,
                                            fields.child(f"members[{k}]", f"m{k}."))
    except StateError as exc:
        raise StateError(f"{exc} (member {k}: members[{k}], arrays m{k}.*)") from None


def _setup(member):
    """What makes two members one set-up."""
    p = member.get_params(deep=False)
    return (type(p["base"]).__name__, repr(p["base"].get_params()), p["groups"],
            p["fallback"], p["min_entries"], p["renormalize"])
