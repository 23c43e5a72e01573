"""Importing this module registers the distributed forms of the public
functions and methods (``@implements``, :mod:`sparsecal.core.dispatch`): the
plugin that the first distributed argument loads. None of these modules
imports dask until called."""
from . import (arrays, calibrators, comparison, entries, evaluation, folds,  # noqa: F401
               marginal, measures, metrics, toplabel)
