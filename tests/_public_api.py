"""The public callables of sparsecal and their parameters, walked from the
``__all__`` of every public module (for the tests that enumerate a kind of
argument across the whole API)."""
import importlib
import inspect

#: the public modules whose ``__all__`` is the API
MODULES = ("sparsecal", "sparsecal.core", "sparsecal.metrics", "sparsecal.calibration",
           "sparsecal.io", "sparsecal.crf", "sparsecal.structured", "sparsecal.adapters",
           "sparsecal.datasets", "sparsecal.plotting", "sparsecal.distributed")


def public_callables():
    """{"module.qualname": callable} of every public function, class and public
    method, each once (by the module that defines it)."""
    out = {}
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:   # an optional extra missing
            continue
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            if not callable(obj):
                continue
            targets = [obj]
            if inspect.isclass(obj):
                targets += [v for k, v in vars(obj).items()
                            if not k.startswith("_") and inspect.isfunction(v)]
            for f in targets:
                key = f"{getattr(f, '__module__', name)}.{getattr(f, '__qualname__', attr)}"
                out.setdefault(key, f)
    return out


def parameters(names):
    """{(callable key, parameter)} of every public callable taking one of ``names``."""
    found = set()
    for key, f in public_callables().items():
        try:
            params = inspect.signature(f).parameters
        except (TypeError, ValueError):
            continue
        found |= {(key, p) for p in params if p in names}
    return found
