# Sourced by the set-up scripts: make .venv (Python >= 3.10) and install sparsecal
# into it in editable mode with the extras given as arguments; builds the
# compiled core. Idempotent: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
extras=${1:-}
spec="."
[ -n "$extras" ] && spec=".[$extras]"
.venv/bin/python -m pip install --quiet --upgrade pip setuptools wheel
# torch==2.13.0 (CPU build) is pinned by the 'torch' extra.
.venv/bin/python -m pip install --quiet -e "$spec"
