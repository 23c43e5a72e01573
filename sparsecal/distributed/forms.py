"""Importing this module registers the distributed forms of the public functions
and methods (``@implements``, :mod:`sparsecal.core.dispatch`)."""
from . import (arrays, calibrators, comparison, entries, evaluation, folds,  # noqa: F401
               marginal, measures, metrics, toplabel)
