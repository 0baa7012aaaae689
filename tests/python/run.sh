#!/bin/bash
# tests/python/run.sh BUILD_DIR — installs python/ with pip (offline: no
# index, no build dependency) into a fresh folder and runs the pytest suite
# against BUILD_DIR's libparplan.so and parplan CLI. Uses the first python3
# that has pytest: Debian's /usr/bin/python3 with python3-pytest (installed
# by `make test`), else python3 on PATH.
set -eu
BUILD=$(realpath "${1:?usage: tests/python/run.sh BUILD_DIR}")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=""
for p in /usr/bin/python3 "$(command -v python3 || true)"; do
  if [ -n "$p" ] && [ -x "$p" ] && "$p" -c 'import pytest' 2>/dev/null; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
  echo "tests/python: no python3 with pytest: apt-get install python3-pytest (make test installs it)" >&2
  exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/parplan-python.XXXXXX")
trap 'rm -rf "$T"' EXIT
"$PY" -m pip install --quiet --no-index --no-cache-dir --target "$T/site" "$ROOT/python" 2>&1 |
  grep -v "Running pip as the 'root' user" >&2 || true
[ -f "$T/site/parplan/__init__.py" ] || { echo "tests/python: pip install ./python failed" >&2; exit 1; }
cd "$T"
PYTHONPATH="$T/site" PARPLAN_LIB="$BUILD/libparplan.so" PARPLAN_CLI="$BUILD/parplan" \
  "$PY" -m pytest -q -p no:cacheprovider "$ROOT/tests/python"
