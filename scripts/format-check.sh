#!/usr/bin/env bash
# Checks that the tracked C, C++ and CUDA sources follow .clang-format, changing
# nothing: clang-format --dry-run --Werror names each file and line that differs.
# To fix them: git ls-files '*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh' | xargs clang-format -i
# Templates (*.in, such as include/tiledmm/tiledmm_version.h.in) are not checked.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null 2>&1; then
  echo "format-check: clang-format not found (scripts/deps.sh installs it)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh')
if [ ${#files[@]} -eq 0 ]; then
  echo "format-check: no tracked sources found (run from a git clone)" >&2
  exit 1
fi
if clang-format --dry-run --Werror "${files[@]}"; then
  echo "format-check: ${#files[@]} files follow .clang-format ($(clang-format --version))"
else
  echo "format-check: files above differ from .clang-format; clang-format -i fixes them" >&2
  exit 1
fi
