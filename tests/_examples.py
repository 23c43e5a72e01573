"""Shared by the tests of ``examples/``: an example script's namespace."""
import contextlib
import runpy
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@contextlib.contextmanager
def example(name):
    """The namespace of ``examples/<name>.py`` run as a module (not as
    ``__main__``), with ``examples/`` importable while it is in use (the
    scripts import each other)."""
    sys.path.insert(0, str(EXAMPLES))
    try:
        yield runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name=f"example_{name}")
    finally:
        sys.path.remove(str(EXAMPLES))
