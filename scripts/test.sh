#!/usr/bin/env bash
# Install everything (venv, compiled core, test, torch, every adapter extra and dask) and
# run the whole test suite. CI runs exactly this.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" "test,torch,hf,crf,crfsuite,conllu,pandas,arrow,dask"
exec .venv/bin/python -m pytest -q "$@"
