#!/usr/bin/env bash
# Installs what is missing, builds, runs every test (unit and integration)
# and ends with one line: "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1
scripts/build.sh || { echo "0 passed, 1 failed"; exit 1; }
build=${BUILD_DIR:-build}
meson test -C "$build" --print-errorlogs --no-rebuild "$@"
python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = 0
for line in open(sys.argv[1]):
    result = json.loads(line)["result"]
    if result in ("OK", "EXPECTEDFAIL", "SKIP"):
        passed += 1
    else:
        failed += 1
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
