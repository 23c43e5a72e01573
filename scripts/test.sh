#!/usr/bin/env bash
# Install everything (venv, compiled core, test, torch and adapter extras) and run the
# whole test suite. CI runs exactly this.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" "test,torch,hf,crf,crfsuite"
exec .venv/bin/python -m pytest -q "$@"
