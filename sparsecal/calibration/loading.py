"""Loading any saved calibrator, told apart by the ``format`` of its ``calibrator.json``."""
from ..io.calibrators import ENSEMBLE_FORMAT, FORMAT, StateFields, load_state
from .ensemble import CrossFittedCalibrator
from .grouped import GroupedCalibrator

__all__ = ["load_calibrator"]


def load_calibrator(path):
    """Load a :class:`GroupedCalibrator` or :class:`CrossFittedCalibrator` saved by
    its ``save``, checking every field; nothing is executed or unpickled.

    Parameters
    ----------
    path : str or path

    Returns
    -------
    GroupedCalibrator or CrossFittedCalibrator

    Examples
    --------
    >>> import os, tempfile
    >>> import sparsecal as sc
    >>> from sparsecal.datasets import make_tagger_outputs
    >>> dev = make_tagger_outputs(2000, split_seed=1)
    >>> setup = sc.GroupedCalibrator(sc.IsotonicCalibrator(), sc.TagGroups.scw(426))
    >>> model = sc.CrossFittedCalibrator(setup, n_folds=3).fit(sc.threshold(dev.scores, dev.gold))
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     model.save(os.path.join(tmp, "cal"))
    ...     type(load_calibrator(os.path.join(tmp, "cal"))).__name__
    'CrossFittedCalibrator'
    """
    meta, arrays = load_state(path, format=(FORMAT, ENSEMBLE_FORMAT))
    cls = CrossFittedCalibrator if meta["format"] == ENSEMBLE_FORMAT else GroupedCalibrator
    return cls.from_state(meta, arrays, StateFields(path))
