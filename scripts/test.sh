#!/usr/bin/env bash
# Install everything (venv, compiled core, test, torch, every adapter extra, dask and the
# documentation site's tools) and
# run the whole test suite. CI runs exactly this.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" "test,torch,hf,crf,crfsuite,conllu,pandas,arrow,dask,docs"
exec .venv/bin/python -m pytest -q "$@"
