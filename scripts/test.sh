#!/usr/bin/env bash
# Quick start, part 2: build everything with warnings as errors and run every test.
# On a machine without a GPU the CUDA tests skip; TMM_REQUIRE_GPU=1 makes them fail
# instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
source scripts/env.sh
tmm_configure
cmake --build build
ctest --test-dir build --output-on-failure
