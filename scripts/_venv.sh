# Sourced by the set-up scripts: make the virtual environment $VENV (default
# .venv, Python >= 3.10) and install sparsecal into it with the extras given as
# the first argument: the checkout in editable mode (builds the compiled core),
# or the built wheel $SPARSECAL_WHEEL when that is set.
#
# The editable install is skipped when $VENV already holds an up-to-date one:
# its stamp file records a hash of the pip arguments (extras, pins) and of what
# the install depends on (pyproject.toml, setup.py, the kernel sources
# sparsecal/core/*.pyx, *.pxd, *.h), and every kernel has its compiled extension
# beside it. A change to any of them, or a missing extension, reinstalls.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
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
stamp=$VENV/.sparsecal-install
install_key() {   # the stamp's content, or "unbuilt" while a kernel lacks its extension
  "$PYTHON" - "${install[@]}" <<'PY'
import glob, hashlib, os, sys
h = hashlib.sha256("\0".join(sys.argv[1:]).encode())
for path in ["pyproject.toml", "setup.py"] + sorted(
        p for ext in ("pyx", "pxd", "h") for p in glob.glob(f"sparsecal/core/*.{ext}")):
    with open(path, "rb") as f:
        h.update(path.encode() + b"\0" + hashlib.sha256(f.read()).digest())
built = all(glob.glob(os.path.splitext(p)[0] + ".*.so")
            for p in glob.glob("sparsecal/core/_*.pyx"))
print(h.hexdigest() if built else "unbuilt")
PY
}
if [ -n "${SPARSECAL_WHEEL:-}" ] || [ ! -x "$VENV/bin/python" ] || [ ! -f "$stamp" ] ||
   [ "$(cat "$stamp")" != "$(install_key)" ]; then
  if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
  fi
  rm -f "$stamp"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip setuptools
  # without setuptools' banner about editable installs (a warning of the build)
  PYTHONWARNINGS="${PYTHONWARNINGS:+$PYTHONWARNINGS,}ignore:Editable installation" \
    "$VENV/bin/python" -m pip install --quiet "${install[@]}"
  if [ -z "${SPARSECAL_WHEEL:-}" ]; then
    install_key > "$stamp"
  fi
fi
