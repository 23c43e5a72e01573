"""One API for both paths: a public function given distributed data runs its
distributed form, or refuses with one clear error.

Every function that takes data is decorated where it is defined, like
:func:`functools.singledispatch`: ``@takes_data`` (it has a distributed form)
or ``@takes_data(refuse=why)``; :mod:`sparsecal.distributed` registers its
forms with ``@implements(public)`` when it is imported. Distributed data are
dask collections and :class:`~sparsecal.distributed.DaskEntries`. The first
distributed argument given to a function whose form is not registered yet
imports :data:`PLUGIN` (the one plugin load); NumPy arguments cost two
attribute look-ups each.
"""
import functools
import importlib
import inspect

__all__ = ["BUILDING_BLOCK", "GLOBAL_SORT", "IN_MEMORY_SAMPLES", "LIBRARY_OUTPUTS",
           "SENTENCE_EVENTS", "SENTENCE_RECURSION", "implements", "is_distributed",
           "is_distributed_entries", "takes_data"]

#: the package whose import registers the distributed forms
PLUGIN = "sparsecal.distributed.forms"

# Reasons shared by functions of several modules (one function's own reason
# is written in its decorator).
GLOBAL_SORT = ("a global sort of all values on one process; the distributed path sorts "
               "per chunk")
BUILDING_BLOCK = ("a single-machine building block; the distributed path has its own "
                  "per-chunk form")
SENTENCE_RECURSION = (
    "its forward-backward / Viterbi recursion runs along each whole sentence: it takes "
    "[B, N, C] padded emissions of whole sentences as one torch tensor, which a "
    "row-chunked dask array does not give (run it per batch of sentences, then "
    "threshold its marginals on the cluster)")
SENTENCE_EVENTS = (
    "its events (top-k sequences, spans, tag pairs) are defined over whole sentences, "
    "and a sentence may straddle the row chunks of a dask array: compute them per batch "
    "of sentences in memory; their Entries then evaluate and calibrate like any other")
IN_MEMORY_SAMPLES = ("it summarises the samples of a set of events held in memory "
                     "(samples x events), which come from sentences processed in memory")
LIBRARY_OUTPUTS = (
    "it takes a tagging library's per-sentence outputs (lists, tensors, word ids of a "
    "tokenizer's batch), not rows of a score matrix: run it per batch, then threshold "
    "the scores on the cluster")


def is_distributed(value):
    """Whether ``value`` is a dask collection or :class:`~sparsecal.distributed.DaskEntries`."""
    return hasattr(value, "__dask_graph__") or is_distributed_entries(value)


def is_distributed_entries(value):
    """Whether ``value`` is :class:`~sparsecal.distributed.DaskEntries` (by its attributes)."""
    return hasattr(value, "n_tags") and getattr(value, "blocks", None) is not None


def takes_data(func=None, *, refuse=None):
    """Decorator of a function (or method) taking data: bare, distributed data run
    the form :mod:`sparsecal.distributed` registers (:func:`implements`); with
    ``refuse=why``, they are refused with ``why``. The wrapper has the attributes
    ``distributed_form`` and ``refusal``.
    """
    if func is None:
        return functools.partial(takes_data, refuse=refuse)

    @functools.wraps(func)
    def dispatcher(*args, **kwargs):
        for value in args:
            if hasattr(value, "__dask_graph__") or hasattr(value, "blocks"):
                return _distributed(dispatcher, func, args, kwargs)
        for value in kwargs.values():
            if hasattr(value, "__dask_graph__") or hasattr(value, "blocks"):
                return _distributed(dispatcher, func, args, kwargs)
        return func(*args, **kwargs)

    dispatcher.distributed_form = None
    dispatcher.refusal = refuse
    return dispatcher


def implements(public):
    """Decorator registering the distributed form of ``public`` (a :func:`takes_data`
    function without ``refuse``); the form gets the arguments of ``public`` it
    takes, by name, and another argument not at its default is refused by name.
    """
    if not hasattr(public, "refusal") or public.refusal is not None:
        raise TypeError(f"{getattr(public, '__qualname__', public)!r} does not dispatch: "
                        f"decorate it with @takes_data (without refuse=)")

    def register(form):
        public.distributed_form = form
        return form
    return register


def _distributed(dispatcher, func, args, kwargs):
    """Run ``func``'s distributed form on distributed arguments, or refuse."""
    if not any(is_distributed(v) for v in (*args, *kwargs.values())):
        return func(*args, **kwargs)        # an object with `blocks` that is not data
    if dispatcher.refusal is None and dispatcher.distributed_form is None:
        importlib.import_module(PLUGIN)     # the one plugin load: registers every form
    form = dispatcher.distributed_form
    if form is None:
        reason = dispatcher.refusal or "it has no distributed form"
        raise TypeError(f"{_name(func)} does not take distributed (dask) "
                        f"data: {reason}")
    signature = inspect.signature(func)
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    takes = inspect.signature(form).parameters
    positional, named = [], {}
    for p in signature.parameters.values():
        value = bound.arguments[p.name]
        if p.name in ("self", "cls"):
            positional.append(value)
        elif p.name in takes:
            named[p.name] = value
        elif not _is_default(value, p.default):
            raise TypeError(f"{_name(func)}: {p.name}={value!r} is not "
                            f"supported on distributed (dask) data; it takes "
                            f"{', '.join(takes)}")
    return form(*positional, **named)


def _name(func):
    """``func``'s full dotted name, e.g. ``sparsecal.metrics.marginal.smce``."""
    return f"{func.__module__}.{func.__qualname__}"


def _is_default(value, default):
    """``value is default``, or equal for plain values."""
    plain = (str, int, float, bool, tuple, type(None))
    return value is default or (type(value) is type(default) and isinstance(value, plain)
                                and value == default)
