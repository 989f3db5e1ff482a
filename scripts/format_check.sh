#!/usr/bin/env bash
# clang-format --dry-run -Werror on every tracked C/C++ file (a meson test).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  echo "clang-format not installed (scripts/setup.sh installs it)"
  exit 77
fi
git ls-files '*.c' '*.h' '*.cpp' '*.hpp' | xargs clang-format --dry-run -Werror
echo "clang-format: clean"
