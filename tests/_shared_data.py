"""The real data the tests read from ``../shared/data`` (its README): a module
that needs a corpus skips, naming the missing folder, when it is absent."""
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def require(name):
    """``SHARED_DATA / name``; skips the calling test module if it is absent."""
    path = SHARED_DATA / name
    if not path.is_dir():
        pytest.skip(f"real data not available: {path} is absent", allow_module_level=True)
    return path
