#!/usr/bin/env bash
# The main job on a built-in default: set up .venv, then run the sparsecal demo
# on generated CCG-like tagger output and print the evaluation.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" ""
exec .venv/bin/python -m sparsecal demo "$@"
