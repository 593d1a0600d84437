#!/usr/bin/env bash
# Runs the seed reports' experiments on this machine and writes the report:
#
#   scripts/report.sh [OUTDIR] [--quick]      (default OUTDIR: build/report)
#
# OUTDIR/README.md with tables and PNG plots, each seed's published figure beside
# ours. Without a GPU only the CPU rows run, and the report says so. Needs
# python3-matplotlib (installed with apt-get when root, else named).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/report}
shift || true
scripts/deps.sh
if ! /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  if [ "$(id -u)" -eq 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-matplotlib >/dev/null
  else
    echo "report: needs matplotlib: sudo apt-get install -y python3-matplotlib" >&2
    exit 1
  fi
fi
source scripts/env.sh
tmm_configure
cmake --build build --target tmm_experiments
mkdir -p "$out"
./build/examples/tmm_experiments "$out" "$@"
examples/report/make_report.py "$out"
