#!/usr/bin/env bash
# Checks that a refactor leaves the CUDA kernels' generated code unchanged, without a GPU.
#
#   scripts/ptx-identity.sh emit BUILD_DIR OUT_DIR   PTX of every kernel file into OUT_DIR
#   scripts/ptx-identity.sh compare BEFORE AFTER     exit 0 when the two sets match
#
# emit takes each lib/cuda/kernels/**/*.cu compile line from BUILD_DIR's Ninja commands,
# so the flags, defines and include paths are the build's own, and asks nvcc for PTX of
# sm_90a instead of an object. compare normalises what a changed parameter type is
# allowed to change, the mangled names (`_Z...`, so a kernel taking GemmView<float>
# instead of GemmProblem compares equal), and keeps everything else: every instruction,
# parameter offset and size must match. Run emit on the tree before a change and after
# it, then compare.
set -euo pipefail

emit() {
  local build=$1 out=$2
  mkdir -p "$out"
  local line src name
  while IFS= read -r line; do
    src=$(sed -E 's/.* -c ([^ ]+) -o .*/\1/' <<<"$line")
    name=$(sed -E 's|.*/lib/cuda/kernels/||; s|/|_|g; s|\.cu$||' <<<"$src")
    # The object, its dependency file and the build's code list give way to PTX.
    line=$(sed -E 's/ -MD -MT [^ ]+ -MF [^ ]+//; s/--generate-code=[^ ]+/-arch=sm_90a/;
                    s/ -c ([^ ]+) -o [^ ]+$/ -ptx \1 -o /' <<<"$line")
    echo "ptx $name"
    (cd "$build" && eval "$line $out/$name.ptx")
  done < <(ninja -C "$build" -t commands | grep -E ' -c [^ ]*/lib/cuda/kernels/.*\.cu -o ' | sort -u)
}

normalise() {
  sed -E 's/_Z[0-9A-Za-z_]+(_param_[0-9]+)/SYM\1/g; s/_Z[0-9A-Za-z_]+/SYM/g' "$1"
}

compare() {
  local before=$1 after=$2 status=0 f name
  for f in "$before"/*.ptx; do
    name=$(basename "$f")
    if [ ! -f "$after/$name" ]; then
      echo "MISSING $name"
      status=1
    elif diff -q <(normalise "$f") <(normalise "$after/$name") >/dev/null; then
      echo "SAME    $name"
    else
      echo "DIFFERS $name"
      diff <(normalise "$f") <(normalise "$after/$name") | head -20
      status=1
    fi
  done
  return $status
}

case "${1:-}" in
  emit) emit "$2" "$3" ;;
  compare) compare "$2" "$3" ;;
  *)
    echo "usage: $0 emit BUILD_DIR OUT_DIR | compare BEFORE AFTER" >&2
    exit 2
    ;;
esac
