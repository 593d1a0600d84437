#!/usr/bin/env bash
# Quick start, part 1: build the library and run the demo (the seed reports'
# experiment). Arguments go to the demo, e.g. scripts/demo.sh --sizes 100,1000.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
source scripts/env.sh
tmm_configure
cmake --build build --target tmm_demo
./build/examples/tmm_demo "$@"
