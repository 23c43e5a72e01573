# Sourced by the set-up scripts: make the virtual environment $VENV (default
# .venv, Python >= 3.10) and install sparsecal into it with the extras given as
# the first argument: the checkout in editable mode (builds the compiled core;
# idempotent: a second run only rebuilds what changed), or the built wheel
# $SPARSECAL_WHEEL when that is set.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
extras=${1:-}
if [ -n "${SPARSECAL_WHEEL:-}" ]; then
  install=("$SPARSECAL_WHEEL${extras:+[$extras]}")
else
  install=(-e ".${extras:+[$extras]}")
fi
# The 'torch' extra allows a range of versions; the set-up pins the exact
# torch==2.13.0 (its CPU wheel lies on the test machines).
case ",$extras," in
  *,torch,*) install+=("torch==2.13.0") ;;
esac
"$VENV/bin/python" -m pip install --quiet --upgrade pip setuptools
"$VENV/bin/python" -m pip install --quiet "${install[@]}"
