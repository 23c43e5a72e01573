# Sourced by scripts/test.sh and scripts/test_wheel.sh: the one list of extras
# every test run installs (a test of an adapter whose extra is missing fails, it
# does not skip, so both runs install all of them), and the pytest options both
# runs share: one worker per usable CPU (pytest-xdist; tests/conftest.py counts
# them), each test file on one worker in file order (a module-scoped fixture, such
# as a Dask cluster or the documentation site, is made once per run), and the 25
# slowest tests at the end.
TEST_EXTRAS="test,torch,hf,crf,crfsuite,torchmetrics,trainer,spacy,conllu,pandas,arrow,dask,docs"
TEST_PYTEST_ARGS=(-n auto --dist loadfile --no-loadscope-reorder --durations=25)
