"""pytest configuration for runs over the package sources, such as
``pytest --doctest-modules sparsecal``: every docstring example runs in its own
temporary directory, as tests/test_docstrings.py runs them, so the files the
examples write never land in the checkout."""
import pytest
from _pytest.doctest import DoctestItem


@pytest.fixture(autouse=True)
def _examples_in_a_temporary_directory(request, monkeypatch):
    if isinstance(request.node, DoctestItem):
        monkeypatch.chdir(request.getfixturevalue("tmp_path"))
