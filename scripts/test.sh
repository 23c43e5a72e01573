#!/usr/bin/env bash
# Install everything (venv, compiled core, test, torch, conllu, pandas and arrow extras) and run the
# whole test suite. CI runs exactly this.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" "test,torch,conllu,pandas,arrow"
exec .venv/bin/python -m pytest -q "$@"
