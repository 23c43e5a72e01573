#!/usr/bin/env bash
# Install everything (venv, compiled core, the extras of scripts/_test_extras.sh;
# skipped when the venv is up to date, see scripts/_venv.sh) and run the whole
# test suite on parallel workers. CI runs exactly this.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_test_extras.sh"
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" "$TEST_EXTRAS"
exec .venv/bin/python -m pytest -q "${TEST_PYTEST_ARGS[@]}" "$@"
