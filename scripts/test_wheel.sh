#!/usr/bin/env bash
# Build the sdist and, from it, the wheel (python -m build); check what each
# holds; install the wheel with the test run's extras into a fresh virtual
# environment (.venv-wheel) and run the test suite, taken from the sdist,
# against the installed package from a directory where the checkout is not
# importable. CI runs this after scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
checkout=$PWD
unset PYTHONPATH
PYTHON=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. A fresh environment, first holding the build frontend only.
rm -rf .venv-wheel
"$PYTHON" -m venv .venv-wheel
py=$checkout/.venv-wheel/bin/python
"$py" -m pip install --quiet --upgrade pip build

# 2. sdist from the checkout, wheel from the sdist (build's default).
"$py" -m build --outdir "$work/dist" . > "$work/build.log" 2>&1 ||
  { tail -n 40 "$work/build.log" >&2; exit 1; }
sdists=("$work"/dist/sparsecal-*.tar.gz)
wheels=("$work"/dist/sparsecal-*.whl)
[ ${#sdists[@]} -eq 1 ] && [ ${#wheels[@]} -eq 1 ] ||
  { echo "expected one sdist and one wheel in $work/dist" >&2; exit 1; }

# 3. What they hold: the wheel every compiled kernel and no generated C or
#    Cython sources; the sdist the kernel sources, tests, licence and build files.
"$py" - "${sdists[0]}" "${wheels[0]}" <<'PY'
import sys, tarfile, zipfile
sdist, wheel = sys.argv[1:]
with tarfile.open(sdist) as tar:
    names = [n.split("/", 1)[1] for n in tar.getnames() if "/" in n]
with zipfile.ZipFile(wheel) as whl:
    files = whl.namelist()
problems = []
kernels = sorted(n for n in names if n.startswith("sparsecal/core/_") and n.endswith(".pyx"))
if not kernels:
    problems.append("sdist: no kernel sources sparsecal/core/_*.pyx")
for required in ("LICENSE", "README.md", "pyproject.toml", "setup.py",
                 "sparsecal/core/_types.pxd", "tests/conftest.py"):
    if required not in names:
        problems.append(f"sdist: {required} missing")
if not any(n.startswith("tests/test_") for n in names):
    problems.append("sdist: no tests/test_*.py")
problems += [f"sdist: generated {n}" for n in names if n.endswith((".c", ".so", ".html"))]
problems += [f"wheel: holds {f}" for f in files if f.endswith((".c", ".html", ".pyx", ".pxd"))]
for pyx in kernels:
    stem = pyx[:-len(".pyx")]
    if not any(f.startswith(stem + ".") and f.endswith((".so", ".pyd")) for f in files):
        problems.append(f"wheel: no compiled extension for {pyx}")
if not any(f.endswith(".dist-info/licenses/LICENSE") for f in files):
    problems.append("wheel: LICENSE missing from .dist-info/licenses")
if problems:
    sys.exit("\n".join(problems))
print(f"sdist {len(names)} files ({len(kernels)} kernel sources); "
      f"wheel {len(files)} files, no .c/.pyx/.pxd")
PY

# 4. Install the wheel with the test run's extras (the exact torch pin, see _venv.sh).
source scripts/_test_extras.sh
VENV=.venv-wheel SPARSECAL_WHEEL=${wheels[0]} source scripts/_venv.sh "$TEST_EXTRAS"

# 5. The tests from the sdist, in a directory without the package sources:
#    <work>/suite/{tests,examples,scripts}; the real-data tests look for ../shared/data
#    next to the repository, so <work>/shared points at the checkout's neighbour
#    when it exists (those tests skip otherwise, with their reason).
mkdir "$work/sdist" "$work/suite"
tar -xzf "${sdists[0]}" -C "$work/sdist"
cp -R "$work"/sdist/sparsecal-*/tests "$work"/sdist/sparsecal-*/examples \
  "$work"/sdist/sparsecal-*/scripts "$work/suite/"
if [ -d "$checkout/../shared" ]; then
  ln -s "$(cd "$checkout/../shared" && pwd)" "$work/shared"
fi
cd "$work/suite"
"$py" - <<'PY'
import os, sys, sysconfig
import sparsecal
here = os.path.realpath(sparsecal.__file__)
site = {os.path.realpath(sysconfig.get_path(k)) for k in ("purelib", "platlib")}
if not any(here.startswith(s + os.sep) for s in site):
    sys.exit(f"sparsecal imported from {here}, not from the wheel in {sorted(site)}")
print(f"testing the installed wheel: {os.path.dirname(here)}")
PY
status=0
"$py" -m pytest -q -ra -p no:cacheprovider "${TEST_PYTEST_ARGS[@]}" --rootdir "$work/suite" \
  tests "$@" || status=$?
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests" >&2
  exit 1
fi
exit "$status"
