"""One API for both paths: a public function given distributed data runs its
distributed form, or refuses with one clear error.

Every function that takes data is decorated where it is defined, like
:func:`functools.singledispatch`::

    @takes_data                                  # has a distributed form
    def smce(entries, ...): ...

    @takes_data(refuse="a global sort of all values on one process")
    def argsort_scores(scores): ...

and :mod:`sparsecal.distributed` registers its forms onto them when it is
imported (``@implements(smce)`` on its own ``smce``). Distributed data are
dask collections (anything with ``__dask_graph__``) and
:class:`~sparsecal.distributed.DaskEntries` (recognised by their attributes).
For NumPy arguments the wrapper costs two attribute look-ups per argument
passed. For distributed data it runs the registered form with the arguments
the form takes, or raises one TypeError naming the function and why, before
anything is computed.

The one plugin load: a dask array can exist before :mod:`sparsecal.distributed`
is imported, so the first distributed argument given to a function whose form
is not registered yet imports :data:`PLUGIN` by name (whose import registers
every form). NumPy users never reach it.
"""
import functools
import importlib
import inspect

__all__ = ["BUILDING_BLOCK", "GLOBAL_SORT", "IN_MEMORY_SAMPLES", "LIBRARY_OUTPUTS",
           "PLUGIN", "SENTENCE_EVENTS", "SENTENCE_RECURSION", "implements",
           "is_distributed", "is_distributed_entries", "takes_data"]

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
    """Whether ``value`` is distributed data: a dask collection or
    :class:`~sparsecal.distributed.DaskEntries`.

    Parameters
    ----------
    value : object

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> is_distributed(np.zeros(3)), is_distributed([0.5])
    (False, False)
    """
    return hasattr(value, "__dask_graph__") or is_distributed_entries(value)


def is_distributed_entries(value):
    """Whether ``value`` is :class:`~sparsecal.distributed.DaskEntries` (by
    its attributes: lazy blocks and a tagset size)."""
    return hasattr(value, "n_tags") and getattr(value, "blocks", None) is not None


def takes_data(func=None, *, refuse=None):
    """Decorator of a function (or method) taking data: distributed data run
    its registered distributed form, or are refused.

    Parameters
    ----------
    func : function
        Used bare (``@takes_data``): the function has a distributed form, which
        :mod:`sparsecal.distributed` registers with :func:`implements`.
    refuse : str, optional
        Used as ``@takes_data(refuse=why)``: the function has no distributed
        form, and distributed data are refused with ``why``.

    Returns
    -------
    function
        The wrapper (``functools.wraps``: same name, docstring, signature), with
        attributes ``distributed_form`` (the registered form or None) and
        ``refusal`` (``refuse``).

    Examples
    --------
    >>> @takes_data(refuse="it is a toy")
    ... def total(x):
    ...     return sum(x)
    >>> total([1, 2]), total.refusal
    (3, 'it is a toy')
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
    """Decorator registering the decorated function as the distributed form of
    ``public`` (a :func:`takes_data` function without ``refuse``).

    The form is called with the arguments of ``public`` it takes, by name (a
    method's ``self`` first, by position); another argument not at its default
    is refused by name.

    Parameters
    ----------
    public : function
        The single-machine function (or method, from its class).

    Returns
    -------
    callable
        The decorator; it returns the form unchanged.

    Raises
    ------
    TypeError
        If ``public`` is not a :func:`takes_data` function, or refuses.

    Examples
    --------
    >>> @takes_data
    ... def total(x):
    ...     return sum(x)
    >>> @implements(total)
    ... def cluster_total(x):
    ...     return "on the cluster"
    >>> total.distributed_form is cluster_total
    True
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
