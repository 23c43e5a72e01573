# Sourced by scripts/test.sh and scripts/test_wheel.sh: the one list of extras
# every test run installs (a test of an adapter whose extra is missing fails, it
# does not skip, so both runs install all of them).
TEST_EXTRAS="test,torch,hf,crf,crfsuite,conllu,pandas,arrow,dask,docs"
